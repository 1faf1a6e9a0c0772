//! A small, allocation-light HTML tokenizer.
//!
//! It is not a full WHATWG tokenizer: it recognises tags, attributes, comments,
//! doctypes and raw-text elements, which is all the extractor needs. It never
//! recurses and only slices the input at ASCII delimiters, so any `&str` is safe.

use crate::charset::{repair_double_utf8, windows_1252_sign};
use std::borrow::Cow;

/// One attribute of a start tag: name as written, value still entity-encoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawAttr<'a> {
    pub(crate) name: &'a str,
    pub(crate) value: &'a str,
}

/// Receives the tokens of a document in order.
pub(crate) trait Sink<'a> {
    /// A start tag; `name` is lower-cased ASCII when short, otherwise as written.
    fn start_tag(&mut self, name: &str, attrs: &[RawAttr<'a>], self_closing: bool);
    /// An end tag.
    fn end_tag(&mut self, name: &str);
    /// Character data (entity-encoded).
    fn text(&mut self, raw: &'a str);
    /// Content of a raw-text element such as `<script>` or `<title>`.
    fn raw_text(&mut self, element: &str, raw: &'a str);
}

/// Elements whose content is not markup.
fn is_raw_text(name: &str) -> bool {
    matches!(
        name,
        "script" | "style" | "title" | "textarea" | "xmp" | "noembed" | "noframes" | "iframe"
    )
}

fn lower_name<'b>(name: &'b str, buf: &'b mut [u8; 24]) -> Cow<'b, str> {
    if name.bytes().all(|b| !b.is_ascii_uppercase()) {
        return Cow::Borrowed(name);
    }
    if name.len() <= buf.len() && name.is_ascii() {
        let n = name.len();
        for (d, s) in buf.iter_mut().zip(name.bytes()) {
            *d = s.to_ascii_lowercase();
        }
        // The bytes are ASCII, so this cannot fail.
        return Cow::Borrowed(std::str::from_utf8(&buf[..n]).unwrap_or(""));
    }
    Cow::Owned(name.to_ascii_lowercase())
}

fn find_byte(hay: &[u8], from: usize, b: u8) -> Option<usize> {
    hay.get(from..)?
        .iter()
        .position(|&c| c == b)
        .map(|p| p + from)
}

fn find_sub(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Finds `</name` (ASCII case-insensitive) at or after `from`.
fn find_end_tag(hay: &[u8], from: usize, name: &str) -> Option<usize> {
    let nb = name.as_bytes();
    let mut i = from;
    while let Some(p) = find_byte(hay, i, b'<') {
        if hay.get(p + 1) == Some(&b'/')
            && hay.len() >= p + 2 + nb.len()
            && hay[p + 2..p + 2 + nb.len()].eq_ignore_ascii_case(nb)
        {
            let after = hay.get(p + 2 + nb.len()).copied();
            if matches!(
                after,
                None | Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
            ) {
                return Some(p);
            }
        }
        i = p + 1;
    }
    None
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

/// Tokenizes `src`, feeding `sink`. Linear time; no recursion.
pub(crate) fn tokenize<'a, S: Sink<'a>>(src: &'a str, sink: &mut S) {
    let b = src.as_bytes();
    let len = b.len();
    let mut pos = 0usize;
    let mut text_start = 0usize;
    let mut attrs: Vec<RawAttr<'a>> = Vec::new();
    let mut name_buf = [0u8; 24];
    // Open `<svg>`/`<math>` elements: inside them `<style/>` and `<script/>` are empty
    // foreign elements; outside, HTML ignores the self-closing flag and `<script .../>`
    // starts raw text as `<script>` does (else the next `<script>` nests in it and the
    // rest of the page is taken for script).
    let mut foreign = 0u32;
    while let Some(lt) = find_byte(b, pos, b'<') {
        let next = b.get(lt + 1).copied().unwrap_or(b' ');
        if next == b'!' || next == b'?' {
            if lt > text_start {
                sink.text(&src[text_start..lt]);
            }
            let end = if b[lt + 1..].starts_with(b"!--") {
                find_sub(b, lt + 4, b"-->").map_or(len, |p| p + 3)
            } else {
                find_byte(b, lt + 2, b'>').map_or(len, |p| p + 1)
            };
            pos = end;
            text_start = end;
            continue;
        }
        let is_end = next == b'/';
        let name_start = if is_end { lt + 2 } else { lt + 1 };
        if !b.get(name_start).is_some_and(|c| c.is_ascii_alphabetic()) {
            if is_end && b.get(name_start) == Some(&b'>') {
                // `</>` is dropped entirely.
                if lt > text_start {
                    sink.text(&src[text_start..lt]);
                }
                pos = name_start + 1;
                text_start = pos;
            } else {
                pos = lt + 1;
            }
            continue;
        }
        if lt > text_start {
            sink.text(&src[text_start..lt]);
        }
        let mut i = name_start;
        while i < len && !is_space(b[i]) && b[i] != b'/' && b[i] != b'>' {
            i += 1;
        }
        let raw_name = &src[name_start..i];
        attrs.clear();
        let mut self_closing = false;
        // Attributes.
        loop {
            while i < len && (is_space(b[i]) || (b[i] == b'/' && b.get(i + 1) != Some(&b'>'))) {
                i += 1;
            }
            if i >= len {
                break;
            }
            if b[i] == b'>' {
                i += 1;
                break;
            }
            if b[i] == b'/' {
                self_closing = true;
                i += 2;
                break;
            }
            let ns = i;
            i += 1;
            while i < len && !is_space(b[i]) && b[i] != b'/' && b[i] != b'>' && b[i] != b'=' {
                i += 1;
            }
            let aname = &src[ns..i];
            while i < len && is_space(b[i]) {
                i += 1;
            }
            let mut value = "";
            if i < len && b[i] == b'=' {
                i += 1;
                while i < len && is_space(b[i]) {
                    i += 1;
                }
                if i < len && (b[i] == b'"' || b[i] == b'\'') {
                    let q = b[i];
                    let vs = i + 1;
                    let ve = find_byte(b, vs, q).unwrap_or(len);
                    value = &src[vs..ve];
                    i = (ve + 1).min(len);
                } else {
                    let vs = i;
                    while i < len && !is_space(b[i]) && b[i] != b'>' {
                        i += 1;
                    }
                    value = &src[vs..i];
                }
            }
            if !is_end && attrs.len() < 256 {
                attrs.push(RawAttr { name: aname, value });
            }
        }
        pos = i;
        text_start = i;
        let name = lower_name(raw_name, &mut name_buf);
        let svg_or_math = matches!(&*name, "svg" | "math");
        if is_end {
            if svg_or_math {
                foreign = foreign.saturating_sub(1);
            }
            sink.end_tag(&name);
            continue;
        }
        if svg_or_math && !self_closing {
            foreign += 1;
        }
        sink.start_tag(&name, &attrs, self_closing);
        // A self-closing one with no end tag anywhere after it is an empty element.
        let end_tag = if is_raw_text(&name) && (!self_closing || foreign == 0) {
            find_end_tag(b, pos, &name).or((!self_closing).then_some(len))
        } else {
            None
        };
        if let Some(end) = end_tag {
            sink.raw_text(&name, &src[pos..end]);
            sink.end_tag(&name);
            pos = find_byte(b, end, b'>').map_or(len, |p| p + 1);
            text_start = pos;
        } else if self_closing && foreign == 0 && is_raw_text(&name) {
            sink.end_tag(&name);
        }
    }
    if text_start < len {
        sink.text(&src[text_start..]);
    }
}

/// True for characters that are invisible and can hide or reorder text:
/// zero-width characters, bidi overrides/isolates, BOM, soft hyphen, Unicode tag
/// characters (U+E0000 block, "ASCII smuggling": invisible copies of ASCII that a model
/// reads), variation selectors (used the same way), the combining grapheme joiner,
/// Hangul and Khmer fillers, interlinear annotation and shorthand/musical format controls.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Appends `raw` to `out`, repairing double-encoded UTF-8, decoding character references
/// and dropping invisible characters and C0 controls other than whitespace.
pub(crate) fn decode_into(raw: &str, out: &mut String) {
    let needs_work = raw
        .bytes()
        .any(|b| b == b'&' || b >= 0x80 || (b < 0x20 && !is_space(b)));
    if !needs_work {
        out.push_str(raw);
        return;
    }
    let repaired = repair_double_utf8(raw);
    let mut rest: &str = &repaired;
    // U+0085 is a control Rust counts as whitespace; as a windows-1252 byte it is `…`.
    while let Some(p) = rest.find(|c: char| {
        c == '&' || is_invisible(c) || (c.is_control() && (!c.is_whitespace() || c == '\u{85}'))
    }) {
        out.push_str(&rest[..p]);
        let tail = &rest[p..];
        if !tail.starts_with('&') {
            let c = tail.chars().next().unwrap_or('\0');
            // A C1 control is a windows-1252 byte read as Latin-1 (`we\u{92}re`): the
            // sign it stands for, as HTML reads `&#146;`; the five unassigned stay out.
            if let Some(sign) = windows_1252_sign(c) {
                out.push(sign);
            }
            rest = &tail[c.len_utf8()..];
            continue;
        }
        match decode_entity(&tail[1..]) {
            Some((s, used)) => {
                for c in s.chars().filter(|&c| !is_invisible(c)) {
                    out.push(c);
                }
                rest = &tail[1 + used..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
}

/// Decodes one character reference after the `&`; returns the text and the bytes used.
fn decode_entity(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    if b.first() == Some(&b'#') {
        let (hex, start) = match b.get(1) {
            Some(b'x' | b'X') => (true, 2),
            _ => (false, 1),
        };
        let mut i = start;
        while i < b.len()
            && i - start < 8
            && (if hex {
                b[i].is_ascii_hexdigit()
            } else {
                b[i].is_ascii_digit()
            })
        {
            i += 1;
        }
        if i == start {
            return None;
        }
        let n = u32::from_str_radix(&s[start..i], if hex { 16 } else { 10 }).ok()?;
        if b.get(i) == Some(&b';') {
            i += 1;
        }
        let c = char::from_u32(n)
            .map(|c| windows_1252_sign(c).unwrap_or(c))
            .filter(|&c| c != '\0')
            .unwrap_or('\u{FFFD}');
        return Some((c.to_string(), i));
    }
    let mut i = 0;
    while i < b.len() && i < 32 && b[i].is_ascii_alphanumeric() {
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let with_semi = b.get(i) == Some(&b';');
    let key_end = if with_semi { i + 1 } else { i };
    // Longest match first (legacy entities may lack the semicolon).
    let mut end = key_end;
    while end > 0 {
        if let Some(&(c1, c2)) = markup5ever::data::NAMED_ENTITIES.get(&s[..end]) {
            if c1 != 0 {
                let mut out = String::new();
                out.extend(char::from_u32(c1));
                if c2 != 0 {
                    out.extend(char::from_u32(c2));
                }
                return Some((out, end));
            }
        }
        if end < key_end {
            break;
        }
        end -= 1;
        if end == 0 || end < key_end.saturating_sub(1) {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> String {
        let mut o = String::new();
        decode_into(s, &mut o);
        o
    }

    #[test]
    fn entities() {
        assert_eq!(
            dec("a &amp; b &lt;&gt; &#65;&#x42; &copy &nbsp;"),
            "a & b <> AB \u{a9} \u{a0}"
        );
        assert_eq!(dec("&unknown; &"), "&unknown; &");
        assert_eq!(dec("x\u{200B}y\u{202E}z&#x200b;"), "xyz");
        assert_eq!(dec("&#128;"), "\u{20ac}");
        // A raw C1 control is read as windows-1252, as its reference is.
        assert_eq!(
            dec("we\u{92}re \u{95} New York\u{97}Union\u{81}"),
            "we\u{2019}re \u{2022} New York\u{2014}Union"
        );
        // Double-encoded UTF-8 is repaired before its C1 controls would be dropped.
        assert_eq!(
            dec("a\u{E2}\u{80}\u{94}b &amp; don\u{E2}\u{20AC}\u{2122}t"),
            "a\u{2014}b & don\u{2019}t"
        );
    }
}
