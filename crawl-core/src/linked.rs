//! Linked documents: same-site PDF and Word (DOCX) files a crawl passes through, as documents
//! of their own type, to an [`Ingestor`](crate::Ingestor) that accepts them (the request's
//! `linkedDocuments` option; off by default).
//!
//! A link is taken as a linked document only when the server *declares* one of the types
//! (`Content-Type`) and the bytes carry that type's signature: `%PDF-` for PDF; for DOCX the
//! zip signature `PK\x03\x04` **and** a `word/` entry in the zip's central directory (any
//! zip, an `.xlsx` or a `.jar`, declared as DOCX is refused). Either mismatch skips the link
//! as `linked_type_mismatch`. The bytes are capped at [`MAX_LINKED_BYTES`] (the host's
//! 20 MB document limit); a larger file is skipped as `too_large` without being downloaded
//! past the cap.
//!
//! A stored linked document is its raw bytes (no front matter), under the key a page would
//! get with the type's extension (`….pdf`, `….docx`): [`LinkedType::sniff`] tells it from a
//! markdown file, which always starts with front matter (`---`).

use std::fmt;

/// The MIME type of PDF.
pub const PDF: &str = "application/pdf";
/// The MIME type of a Word (Office Open XML) document.
pub const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// Largest linked document read: the host's 20 MB document limit (20 MiB, as the host
/// counts it). Bedrock takes up to 50 MB, but one cap keeps a crawl's output the same
/// whichever knowledge base receives it.
pub const MAX_LINKED_BYTES: usize = 20 * 1024 * 1024;

/// The skip reason of a link whose declared type and bytes disagree.
pub const TYPE_MISMATCH: &str = "linked_type_mismatch";

/// A type of linked document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkedType {
    /// `application/pdf`, `.pdf`.
    Pdf,
    /// Word (Office Open XML), `.docx`.
    Docx,
}

impl LinkedType {
    /// Every type.
    pub const ALL: [LinkedType; 2] = [LinkedType::Pdf, LinkedType::Docx];

    /// The MIME type.
    pub fn content_type(self) -> &'static str {
        match self {
            LinkedType::Pdf => PDF,
            LinkedType::Docx => DOCX,
        }
    }

    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            LinkedType::Pdf => "pdf",
            LinkedType::Docx => "docx",
        }
    }

    /// The type a `Content-Type` header declares (parameters and case ignored).
    pub fn from_content_type(ct: &str) -> Option<Self> {
        let essence = ct.split(';').next().unwrap_or("").trim();
        LinkedType::ALL
            .into_iter()
            .find(|t| essence.eq_ignore_ascii_case(t.content_type()))
    }

    /// Whether `bytes` carry this type's signature (see the module docs).
    pub fn matches(self, bytes: &[u8]) -> bool {
        match self {
            LinkedType::Pdf => bytes.starts_with(b"%PDF-"),
            LinkedType::Docx => {
                bytes.starts_with(b"PK\x03\x04") && zip_has_entry_under(bytes, b"word/")
            }
        }
    }

    /// The type of stored bytes: `Some` for a linked document, `None` for anything else (a
    /// markdown file starts with front matter, never with a signature).
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        LinkedType::ALL.into_iter().find(|t| t.matches(bytes))
    }

    /// The types among `content_types` (MIME types, e.g. an ingestor's
    /// [`accepted_types`](crate::Ingestor::accepted_types)).
    pub fn among(content_types: &[&str]) -> Vec<Self> {
        LinkedType::ALL
            .into_iter()
            .filter(|t| {
                content_types
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case(t.content_type()))
            })
            .collect()
    }
}

impl fmt::Display for LinkedType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.content_type())
    }
}

/// The bytes of a linked document and their type.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LinkedBody {
    /// The type (declared and checked).
    pub kind: LinkedType,
    /// The file as the server sent it.
    pub bytes: Vec<u8>,
}

impl LinkedBody {
    /// A linked document of `kind`.
    pub fn new(kind: LinkedType, bytes: Vec<u8>) -> Self {
        LinkedBody { kind, bytes }
    }
}

impl fmt::Debug for LinkedBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LinkedBody({}, {} bytes)", self.kind, self.bytes.len())
    }
}

/// Whether the zip `bytes` has an entry whose name starts with `prefix`, read from its
/// central directory (found through the end-of-central-directory record, searched for in
/// the last 64 KiB + 22 bytes, as the zip format bounds its comment). Every offset is
/// checked: a truncated or hostile zip answers `false`.
fn zip_has_entry_under(bytes: &[u8], prefix: &[u8]) -> bool {
    const EOCD: &[u8] = b"PK\x05\x06";
    const CDH: &[u8] = b"PK\x01\x02";
    let u16_at = |at: usize| -> Option<usize> {
        bytes
            .get(at..at + 2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let u32_at = |at: usize| -> Option<usize> {
        bytes
            .get(at..at + 4)
            .and_then(|b| usize::try_from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])).ok())
    };
    let floor = bytes.len().saturating_sub(22 + 65_535);
    let Some(eocd) = (floor..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| bytes.get(i..i + 4) == Some(EOCD))
    else {
        return false;
    };
    let (Some(entries), Some(mut at)) = (u16_at(eocd + 10), u32_at(eocd + 16)) else {
        return false;
    };
    for _ in 0..entries {
        if bytes.get(at..at + 4) != Some(CDH) {
            return false;
        }
        let (Some(name_len), Some(extra), Some(comment)) =
            (u16_at(at + 28), u16_at(at + 30), u16_at(at + 32))
        else {
            return false;
        };
        let Some(name) = bytes.get(at + 46..at + 46 + name_len) else {
            return false;
        };
        if name.starts_with(prefix) {
            return true;
        }
        at += 46 + name_len + extra + comment;
    }
    false
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal stored (uncompressed) zip holding `names` (empty files).
    pub(crate) fn zip(names: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for name in names {
            let offset = out.len() as u32;
            out.extend_from_slice(b"PK\x03\x04");
            out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&[0; 12]); // crc, sizes
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(name.as_bytes());
            central.extend_from_slice(b"PK\x01\x02");
            central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            central.extend_from_slice(&[0; 12]);
            central.extend_from_slice(&(name.len() as u16).to_le_bytes());
            central.extend_from_slice(&[0; 12]);
            central.extend_from_slice(&offset.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let cd_offset = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
        out.extend_from_slice(&(names.len() as u16).to_le_bytes());
        out.extend_from_slice(&(names.len() as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&cd_offset.to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out
    }

    #[test]
    fn declared_types_are_read_with_parameters_and_case_ignored() {
        assert_eq!(
            LinkedType::from_content_type("Application/PDF; qs=0.5"),
            Some(LinkedType::Pdf)
        );
        assert_eq!(LinkedType::from_content_type(DOCX), Some(LinkedType::Docx));
        assert_eq!(LinkedType::from_content_type("application/zip"), None);
        assert_eq!(LinkedType::from_content_type("text/html"), None);
        assert_eq!(
            LinkedType::among(&[PDF, "text/markdown"]),
            vec![LinkedType::Pdf]
        );
    }

    #[test]
    fn signatures_decide_and_a_docx_needs_a_word_entry() {
        assert!(LinkedType::Pdf.matches(b"%PDF-1.7\n..."));
        assert!(!LinkedType::Pdf.matches(b"<!doctype html><p>not a pdf"));
        assert!(!LinkedType::Pdf.matches(b""));
        let docx = zip(&["[Content_Types].xml", "word/document.xml"]);
        assert!(LinkedType::Docx.matches(&docx));
        assert_eq!(LinkedType::sniff(&docx), Some(LinkedType::Docx));
        // A zip that is not a Word file (a spreadsheet), and a bare zip signature.
        assert!(!LinkedType::Docx.matches(&zip(&["xl/workbook.xml"])));
        assert!(!LinkedType::Docx.matches(b"PK\x03\x04 truncated"));
        // A hostile central directory (entry count far beyond the bytes) is refused.
        let mut bad = zip(&["word/document.xml"]);
        let n = bad.len();
        bad[n - 12] = 0xff;
        bad[n - 11] = 0xff;
        let at = n - 6;
        bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(!LinkedType::Docx.matches(&bad));
        // A markdown file is never taken for a linked document.
        assert_eq!(LinkedType::sniff(b"---\nurl: \"x\"\n---\n\n%PDF-"), None);
    }
}
