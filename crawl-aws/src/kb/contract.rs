//! The host's naming rules: document ids, object keys, filenames and their limits.

use sha2::{Digest, Sha256};

/// The host's upload limit: a document over 20 MB is skipped.
pub const MAX_DOCUMENT_BYTES: usize = 20 * 1024 * 1024;

/// Longest sanitized filename, in bytes: with the assistant and document ids the key stays
/// far below S3's 1,024 bytes.
const MAX_FILENAME_BYTES: usize = 200;

/// The document id of `url` in `assistant`'s knowledge base: `DOC-` and 12 lowercase hex
/// digits of the SHA-256 of both, the host's id shape. The same page of the same assistant
/// is always the same document, so a re-delivered run finds the row it wrote before instead
/// of creating a second one.
pub fn document_id(assistant: &str, url: &str) -> String {
    let mut h = Sha256::new();
    h.update(assistant.as_bytes());
    h.update([0u8]);
    h.update(url.as_bytes());
    format!("DOC-{}", &hex::encode(h.finalize())[..12])
}

/// The host's filename rule: lower-cased, every character outside `[a-z0-9_.\-()]` becomes
/// `_`. Ours also drops leading dots (no `.`, `..` or hidden names), keeps at most 200 bytes
/// and always ends in `.{extension}` (`.md`, or a linked document's `.pdf` / `.docx`), so
/// the host's converter sees the document's type.
pub fn sanitize_filename(name: &str, extension: &str) -> String {
    let mut out: String = name
        .to_lowercase()
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '_' | '.' | '-' | '(' | ')' => c,
            _ => '_',
        })
        .collect();
    out = out.trim_start_matches('.').to_owned();
    let ext = format!(".{extension}");
    if let Some(stem) = out.strip_suffix(&ext) {
        out = stem.to_owned();
    }
    out.truncate(MAX_FILENAME_BYTES - ext.len());
    let stem = out.trim_end_matches('.');
    if stem.is_empty() {
        format!("page{ext}")
    } else {
        format!("{stem}{ext}")
    }
}

/// The object key of a document: `assistants/{assistant}/documents/{document}/{filename}`.
pub fn document_key(assistant: &str, document: &str, filename: &str) -> String {
    format!("assistants/{assistant}/documents/{document}/{filename}")
}

/// An assistant id is one key segment: 1 to 128 of `[A-Za-z0-9_.-]`, not `.` or `..`.
pub(crate) fn check_assistant(id: &str) -> Result<(), String> {
    let ok = (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        && id != "."
        && id != "..";
    if ok {
        Ok(())
    } else {
        Err(format!(
            "assistant: '{}' is not an assistant id (1 to 128 of [A-Za-z0-9_.-], one key segment)",
            id.chars().take(80).collect::<String>()
        ))
    }
}

/// A DynamoDB table name: 3 to 255 of `[A-Za-z0-9_.-]`.
pub(crate) fn check_table(field: &str, name: &str) -> Result<(), String> {
    let ok = (3..=255).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{field}: '{}' is not a DynamoDB table name (3 to 255 of [A-Za-z0-9_.-])",
            name.chars().take(80).collect::<String>()
        ))
    }
}

/// An S3 (or S3 Vectors) bucket or index name: 3 to 63 of `[a-z0-9.-]`.
pub(crate) fn check_bucket(field: &str, name: &str) -> Result<(), String> {
    let ok = (3..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{field}: '{}' is not a bucket or index name (3 to 63 of [a-z0-9.-])",
            name.chars().take(80).collect::<String>()
        ))
    }
}

/// A Bedrock knowledge base or data source id: 1 to 64 of `[0-9A-Za-z]`.
pub(crate) fn check_kb_id(field: &str, id: &str) -> Result<(), String> {
    if (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(())
    } else {
        let what = if field == "kb" {
            "a knowledge base id"
        } else {
            "a data source id"
        };
        Err(format!(
            "{field}: '{}' is not {what} ([0-9A-Za-z]+)",
            id.chars().take(80).collect::<String>()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filenames_follow_the_hosts_rule_and_never_escape_the_document_folder() {
        assert_eq!(
            sanitize_filename("Getting Started.md", "md"),
            "getting_started.md"
        );
        assert_eq!(sanitize_filename("Café (2).md", "md"), "caf__(2).md");
        assert_eq!(
            sanitize_filename("../../etc/passwd", "md"),
            "_.._etc_passwd.md"
        );
        assert_eq!(sanitize_filename("..", "md"), "page.md");
        assert_eq!(sanitize_filename(".hidden.md", "md"), "hidden.md");
        assert_eq!(sanitize_filename("", "md"), "page.md");
        let long = sanitize_filename(&"é".repeat(400), "md");
        assert!(
            long.len() <= MAX_FILENAME_BYTES && long.ends_with(".md"),
            "{long}"
        );
        for name in ["../../etc/passwd", "a/b\\c", "x\u{0}y", "..%2f.."] {
            let f = sanitize_filename(name, "md");
            assert!(!f.contains('/') && !f.starts_with('.'), "{f}");
            assert!(f
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-()".contains(&b)));
        }
    }

    #[test]
    fn document_ids_have_the_hosts_shape_and_are_stable() {
        let a = document_id("ast-1", "https://x.test/a");
        assert_eq!(a, document_id("ast-1", "https://x.test/a"));
        assert_ne!(a, document_id("ast-2", "https://x.test/a"));
        assert_ne!(a, document_id("ast-1", "https://x.test/b"));
        assert_eq!(a.len(), 16);
        assert!(a.starts_with("DOC-") && a[4..].bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(
            document_key("ast-1", &a, "a.md"),
            format!("assistants/ast-1/documents/{a}/a.md")
        );
    }

    #[test]
    fn assistant_ids_are_one_key_segment() {
        assert!(check_assistant("ast-1_x.y").is_ok());
        for bad in ["", ".", "..", "a/b", "a b", &"a".repeat(129)] {
            let e = check_assistant(bad).unwrap_err();
            assert!(e.starts_with("assistant:"), "{e}");
        }
        assert!(check_table("table", "ab")
            .unwrap_err()
            .starts_with("table:"));
        assert!(check_bucket("bucket", "Bad_Name")
            .unwrap_err()
            .starts_with("bucket:"));
    }
}
