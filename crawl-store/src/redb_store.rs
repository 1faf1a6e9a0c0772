//! Durable embedded crawl state on redb: frontier, dedup, job records and the ledger in one
//! database file, so a crawl killed at any instant resumes with nothing lost or done twice.
//!
//! redb was chosen over SQLite: pure Rust (no C build in every CI run), ACID transactions with
//! copy-on-write B-trees, and one file. Every operation runs in one open write transaction
//! that is committed every 64 operations and flushed to disk at most 250 ms after the last
//! flush and at every job create, finish and delete (see [`batch`]): after a crash the store
//! reopens at a consistent earlier commit, and the pages done since are simply crawled again,
//! with idempotent writes. This keeps commits and fsyncs off the per-page path.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use crawl_core::clock::{DynClock, SystemClock};
use crawl_core::memory::DEFAULT_DEDUP_TTL;
use crawl_core::{
    Admit, Candidate, Capabilities, CrawlLedger, DedupStore, Error, ErrorKind, ExcludedCounts,
    Frontier, FrontierEntry, JobId, JobRecord, JobStatus, JobStore, PageOutcome, Result,
};
use redb::{Database, ReadableTable, TableDefinition, WriteTransaction};
use serde::{Deserialize, Serialize};
use url::Url;

mod batch;
use batch::Tx;
mod source;

const JOBS: TableDefinition<&str, &[u8]> = TableDefinition::new("jobs");
const DEDUP: TableDefinition<&str, i64> = TableDefinition::new("dedup");
const QUEUE: TableDefinition<&str, &[u8]> = TableDefinition::new("queue");
const LEASED: TableDefinition<&str, &[u8]> = TableDefinition::new("leased");
const DONE: TableDefinition<&str, u8> = TableDefinition::new("done");
const SEQ: TableDefinition<&str, u64> = TableDefinition::new("seq");

/// Separator between a job id and the rest of a key; sorts before every printable byte, so
/// `job\x01` .. `job\x02` is exactly one job's range.
const SEP: char = '\u{1}';

/// redb's page cache. It fills as the database grows, so it is part of what a crawl's
/// memory grows by until it is full: 2 MiB grew a crawl by 1.9 MiB between 1,000 and 10,000
/// pages; 256 KiB keeps that growth within a quarter megabyte for the same CPU time
/// (`crawl_memory`: the pages it evicts are re-read from the OS's file cache).
const CACHE_BYTES: usize = 256 << 10;

fn k(job: &JobId, rest: &str) -> String {
    format!("{job}{SEP}{rest}")
}

fn range(job: &JobId) -> (String, String) {
    (format!("{job}\u{1}"), format!("{job}\u{2}"))
}

#[derive(Serialize, Deserialize)]
struct Leased {
    entry: FrontierEntry,
    queue_key: String,
}

fn db_err(e: impl Into<redb::Error>) -> Error {
    let e: redb::Error = e.into();
    Error::new(ErrorKind::Storage, e.to_string()).with_backend("RedbStore")
}

fn json_err(e: serde_json::Error) -> Error {
    Error::new(ErrorKind::Storage, format!("corrupt record: {e}")).with_backend("RedbStore")
}

/// Durable frontier, dedup store, job store and ledger in one redb file.
#[derive(Clone)]
pub struct RedbStore {
    /// Declared before `db`: dropped first, so its last writes commit while the file is open.
    tx: Arc<batch::Shared>,
    /// The store's owners keep the file open (the transaction holds it weakly).
    _db: Arc<Database>,
    path: PathBuf,
    ttl: Duration,
    clock: DynClock,
}

impl fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedbStore")
            .field("path", &self.path)
            .finish()
    }
}

impl fmt::Display for RedbStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedbStore({})", self.path.display())
    }
}

impl RedbStore {
    /// Opens (or creates) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with_clock(path, DEFAULT_DEDUP_TTL, Arc::new(SystemClock))
    }

    /// Opens with a chosen dedup TTL and clock.
    pub fn open_with_clock(path: impl AsRef<Path>, ttl: Duration, clock: DynClock) -> Result<Self> {
        let path = path.as_ref().to_owned();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::new(ErrorKind::Storage, format!("create {}: {e}", dir.display()))
                    .with_backend("RedbStore")
            })?;
        }
        let mut db = Database::builder()
            .set_cache_size(CACHE_BYTES)
            .create(&path)
            .map_err(db_err)?;
        let tx = db.begin_write().map_err(db_err)?;
        {
            tx.open_table(JOBS).map_err(db_err)?;
            tx.open_table(DEDUP).map_err(db_err)?;
            tx.open_table(QUEUE).map_err(db_err)?;
            tx.open_table(LEASED).map_err(db_err)?;
            tx.open_table(DONE).map_err(db_err)?;
            tx.open_table(SEQ).map_err(db_err)?;
        }
        tx.commit().map_err(db_err)?;
        sweep_ended_jobs(&mut db)?;
        let db = Arc::new(db);
        Ok(RedbStore {
            tx: Arc::new(batch::Shared::new(&db)),
            _db: db,
            path,
            ttl,
            clock,
        })
    }

    fn now_ms(&self) -> i64 {
        (self.clock.now().unix_timestamp_nanos() / 1_000_000) as i64
    }

    /// Runs `f` in the store's open write transaction (see [`batch`]).
    async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Tx<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.tx.run(false, f).await
    }

    /// [`write`](Self::write) that reaches the disk before returning.
    async fn write_durable<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Tx<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.tx.run(true, f).await
    }

    /// A read, in the open transaction too: it sees every write made before it.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Tx<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.tx.run(false, f).await
    }
}

fn load_job(tx: &Tx<'_>, job: &JobId) -> Result<JobRecord> {
    find_job(tx, job)?.ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no job {job}")))
}

/// A job's record: the one decoded before, else from the table.
fn find_job(tx: &Tx<'_>, job: &JobId) -> Result<Option<JobRecord>> {
    if let Some(r) = tx.jobs.borrow().get(job.as_str()) {
        return Ok(Some(r.clone()));
    }
    let t = tx.open_table(JOBS).map_err(db_err)?;
    let Some(v) = t.get(job.as_str()).map_err(db_err)? else {
        return Ok(None);
    };
    let r: JobRecord = serde_json::from_slice(v.value()).map_err(json_err)?;
    tx.jobs.borrow_mut().insert(job.to_string(), r.clone());
    Ok(Some(r))
}

fn save_job(tx: &Tx<'_>, r: &JobRecord) -> Result<()> {
    let bytes = serde_json::to_vec(r).map_err(json_err)?;
    let mut t = tx.open_table(JOBS).map_err(db_err)?;
    t.insert(r.id.as_str(), bytes.as_slice()).map_err(db_err)?;
    tx.jobs.borrow_mut().insert(r.id.to_string(), r.clone());
    Ok(())
}

fn dedup_insert(tx: &WriteTransaction, job: &JobId, key: &str, now: i64, exp: i64) -> Result<bool> {
    if dedup_live(tx, job, key, now)? {
        return Ok(false);
    }
    let mut t = tx.open_table(DEDUP).map_err(db_err)?;
    t.insert(k(job, key).as_str(), exp).map_err(db_err)?;
    Ok(true)
}

fn dedup_live(tx: &WriteTransaction, job: &JobId, key: &str, now: i64) -> Result<bool> {
    let t = tx.open_table(DEDUP).map_err(db_err)?;
    let live = t
        .get(k(job, key).as_str())
        .map_err(db_err)?
        .is_some_and(|v| v.value() > now);
    Ok(live)
}

/// Removes a job's frontier (queue, leases, done marks, sequence) and dedup records.
fn remove_crawl_state(tx: &WriteTransaction, job: &JobId) -> Result<usize> {
    let mut n = 0;
    for def in [QUEUE, LEASED] {
        n += remove_range(tx, def, job)?;
    }
    n += remove_range(tx, DONE, job)?;
    n += remove_range(tx, DEDUP, job)?;
    tx.open_table(SEQ)
        .map_err(db_err)?
        .remove(job.as_str())
        .map_err(db_err)?;
    Ok(n)
}

/// Drops the crawl state of every job that has ended (a process that stopped between a
/// job's end and its state's removal, or a file written by an older version); compacts
/// the file when anything was removed. Returns the entries removed.
fn sweep_ended_jobs(db: &mut Database) -> Result<usize> {
    let tx = db.begin_write().map_err(db_err)?;
    let ended: Vec<JobId> = {
        let t = tx.open_table(JOBS).map_err(db_err)?;
        let mut v = Vec::new();
        for row in t.iter().map_err(db_err)? {
            let (_, bytes) = row.map_err(db_err)?;
            let r: JobRecord = serde_json::from_slice(bytes.value()).map_err(json_err)?;
            if r.status.is_final() {
                v.push(r.id);
            }
        }
        v
    };
    let mut removed = 0;
    for job in &ended {
        removed += remove_crawl_state(&tx, job)?;
    }
    tx.commit().map_err(db_err)?;
    if removed > 0 {
        db.compact().map_err(db_err)?;
    }
    Ok(removed)
}

fn queue_push<'a>(
    tx: &WriteTransaction,
    job: &JobId,
    entries: impl IntoIterator<Item = &'a FrontierEntry>,
) -> Result<()> {
    let mut seq_t = tx.open_table(SEQ).map_err(db_err)?;
    let mut seq = seq_t
        .get(job.as_str())
        .map_err(db_err)?
        .map_or(0, |v| v.value());
    let mut q = tx.open_table(QUEUE).map_err(db_err)?;
    for e in entries {
        seq += 1;
        let key = k(job, &format!("{:010}{SEP}{:020}", e.depth, seq));
        let bytes = serde_json::to_vec(e).map_err(json_err)?;
        q.insert(key.as_str(), bytes.as_slice()).map_err(db_err)?;
    }
    seq_t.insert(job.as_str(), seq).map_err(db_err)?;
    Ok(())
}

fn remove_range<V: redb::Value + 'static>(
    tx: &WriteTransaction,
    def: TableDefinition<&str, V>,
    job: &JobId,
) -> Result<usize> {
    let (lo, hi) = range(job);
    let mut t = tx.open_table(def).map_err(db_err)?;
    let keys: Vec<String> = t
        .range(lo.as_str()..hi.as_str())
        .map_err(db_err)?
        .map(|r| r.map(|(k, _)| k.value().to_owned()))
        .collect::<std::result::Result<_, _>>()
        .map_err(db_err)?;
    for key in &keys {
        t.remove(key.as_str()).map_err(db_err)?;
    }
    Ok(keys.len())
}

#[async_trait]
impl Frontier for RedbStore {
    async fn push(&self, job: &JobId, entries: Vec<FrontierEntry>) -> Result<()> {
        let job = job.clone();
        self.write(move |tx| queue_push(tx, &job, &entries)).await
    }

    async fn pop(&self, job: &JobId) -> Result<Option<FrontierEntry>> {
        let job = job.clone();
        self.write(move |tx| {
            let (lo, hi) = range(&job);
            let mut q = tx.open_table(QUEUE).map_err(db_err)?;
            let first = q
                .range(lo.as_str()..hi.as_str())
                .map_err(db_err)?
                .next()
                .transpose()
                .map_err(db_err)?
                .map(|(k, v)| (k.value().to_owned(), v.value().to_vec()));
            let Some((qk, bytes)) = first else {
                return Ok(None);
            };
            q.remove(qk.as_str()).map_err(db_err)?;
            let entry: FrontierEntry = serde_json::from_slice(&bytes).map_err(json_err)?;
            let leased = serde_json::to_vec(&Leased {
                entry: entry.clone(),
                queue_key: qk,
            })
            .map_err(json_err)?;
            let mut l = tx.open_table(LEASED).map_err(db_err)?;
            l.insert(k(&job, entry.url.as_str()).as_str(), leased.as_slice())
                .map_err(db_err)?;
            Ok(Some(entry))
        })
        .await
    }

    async fn complete(&self, job: &JobId, url: &Url) -> Result<()> {
        let key = k(job, url.as_str());
        self.write(move |tx| {
            tx.open_table(LEASED)
                .map_err(db_err)?
                .remove(key.as_str())
                .map_err(db_err)?;
            tx.open_table(DONE)
                .map_err(db_err)?
                .insert(key.as_str(), 1u8)
                .map_err(db_err)?;
            Ok(())
        })
        .await
    }

    async fn requeue_leased(&self, job: &JobId) -> Result<usize> {
        let job = job.clone();
        self.write(move |tx| {
            let (lo, hi) = range(&job);
            let mut l = tx.open_table(LEASED).map_err(db_err)?;
            let leased: Vec<(String, Vec<u8>)> = l
                .range(lo.as_str()..hi.as_str())
                .map_err(db_err)?
                .map(|r| r.map(|(k, v)| (k.value().to_owned(), v.value().to_vec())))
                .collect::<std::result::Result<_, _>>()
                .map_err(db_err)?;
            let mut q = tx.open_table(QUEUE).map_err(db_err)?;
            for (lk, bytes) in &leased {
                let le: Leased = serde_json::from_slice(bytes).map_err(json_err)?;
                let e = serde_json::to_vec(&le.entry).map_err(json_err)?;
                q.insert(le.queue_key.as_str(), e.as_slice())
                    .map_err(db_err)?;
                l.remove(lk.as_str()).map_err(db_err)?;
            }
            Ok(leased.len())
        })
        .await
    }

    async fn pending(&self, job: &JobId) -> Result<usize> {
        let job = job.clone();
        self.read(move |tx| {
            let (lo, hi) = range(&job);
            let q = tx.open_table(QUEUE).map_err(db_err)?;
            let l = tx.open_table(LEASED).map_err(db_err)?;
            let n = q.range(lo.as_str()..hi.as_str()).map_err(db_err)?.count()
                + l.range(lo.as_str()..hi.as_str()).map_err(db_err)?.count();
            Ok(n)
        })
        .await
    }

    async fn clear_job(&self, job: &JobId) -> Result<()> {
        let job = job.clone();
        self.write(move |tx| {
            remove_range(tx, QUEUE, &job)?;
            remove_range(tx, LEASED, &job)?;
            remove_range(tx, DONE, &job)?;
            tx.open_table(SEQ)
                .map_err(db_err)?
                .remove(job.as_str())
                .map_err(db_err)?;
            Ok(())
        })
        .await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::DURABLE
    }
}

#[async_trait]
impl DedupStore for RedbStore {
    async fn insert(&self, job: &JobId, key: &str) -> Result<bool> {
        Ok(self.insert_many(job, &[key.to_owned()]).await?[0])
    }

    async fn insert_many(&self, job: &JobId, keys: &[String]) -> Result<Vec<bool>> {
        let job = job.clone();
        let keys = keys.to_vec();
        let now = self.now_ms();
        let exp = now + self.ttl.as_millis() as i64;
        self.write(move |tx| {
            keys.iter()
                .map(|key| dedup_insert(tx, &job, key, now, exp))
                .collect()
        })
        .await
    }

    async fn contains(&self, job: &JobId, key: &str) -> Result<bool> {
        let key = k(job, key);
        let now = self.now_ms();
        self.read(move |tx| {
            let t = tx.open_table(DEDUP).map_err(db_err)?;
            let live = t
                .get(key.as_str())
                .map_err(db_err)?
                .is_some_and(|v| v.value() > now);
            Ok(live)
        })
        .await
    }

    async fn clear_job(&self, job: &JobId) -> Result<()> {
        let job = job.clone();
        self.write(move |tx| remove_range(tx, DEDUP, &job).map(|_| ()))
            .await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::DURABLE
    }
}

#[async_trait]
impl JobStore for RedbStore {
    async fn create(&self, record: &JobRecord) -> Result<()> {
        let r = record.clone();
        self.write_durable(move |tx| {
            let exists = tx
                .open_table(JOBS)
                .map_err(db_err)?
                .get(r.id.as_str())
                .map_err(db_err)?
                .is_some();
            if exists {
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!("job {} already exists", r.id),
                ));
            }
            save_job(tx, &r)
        })
        .await
    }

    async fn get(&self, job: &JobId) -> Result<Option<JobRecord>> {
        let job = job.clone();
        self.read(move |tx| find_job(tx, &job)).await
    }

    async fn list(&self, assistant_id: Option<&str>) -> Result<Vec<JobRecord>> {
        let a = assistant_id.map(str::to_owned);
        self.read(move |tx| {
            let t = tx.open_table(JOBS).map_err(db_err)?;
            let mut v = Vec::new();
            for row in t.iter().map_err(db_err)? {
                let (_, bytes) = row.map_err(db_err)?;
                let r: JobRecord = serde_json::from_slice(bytes.value()).map_err(json_err)?;
                if a.is_none() || r.assistant_id == a {
                    v.push(r);
                }
            }
            v.sort_by(|x, y| y.started_at.cmp(&x.started_at).then(x.id.cmp(&y.id)));
            Ok(v)
        })
        .await
    }

    async fn reserve_page(&self, job: &JobId) -> Result<bool> {
        let job = job.clone();
        self.write(move |tx| {
            let mut r = load_job(tx, &job)?;
            let ok = r.try_reserve_page();
            save_job(tx, &r)?;
            Ok(ok)
        })
        .await
    }

    async fn record_page(&self, job: &JobId, outcome: &PageOutcome) -> Result<()> {
        let job = job.clone();
        let o = outcome.clone();
        self.write(move |tx| {
            let mut r = load_job(tx, &job)?;
            r.apply_outcome(&o);
            save_job(tx, &r)
        })
        .await
    }

    async fn record_excluded(&self, job: &JobId, reason: &str) -> Result<()> {
        let job = job.clone();
        let reason = reason.to_owned();
        self.write(move |tx| {
            let mut r = load_job(tx, &job)?;
            r.add_excluded(&reason);
            save_job(tx, &r)
        })
        .await
    }

    async fn record_excluded_counts(&self, job: &JobId, counts: &ExcludedCounts) -> Result<()> {
        let job = job.clone();
        let counts = counts.clone();
        self.write(move |tx| {
            let mut r = load_job(tx, &job)?;
            for (reason, n) in &counts {
                r.add_excluded_n(reason, *n);
            }
            save_job(tx, &r)
        })
        .await
    }

    async fn record_changes(&self, job: &JobId, changes: &crawl_core::ChangeCounts) -> Result<()> {
        let job = job.clone();
        let changes = *changes;
        self.write_durable(move |tx| {
            let mut r = load_job(tx, &job)?;
            r.progress.changes = changes;
            save_job(tx, &r)
        })
        .await
    }

    async fn finish(
        &self,
        job: &JobId,
        status: JobStatus,
        failure: Option<String>,
    ) -> Result<bool> {
        if !status.is_final() {
            return Err(Error::invalid("finish: status must be COMPLETED or FAILED"));
        }
        let job = job.clone();
        let now = self.clock.now();
        self.write_durable(move |tx| {
            let mut r = load_job(tx, &job)?;
            let changed = r.try_finish(status, failure, now);
            if changed {
                save_job(tx, &r)?;
            }
            Ok(changed)
        })
        .await
    }

    async fn begin_ingestion(
        &self,
        job: &JobId,
        lease: Duration,
    ) -> Result<crawl_core::IngestionClaim> {
        let job = job.clone();
        let now = self.clock.now().unix_timestamp();
        self.write_durable(move |tx| {
            let mut r = load_job(tx, &job)?;
            let claim = r.try_begin_ingestion(now, lease.as_secs());
            if matches!(claim, crawl_core::IngestionClaim::Mine { .. }) {
                save_job(tx, &r)?;
            }
            Ok(claim)
        })
        .await
    }

    async fn end_ingestion(&self, job: &JobId, failure: Option<String>) -> Result<()> {
        let job = job.clone();
        self.write_durable(move |tx| {
            let mut r = load_job(tx, &job)?;
            r.end_ingestion(failure);
            save_job(tx, &r)
        })
        .await
    }

    async fn delete(&self, job: &JobId) -> Result<()> {
        let job = job.clone();
        self.write_durable(move |tx| {
            let removed = tx
                .open_table(JOBS)
                .map_err(db_err)?
                .remove(job.as_str())
                .map_err(db_err)?
                .is_some();
            tx.jobs.borrow_mut().remove(job.as_str());
            if !removed {
                return Err(Error::new(ErrorKind::NotFound, format!("no job {job}")));
            }
            remove_crawl_state(tx, &job)?;
            Ok(())
        })
        .await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::DURABLE
    }
}

#[async_trait]
impl CrawlLedger for RedbStore {
    async fn admit(&self, job: &JobId, candidates: Vec<Candidate>) -> Result<Vec<Admit>> {
        let job = job.clone();
        let now = self.now_ms();
        let exp = now + self.ttl.as_millis() as i64;
        self.write(move |tx| {
            let mut r = load_job(tx, &job)?;
            let mut out = Vec::with_capacity(candidates.len());
            let mut queue = Vec::new();
            let mut spent = r.progress.pages_total >= u64::from(r.request.max_pages);
            for c in &candidates {
                let a = if dedup_live(tx, &job, &c.key, now)? {
                    Admit::Seen
                } else if spent {
                    // Past the budget: looked up, never inserted (the trait's contract).
                    Admit::OverBudget
                } else if let Some(reason) = &c.excluded {
                    dedup_insert(tx, &job, &c.key, now, exp)?;
                    r.add_excluded(reason);
                    Admit::Excluded
                } else if r.try_reserve_page() {
                    dedup_insert(tx, &job, &c.key, now, exp)?;
                    queue.push(&c.entry);
                    Admit::Admitted
                } else {
                    spent = true;
                    Admit::OverBudget
                };
                out.push(a);
            }
            queue_push(tx, &job, queue.iter().copied())?;
            save_job(tx, &r)?;
            Ok(out)
        })
        .await
    }

    async fn finish_page(
        &self,
        job: &JobId,
        url: &Url,
        outcome: &PageOutcome,
        excluded: &ExcludedCounts,
    ) -> Result<()> {
        let job = job.clone();
        let key = k(&job, url.as_str());
        let o = outcome.clone();
        let excluded = excluded.clone();
        self.write(move |tx| {
            let mut done = tx.open_table(DONE).map_err(db_err)?;
            if done.get(key.as_str()).map_err(db_err)?.is_some() {
                return Ok(());
            }
            done.insert(key.as_str(), 1u8).map_err(db_err)?;
            drop(done);
            tx.open_table(LEASED)
                .map_err(db_err)?
                .remove(key.as_str())
                .map_err(db_err)?;
            let mut r = load_job(tx, &job)?;
            r.apply_outcome(&o);
            for (reason, n) in &excluded {
                r.add_excluded_n(reason, *n);
            }
            save_job(tx, &r)
        })
        .await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::DURABLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawl_core::clock::ManualClock;
    use crawl_core::conformance;

    #[tokio::test]
    async fn redb_store_passes_the_conformance_suite() {
        let dir = tempfile::tempdir().unwrap();
        let s = Arc::new(RedbStore::open(dir.path().join("state.redb")).unwrap());
        conformance::frontier_suite(Arc::clone(&s) as _).await;
        conformance::dedup_suite(Arc::clone(&s) as _).await;
        conformance::jobs_suite(Arc::clone(&s) as _).await;
        conformance::ledger_admit_and_finish(&*s, &*s, &*s).await;
        let clock = Arc::new(ManualClock::new(time::OffsetDateTime::now_utc()));
        let d = RedbStore::open_with_clock(
            dir.path().join("ttl.redb"),
            DEFAULT_DEDUP_TTL,
            Arc::clone(&clock) as _,
        )
        .unwrap();
        conformance::dedup_ttl_window(&d, &clock, DEFAULT_DEDUP_TTL).await;
    }

    #[tokio::test]
    async fn state_survives_reopening_and_finish_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.redb");
        let req = crawl_core::CrawlRequest::builder("https://example.com/")
            .max_pages(5)
            .build()
            .unwrap();
        let rec = JobRecord::new(JobId::new(), req, time::OffsetDateTime::now_utc());
        let id = rec.id.clone();
        let a = Url::parse("https://example.com/a").unwrap();
        {
            let s = RedbStore::open(&path).unwrap();
            s.create(&rec).await.unwrap();
            let cands = ["a", "b"]
                .iter()
                .map(|p| {
                    Candidate::new(
                        format!("example.com/{p}"),
                        FrontierEntry::new(
                            Url::parse(&format!("https://example.com/{p}")).unwrap(),
                            0,
                        ),
                        None,
                    )
                })
                .collect();
            s.admit(&id, cands).await.unwrap();
            let e = s.pop(&id).await.unwrap().unwrap();
            assert_eq!(e.url, a);
            // dropped here with `a` leased: the process "died"
        }
        let s = RedbStore::open(&path).unwrap();
        assert_eq!(s.pending(&id).await.unwrap(), 2);
        assert_eq!(s.requeue_leased(&id).await.unwrap(), 1);
        let e = s.pop(&id).await.unwrap().unwrap();
        assert_eq!(e.url, a, "requeued entry keeps its place");
        let none = ExcludedCounts::new();
        s.finish_page(&id, &a, &PageOutcome::Stored, &none)
            .await
            .unwrap();
        s.finish_page(&id, &a, &PageOutcome::Stored, &none)
            .await
            .unwrap();
        let p = s.get(&id).await.unwrap().unwrap().progress;
        assert_eq!((p.pages_total, p.pages_processed, p.stored), (2, 1, 1));
        assert!(
            !s.insert(&id, "example.com/a").await.unwrap(),
            "dedup lost on reopen"
        );
    }

    /// Entries of `def` that belong to `job`.
    async fn entries<V: redb::Value + Send + 'static>(
        s: &RedbStore,
        def: TableDefinition<'static, &'static str, V>,
        job: &JobId,
    ) -> usize {
        let (lo, hi) = range(job);
        s.read(move |tx| {
            let t = tx.open_table(def).map_err(db_err)?;
            let n = t.range(lo.as_str()..hi.as_str()).map_err(db_err)?.count();
            Ok(n)
        })
        .await
        .unwrap()
    }

    fn cands(prefix: &str, n: usize) -> Vec<Candidate> {
        (0..n)
            .map(|i| {
                let u = Url::parse(&format!("https://example.com/{prefix}/{i}")).unwrap();
                Candidate::new(
                    format!("example.com/{prefix}/{i}"),
                    FrontierEntry::new(u, 1),
                    None,
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn links_past_the_budget_leave_no_dedup_record_and_count_once_per_page_end() {
        let dir = tempfile::tempdir().unwrap();
        let s = RedbStore::open(dir.path().join("state.redb")).unwrap();
        let req = crawl_core::CrawlRequest::builder("https://example.com/")
            .max_pages(3)
            .build()
            .unwrap();
        let rec = JobRecord::new(JobId::new(), req, time::OffsetDateTime::now_utc());
        let id = rec.id.clone();
        s.create(&rec).await.unwrap();
        // The budget is spent in the first batch: 3 admitted, 9,997 over it.
        let first = s.admit(&id, cands("a", 10_000)).await.unwrap();
        assert_eq!(first.iter().filter(|a| **a == Admit::Admitted).count(), 3);
        assert_eq!(
            first.iter().filter(|a| **a == Admit::OverBudget).count(),
            9_997
        );
        // Spent from the start: known URLs are seen, new ones over budget, none stored.
        let second = s.admit(&id, cands("b", 10_000)).await.unwrap();
        assert!(second.iter().all(|a| *a == Admit::OverBudget));
        let known = s.admit(&id, cands("a", 2)).await.unwrap();
        assert_eq!(known, [Admit::Seen, Admit::Seen]);
        assert_eq!(
            entries(&s, DEDUP, &id).await,
            3,
            "one record per admitted page"
        );
        assert_eq!(entries(&s, QUEUE, &id).await, 3);
        // Counted when the page that found them ends, once however often it is finished.
        let e = s.pop(&id).await.unwrap().unwrap();
        let counts: ExcludedCounts = [("max_pages".to_owned(), 9_997)].into_iter().collect();
        s.finish_page(&id, &e.url, &PageOutcome::Stored, &counts)
            .await
            .unwrap();
        s.finish_page(&id, &e.url, &PageOutcome::Stored, &counts)
            .await
            .unwrap();
        let p = s.get(&id).await.unwrap().unwrap().progress;
        assert_eq!(p.excluded.get("max_pages"), Some(&9_997));
        assert_eq!(p.pages_total, 3);
    }

    #[tokio::test]
    async fn an_ended_jobs_crawl_state_is_dropped_on_reopen_and_the_file_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.redb");
        let req = crawl_core::CrawlRequest::builder("https://example.com/")
            .max_pages(20_000)
            .guardrails(crawl_core::Guardrails::lifted())
            .build()
            .unwrap();
        let ended = JobRecord::new(JobId::new(), req.clone(), time::OffsetDateTime::now_utc());
        let running = JobRecord::new(JobId::new(), req, time::OffsetDateTime::now_utc());
        let big = {
            let s = RedbStore::open(&path).unwrap();
            for r in [&ended, &running] {
                s.create(r).await.unwrap();
            }
            s.admit(&ended.id, cands("a", 20_000)).await.unwrap();
            s.admit(&running.id, cands("a", 10)).await.unwrap();
            s.finish(&ended.id, JobStatus::Completed, None)
                .await
                .unwrap();
            // ended here without clearing the job (the process stopped)
            assert_eq!(entries(&s, DEDUP, &ended.id).await, 20_000);
            std::fs::metadata(&path).unwrap().len()
        };
        let s = RedbStore::open(&path).unwrap();
        assert_eq!(entries(&s, DEDUP, &ended.id).await, 0);
        assert_eq!(entries(&s, QUEUE, &ended.id).await, 0);
        assert_eq!(
            entries(&s, DEDUP, &running.id).await,
            10,
            "a running job keeps its state"
        );
        assert_eq!(entries(&s, QUEUE, &running.id).await, 10);
        assert!(
            s.get(&ended.id).await.unwrap().is_some(),
            "the record stays"
        );
        let small = std::fs::metadata(&path).unwrap().len();
        assert!(small < big / 2, "compacted: {big} -> {small} bytes");
    }

    #[tokio::test]
    async fn operations_share_commits_and_every_read_sees_the_writes_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let s = RedbStore::open(dir.path().join("state.redb")).unwrap();
        let job = JobId::new();
        let before = s.tx.commits();
        for i in 0..1_000 {
            let key = format!("example.com/{i}");
            assert!(s.insert(&job, &key).await.unwrap(), "new key {i}");
            assert!(
                s.contains(&job, &key).await.unwrap(),
                "read after write {i}"
            );
            assert!(!s.insert(&job, &key).await.unwrap(), "second insert {i}");
        }
        let commits = s.tx.commits() - before;
        // 3,000 operations: one commit per 64 and the timed flushes, not one each.
        assert!(commits <= 3_000 / 64 + 20, "{commits} commits");
    }

    #[tokio::test]
    async fn a_dropped_store_keeps_the_writes_of_its_open_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.redb");
        let job = JobId::new();
        {
            let s = RedbStore::open(&path).unwrap();
            let keys: Vec<String> = (0..10).map(|i| format!("example.com/{i}")).collect();
            s.insert_many(&job, &keys).await.unwrap();
            // dropped with the insert not committed yet
        }
        let s = RedbStore::open(&path).unwrap();
        for i in 0..10 {
            assert!(s.contains(&job, &format!("example.com/{i}")).await.unwrap());
        }
    }

    #[tokio::test]
    async fn a_failed_operation_leaves_the_transaction_usable() {
        let dir = tempfile::tempdir().unwrap();
        let s = RedbStore::open(dir.path().join("state.redb")).unwrap();
        let req = crawl_core::CrawlRequest::builder("https://example.com/")
            .build()
            .unwrap();
        let rec = JobRecord::new(JobId::new(), req, time::OffsetDateTime::now_utc());
        s.create(&rec).await.unwrap();
        let again = s.create(&rec).await.unwrap_err();
        assert_eq!(again.kind(), ErrorKind::Conflict);
        let missing = s.reserve_page(&JobId::new()).await.unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert!(s.reserve_page(&rec.id).await.unwrap());
        let p = s.get(&rec.id).await.unwrap().unwrap().progress;
        assert_eq!(p.pages_total, 1);
    }
}
