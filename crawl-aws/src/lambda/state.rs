//! The crawl's working state between states, kept as auxiliary objects of the job in the
//! sink (so `Sink::delete_job` removes it): level lists, batch reports, the robots snapshot.

use crawl_core::{JobId, Result, Sink};
use serde::de::DeserializeOwned;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::S3Sink;

/// Aux name of the list of pages at `level`.
pub(crate) fn level_name(level: u32) -> String {
    format!("sfn-level-{level}.json")
}

/// Aux name of the dedup keys the job claimed up to `level` (JSON array of strings): the
/// plan step of the next level leaves them out before writing anything.
pub(crate) fn seen_name(level: u32) -> String {
    format!("sfn-seen-{level}.json")
}

/// The start of the aux names of `level`'s batch reports.
pub(crate) fn batch_report_prefix(level: u32) -> String {
    format!("sfn-batch-{level}-")
}

/// Aux name of the report of the batch of pages with URLs `urls` (in batch order) at `level` (one JSON
/// array of [`PageReport`](super::PageReport)s, links included): the same batch always gets
/// the same name, so a retried batch overwrites its report.
pub(crate) fn batch_report_name<'a>(level: u32, urls: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    for u in urls {
        h.update(u.as_bytes());
        h.update([0u8]);
    }
    let h = hex::encode(h.finalize());
    format!("{}{}.json", batch_report_prefix(level), &h[..32])
}

/// Aux name of the robots.txt snapshot.
pub(crate) const ROBOTS_NAME: &str = "sfn-robots.json";

/// The full S3 key of an aux object of `job`.
pub(crate) fn s3_key(sink: &S3Sink, job: &JobId, name: &str) -> Result<String> {
    Ok(sink.object_key(&crawl_core::keys::aux_key(job, name)?))
}

/// Writes `value` as JSON to an aux object.
pub(crate) async fn put_json<T: Serialize>(
    sink: &S3Sink,
    job: &JobId,
    name: &str,
    value: &T,
) -> Result<()> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| crawl_core::Error::new(crawl_core::ErrorKind::Internal, e.to_string()))?;
    sink.put_aux(job, name, bytes).await.map(|_| ())
}

/// Reads an aux object as JSON; `None` when absent.
pub(crate) async fn get_json<T: DeserializeOwned>(
    sink: &S3Sink,
    job: &JobId,
    name: &str,
) -> Result<Option<T>> {
    let Some(bytes) = sink.get(&crawl_core::keys::aux_key(job, name)?).await? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        crawl_core::Error::new(
            crawl_core::ErrorKind::Storage,
            format!("{name} of {job} is malformed: {e}"),
        )
    })
}
