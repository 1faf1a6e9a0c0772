//! A pull parser for one sitemap file (`<urlset>` or `<sitemapindex>`, sitemaps.org 0.9):
//! entries come out one at a time, so a file of any size is read in constant memory beyond
//! its body.

use std::io::BufRead;

use quick_xml::events::Event;
use quick_xml::Reader;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime};

/// Longest `<loc>` or `<lastmod>` text kept (the protocol allows 2,048 characters for a URL).
const MAX_TEXT: usize = 4096;

/// What kind of sitemap file the root element says this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `<urlset>`: page URLs.
    Urlset,
    /// `<sitemapindex>`: other sitemap files.
    Index,
}

/// One `<url>` or `<sitemap>` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The `<loc>` text, trimmed; `None` when missing, too long or with a bad reference.
    pub(crate) loc: Option<String>,
    /// `<lastmod>`, when it parses as a W3C datetime.
    pub(crate) lastmod: Option<OffsetDateTime>,
}

/// Pulls entries out of one sitemap file.
pub(crate) struct Parser<R: BufRead> {
    reader: Reader<R>,
    buf: Vec<u8>,
    kind: Option<Kind>,
    depth: usize,
    field: Option<Field>,
    loc: String,
    lastmod: String,
    bad: bool,
    in_entry: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Loc,
    Lastmod,
}

impl<R: BufRead> std::fmt::Debug for Parser<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl<R: BufRead> Parser<R> {
    pub(crate) fn new(input: R) -> Self {
        let mut reader = Reader::from_reader(input);
        reader.config_mut().trim_text(true);
        Parser {
            reader,
            buf: Vec::new(),
            kind: None,
            depth: 0,
            field: None,
            loc: String::new(),
            lastmod: String::new(),
            bad: false,
            in_entry: false,
        }
    }

    /// The root element's kind, once the first entry (or the end) was read.
    pub(crate) fn kind(&self) -> Option<Kind> {
        self.kind
    }

    /// Bytes of input consumed so far.
    pub(crate) fn position(&self) -> u64 {
        self.reader.buffer_position()
    }

    /// The next entry; `Ok(None)` at the end; `Err` with a reason when the file is not a
    /// well-formed sitemap (entries before the error were valid).
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        loop {
            self.buf.clear();
            let ev = self
                .reader
                .read_event_into(&mut self.buf)
                .map_err(|e| format!("not well-formed XML: {e}"))?;
            match ev {
                Event::Start(e) => {
                    self.depth += 1;
                    let name = e.local_name();
                    let name = name.as_ref();
                    match (self.depth, self.kind) {
                        (1, _) => {
                            self.kind = Some(match name {
                                "urlset" => Kind::Urlset,
                                "sitemapindex" => Kind::Index,
                                other => {
                                    return Err(format!(
                                        "root element <{}> is neither urlset nor sitemapindex",
                                        other
                                    ))
                                }
                            });
                        }
                        (2, Some(Kind::Urlset)) if name == "url" => self.open_entry(),
                        (2, Some(Kind::Index)) if name == "sitemap" => self.open_entry(),
                        (3, _) if self.in_entry => {
                            self.field = match name {
                                "loc" => Some(Field::Loc),
                                "lastmod" => Some(Field::Lastmod),
                                _ => None,
                            };
                        }
                        _ => {}
                    }
                }
                Event::Empty(e) if self.depth == 0 => {
                    let name = e.local_name();
                    return match name.as_ref() {
                        "urlset" => {
                            self.kind = Some(Kind::Urlset);
                            Ok(None)
                        }
                        "sitemapindex" => {
                            self.kind = Some(Kind::Index);
                            Ok(None)
                        }
                        _ => Err("root element is neither urlset nor sitemapindex".into()),
                    };
                }
                Event::Text(t) => {
                    let text = t.xml10_content();
                    push_text(
                        self.field,
                        &mut self.loc,
                        &mut self.lastmod,
                        &mut self.bad,
                        &text,
                    );
                }
                Event::CData(t) => {
                    let text = t.xml10_content();
                    push_text(
                        self.field,
                        &mut self.loc,
                        &mut self.lastmod,
                        &mut self.bad,
                        &text,
                    );
                }
                Event::GeneralRef(r) if self.field.is_some() => {
                    let c = if r.is_char_ref() {
                        r.resolve_char_ref().ok().flatten()
                    } else {
                        match &*r {
                            "amp" => Some('&'),
                            "lt" => Some('<'),
                            "gt" => Some('>'),
                            "quot" => Some('"'),
                            "apos" => Some('\''),
                            _ => None,
                        }
                    };
                    match c {
                        Some(c) => push_text(
                            self.field,
                            &mut self.loc,
                            &mut self.lastmod,
                            &mut self.bad,
                            c.encode_utf8(&mut [0; 4]),
                        ),
                        None => self.bad = true,
                    }
                }
                Event::End(_) => {
                    let closing = self.depth;
                    self.depth = self.depth.saturating_sub(1);
                    if closing == 3 {
                        self.field = None;
                    } else if closing == 2 && self.in_entry {
                        self.in_entry = false;
                        return Ok(Some(self.take_entry()));
                    }
                }
                Event::Eof => {
                    if self.kind.is_none() {
                        return Err("no sitemap root element".into());
                    }
                    if self.depth > 0 {
                        return Err("the file ends inside an element".into());
                    }
                    return Ok(None);
                }
                _ => {}
            }
        }
    }

    fn open_entry(&mut self) {
        self.in_entry = true;
        self.loc.clear();
        self.lastmod.clear();
        self.bad = false;
        self.field = None;
    }

    fn take_entry(&mut self) -> Entry {
        let loc = self.loc.trim();
        Entry {
            loc: (!self.bad && !loc.is_empty()).then(|| loc.to_owned()),
            lastmod: parse_lastmod(self.lastmod.trim()),
        }
    }
}

/// Appends text to the field being read (a free function: the event borrows the buffer).
fn push_text(
    field: Option<Field>,
    loc: &mut String,
    lastmod: &mut String,
    bad: &mut bool,
    text: &str,
) {
    let target = match field {
        Some(Field::Loc) => loc,
        Some(Field::Lastmod) => lastmod,
        None => return,
    };
    if target.len() + text.len() > MAX_TEXT {
        *bad = true;
    } else {
        target.push_str(text);
    }
}

/// A W3C datetime as sitemaps use it: `2024-05-01`, `2024-05-01T10:20:30+02:00`,
/// `2024-05-01T10:20+02:00`, fractional seconds allowed; a date alone is midnight UTC.
pub fn parse_lastmod(s: &str) -> Option<OffsetDateTime> {
    if s.is_empty() {
        return None;
    }
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Some(t);
    }
    if let Ok(d) = Date::parse(s, format_description!("[year]-[month]-[day]")) {
        return Some(PrimitiveDateTime::new(d, time::Time::MIDNIGHT).assume_utc());
    }
    // Minutes without seconds: insert `:00` and read it as RFC 3339.
    if s.len() > 16 && s.as_bytes().get(10) == Some(&b'T') && s.as_bytes().get(13) == Some(&b':') {
        let with_secs = format!("{}:00{}", &s[..16], &s[16..]);
        if let Ok(t) = OffsetDateTime::parse(&with_secs, &Rfc3339) {
            return Some(t);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(xml: &str) -> (Option<Kind>, Vec<Entry>, Option<String>) {
        let mut p = Parser::new(xml.as_bytes());
        let mut out = Vec::new();
        loop {
            match p.next_entry() {
                Ok(Some(e)) => out.push(e),
                Ok(None) => return (p.kind(), out, None),
                Err(e) => return (p.kind(), out, Some(e)),
            }
        }
    }

    #[test]
    fn urlset_entries_with_lastmod_and_entities() {
        let (kind, e, err) = all(r#"<?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
                    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
              <url><loc> https://example.com/a?x=1&amp;y=2 </loc><lastmod>2024-05-01</lastmod>
                <image:image><image:loc>https://cdn.example.com/i.png</image:loc></image:image>
              </url>
              <url><loc><![CDATA[https://example.com/b]]></loc>
                   <lastmod>2024-05-01T10:20:30+02:00</lastmod></url>
              <url><lastmod>2024-05-01</lastmod></url>
              <url><loc>https://example.com/&bogus;</loc></url>
            </urlset>"#);
        assert_eq!(err, None);
        assert_eq!(kind, Some(Kind::Urlset));
        assert_eq!(e.len(), 4);
        assert_eq!(e[0].loc.as_deref(), Some("https://example.com/a?x=1&y=2"));
        assert_eq!(
            e[0].lastmod,
            Some(time::macros::datetime!(2024-05-01 0:00 UTC))
        );
        assert_eq!(e[1].loc.as_deref(), Some("https://example.com/b"));
        assert_eq!(
            e[1].lastmod,
            Some(time::macros::datetime!(2024-05-01 8:20:30 UTC))
        );
        assert_eq!(e[2].loc, None);
        assert_eq!(e[3].loc, None);
    }

    #[test]
    fn index_entries() {
        let (kind, e, err) = all(
            "<sitemapindex><sitemap><loc>https://example.com/s1.xml.gz</loc></sitemap>\
             <sitemap><loc>https://example.com/s2.xml</loc></sitemap></sitemapindex>",
        );
        assert_eq!((kind, err), (Some(Kind::Index), None));
        assert_eq!(e.len(), 2);
        assert_eq!(e[1].loc.as_deref(), Some("https://example.com/s2.xml"));
    }

    #[test]
    fn not_a_sitemap_is_an_error_and_entries_before_a_break_are_kept() {
        assert!(all("<html><body>hi</body></html>").2.is_some());
        assert!(all("").2.is_some());
        assert!(all("just text").2.is_some());
        let (_, e, err) = all("<urlset><url><loc>https://e.com/a</loc></url><url><loc>x</lo");
        assert_eq!(e.len(), 1);
        assert!(err.is_some());
        let (_, e, err) = all("<urlset><url><loc>https://e.com/a</loc></url>");
        assert_eq!(e.len(), 1);
        assert!(err.is_some());
        let (_, e, err) = all("<urlset><url><loc>https://e.com/a</loc></url></wrong></urlset>");
        assert_eq!(e.len(), 1);
        assert!(err.is_some());
    }

    #[test]
    fn lastmod_formats() {
        assert!(parse_lastmod("2024-05-01T10:20+02:00").is_some());
        assert!(parse_lastmod("2024-05-01T10:20:30.5Z").is_some());
        assert!(parse_lastmod("yesterday").is_none());
        assert!(parse_lastmod("").is_none());
    }
}
