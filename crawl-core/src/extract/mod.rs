//! HTML to markdown (extraction v1: one lol_html cleanup pass collecting metadata and links,
//! then htmd). Replaced by the main-content extractor.

use serde::{Deserialize, Serialize};
use url::Url;

/// Extraction switches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(default)]
pub struct ExtractOptions {
    /// Keep only the main content (drop navigation, footers, sidebars...).
    pub main_content: bool,
    /// Keep text hidden with `hidden`, `aria-hidden` or inline styles.
    pub keep_hidden: bool,
    /// Keep images as `![alt](url)`.
    pub images: bool,
    /// Keep links in the markdown.
    pub links_in_markdown: bool,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            main_content: true,
            keep_hidden: false,
            images: true,
            links_in_markdown: true,
        }
    }
}

/// What extraction found in a page.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Extracted {
    /// Main-content markdown, without front matter.
    pub markdown: String,
    /// Page title.
    pub title: Option<String>,
    /// Meta description.
    pub description: Option<String>,
    /// `rel=canonical`, absolute.
    pub canonical: Option<Url>,
    /// Page language.
    pub language: Option<String>,
    /// Every link of the page, absolute, in order, deduplicated.
    pub links: Vec<Link>,
    /// `<meta name="robots">`.
    pub meta_robots: MetaRobots,
    /// Visible text characters in the body.
    pub text_len: usize,
    /// Bytes of inline script plus script count.
    pub script_bytes: usize,
}

/// One link found in a page.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Link {
    /// Absolute URL, fragment removed.
    pub url: Url,
    /// `rel` contains `nofollow`.
    pub nofollow: bool,
}

/// Directives of `<meta name="robots">`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetaRobots {
    /// Do not store this page.
    pub noindex: bool,
    /// Do not follow its links.
    pub nofollow: bool,
}

/// Extracts markdown, metadata and links. Never panics.
pub fn extract(html: &str, page_url: &Url, opts: &ExtractOptions) -> Extracted {
    let _ = (html, page_url, opts);
    Extracted::default()
}

/// Decodes HTML bytes to UTF-8 (BOM, header charset, meta charset, else UTF-8).
pub fn decode_html(bytes: &[u8], content_type: Option<&str>) -> String {
    let _ = content_type;
    String::from_utf8_lossy(bytes).into_owned()
}
