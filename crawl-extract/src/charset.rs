//! Character-set detection and decoding of fetched HTML bytes.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8};
use markup5ever::data::C1_REPLACEMENTS;

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
/// charset, then a `<meta>` charset in the first 1024 bytes. A page that declares none
/// is UTF-8 when its bytes are; else its encoding is guessed from the bytes as Firefox
/// does (`chardetng`: windows-1252 for Western text, Shift_JIS, GBK, windows-1251...),
/// not read as UTF-8 with every accented letter lost. A declared legacy charset gives way
/// to UTF-8 when the bytes are valid UTF-8 with non-ASCII text in them (a template's stale
/// `charset=gb2312`, a server's default ISO-8859-1): legacy text is next to never valid
/// UTF-8 (an `é` before a plain letter already is not), and reading UTF-8 as GBK or
/// Latin-1 garbles every character. Malformed sequences become U+FFFD.
pub fn decode_html(bytes: &[u8], content_type: Option<&str>) -> String {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let (s, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return s.into_owned();
    }
    let declared = content_type
        .and_then(charset_param)
        .and_then(|l| Encoding::for_label(l.as_bytes()))
        .or_else(|| prescan(bytes));
    // A UTF-8 declaration is kept (malformed bytes become U+FFFD), and so is any on ASCII
    // bytes (ISO-2022-JP is written in them, UTF-16 is not UTF-8).
    let enc = match declared {
        Some(enc) if enc == UTF_8 || bytes.is_ascii() => enc,
        _ => match std::str::from_utf8(bytes) {
            Ok(s) => return s.to_owned(),
            Err(_) => declared.unwrap_or_else(|| {
                let mut detector =
                    chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
                detector.feed(bytes, true);
                detector.guess(None, chardetng::Utf8Detection::Allow)
            }),
        },
    };
    let (s, _) = enc.decode_without_bom_handling(bytes);
    s.into_owned()
}

/// The byte a UTF-8 continuation byte (0x80–0xBF) became when it was read as Latin-1 or
/// windows-1252: the character itself below U+0100, else windows-1252's mapping (`€`, `’`).
fn continuation(c: char) -> Option<u8> {
    if ('\u{80}'..='\u{BF}').contains(&c) {
        return Some(c as u8);
    }
    C1_REPLACEMENTS
        .iter()
        .position(|&r| r == Some(c))
        .map(|i| 0x80 + i as u8)
}

/// Whether `c` read as a continuation byte is rare enough after a letter to be trusted
/// as one: a C1 control, or a windows-1252 sign no typist puts after a capital (not the
/// quotes, dashes, ellipsis, bullet, `€` or `™` that follow `CAFÉ` in real text).
fn rare_continuation(c: char) -> bool {
    ('\u{80}'..='\u{9F}').contains(&c)
        || matches!(
            continuation(c),
            Some(0x82..=0x84 | 0x86..=0x8C | 0x8E | 0x98 | 0x9A..=0x9F)
        )
}

/// The sign a C1 control stands for when it is a windows-1252 byte that was read as
/// Latin-1 (HTML's table for `&#128;`–`&#159;`); `None` for the five bytes windows-1252
/// leaves unassigned and for other characters.
pub(crate) fn windows_1252_sign(c: char) -> Option<char> {
    let i = (c as u32).checked_sub(0x80).filter(|&i| i < 0x20)?;
    C1_REPLACEMENTS[i as usize]
}

/// Repairs text that was UTF-8 read as Latin-1 or windows-1252 somewhere upstream and
/// served again as UTF-8 (*double-encoded*: `Â ` for a no-break space, `â€™` for `’`,
/// `Ã©` for `é`): the page's bytes are valid and its charset right, but every non-ASCII
/// character of the source shows as two or three. A run of a lead (`Â`–`ô`) and the
/// continuations UTF-8 needs after it is replaced by the character those bytes encode
/// when they are valid UTF-8. Runs led by `Â`/`Ã` (the Latin-1 range) or by a three- or
/// four-byte lead are taken whole; other two-byte leads are capitals and `ß`, which real
/// text follows with quotes and dashes (`CAFÉ’S`), so they are taken only before a
/// continuation no text has there (a C1 control, `‚`, `ˆ`, `›`...: Polish `ł` was `Å‚`).
pub(crate) fn repair_double_utf8(s: &str) -> Cow<'_, str> {
    // Leads U+00C2–U+00F4 are the bytes C3 82–C3 B4 in UTF-8.
    let b = s.as_bytes();
    if !b
        .windows(2)
        .any(|w| w[0] == 0xC3 && (0x82..=0xB4).contains(&w[1]))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut done = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, lead)) = chars.next() {
        let need = match lead {
            '\u{C2}'..='\u{DF}' => 1,
            '\u{E0}'..='\u{EF}' => 2,
            '\u{F0}'..='\u{F4}' => 3,
            _ => continue,
        };
        let trusted = need > 1 || matches!(lead, '\u{C2}' | '\u{C3}');
        let mut bytes = [lead as u8, 0, 0, 0];
        let mut ahead = chars.clone();
        let mut end = i + lead.len_utf8();
        let mut taken = 0;
        for slot in &mut bytes[1..=need] {
            let Some((j, c)) = ahead.next() else { break };
            match continuation(c) {
                Some(byte) if trusted || rare_continuation(c) => {
                    *slot = byte;
                    end = j + c.len_utf8();
                    taken += 1;
                }
                _ => break,
            }
        }
        let Some(fixed) = (taken == need)
            .then(|| std::str::from_utf8(&bytes[..=need]).ok())
            .flatten()
        else {
            continue;
        };
        out.push_str(&s[done..i]);
        // A C1 control was a windows-1252 byte read as Latin-1 once more (`Â•` for
        // 0x95): it is left for the text decoder, which reads it as that sign.
        out.push_str(fixed);
        done = end;
        chars = ahead;
    }
    if done == 0 {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[done..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::{decode_html, repair_double_utf8};

    #[test]
    fn double_encoded_utf8_is_repaired() {
        let fix = |s: &str| repair_double_utf8(s).into_owned();
        // Read as windows-1252: the common signatures.
        assert_eq!(fix("offers\u{C2}\u{A0}a free"), "offers\u{A0}a free");
        assert_eq!(fix("don\u{E2}\u{20AC}\u{2122}t"), "don\u{2019}t");
        assert_eq!(
            fix("caf\u{C3}\u{A9} cr\u{C3}\u{A8}me"),
            "caf\u{E9} cr\u{E8}me"
        );
        // Read as Latin-1: the em dash's bytes came through as C1 controls.
        assert_eq!(fix("right\u{E2}\u{80}\u{94}robust"), "right\u{2014}robust");
        // A four-byte emoji, and Polish ł (C5 82) behind a capital.
        assert_eq!(fix("\u{F0}\u{178}\u{2DC}\u{20AC}!"), "\u{1F600}!");
        assert_eq!(fix("Wroc\u{C5}\u{201A}aw"), "Wroc\u{142}aw");
        // Latin-1 read as Latin-1: À is C3 80, the 80 a C1 control.
        assert_eq!(fix("\u{C3}\u{80} la carte"), "\u{C0} la carte");
        // A windows-1252 bullet read as Latin-1, then double-encoded: its C1 control,
        // which the text decoder reads as the bullet.
        assert_eq!(fix("\u{C2}\u{2022} one"), "\u{95} one");
    }

    #[test]
    fn real_latin_text_is_left_alone() {
        for s in [
            "CAF\u{C9}\u{2019}S MENU",                     // É then ’: not ɒ
            "\u{AB}Caf\u{E9}\u{BB} \u{E0} \u{AB}la\u{BB}", // «Café» à «la»
            "S\u{C3}O PAULO, na\u{EF}ve, \u{C9}T\u{C9}\u{2026}",
            "GR\u{DC}NE\u{2014}und \u{D6}\u{2013}",
            "\u{C3}",         // a lead at the end
            "\u{E2}\u{20AC}", // a three-byte lead one short
        ] {
            assert_eq!(repair_double_utf8(s), s);
        }
        // Overlong and surrogate byte sequences are not characters.
        assert_eq!(
            repair_double_utf8("\u{E0}\u{80}\u{80}"),
            "\u{E0}\u{80}\u{80}"
        );
        assert_eq!(
            repair_double_utf8("\u{ED}\u{A0}\u{80}"),
            "\u{ED}\u{A0}\u{80}"
        );
    }

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
    fn valid_utf8_outranks_a_legacy_declaration() {
        // A template that still says gb2312 around UTF-8 Chinese: read as GBK, every
        // character would be garbled ("TNW涓枃绔").
        let page = "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\">\
            <p>TNW中文站 10月14日报道</p>";
        assert_eq!(decode_html(page.as_bytes(), None), page);
        // A server's default ISO-8859-1 header around UTF-8 French.
        assert_eq!(
            decode_html("déjà vu".as_bytes(), Some("text/html; charset=ISO-8859-1")),
            "déjà vu"
        );
        // Real legacy bytes are not valid UTF-8, so the declaration still decides: GBK
        // Chinese, and Latin-1 whose `Ã©` happens to be a valid pair but whose `é` is not.
        let (gbk, _, _) = encoding_rs::GBK.encode("<meta charset=gbk><p>中文站报道</p>");
        assert!(decode_html(&gbk, None).ends_with("<p>中文站报道</p>"));
        assert_eq!(
            decode_html(b"\xC3\xA9t\xE9", Some("text/html; charset=iso-8859-1")),
            "Ã©té"
        );
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
        // A declared UTF-8 page keeps its malformed byte as U+FFFD.
        assert_eq!(
            decode_html(b"<meta charset=utf-8>ok\xFF", None),
            "<meta charset=utf-8>ok\u{FFFD}"
        );
    }

    #[test]
    fn undeclared_legacy_bytes_are_detected() {
        // windows-1252 French with no header and no <meta>: not "caf\u{FFFD}".
        let page = b"<html><body><p>Le caf\xE9 de la gare, ouvert \xE0 l'ann\xE9e, \
            propose des cr\xEApes et un th\xE9 \x96 d\xE9j\xE0 c\xE9l\xE8bre.</p></body></html>";
        let text = decode_html(page, None);
        assert!(text.contains("Le café de la gare"), "{text}");
        assert!(text.contains("thé – déjà célèbre"), "{text}");
        // Shift_JIS Japanese with no declaration.
        let (sjis, _, _) = encoding_rs::SHIFT_JIS
            .encode("<p>日本語のページです。東京の天気は晴れです。今日はとても良い日です。</p>");
        assert!(decode_html(&sjis, None).contains("東京の天気は晴れです"));
        // Undeclared UTF-8 stays UTF-8, and a declaration is never second-guessed.
        assert_eq!(decode_html("<p>café</p>".as_bytes(), None), "<p>café</p>");
        assert_eq!(
            decode_html(b"caf\xE9", Some("text/html; charset=utf-8")),
            "caf\u{FFFD}"
        );
    }
}
