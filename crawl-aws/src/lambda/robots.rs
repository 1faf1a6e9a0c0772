//! robots.txt fetched once per job and shared: the init handler records every robots.txt
//! response its checks fetched ([`RecordingFetcher`]); the other handlers answer robots.txt
//! requests from that snapshot ([`SeededRobots`]) so their `RobotsLayer` never refetches it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use crawl_core::{DynFetcher, FetchPurpose, FetchRequest, FetchResponse, Fetcher, JobId, Result};
use serde::{Deserialize, Serialize};
use url::Url;

/// One recorded robots.txt answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RecordedResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    truncated: bool,
}

/// robots.txt answers by URL.
pub(crate) type RobotsSnapshot = BTreeMap<String, RecordedResponse>;

/// Records the robots.txt answers fetched through it.
#[derive(Debug)]
pub(crate) struct RecordingFetcher {
    inner: DynFetcher,
    seen: Arc<Mutex<RobotsSnapshot>>,
}

impl RecordingFetcher {
    /// Wraps `inner`; the snapshot handle fills as robots.txt files are fetched.
    pub(crate) fn new(inner: DynFetcher) -> (Self, Arc<Mutex<RobotsSnapshot>>) {
        let seen = Arc::new(Mutex::new(RobotsSnapshot::new()));
        (
            RecordingFetcher {
                inner,
                seen: Arc::clone(&seen),
            },
            seen,
        )
    }
}

impl fmt::Display for RecordingFetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecordingFetcher({})", self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Fetcher for RecordingFetcher {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        let resp = self.inner.fetch(req).await?;
        if req.purpose == FetchPurpose::Robots {
            let rec = RecordedResponse {
                status: resp.status,
                headers: resp.headers.clone(),
                body: String::from_utf8_lossy(&resp.body).into_owned(),
                truncated: resp.truncated,
            };
            self.seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(req.url.to_string(), rec);
        }
        Ok(resp)
    }
    async fn check(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.check(url, job).await
    }
    async fn pace(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.pace(url, job).await
    }
}

/// Answers robots.txt requests found in a snapshot; everything else goes to `inner`.
#[derive(Debug)]
pub(crate) struct SeededRobots {
    inner: DynFetcher,
    snapshot: RobotsSnapshot,
}

impl SeededRobots {
    /// Wraps `inner` with `snapshot`.
    pub(crate) fn new(inner: DynFetcher, snapshot: RobotsSnapshot) -> Self {
        SeededRobots { inner, snapshot }
    }
}

impl fmt::Display for SeededRobots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SeededRobots({})", self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Fetcher for SeededRobots {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        if req.purpose == FetchPurpose::Robots {
            if let Some(r) = self.snapshot.get(req.url.as_str()) {
                let mut resp =
                    FetchResponse::new(req.url.clone(), r.status, r.body.clone().into_bytes());
                for (n, v) in &r.headers {
                    resp = resp.with_header(n, v.clone());
                }
                resp.truncated = r.truncated;
                return Ok(resp);
            }
        }
        self.inner.fetch(req).await
    }
    async fn check(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.check(url, job).await
    }
    async fn pace(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.pace(url, job).await
    }
}
