//! Character-set detection and decoding of fetched HTML bytes.

use encoding_rs::{Encoding, UTF_8};

/// Extracts `charset=` from a `Content-Type`-style value.
fn charset_param(v: &str) -> Option<&str> {
    let lower = v.to_ascii_lowercase();
    let p = lower.find("charset")?;
    let rest = v.get(p + 7..)?.trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    let rest = rest.trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| c == '"' || c == '\'' || c == ';' || c.is_whitespace())
        .unwrap_or(rest.len());
    Some(&rest[..end]).filter(|s| !s.is_empty())
}

/// Looks for `<meta charset>` or `<meta http-equiv=content-type content=...>` in the first 1024 bytes.
fn prescan(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(1024)];
    let text = String::from_utf8_lossy(head);
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(p) = lower[from..].find("<meta") {
        let start = from + p;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = tag.find("charset") {
            // Either `charset=x` as an attribute or inside `content="text/html; charset=x"`.
            if let Some(label) = charset_param(&tag[c..]) {
                if let Some(e) = Encoding::for_label(label.as_bytes()) {
                    // A meta tag cannot switch to UTF-16: the bytes would not have been readable.
                    return Some(
                        if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE {
                            UTF_8
                        } else {
                            e
                        },
                    );
                }
            }
        }
        from = end.max(start + 5);
        if from >= lower.len() {
            break;
        }
    }
    None
}

/// Decodes fetched HTML bytes to text: BOM first, then the `Content-Type` header's
/// charset, then a `<meta>` charset in the first 1024 bytes, else UTF-8; malformed
/// sequences become U+FFFD.
pub fn decode_html(bytes: &[u8], content_type: Option<&str>) -> String {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let (s, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return s.into_owned();
    }
    let enc = content_type
        .and_then(charset_param)
        .and_then(|l| Encoding::for_label(l.as_bytes()))
        .or_else(|| prescan(bytes))
        .unwrap_or(UTF_8);
    let (s, _) = enc.decode_without_bom_handling(bytes);
    s.into_owned()
}

#[cfg(test)]
mod tests {
    use super::decode_html;

    #[test]
    fn utf8_bom() {
        assert_eq!(
            decode_html(
                b"\xEF\xBB\xBFh\xC3\xA9",
                Some("text/html; charset=iso-8859-1")
            ),
            "hé"
        );
    }

    #[test]
    fn utf16_boms() {
        assert_eq!(decode_html(b"\xFF\xFEh\x00i\x00", None), "hi");
        assert_eq!(decode_html(b"\xFE\xFF\x00h\x00i", None), "hi");
    }

    #[test]
    fn header_charset() {
        assert_eq!(
            decode_html(b"caf\xE9", Some("text/html; charset=\"ISO-8859-1\"")),
            "café"
        );
        // The header wins over a meta tag.
        assert_eq!(
            decode_html(
                b"<meta charset=utf-8>caf\xE9",
                Some("text/html;charset=windows-1252")
            ),
            "<meta charset=utf-8>café"
        );
    }

    #[test]
    fn meta_shift_jis() {
        let mut b = b"<html><head><meta charset=shift_jis></head><body>".to_vec();
        b.extend_from_slice(b"\x93\xfa\x96\x7b");
        assert!(decode_html(&b, None).ends_with("日本"));
    }

    #[test]
    fn http_equiv_windows_1251_after_500_bytes() {
        let mut b = b"<html><head><!--".to_vec();
        b.extend(std::iter::repeat_n(b'x', 500));
        b.extend_from_slice(b"--><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\"></head>\xCF\xF0\xE8\xE2\xE5\xF2");
        assert!(decode_html(&b, None).ends_with("Привет"));
    }

    #[test]
    fn unknown_label_falls_back_to_utf8() {
        assert_eq!(
            decode_html(
                "<meta charset=klingon>é".as_bytes(),
                Some("text/html; charset=nope")
            ),
            "<meta charset=klingon>é"
        );
        assert_eq!(decode_html(b"ok\xFF", None), "ok\u{FFFD}");
    }
}
