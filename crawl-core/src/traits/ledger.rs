use std::fmt::{self, Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;
use url::Url;

use super::{Capabilities, DynDedupStore, DynFrontier, DynJobStore, FrontierEntry};
use crate::error::Result;
use crate::job::{JobId, PageOutcome};

/// A URL found on a page, on its way to admission.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Candidate {
    /// Dedup key of the normalized URL.
    pub key: String,
    /// The entry to queue when admitted.
    pub entry: FrontierEntry,
    /// Set when the URL is new but may not be crawled (robots.txt, trap, policy): it is
    /// then only counted under `excluded` with this reason.
    pub excluded: Option<String>,
}

impl Candidate {
    /// A candidate.
    pub fn new(key: String, entry: FrontierEntry, excluded: Option<String>) -> Self {
        Candidate {
            key,
            entry,
            excluded,
        }
    }
}

/// What became of one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The job already had the URL.
    Seen,
    /// New, but excluded (and counted under its reason).
    Excluded,
    /// New, admitted: a page was reserved and the entry queued.
    Admitted,
    /// New, but the page budget is spent (counted as excluded `max_pages`).
    OverBudget,
}

/// The job's bookkeeping in the two steps that must not be torn apart by a crash: admitting
/// URLs (dedup insert + page reservation + queueing) and finishing a page (counters + frontier
/// completion).
///
/// # Contract
/// - `admit` handles candidates in order; for each: if the dedup key is already present the
///   result is [`Admit::Seen`]; otherwise the key is inserted and the candidate is counted as
///   excluded, or admitted (a page reserved and the entry queued), or over budget. A durable
///   implementation does each candidate's steps in one transaction, so after a crash a URL is
///   either fully admitted or not seen at all.
/// - `finish_page` records the outcome and completes the frontier lease; a durable
///   implementation does both in one transaction and ignores a second finish of the same URL.
#[async_trait]
pub trait CrawlLedger: Debug + Display + Send + Sync + 'static {
    /// Admits candidates; one result per candidate.
    async fn admit(&self, job: &JobId, candidates: Vec<Candidate>) -> Result<Vec<Admit>>;
    /// Records how an admitted page ended and ends its lease.
    async fn finish_page(&self, job: &JobId, url: &Url, outcome: &PageOutcome) -> Result<()>;

    /// What this ledger can do (durable when a crash cannot tear its steps apart).
    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
}

/// Shared ledger handle.
pub type DynLedger = Arc<dyn CrawlLedger>;

/// A ledger made of the separate frontier, dedup store and job store. Each step is a sequence
/// of calls, so a crash between them can lose an admission: fine for volatile backends, and
/// the default.
#[derive(Debug, Clone)]
pub struct ComposedLedger {
    frontier: DynFrontier,
    dedup: DynDedupStore,
    jobs: DynJobStore,
}

impl ComposedLedger {
    /// A ledger over these three backends.
    pub fn new(frontier: DynFrontier, dedup: DynDedupStore, jobs: DynJobStore) -> Self {
        ComposedLedger {
            frontier,
            dedup,
            jobs,
        }
    }
}

impl Display for ComposedLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ComposedLedger({}, {}, {})",
            self.frontier, self.dedup, self.jobs
        )
    }
}

#[async_trait]
impl CrawlLedger for ComposedLedger {
    async fn admit(&self, job: &JobId, candidates: Vec<Candidate>) -> Result<Vec<Admit>> {
        let keys: Vec<String> = candidates.iter().map(|c| c.key.clone()).collect();
        let won = self.dedup.insert_many(job, &keys).await?;
        let mut out = Vec::with_capacity(candidates.len());
        let mut queue = Vec::new();
        let mut spent = false;
        for (c, won) in candidates.into_iter().zip(won) {
            let r = if !won {
                Admit::Seen
            } else if let Some(reason) = &c.excluded {
                self.jobs.record_excluded(job, reason).await?;
                Admit::Excluded
            } else if !spent && self.jobs.reserve_page(job).await? {
                queue.push(c.entry);
                Admit::Admitted
            } else {
                spent = true;
                self.jobs.record_excluded(job, "max_pages").await?;
                Admit::OverBudget
            };
            out.push(r);
        }
        if !queue.is_empty() {
            self.frontier.push(job, queue).await?;
        }
        Ok(out)
    }

    async fn finish_page(&self, job: &JobId, url: &Url, outcome: &PageOutcome) -> Result<()> {
        self.jobs.record_page(job, outcome).await?;
        self.frontier.complete(job, url).await
    }
}
