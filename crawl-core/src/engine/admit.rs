//! Admission: which discovered URLs become pages of the job. Exact page caps live here: a
//! URL is admitted only after winning the dedup insert, passing robots.txt and reserving a
//! page of the budget in the job store.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use url::Url;

use super::Inner;
use crate::error::{ErrorKind, Result};
use crate::job::JobRecord;
use crate::net::RequestGate;
use crate::traits::{DynFetcher, FrontierEntry};
use crate::url::{dedup_key, normalize, trap_reason};

pub(super) struct Admission {
    inner: Arc<Inner>,
    record: JobRecord,
    fetcher: DynFetcher,
    gate: RequestGate,
    budget_spent: AtomicBool,
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
            budget_spent: AtomicBool::new(false),
        }
    }

    /// The dedup key of a normalized URL in this job.
    pub(super) fn key(&self, url: &Url) -> String {
        dedup_key(url, self.gate.scope().folds_www())
    }

    /// Admits the root (depth 0). Robots and policy errors come back to the caller, which
    /// fails the job for an unreachable robots.txt on the root's host.
    pub(super) async fn admit_root(&self, root: &Url) -> Result<()> {
        let id = &self.record.id;
        self.inner.dedup.insert(id, &self.key(root)).await?;
        match self.fetcher.check(root, Some(id)).await {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::RobotsDisallowed => {
                self.inner.jobs.record_excluded(id, e.kind().code()).await?;
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        if self.inner.jobs.reserve_page(id).await? {
            self.inner
                .frontier
                .push(id, vec![FrontierEntry::new(root.clone(), 0)])
                .await?;
        }
        Ok(())
    }

    /// Admits the links found on a page at `depth - 1`.
    pub(super) async fn admit_links(&self, links: &[Url], depth: u32) -> Result<()> {
        if depth > self.record.request.max_depth || links.is_empty() {
            return Ok(());
        }
        let id = &self.record.id;
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
            candidates.push((u, key));
        }
        if candidates.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = candidates.iter().map(|(_, k)| k.clone()).collect();
        let won = self.inner.dedup.insert_many(id, &keys).await?;
        let mut admitted = Vec::new();
        for ((url, _), won) in candidates.into_iter().zip(won) {
            if !won {
                continue;
            }
            if let Some(trap) = trap_reason(&url) {
                self.inner.jobs.record_excluded(id, trap).await?;
                continue;
            }
            if let Err(e) = self.gate.check(&url) {
                self.inner.jobs.record_excluded(id, &e.code()).await?;
                continue;
            }
            if let Err(e) = self.fetcher.check(&url, Some(id)).await {
                self.inner.jobs.record_excluded(id, &e.code()).await?;
                continue;
            }
            if self.budget_spent.load(Ordering::Relaxed) {
                self.inner.jobs.record_excluded(id, "max_pages").await?;
                continue;
            }
            if self.inner.jobs.reserve_page(id).await? {
                admitted.push(FrontierEntry::new(url, depth));
            } else {
                self.budget_spent.store(true, Ordering::Relaxed);
                self.inner.jobs.record_excluded(id, "max_pages").await?;
            }
        }
        if !admitted.is_empty() {
            self.inner.frontier.push(id, admitted).await?;
        }
        Ok(())
    }

    /// Claims a URL reached by a redirect or named as canonical: `true` when no other page of
    /// the job has it.
    pub(super) async fn claim(&self, url: &Url) -> Result<bool> {
        self.inner
            .dedup
            .insert(&self.record.id, &self.key(url))
            .await
    }
}
