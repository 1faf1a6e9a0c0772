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
use crate::sitemap::{SitemapReport, SitemapTarget, SitemapUrl};
use crate::traits::{over_budget_counts, Admit, ExcludedCounts};

pub(super) use crate::sitemap::SITEMAP_DEPTH;

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

    /// Reads the site's sitemaps and admits their URLs at [`SITEMAP_DEPTH`], then counts
    /// what was not used under the job's `excluded`. Sitemap problems never fail the job;
    /// a backend failure does.
    pub(super) async fn admit_sitemaps(&self) -> Result<SitemapReport> {
        let mut target = Target {
            admission: self,
            budget_left: None,
        };
        let report = crate::sitemap::read_sitemaps(&self.ctx, &mut target).await?;
        for (reason, n) in &report.counts {
            self.inner
                .jobs
                .record_excluded_many(&self.ctx.job, reason, *n)
                .await?;
        }
        tracing::info!(
            job = %self.ctx.job,
            files = report.files_read,
            urls = report.urls_offered,
            "sitemaps read"
        );
        Ok(report)
    }

    /// Admits a page's link candidates (see [`PageContext::link_candidates`]); returns the
    /// exclusions left to count when the page is finished (its links past the page budget).
    pub(super) async fn admit_candidates(
        &self,
        candidates: Vec<crate::traits::Candidate>,
    ) -> Result<ExcludedCounts> {
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

/// The engine's [`SitemapTarget`]: each batch goes through the same checks as links, then the
/// ledger; the budget is spent once the ledger answers [`Admit::OverBudget`].
struct Target<'a> {
    admission: &'a Admission,
    budget_left: Option<bool>,
}

#[async_trait::async_trait]
impl SitemapTarget for Target<'_> {
    async fn take(&mut self, urls: Vec<SitemapUrl>) -> Result<bool> {
        let a = self.admission;
        if self.budget_left.is_none() {
            let record = a.inner.jobs.get(&a.ctx.job).await?;
            self.budget_left = Some(
                record.is_none_or(|r| r.progress.pages_total < u64::from(r.request.max_pages)),
            );
        }
        if self.budget_left == Some(false) {
            return Ok(false);
        }
        let candidates = a.ctx.sitemap_candidates(&urls, SITEMAP_DEPTH).await?;
        if candidates.is_empty() {
            return Ok(true);
        }
        let results = a.inner.ledger.admit(&a.ctx.job, candidates.clone()).await?;
        // Past the budget the ledger keeps no record and counts nothing: count here (no page
        // finish carries these, and sitemaps are read once per job).
        let over = over_budget_counts(&candidates, &results);
        if !over.is_empty() {
            a.inner
                .jobs
                .record_excluded_counts(&a.ctx.job, &over)
                .await?;
        }
        let left = !results.contains(&Admit::OverBudget);
        self.budget_left = Some(left);
        Ok(left)
    }
}
