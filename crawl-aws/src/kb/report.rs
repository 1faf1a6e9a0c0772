//! [`KbReport`]: what one delivery of a run's diff did to a knowledge base.

use serde_json::{json, Value};

/// What one delivery of a run's diff did to a knowledge base.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KbReport {
    /// Documents written (added, or changed and re-ingested).
    pub written: u64,
    /// Upserts already in the knowledge base as they are now (a re-delivered diff).
    pub already_current: u64,
    /// Documents removed from the knowledge base.
    pub deleted: u64,
    /// Pages not delivered, with the reason (`url`, `reason`).
    pub skipped: Vec<(String, String)>,
    /// Ingestion jobs started (Bedrock Knowledge Bases).
    pub ingestion_jobs: Vec<String>,
}

impl KbReport {
    /// The report as JSON (camelCase fields), for a CLI summary.
    pub fn to_json(&self) -> Value {
        json!({
            "written": self.written,
            "alreadyCurrent": self.already_current,
            "deleted": self.deleted,
            "skipped": self.skipped.iter().map(|(u, r)| json!({"url": u, "reason": r})).collect::<Vec<_>>(),
            "ingestionJobs": self.ingestion_jobs,
        })
    }
}
