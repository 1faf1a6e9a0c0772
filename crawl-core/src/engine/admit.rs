//! Admission: which discovered URLs become pages of the job. Exact page caps live here: a
//! URL is admitted only when it is new in the job, passes scope, trap, policy and robots.txt
//! checks, and a page of the budget is reserved — all through the job's [`CrawlLedger`].

use std::collections::HashSet;
use std::sync::Arc;

use url::Url;

use super::Inner;
use crate::error::{ErrorKind, Result};
use crate::job::JobRecord;
use crate::net::RequestGate;
use crate::traits::{Candidate, DynFetcher, FrontierEntry};
use crate::url::{dedup_key, normalize, trap_reason};

pub(super) struct Admission {
    inner: Arc<Inner>,
    record: JobRecord,
    fetcher: DynFetcher,
    gate: RequestGate,
}

impl Admission {
    pub(super) fn new(
        inner: Arc<Inner>,
        record: JobRecord,
        fetcher: DynFetcher,
        gate: RequestGate,
    ) -> Self {
        Admission {
            inner,
            record,
            fetcher,
            gate,
        }
    }

    /// The dedup key of a normalized URL in this job.
    pub(super) fn key(&self, url: &Url) -> String {
        dedup_key(url, self.gate.scope().folds_www())
    }

    /// Why a new URL may not be crawled, if it may not.
    async fn exclusion(&self, url: &Url) -> Result<Option<String>> {
        if let Some(trap) = trap_reason(url) {
            return Ok(Some(trap.to_owned()));
        }
        if let Err(e) = self.gate.check(url) {
            return Ok(Some(e.code().into_owned()));
        }
        match self.fetcher.check(url, Some(&self.record.id)).await {
            Ok(()) => Ok(None),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::RobotsDisallowed
                        | ErrorKind::RobotsUnreachable
                        | ErrorKind::PolicyRefused
                        | ErrorKind::OutOfScope
                ) =>
            {
                Ok(Some(e.code().into_owned()))
            }
            Err(e) => Err(e),
        }
    }

    /// Admits the root (depth 0). An unreachable robots.txt or a refused address on the
    /// root's host comes back as an error: the job fails with that reason.
    pub(super) async fn admit_root(&self, root: &Url) -> Result<()> {
        match self.fetcher.check(root, Some(&self.record.id)).await {
            Err(e) if e.kind() != ErrorKind::RobotsDisallowed => return Err(e),
            _ => {}
        }
        let excluded = self.exclusion(root).await?;
        let c = Candidate::new(
            self.key(root),
            FrontierEntry::new(root.clone(), 0),
            excluded,
        );
        self.inner.ledger.admit(&self.record.id, vec![c]).await?;
        Ok(())
    }

    /// Admits the links found on a page, at `depth`.
    pub(super) async fn admit_links(&self, links: &[Url], depth: u32) -> Result<()> {
        if depth > self.record.request.max_depth || links.is_empty() {
            return Ok(());
        }
        let mut seen = HashSet::new();
        let mut candidates = Vec::new();
        for link in links {
            let Some(u) = normalize(link) else { continue };
            if !self.gate.scope().contains(&u) {
                continue;
            }
            let key = self.key(&u);
            if !seen.insert(key.clone()) {
                continue;
            }
            let excluded = self.exclusion(&u).await?;
            candidates.push(Candidate::new(key, FrontierEntry::new(u, depth), excluded));
        }
        if !candidates.is_empty() {
            self.inner.ledger.admit(&self.record.id, candidates).await?;
        }
        Ok(())
    }

    /// Claims `target`, reached from page `source` by a redirect or named as its canonical:
    /// `true` when no other page of the job has it. The claimant is recorded first, so a page
    /// that claimed `target` and was interrupted by a crash still owns it when it is crawled
    /// again after a resume.
    pub(super) async fn claim(&self, source: &Url, target: &Url) -> Result<bool> {
        let id = &self.record.id;
        let target_key = self.key(target);
        let mine = format!("{target_key}\u{1}claimed-by\u{1}{}", self.key(source));
        let claimed_before = !self.inner.dedup.insert(id, &mine).await?;
        let won = self.inner.dedup.insert(id, &target_key).await?;
        Ok(won || claimed_before)
    }
}
