//! Content sniffing: keeps binary bodies away from the HTML parser whatever the server
//! declared.

/// How many leading bytes the sniffers look at.
const SNIFF_LEN: usize = 1024;

/// Magic numbers of binary formats that are commonly mis-served as `text/html`.
const MAGIC: &[&[u8]] = &[
    b"%PDF-",
    b"\x89PNG\r\n\x1a\n",
    b"GIF87a",
    b"GIF89a",
    b"\xff\xd8\xff",                     // JPEG
    b"PK\x03\x04",                       // ZIP, docx, xlsx, jar, epub
    b"PK\x05\x06",                       // empty ZIP
    b"\x1f\x8b",                         // gzip (a body that was not decompressed)
    b"BZh",                              // bzip2
    b"\xfd7zXZ\x00",                     // xz
    b"\x28\xb5\x2f\xfd",                 // zstd
    b"7z\xbc\xaf\x27\x1c",               // 7-Zip
    b"Rar!\x1a\x07",                     // RAR
    b"\x7fELF",                          // ELF executable
    b"\x00asm",                          // WebAssembly
    b"wOFF",                             // WOFF font
    b"wOF2",                             // WOFF2 font
    b"OggS",                             // Ogg
    b"ID3",                              // MP3 with ID3 tag
    b"fLaC",                             // FLAC
    b"\x1aE\xdf\xa3",                    // Matroska / WebM
    b"\x00\x00\x01\x00",                 // ICO
    b"SQLite format 3\x00",              // SQLite
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", // OLE2 (doc, xls)
];

/// Whether `body` is binary: a known magic number (PDF, PNG, GIF, JPEG, ZIP, gzip, …), a
/// RIFF or ISO-BMFF container, or a NUL byte in the first KiB (UTF-16 text with a byte-order
/// mark is text).
pub fn is_binary(body: &[u8]) -> bool {
    let head = &body[..body.len().min(SNIFF_LEN)];
    if MAGIC.iter().any(|m| head.starts_with(m)) {
        // "BZh" and "ID3" are plausible text starts; require the binary follow-up byte.
        if head.starts_with(b"BZh") {
            return head.get(3).is_some_and(|b| (b'1'..=b'9').contains(b))
                && head.get(4) == Some(&0x31);
        }
        if head.starts_with(b"ID3") {
            return head.get(3).is_some_and(|b| *b < 0x10);
        }
        return true;
    }
    if head.starts_with(b"RIFF") && head.len() >= 12 {
        return true; // WebP, WAV, AVI
    }
    if head.len() >= 12 && &head[4..8] == b"ftyp" {
        return true; // MP4, MOV, HEIF, AVIF
    }
    if head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff") {
        return false; // UTF-16 text: NUL bytes are expected
    }
    head.contains(&0)
}

/// Whether `body` looks like an HTML document: not [binary](is_binary), and a tag (`<` then
/// a letter, `!`, `/` or `?`) within the first KiB after any byte-order mark and leading
/// whitespace. The engine calls it for bodies served without a content type and for
/// `text/html` bodies before they reach the HTML parser.
pub fn looks_like_html(body: &[u8]) -> bool {
    if body.is_empty() || is_binary(body) {
        return false;
    }
    let mut rest = body;
    for bom in [&b"\xef\xbb\xbf"[..], b"\xff\xfe", b"\xfe\xff"] {
        if let Some(r) = rest.strip_prefix(bom) {
            if bom.len() == 2 {
                // UTF-16: look for '<' followed by a letter in either byte order.
                let head = &r[..r.len().min(2 * SNIFF_LEN)];
                return head.windows(3).any(|w| {
                    (w[0] == b'<' && w[1] == 0 && w[2].is_ascii_alphabetic())
                        || (w[0] == 0 && w[1] == b'<' && w[2] == 0)
                });
            }
            rest = r;
        }
    }
    let start = rest
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let head = &rest[start..rest.len().min(start + SNIFF_LEN)];
    head.windows(2)
        .any(|w| w[0] == b'<' && (w[1].is_ascii_alphabetic() || matches!(w[1], b'!' | b'/' | b'?')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_detects_binary_magic_numbers() {
        for b in [
            &b"%PDF-1.7\n..."[..],
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
            b"GIF89a\x01\x00",
            b"\xff\xd8\xff\xe0\x00\x10JFIF",
            b"PK\x03\x04\x14\x00",
            b"\x1f\x8b\x08\x00\x00\x00",
            b"RIFF\x24\x00\x00\x00WEBPVP8 ",
            b"\x00\x00\x00\x18ftypmp42",
            b"\x7fELF\x02\x01\x01",
            b"<html>\0\0\0 binary after all",
        ] {
            assert!(is_binary(b), "{b:?}");
            assert!(!looks_like_html(b), "{b:?}");
        }
    }

    #[test]
    fn sniff_accepts_html_text() {
        for b in [
            &b"<!DOCTYPE html><html><body>hi</body></html>"[..],
            b"\n\n   <html lang=en>",
            b"\xef\xbb\xbf<!doctype html>",
            b"<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\">",
            b"<!-- generated --><div>x</div>",
            b"Intro text <p>then a paragraph</p>",
            b"ID3 tags explained: <p>text</p>",
            b"BZh is a prefix <b>too</b>",
        ] {
            assert!(!is_binary(b), "{b:?}");
            assert!(looks_like_html(b), "{b:?}");
        }
        let utf16: Vec<u8> = b"\xff\xfe"
            .iter()
            .copied()
            .chain("<html>".encode_utf16().flat_map(|u| u.to_le_bytes()))
            .collect();
        assert!(!is_binary(&utf16));
        assert!(looks_like_html(&utf16));
    }

    #[test]
    fn sniff_rejects_text_without_tags_and_empty() {
        assert!(!looks_like_html(b""));
        assert!(!looks_like_html(b"just plain text, a < b and c > d"));
        assert!(!looks_like_html(b"{\"json\": true}"));
    }
}
