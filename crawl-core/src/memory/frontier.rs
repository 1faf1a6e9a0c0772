use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use url::Url;

use crate::error::{Error, ErrorKind, Result};
use crate::job::JobId;
use crate::traits::{Frontier, FrontierEntry};

#[derive(Debug, Default)]
struct JobQueue {
    by_depth: BTreeMap<u32, VecDeque<FrontierEntry>>,
    leased: HashMap<String, FrontierEntry>,
    done: HashSet<String>,
}

/// In-memory breadth-first [`Frontier`].
#[derive(Debug, Clone, Default)]
pub struct MemoryFrontier {
    inner: Arc<Mutex<HashMap<JobId, JobQueue>>>,
}

impl MemoryFrontier {
    /// An empty frontier.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<JobId, JobQueue>>> {
        self.inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "frontier lock poisoned"))
    }
}

impl fmt::Display for MemoryFrontier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemoryFrontier")
    }
}

#[async_trait]
impl Frontier for MemoryFrontier {
    async fn push(&self, job: &JobId, entries: Vec<FrontierEntry>) -> Result<()> {
        let mut g = self.lock()?;
        let q = g.entry(job.clone()).or_default();
        for e in entries {
            q.by_depth.entry(e.depth).or_default().push_back(e);
        }
        Ok(())
    }

    async fn pop(&self, job: &JobId) -> Result<Option<FrontierEntry>> {
        let mut g = self.lock()?;
        let Some(q) = g.get_mut(job) else {
            return Ok(None);
        };
        while let Some(mut first) = q.by_depth.first_entry() {
            match first.get_mut().pop_front() {
                Some(e) => {
                    q.leased.insert(e.url.to_string(), e.clone());
                    return Ok(Some(e));
                }
                None => {
                    first.remove();
                }
            }
        }
        Ok(None)
    }

    async fn complete(&self, job: &JobId, url: &Url) -> Result<()> {
        let mut g = self.lock()?;
        if let Some(q) = g.get_mut(job) {
            q.leased.remove(url.as_str());
            q.done.insert(url.to_string());
        }
        Ok(())
    }

    async fn requeue_leased(&self, job: &JobId) -> Result<usize> {
        let mut g = self.lock()?;
        let Some(q) = g.get_mut(job) else {
            return Ok(0);
        };
        let leased: Vec<FrontierEntry> = q.leased.drain().map(|(_, e)| e).collect();
        let n = leased.len();
        for e in leased {
            q.by_depth.entry(e.depth).or_default().push_front(e);
        }
        Ok(n)
    }

    async fn pending(&self, job: &JobId) -> Result<usize> {
        let g = self.lock()?;
        Ok(g.get(job).map_or(0, |q| {
            q.leased.len() + q.by_depth.values().map(VecDeque::len).sum::<usize>()
        }))
    }

    async fn clear_job(&self, job: &JobId) -> Result<()> {
        self.lock()?.remove(job);
        Ok(())
    }
}
