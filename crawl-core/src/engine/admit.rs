//! Admission: which discovered URLs become pages of the job. Exact page caps live here: a
//! URL is admitted only when it is new in the job, passes scope, trap, policy and robots.txt
//! checks, and a page of the budget is reserved — all through the job's [`CrawlLedger`].
//! The checks themselves are [`PageContext`]'s, shared with serverless workers.
//!
//! [`CrawlLedger`]: crate::CrawlLedger

use std::sync::Arc;

use url::Url;

use super::context::PageContext;
use super::Inner;
use crate::error::Result;
use crate::traits::{over_budget_counts, ExcludedCounts};

pub(super) struct Admission {
    inner: Arc<Inner>,
    ctx: PageContext,
}

impl Admission {
    pub(super) fn new(inner: Arc<Inner>, ctx: PageContext) -> Self {
        Admission { inner, ctx }
    }

    /// Admits the root (depth 0). An unreachable robots.txt or a refused address on the
    /// root's host comes back as an error: the job fails with that reason.
    pub(super) async fn admit_root(&self, root: &Url) -> Result<()> {
        let c = self.ctx.root_candidate(root).await?;
        self.inner.ledger.admit(&self.ctx.job, vec![c]).await?;
        Ok(())
    }

    /// Admits the links found on a page, at `depth`; returns the exclusions left to count
    /// when the page is finished (its links past the page budget).
    pub(super) async fn admit_links(&self, links: &[Url], depth: u32) -> Result<ExcludedCounts> {
        if links.is_empty() {
            return Ok(ExcludedCounts::new());
        }
        let candidates = self.ctx.link_candidates(links, depth).await?;
        if candidates.is_empty() {
            return Ok(ExcludedCounts::new());
        }
        let results = self
            .inner
            .ledger
            .admit(&self.ctx.job, candidates.clone())
            .await?;
        Ok(over_budget_counts(&candidates, &results))
    }
}
