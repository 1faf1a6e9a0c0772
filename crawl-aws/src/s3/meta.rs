//! Object metadata and key rules of the S3 sink.

/// Metadata name holding the page URL (in the ASCII form of [`encode`]).
pub(crate) const META_URL: &str = "url";
/// Metadata name holding the hex SHA-256 of the markdown body.
pub(crate) const META_HASH: &str = "content-hash";
/// Content type of every stored document.
pub(crate) const MARKDOWN: &str = "text/markdown; charset=utf-8";
/// S3's limit on key length, in bytes.
pub(crate) const MAX_KEY_BYTES: usize = 1024;

/// The metadata form of a URL: printable ASCII kept as is (a parsed URL is already ASCII,
/// so this is the URL verbatim), any other byte percent-encoded, since S3 metadata must be
/// ASCII. Writers compare these forms, so no decoding is needed.
pub(crate) fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if (0x20..0x7f).contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether a key relative to the job's prefix is a document (`{domain}/{slug}.md`), as
/// opposed to an aux object, an object of a dot folder or the manifest.
pub(crate) fn is_document(rel: &str) -> bool {
    rel.contains('/') && !rel.starts_with('.')
}

/// Content type of an auxiliary object, from its name.
pub(crate) fn aux_content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, e)| e) {
        Some("md") => MARKDOWN,
        Some("jsonl") => "application/x-ndjson",
        Some("json") => "application/json",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_form_is_ascii_and_keeps_urls_verbatim() {
        let u = url::Url::parse("https://bücher.example/straße?q=ä#f").unwrap();
        assert_eq!(encode(u.as_str()), u.as_str());
        let e = encode("ünï 100%\u{1}");
        assert!(e.bytes().all(|b| (0x20..0x7f).contains(&b)), "{e}");
        assert_eq!(e, "%C3%BCn%C3%AF 100%%01");
    }

    #[test]
    fn documents_are_told_from_other_objects() {
        assert!(is_document("example.com/a.md"));
        assert!(!is_document("site-template.md"));
        assert!(!is_document(".manifest/ab.json"));
        assert!(!is_document("manifest.json"));
    }
}
