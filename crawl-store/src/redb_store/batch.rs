//! One open write transaction, shared by every operation of the store and committed every
//! [`COMMIT_EVERY`] operations.
//!
//! A crawl step writes a few rows (a frontier pop, a page's links, its end), and a redb commit
//! costs far more than that: with one transaction per operation, commits and the hand-offs
//! to the blocking pool were most of an unchanged re-sync's CPU. Operations now run on the
//! caller's thread in the open transaction, reads included (so every read sees every write
//! before it), under one lock that is held for microseconds.
//!
//! What a crash can lose is what it could lose before: every commit but the durable ones is
//! [`Durability::None`], so the file reopens at the last durable commit (at most
//! [`FLUSH_AFTER`] old, or the last job create, finish or delete) and the work since is done
//! again by idempotent writes. Operations are applied in the order they ran, so what survives
//! is always a prefix of them. An operation that must be durable, or that falls due for a
//! flush, runs on the blocking pool and commits with [`Durability::Immediate`] before it
//! answers. Each operation's logical errors (a missing job, a conflict) come before its
//! first write, so a failed operation leaves nothing in the transaction; a storage error
//! fails the commit that follows.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use crawl_core::{Error, ErrorKind, JobRecord, Result};
use redb::{Database, Durability, WriteTransaction};

use super::db_err;

/// Operations between two commits (not flushed to disk).
const COMMIT_EVERY: u32 = 256;
/// Longest time between two flushes to disk while operations happen.
const FLUSH_AFTER: Duration = Duration::from_millis(250);

/// Most decoded job records kept between commits.
const JOBS_KEPT: usize = 64;

/// The open transaction as operations see it: the redb transaction, plus the job records
/// already decoded (a crawl step reads and rewrites its job's record, counters included, and
/// decoding its JSON each time was a tenth of a re-sync's CPU). Records are written through:
/// the table always holds them too.
pub(super) struct Tx<'a> {
    tx: &'a WriteTransaction,
    /// Job id → its record as last written or read in this store.
    pub(super) jobs: &'a RefCell<HashMap<String, JobRecord>>,
}

impl Deref for Tx<'_> {
    type Target = WriteTransaction;
    fn deref(&self) -> &WriteTransaction {
        self.tx
    }
}

struct Open {
    tx: Option<WriteTransaction>,
    jobs: RefCell<HashMap<String, JobRecord>>,
    /// Operations in `tx`.
    ops: u32,
    last_flush: Instant,
    /// Transactions committed so far (for tests).
    commits: u64,
}

/// The store's open write transaction.
///
/// It holds the database weakly: the store's owners keep it open, so the last of them
/// dropped closes the file at once; the transaction still open is committed, durably, then.
pub(super) struct Shared {
    db: Weak<Database>,
    open: Mutex<Open>,
}

impl Shared {
    pub(super) fn new(db: &Arc<Database>) -> Self {
        Shared {
            db: Arc::downgrade(db),
            open: Mutex::new(Open {
                tx: None,
                jobs: RefCell::default(),
                ops: 0,
                last_flush: Instant::now(),
                commits: 0,
            }),
        }
    }

    /// Runs `f` in the open transaction; with `durable`, or when a flush is due, commits
    /// to disk before returning (on the blocking pool, since that waits for the disk).
    pub(super) async fn run<T, F>(self: &Arc<Self>, durable: bool, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Tx<'_>) -> Result<T> + Send + 'static,
    {
        if durable || self.flush_due()? {
            let me = Arc::clone(self);
            tokio::task::spawn_blocking(move || me.run_now(true, f))
                .await
                .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?
        } else {
            self.run_now(false, f)
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, Open>> {
        self.open
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "the store's transaction is poisoned"))
    }

    fn flush_due(&self) -> Result<bool> {
        Ok(self.lock()?.last_flush.elapsed() >= FLUSH_AFTER)
    }

    fn run_now<T>(&self, flush: bool, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let db = self
            .db
            .upgrade()
            .ok_or_else(|| Error::new(ErrorKind::Storage, "the store was closed"))?;
        let mut open = self.lock()?;
        if open.tx.is_none() {
            let mut tx = db.begin_write().map_err(db_err)?;
            tx.set_durability(Durability::None)
                .map_err(durability_err)?;
            open.tx = Some(tx);
            open.ops = 0;
        }
        let open = &mut *open;
        let out = match &open.tx {
            Some(tx) => f(&Tx {
                tx,
                jobs: &open.jobs,
            }),
            None => Err(Error::new(ErrorKind::Internal, "no open transaction")),
        };
        open.ops += 1;
        let flush = flush || open.last_flush.elapsed() >= FLUSH_AFTER;
        if flush || open.ops >= COMMIT_EVERY {
            commit(open, flush)?;
        }
        out
    }

    /// Transactions committed so far.
    #[cfg(test)]
    pub(super) fn commits(&self) -> u64 {
        self.open.lock().map_or(0, |o| o.commits)
    }
}

fn commit(open: &mut Open, durable: bool) -> Result<()> {
    let Some(mut tx) = open.tx.take() else {
        return Ok(());
    };
    if durable {
        tx.set_durability(Durability::Immediate)
            .map_err(durability_err)?;
        open.last_flush = Instant::now();
    }
    open.ops = 0;
    open.commits += 1;
    let jobs = open.jobs.get_mut();
    if jobs.len() > JOBS_KEPT {
        jobs.clear();
    }
    tx.commit().map_err(|e| {
        // What the file holds is no longer known: decode again from it.
        open.jobs.get_mut().clear();
        db_err(e)
    })
}

fn durability_err(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Storage, e.to_string()).with_backend("RedbStore")
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Ok(open) = self.open.get_mut() {
            if let Err(e) = commit(open, true) {
                tracing::warn!(error = %e, "committing the store's last writes failed");
            }
        }
    }
}
