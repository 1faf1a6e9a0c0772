//! [`MultiIngestor`]: one event to several ingestors.

use std::fmt;

use async_trait::async_trait;
use crawl_core::{DynIngestor, Ingestor, JobRecord, Result, RunDiff};

/// Calls each ingestor in order. Every one is called even when an earlier one failed; the
/// first error is returned.
#[derive(Debug, Clone, Default)]
pub struct MultiIngestor {
    all: Vec<DynIngestor>,
}

impl MultiIngestor {
    /// Fans out to `all`, in order.
    pub fn new(all: Vec<DynIngestor>) -> Self {
        MultiIngestor { all }
    }
}

impl fmt::Display for MultiIngestor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.all.iter().map(ToString::to_string).collect();
        write!(f, "MultiIngestor[{}]", names.join(", "))
    }
}

#[async_trait]
impl Ingestor for MultiIngestor {
    async fn on_completed(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<()> {
        let mut first = Ok(());
        for i in &self.all {
            let r = i.on_completed(job, diff).await;
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    async fn on_deleted(&self, job: &JobRecord) -> Result<()> {
        let mut first = Ok(());
        for i in &self.all {
            let r = i.on_deleted(job).await;
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}
