use std::collections::BTreeMap;
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
    /// Not known to the job, and the page budget is spent: no dedup record is written and
    /// nothing is counted. The caller counts it (under the candidate's exclusion reason,
    /// else `max_pages`) when it finishes the page that found it, see
    /// [`CrawlLedger::finish_page`].
    OverBudget,
}

/// Exclusion counts by reason, recorded with a page's end.
pub type ExcludedCounts = BTreeMap<String, u64>;

/// The exclusion counts a page's admissions leave to its end: each [`Admit::OverBudget`]
/// candidate under its exclusion reason, else `max_pages`.
pub fn over_budget_counts(candidates: &[Candidate], results: &[Admit]) -> ExcludedCounts {
    let mut counts = ExcludedCounts::new();
    for (c, a) in candidates.iter().zip(results) {
        if *a == Admit::OverBudget {
            let reason = c.excluded.as_deref().unwrap_or("max_pages");
            *counts.entry(reason.to_owned()).or_default() += 1;
        }
    }
    counts
}

/// The job's bookkeeping in the two steps that must not be torn apart by a crash: admitting
/// URLs (dedup insert + page reservation + queueing) and finishing a page (counters + frontier
/// completion).
///
/// # Contract
/// - `admit` handles candidates in order; for each: if the dedup key is already present the
///   result is [`Admit::Seen`]; otherwise, while the job's page budget is not spent, the key
///   is inserted and the candidate is counted as excluded, or admitted (a page reserved and
///   the entry queued). Once the budget is spent (`pages_total >= max_pages`, found at the
///   start of the call or by a failed reservation in it) a new key is neither inserted nor
///   counted: the result is [`Admit::OverBudget`], so links past the budget cost no state.
///   A durable implementation does each call's steps in one transaction, so after a crash a
///   URL is either fully admitted or not seen at all.
/// - `finish_page` records the outcome and the page's `excluded` counts (its over-budget
///   links, its links over the per-page cap) and completes the frontier lease; a durable
///   implementation does all three in one transaction and ignores a second finish of the
///   same URL, so a page processed again after a crash counts its links once.
#[async_trait]
pub trait CrawlLedger: Debug + Display + Send + Sync + 'static {
    /// Admits candidates; one result per candidate.
    async fn admit(&self, job: &JobId, candidates: Vec<Candidate>) -> Result<Vec<Admit>>;
    /// Records how an admitted page ended, with the exclusions it leaves to count, and
    /// ends its lease.
    async fn finish_page(
        &self,
        job: &JobId,
        url: &Url,
        outcome: &PageOutcome,
        excluded: &ExcludedCounts,
    ) -> Result<()>;

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
        // Pages the budget has left: candidates are inserted in chunks of that size, so a
        // key is only inserted while a page may still be reserved for it.
        let mut left = match self.jobs.get(job).await? {
            Some(r) => u64::from(r.request.max_pages).saturating_sub(r.progress.pages_total),
            None => 1,
        };
        let mut out = Vec::with_capacity(candidates.len());
        let mut queue = Vec::new();
        let mut spent = left == 0;
        let mut rest = candidates.into_iter().peekable();
        while !spent && rest.peek().is_some() {
            let size = usize::try_from(left).unwrap_or(usize::MAX).max(1);
            let chunk: Vec<Candidate> = rest.by_ref().take(size).collect();
            let keys: Vec<String> = chunk.iter().map(|c| c.key.clone()).collect();
            let won = self.dedup.insert_many(job, &keys).await?;
            for (c, won) in chunk.into_iter().zip(won) {
                let r = if !won {
                    Admit::Seen
                } else if spent {
                    Admit::OverBudget
                } else if let Some(reason) = &c.excluded {
                    self.jobs.record_excluded(job, reason).await?;
                    Admit::Excluded
                } else if self.jobs.reserve_page(job).await? {
                    queue.push(c.entry);
                    left = left.saturating_sub(1);
                    Admit::Admitted
                } else {
                    spent = true;
                    Admit::OverBudget
                };
                out.push(r);
            }
            spent |= left == 0;
        }
        // Past the budget: looked up, never inserted.
        for c in rest {
            out.push(if self.dedup.contains(job, &c.key).await? {
                Admit::Seen
            } else {
                Admit::OverBudget
            });
        }
        if !queue.is_empty() {
            self.frontier.push(job, queue).await?;
        }
        Ok(out)
    }

    async fn finish_page(
        &self,
        job: &JobId,
        url: &Url,
        outcome: &PageOutcome,
        excluded: &ExcludedCounts,
    ) -> Result<()> {
        self.jobs.record_page(job, outcome).await?;
        if !excluded.is_empty() {
            self.jobs.record_excluded_counts(job, excluded).await?;
        }
        self.frontier.complete(job, url).await
    }
}
