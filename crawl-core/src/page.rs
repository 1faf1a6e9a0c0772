//! What flows between the traits: fetch and render requests and responses, documents.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use url::Url;

use crate::job::JobId;

/// One GET the engine asks a [`Fetcher`](crate::Fetcher) for. Fetchers never follow
/// redirects: the engine follows them so every hop is checked against scope and policy.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FetchRequest {
    /// The URL to get.
    pub url: Url,
    /// What the body is wanted for.
    pub purpose: FetchPurpose,
    /// Largest body accepted, counted after decompression.
    pub max_body: usize,
    /// The job this request belongs to (for per-job politeness state).
    pub job: Option<JobId>,
    /// The validators of a stored copy: when set, the request is conditional
    /// (`If-None-Match` / `If-Modified-Since`) and a `304` answer carries no body.
    pub validators: Option<Validators>,
    /// Linked-document types whose bodies a page fetch reads too (besides HTML), up to
    /// [`MAX_LINKED_BYTES`](crate::linked::MAX_LINKED_BYTES); empty (the default): HTML only.
    pub linked: Vec<crate::linked::LinkedType>,
}

/// What identifies a stored version of a page to its server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Validators {
    /// The `ETag` sent with the stored version.
    pub etag: Option<String>,
    /// The `Last-Modified` sent with the stored version.
    pub last_modified: Option<String>,
}

impl Validators {
    /// Validators from an `ETag` and a `Last-Modified` (either may be missing).
    pub fn new(etag: Option<String>, last_modified: Option<String>) -> Self {
        Validators {
            etag,
            last_modified,
        }
    }

    /// Whether there is anything to send.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

impl FetchRequest {
    /// A page fetch with the default 10 MiB cap.
    pub fn page(url: Url) -> Self {
        FetchRequest {
            url,
            purpose: FetchPurpose::Page,
            max_body: 10 * 1024 * 1024,
            job: None,
            validators: None,
            linked: Vec::new(),
        }
    }

    /// A robots.txt fetch (parse limit 500 KiB as RFC 9309 allows).
    pub fn robots(url: Url) -> Self {
        FetchRequest {
            url,
            purpose: FetchPurpose::Robots,
            max_body: 500 * 1024,
            job: None,
            validators: None,
            linked: Vec::new(),
        }
    }

    /// A sitemap fetch: any body is read, truncated at 50 MB (the sitemap protocol's cap per
    /// file, uncompressed) rather than refused.
    pub fn sitemap(url: Url) -> Self {
        FetchRequest {
            url,
            purpose: FetchPurpose::Sitemap,
            max_body: crate::sitemap::MAX_FILE_BYTES,
            job: None,
            validators: None,
            linked: Vec::new(),
        }
    }

    /// Sets the job.
    pub fn with_job(mut self, job: &JobId) -> Self {
        self.job = Some(job.clone());
        self
    }

    /// Makes the request conditional on a stored version (nothing is sent for empty
    /// validators).
    pub fn with_validators(mut self, validators: Validators) -> Self {
        self.validators = Some(validators).filter(|v| !v.is_empty());
        self
    }

    /// Also reads the bodies of these linked-document types (see [`FetchRequest::linked`]).
    pub fn with_linked(mut self, types: Vec<crate::linked::LinkedType>) -> Self {
        self.linked = types;
        self
    }

    /// Sets the body cap.
    pub fn with_max_body(mut self, max: usize) -> Self {
        self.max_body = max;
        self
    }
}

/// Why a URL is fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchPurpose {
    /// A page: only HTML bodies are read; other content types come back without a body.
    Page,
    /// robots.txt: any text body is read, truncated at `max_body` rather than refused.
    Robots,
    /// A sitemap (XML, possibly gzip): any body is read, truncated at `max_body` rather than
    /// refused; robots.txt applies to it like to a page.
    Sitemap,
}

/// The answer to a [`FetchRequest`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FetchResponse {
    /// The URL that was fetched (never a redirect target).
    pub url: Url,
    /// HTTP status.
    pub status: u16,
    /// Response headers, names lowercase, in order.
    pub headers: Vec<(String, String)>,
    /// Body bytes, decompressed (empty when the content type was refused).
    pub body: Vec<u8>,
    /// The body was cut at `max_body` (robots.txt and sitemaps only; pages over the cap are
    /// an error).
    pub truncated: bool,
}

impl FetchResponse {
    /// A response with no headers.
    pub fn new(url: Url, status: u16, body: Vec<u8>) -> Self {
        FetchResponse {
            url,
            status,
            headers: Vec::new(),
            body,
            truncated: false,
        }
    }

    /// Adds a header (name lowercased).
    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    /// The validators this answer gives for the version it carries (`ETag`,
    /// `Last-Modified`), to send with the next request for the page.
    pub fn validators(&self) -> Validators {
        Validators::new(
            self.header("etag").map(str::to_owned),
            self.header("last-modified").map(str::to_owned),
        )
    }

    /// Whether the server said the stored version is still current (`304 Not Modified`).
    pub fn is_not_modified(&self) -> bool {
        self.status == 304
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The redirect target, resolved against this URL, for 3xx answers with a Location.
    pub fn redirect_target(&self) -> Option<Url> {
        if !matches!(self.status, 301 | 302 | 303 | 307 | 308) {
            return None;
        }
        self.header("location")
            .and_then(|l| self.url.join(l.trim()).ok())
    }
}

/// How long a renderer waits for a page to settle.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitStrategy {
    /// Until the network has been idle for a short while.
    #[default]
    NetworkIdle,
    /// Until an element matching this CSS selector exists.
    Selector(String),
}

/// One page the engine asks a [`Renderer`](crate::Renderer) for. The renderer must refuse
/// every request the page makes that [`RenderRequest::gate`] refuses.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RenderRequest {
    /// The page to load (already checked against scope, policy and robots).
    pub url: Url,
    /// Deadline for the whole render.
    pub deadline: Duration,
    /// When the page counts as settled.
    pub wait: WaitStrategy,
    /// The crawl's scope and network policy, for every request the page makes.
    pub gate: crate::net::RequestGate,
}

impl RenderRequest {
    /// A render of `url` under `gate`, with the default 30 s deadline and
    /// [`WaitStrategy::NetworkIdle`].
    pub fn new(url: Url, gate: crate::net::RequestGate) -> Self {
        RenderRequest {
            url,
            deadline: Duration::from_secs(30),
            wait: WaitStrategy::NetworkIdle,
            gate,
        }
    }

    /// Sets the deadline for the whole render.
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Sets when the page counts as settled.
    pub fn with_wait(mut self, wait: WaitStrategy) -> Self {
        self.wait = wait;
        self
    }
}

/// What a renderer returns.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RenderedPage {
    /// The URL after client and server redirects.
    pub final_url: Url,
    /// HTTP status of the main document (0 when unknown).
    pub status: u16,
    /// The serialized DOM after scripts ran.
    pub html: String,
}

impl RenderedPage {
    /// A rendered page.
    pub fn new(final_url: Url, status: u16, html: String) -> Self {
        RenderedPage {
            final_url,
            status,
            html,
        }
    }
}

/// Which path produced a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FetchPath {
    /// Plain HTTP.
    Http,
    /// The headless browser.
    Rendered,
}

/// Metadata that goes in a document's front matter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DocumentMeta {
    /// The page's URL (normalized, after redirects).
    pub url: Url,
    /// `rel=canonical`, when the page names one.
    pub canonical: Option<Url>,
    /// The page title.
    pub title: Option<String>,
    /// Meta description.
    pub description: Option<String>,
    /// Language of the page.
    pub language: Option<String>,
    /// When it was fetched.
    #[serde(with = "time::serde::rfc3339")]
    pub fetched_at: OffsetDateTime,
    /// Link hops from the root.
    pub depth: u32,
    /// How it was fetched.
    pub path: FetchPath,
    /// Why the browser was used, in `auto` mode.
    pub render_reason: Option<String>,
}

/// One page ready to store: markdown plus metadata, for one job.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Document {
    /// The job it belongs to.
    pub job: JobId,
    /// Front matter fields.
    pub meta: DocumentMeta,
    /// Main-content markdown, without front matter (empty for a linked document).
    pub markdown: String,
    /// For a linked document (a PDF or Word file passed through), its bytes: what the sink
    /// stores instead of front matter and markdown.
    pub linked: Option<crate::linked::LinkedBody>,
}

impl Document {
    /// A document.
    pub fn new(job: JobId, meta: DocumentMeta, markdown: String) -> Self {
        Document {
            job,
            meta,
            markdown,
            linked: None,
        }
    }

    /// A linked document (see [`crate::linked`]): stored as `body`'s bytes, under a key with
    /// its type's extension.
    pub fn linked(job: JobId, meta: DocumentMeta, body: crate::linked::LinkedBody) -> Self {
        Document {
            job,
            meta,
            markdown: String::new(),
            linked: Some(body),
        }
    }

    /// Hex SHA-256 of the markdown body, or of a linked document's bytes (stable across
    /// runs, for idempotent re-ingestion).
    pub fn content_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        match &self.linked {
            Some(l) => hex::encode(Sha256::digest(&l.bytes)),
            None => hex::encode(Sha256::digest(self.markdown.as_bytes())),
        }
    }

    /// The file every sink stores: YAML front matter, then the markdown (a linked
    /// document: its bytes as they came). Identical bytes for identical input, whichever
    /// sink writes them.
    pub fn to_file_bytes(&self) -> Vec<u8> {
        match &self.linked {
            Some(l) => l.bytes.clone(),
            None => crate::keys::render_file(self).into_bytes(),
        }
    }

    /// The MIME type of what [`to_file_bytes`](Self::to_file_bytes) returns.
    pub fn content_type(&self) -> &'static str {
        match &self.linked {
            Some(l) => l.kind.content_type(),
            None => "text/markdown",
        }
    }

    /// The domain part of the key (`example.com`, or `example.com_8080`).
    pub fn domain(&self) -> String {
        crate::keys::domain_segment(&self.meta.url)
    }
}

/// Where a sink put a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredDoc {
    /// The page URL.
    pub url: Url,
    /// Key relative to the sink's root: `{job-id}/{domain}/{page-title}.md`.
    pub key: String,
    /// Hex SHA-256 of the markdown body.
    pub content_hash: String,
}

impl StoredDoc {
    /// A stored-document entry.
    pub fn new(url: Url, key: String, content_hash: String) -> Self {
        StoredDoc {
            url,
            key,
            content_hash,
        }
    }
}
