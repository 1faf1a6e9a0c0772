//! Storage keys and file bytes shared by every sink, so a document lands at the same key with
//! the same bytes on disk, in S3 or anywhere else: `{job-id}/{domain}/{page-title}.md`.

use std::borrow::Cow;
use std::fmt::Write as _;

use url::Url;

use crate::job::JobId;
use crate::page::Document;

/// Longest slug, in bytes (well under every filesystem's 255 and S3's 1,024-byte keys).
pub const MAX_SLUG_BYTES: usize = 96;

const RESERVED: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9", "manifest",
];

/// The domain segment of a key: the host, lowercased, with `_PORT` when the port is not the
/// scheme's default. Contains only `[a-z0-9.-_]` and never starts with a dot.
pub fn domain_segment(url: &Url) -> String {
    let host = url.host_str().unwrap_or("unknown");
    let mut s: String = host
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '.' | '-' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '_',
        })
        .collect();
    while s.starts_with('.') {
        s.remove(0);
    }
    if s.is_empty() {
        s.push_str("unknown");
    }
    if let Some(p) = url.port() {
        let _ = write!(s, "_{p}");
    }
    s
}

/// A safe file name stem from a page title (or, without one, from the URL's path): letters
/// and digits kept, everything else folded to single `-`, no dot segments, no path
/// separators, no control characters, no reserved device names, at most
/// [`MAX_SLUG_BYTES`] bytes.
pub fn slug(title: Option<&str>, url: &Url) -> String {
    let from_title = title.map(slugify).filter(|s| !s.is_empty());
    let s = from_title.unwrap_or_else(|| {
        let path = url.path().trim_matches('/');
        let p = slugify(path);
        if p.is_empty() {
            "index".to_owned()
        } else {
            p
        }
    });
    if RESERVED.contains(&s.as_str()) {
        format!("page-{s}")
    } else {
        s
    }
}

fn slugify(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_SLUG_BYTES));
    let mut dash = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            for l in c.to_lowercase() {
                if out.len() + l.len_utf8() > MAX_SLUG_BYTES {
                    return out.trim_end_matches('-').to_owned();
                }
                out.push(l);
            }
            dash = false;
        } else if !dash && !out.is_empty() {
            if out.len() + 1 > MAX_SLUG_BYTES {
                break;
            }
            out.push('-');
            dash = true;
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// Short stable hash of a URL (8 hex digits of SHA-256), used to tell apart pages whose
/// titles collide.
pub fn url_hash8(url: &Url) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(url.as_str().as_bytes())[..4])
}

/// The two keys a document may take: the plain title key, and the one with the URL hash
/// that a sink uses when another URL of the same job already holds the plain key.
pub fn document_keys(doc: &Document) -> (String, String) {
    let dir = format!("{}/{}", doc.job, doc.domain());
    let s = slug(doc.meta.title.as_deref(), &doc.meta.url);
    let ext = doc.linked.as_ref().map_or("md", |l| l.kind.extension());
    (
        format!("{dir}/{s}.{ext}"),
        format!("{dir}/{s}-{}.{ext}", url_hash8(&doc.meta.url)),
    )
}

/// The key a sink gives `doc`: the key its URL already has (`existing`), else the plain
/// title key unless `holder_of` names another URL holding it, else the hashed key. Every
/// sink that keeps a url → key index uses this rule, so keys agree across sinks.
pub fn choose_key<'a>(
    doc: &Document,
    existing: Option<&str>,
    holder_of: impl FnOnce(&str) -> Option<&'a str>,
) -> String {
    choose_key_by(doc, existing, |plain| {
        holder_of(plain).is_some_and(|u| u != doc.meta.url.as_str())
    })
}

/// [`choose_key`] for sinks whose index only tells whether another URL holds a key (a sink
/// that keeps digests instead of strings): `held_by_other(plain)` answers for the plain key.
pub fn choose_key_by(
    doc: &Document,
    existing: Option<&str>,
    held_by_other: impl FnOnce(&str) -> bool,
) -> String {
    if let Some(k) = existing {
        return k.to_owned();
    }
    let (plain, hashed) = document_keys(doc);
    if held_by_other(&plain) {
        hashed
    } else {
        plain
    }
}

/// The bytes of a job's `manifest.json`: a JSON object, sorted by URL, of
/// `{key, content_hash}` per document. Serialized straight from `docs` (no intermediate
/// JSON tree), so a large job's manifest costs little more memory than its bytes.
pub fn manifest_json(docs: &[crate::page::StoredDoc]) -> crate::Result<Vec<u8>> {
    let mut out = Vec::new();
    write_manifest_json(&mut out, docs)?;
    Ok(out)
}

/// Writes the bytes of [`manifest_json`] to `w` as they are produced (a sink that writes a
/// file need not hold the whole manifest in memory).
pub fn write_manifest_json(
    w: impl std::io::Write,
    docs: &[crate::page::StoredDoc],
) -> crate::Result<()> {
    use serde::ser::SerializeMap;

    #[derive(serde::Serialize)]
    struct Entry<'a> {
        content_hash: &'a str,
        key: &'a str,
    }
    struct Sorted<'a>(Vec<&'a crate::page::StoredDoc>);
    impl serde::Serialize for Sorted<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut map = s.serialize_map(Some(self.0.len()))?;
            for d in &self.0 {
                let entry = Entry {
                    content_hash: &d.content_hash,
                    key: &d.key,
                };
                map.serialize_entry(d.url.as_str(), &entry)?;
            }
            map.end()
        }
    }
    let mut sorted: Vec<&crate::page::StoredDoc> = docs.iter().collect();
    sorted.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
    // One entry per URL (the last given wins, as the map this replaced did).
    sorted.reverse();
    sorted.dedup_by(|a, b| a.url == b.url);
    sorted.reverse();
    serde_json::to_writer_pretty(w, &Sorted(sorted))
        .map_err(|e| crate::Error::new(crate::ErrorKind::Storage, format!("manifest: {e}")))
}

/// Writes the bytes of [`manifest_json`] entry by entry, for documents given in URL order,
/// one per URL (a sink paging through a job's documents need not hold them all).
#[derive(Debug)]
pub struct ManifestJsonWriter<W: std::io::Write> {
    w: W,
    first: bool,
}

impl<W: std::io::Write> ManifestJsonWriter<W> {
    /// Starts the manifest.
    pub fn new(mut w: W) -> crate::Result<Self> {
        w.write_all(b"{").map_err(manifest_io)?;
        Ok(ManifestJsonWriter { w, first: true })
    }

    /// Writes one document (after every document of a smaller URL).
    pub fn entry(&mut self, d: &crate::page::StoredDoc) -> crate::Result<()> {
        let sep: &[u8] = if self.first { b"\n  " } else { b",\n  " };
        self.first = false;
        self.w.write_all(sep).map_err(manifest_io)?;
        let json = |v: &str| serde_json::to_string(v).map_err(|e| manifest_io(e.into()));
        let text = format!(
            "{}: {{\n    \"content_hash\": {},\n    \"key\": {}\n  }}",
            json(d.url.as_str())?,
            json(&d.content_hash)?,
            json(&d.key)?
        );
        self.w.write_all(text.as_bytes()).map_err(manifest_io)
    }

    /// Ends the manifest and returns the writer.
    pub fn finish(mut self) -> crate::Result<W> {
        let end: &[u8] = if self.first { b"}" } else { b"\n}" };
        self.w.write_all(end).map_err(manifest_io)?;
        Ok(self.w)
    }
}

fn manifest_io(e: std::io::Error) -> crate::Error {
    crate::Error::new(crate::ErrorKind::Storage, format!("manifest: {e}"))
}

/// Key of a job's manifest (url → key list, JSON).
pub fn manifest_key(job: &JobId) -> String {
    format!("{job}/manifest.json")
}

/// Key of an auxiliary object (`site-template.md`, `chunks.jsonl`) under the job's prefix.
/// The name must be `[a-z0-9._-]`, at most 64 bytes, not starting with a dot.
pub fn aux_key(job: &JobId, name: &str) -> crate::Result<String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        });
    if ok {
        Ok(format!("{job}/{name}"))
    } else {
        Err(crate::Error::invalid(format!(
            "aux name: '{}' must be [a-z0-9._-], at most 64 bytes, not starting with '.'",
            name.chars().take(80).collect::<String>()
        )))
    }
}

/// The job's key prefix, with the trailing slash.
pub fn job_prefix(job: &JobId) -> String {
    format!("{job}/")
}

/// The markdown body as written: lines that would close the front matter (`---`) become a
/// thematic break that cannot (`* * *`).
pub fn escape_body(markdown: &str) -> Cow<'_, str> {
    let needs = markdown
        .lines()
        .any(|l| l.trim_end().len() >= 3 && l.trim_end().bytes().all(|b| b == b'-'));
    if !needs {
        return Cow::Borrowed(markdown);
    }
    let mut out = String::with_capacity(markdown.len());
    for line in markdown.split_inclusive('\n') {
        let t = line.trim_end();
        if t.len() >= 3 && t.bytes().all(|b| b == b'-') {
            out.push_str("* * *");
            out.push_str(&line[t.len()..]);
        } else {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

fn yaml_str(s: &str) -> String {
    // A JSON string is a valid YAML double-quoted scalar; control characters are escaped.
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// The bytes every sink stores for a document: YAML front matter then the markdown.
pub fn render_file(doc: &Document) -> String {
    let body = escape_body(&doc.markdown);
    let m = &doc.meta;
    let mut out = String::with_capacity(body.len() + 512);
    out.push_str("---\n");
    let _ = writeln!(out, "url: {}", yaml_str(m.url.as_str()));
    if let Some(c) = &m.canonical {
        let _ = writeln!(out, "canonical: {}", yaml_str(c.as_str()));
    }
    if let Some(t) = &m.title {
        let _ = writeln!(out, "title: {}", yaml_str(t));
    }
    if let Some(d) = &m.description {
        let _ = writeln!(out, "description: {}", yaml_str(d));
    }
    if let Some(l) = &m.language {
        let _ = writeln!(out, "language: {}", yaml_str(l));
    }
    let fetched = m
        .fetched_at
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let _ = writeln!(out, "fetched_at: {}", yaml_str(&fetched));
    let _ = writeln!(out, "depth: {}", m.depth);
    let _ = writeln!(
        out,
        "fetched_by: {}",
        match m.path {
            crate::page::FetchPath::Http => "http",
            crate::page::FetchPath::Rendered => "rendered",
        }
    );
    if let Some(r) = &m.render_reason {
        let _ = writeln!(out, "render_reason: {}", yaml_str(r));
    }
    let _ = writeln!(out, "content_hash: \"sha256:{}\"", doc.content_hash());
    out.push_str("---\n\n");
    out.push_str(&body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Reads back a file written by [`render_file`]: its metadata and markdown body. `None` when
/// the bytes are not such a file.
pub fn parse_file(bytes: &[u8]) -> Option<(crate::page::DocumentMeta, String)> {
    use crate::page::{DocumentMeta, FetchPath};
    let text = std::str::from_utf8(bytes).ok()?;
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---\n\n")?;
    let (head, body) = (&rest[..end + 1], &rest[end + 6..]);
    let mut url = None;
    let mut meta = DocumentMeta {
        url: Url::parse("http://placeholder.invalid/").ok()?,
        canonical: None,
        title: None,
        description: None,
        language: None,
        fetched_at: time::OffsetDateTime::UNIX_EPOCH,
        depth: 0,
        path: FetchPath::Http,
        render_reason: None,
    };
    for line in head.lines() {
        let (name, value) = line.split_once(": ")?;
        let s = || serde_json::from_str::<String>(value).ok();
        match name {
            "url" => url = s().and_then(|u| Url::parse(&u).ok()),
            "canonical" => meta.canonical = s().and_then(|u| Url::parse(&u).ok()),
            "title" => meta.title = s(),
            "description" => meta.description = s(),
            "language" => meta.language = s(),
            "fetched_at" => {
                meta.fetched_at = time::OffsetDateTime::parse(
                    &s()?,
                    &time::format_description::well_known::Rfc3339,
                )
                .ok()?;
            }
            "depth" => meta.depth = value.parse().ok()?,
            "fetched_by" => {
                meta.path = if value == "rendered" {
                    FetchPath::Rendered
                } else {
                    FetchPath::Http
                }
            }
            "render_reason" => meta.render_reason = s(),
            _ => {}
        }
    }
    meta.url = url?;
    Some((meta, body.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn manifest_json_is_a_sorted_pretty_map_with_the_last_entry_per_url() {
        use crate::page::StoredDoc;
        let d = |url: &str, key: &str, hash: &str| StoredDoc::new(u(url), key.into(), hash.into());
        let docs = vec![
            d("https://b.example/", "j/b/b.md", "22"),
            d("https://a.example/x", "j/a/x.md", "11"),
            d("https://b.example/", "j/b/b2.md", "33"),
        ];
        // The same bytes a serde_json tree of the entries gives.
        let tree: std::collections::BTreeMap<&str, serde_json::Value> = docs
            .iter()
            .map(|s| {
                let v = serde_json::json!({ "key": s.key, "content_hash": s.content_hash });
                (s.url.as_str(), v)
            })
            .collect();
        let want = serde_json::to_vec_pretty(&tree).unwrap();
        assert_eq!(
            String::from_utf8(manifest_json(&docs).unwrap()).unwrap(),
            String::from_utf8(want).unwrap()
        );
        let text = String::from_utf8(manifest_json(&docs).unwrap()).unwrap();
        assert!(
            text.contains("j/b/b2.md") && !text.contains("j/b/b.md\""),
            "{text}"
        );
        assert!(text.find("a.example").unwrap() < text.find("b.example").unwrap());
    }

    #[test]
    fn the_streamed_manifest_has_the_bytes_of_manifest_json() {
        use crate::page::StoredDoc;
        let d = |url: &str, key: &str| StoredDoc::new(u(url), key.into(), "h\"1".into());
        let docs = [
            d("https://a.example/", "j/a/a.md"),
            d("https://a.example/q?x=\u{e9}", "j/a/q.md"),
            d("https://b.example/", "j/b/b.md"),
        ];
        for n in [0, 1, 3] {
            let mut w = ManifestJsonWriter::new(Vec::new()).unwrap();
            for doc in &docs[..n] {
                w.entry(doc).unwrap();
            }
            assert_eq!(
                String::from_utf8(w.finish().unwrap()).unwrap(),
                String::from_utf8(manifest_json(&docs[..n]).unwrap()).unwrap(),
                "{n} documents"
            );
        }
    }

    #[test]
    fn slugs_are_safe_names() {
        let url = u("https://example.com/a/b");
        assert_eq!(slug(Some("Hello, World!"), &url), "hello-world");
        assert_eq!(slug(Some("../../etc/passwd"), &url), "etc-passwd");
        assert_eq!(slug(Some(".."), &url), "a-b");
        assert_eq!(slug(Some("CON"), &url), "page-con");
        assert_eq!(slug(Some("a\0b\u{7}c"), &url), "a-b-c");
        assert_eq!(slug(None, &u("https://example.com/")), "index");
        assert_eq!(slug(Some("Ünïcödé Straße"), &url), "ünïcödé-straße");
        let long = "word ".repeat(200);
        let s = slug(Some(&long), &url);
        assert!(s.len() <= MAX_SLUG_BYTES && !s.ends_with('-'), "{s}");
        let long = "é".repeat(200);
        assert!(slug(Some(&long), &url).len() <= MAX_SLUG_BYTES);
    }

    #[test]
    fn domain_segment_has_port_only_when_not_default() {
        assert_eq!(domain_segment(&u("https://Example.COM/")), "example.com");
        assert_eq!(
            domain_segment(&u("http://127.0.0.1:8080/")),
            "127.0.0.1_8080"
        );
        assert_eq!(domain_segment(&u("http://[::1]:81/")), "___1__81");
    }

    #[test]
    fn files_read_back_to_the_same_document() {
        let job = JobId::new();
        let mut doc = crate::conformance::sample_doc(
            &job,
            "https://example.com/x",
            Some("T: \"q\"\n"),
            "# Body\n\n---\n",
        );
        doc.meta.canonical = Some(u("https://example.com/y"));
        doc.meta.render_reason = Some("empty_app_root".into());
        doc.meta.path = crate::page::FetchPath::Rendered;
        let bytes = doc.to_file_bytes();
        let (meta, body) = parse_file(&bytes).unwrap();
        assert_eq!(meta, doc.meta);
        assert_eq!(body, "# Body\n\n* * *\n");
        assert!(parse_file(b"no front matter").is_none());
    }

    #[test]
    fn body_cannot_close_front_matter() {
        assert_eq!(escape_body("a\n---\nb\n----  \n"), "a\n* * *\nb\n* * *  \n");
        assert!(matches!(escape_body("a -- b"), Cow::Borrowed(_)));
    }
}
