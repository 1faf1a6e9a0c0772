//! The conformance suite every backend runs (not semver-stable).
//!
//! Each check is a plain `async fn` over a trait object and panics with a message naming the
//! backend (its `Display`) and the broken contract. A backend's tests call the `*_suite`
//! functions, which run every check once through `&dyn Trait` and once through `Arc<dyn _>`.

#![allow(clippy::missing_panics_doc)]

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use url::Url;

use crate::clock::ManualClock;
use crate::error::ErrorKind;
use crate::job::{
    Ingestion, IngestionClaim, IngestionState, JobId, JobRecord, JobStatus, PageOutcome,
};
use crate::page::{Document, DocumentMeta, FetchPath};
use crate::request::CrawlRequest;
use crate::traits::{
    Admit, Candidate, CrawlLedger, DedupStore, ExcludedCounts, Frontier, FrontierEntry, JobStore,
    Sink,
};

mod source;
pub use source::{source_pages, source_paging, source_records, source_store_suite};

fn url(s: &str) -> Url {
    Url::parse(s).expect("test url")
}

/// A document of `job` at `url` with `title` and `body` (fixed timestamp, so bytes are
/// reproducible).
pub fn sample_doc(job: &JobId, page: &str, title: Option<&str>, body: &str) -> Document {
    Document::new(
        job.clone(),
        DocumentMeta {
            url: url(page),
            canonical: None,
            title: title.map(str::to_owned),
            description: Some("a page".into()),
            language: Some("en".into()),
            fetched_at: OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000),
            depth: 1,
            path: FetchPath::Http,
            render_reason: None,
        },
        body.to_owned(),
    )
}

// ---------------------------------------------------------------- Sink

/// put, get, list round trip.
pub async fn sink_round_trip(s: &dyn Sink) {
    let job = JobId::new();
    let d = sample_doc(
        &job,
        "https://example.com/a/b",
        Some("Hello World"),
        "# Hi\n\ntext\n",
    );
    let st = s.put(&d).await.expect("put");
    assert_eq!(
        st.key,
        format!("{job}/example.com/hello-world.md"),
        "{s}: key layout"
    );
    assert_eq!(st.content_hash, d.content_hash(), "{s}: hash");
    let got = s
        .get(&st.key)
        .await
        .expect("get")
        .expect("{s}: stored bytes missing");
    assert_eq!(got, d.to_file_bytes(), "{s}: bytes differ");
    let listed = s.list(&job).await.expect("list");
    assert_eq!(listed, vec![st], "{s}: list");
    assert!(
        s.get(&format!("{job}/nope.md"))
            .await
            .expect("get")
            .is_none(),
        "{s}: absent key"
    );
    s.delete_job(&job).await.expect("cleanup");
}

/// The same document put twice lands once, same key, same bytes.
pub async fn sink_idempotent_put(s: &dyn Sink) {
    let job = JobId::new();
    let d = sample_doc(&job, "https://example.com/x", Some("Same"), "body\n");
    let a = s.put(&d).await.expect("put");
    let b = s.put(&d).await.expect("re-put");
    assert_eq!(a, b, "{s}: re-put moved the document");
    assert_eq!(
        s.list(&job).await.expect("list").len(),
        1,
        "{s}: manifest lists a re-put twice"
    );
    s.delete_job(&job).await.expect("cleanup");
}

/// Two URLs with the same title get distinct keys; each keeps its key on re-put.
pub async fn sink_title_collision(s: &dyn Sink) {
    let job = JobId::new();
    let a = sample_doc(&job, "https://example.com/1", Some("Dup"), "one\n");
    let b = sample_doc(&job, "https://example.com/2", Some("Dup"), "two\n");
    let ka = s.put(&a).await.expect("put a").key;
    let kb = s.put(&b).await.expect("put b").key;
    assert_ne!(ka, kb, "{s}: collision overwrote a document");
    assert_eq!(
        s.put(&b).await.expect("re-put b").key,
        kb,
        "{s}: re-put changed key"
    );
    assert_eq!(
        s.put(&a).await.expect("re-put a").key,
        ka,
        "{s}: re-put changed key"
    );
    assert_eq!(
        s.get(&ka).await.expect("get").expect("a"),
        a.to_file_bytes(),
        "{s}"
    );
    assert_eq!(
        s.get(&kb).await.expect("get").expect("b"),
        b.to_file_bytes(),
        "{s}"
    );
    s.delete_job(&job).await.expect("cleanup");
}

/// Deleting one job leaves the other untouched; deleting again is harmless.
pub async fn sink_delete_isolation(s: &dyn Sink) {
    let j1 = JobId::new();
    let j2 = JobId::new();
    let d1 = sample_doc(&j1, "https://example.com/p", Some("P"), "1\n");
    let d2 = sample_doc(&j2, "https://example.com/p", Some("P"), "2\n");
    let k1 = s.put(&d1).await.expect("put").key;
    let k2 = s.put(&d2).await.expect("put").key;
    s.put_aux(&j1, "site-template.md", b"x".to_vec())
        .await
        .expect("aux");
    assert_eq!(
        s.delete_job(&j1).await.expect("delete"),
        1,
        "{s}: delete count"
    );
    assert!(
        s.get(&k1).await.expect("get").is_none(),
        "{s}: deleted doc still there"
    );
    assert!(
        s.list(&j1).await.expect("list").is_empty(),
        "{s}: deleted manifest"
    );
    assert!(
        s.get(&k2).await.expect("get").is_some(),
        "{s}: other job's doc removed"
    );
    assert_eq!(
        s.delete_job(&j1).await.expect("re-delete"),
        0,
        "{s}: re-delete"
    );
    s.delete_job(&j2).await.expect("cleanup");
}

/// Auxiliary objects land under the job prefix; bad names are refused.
pub async fn sink_aux(s: &dyn Sink) {
    let job = JobId::new();
    let k = s
        .put_aux(&job, "chunks.jsonl", b"{}\n".to_vec())
        .await
        .expect("aux");
    assert_eq!(k, format!("{job}/chunks.jsonl"), "{s}");
    assert_eq!(
        s.get(&k).await.expect("get").as_deref(),
        Some(&b"{}\n"[..]),
        "{s}"
    );
    for bad in ["../x", "a/b", ".hidden", ""] {
        assert!(
            s.put_aux(&job, bad, vec![]).await.is_err(),
            "{s}: accepted aux name {bad:?}"
        );
    }
    s.delete_job(&job).await.expect("cleanup");
}

/// Every sink check, through `&dyn` and through `Arc<dyn>`.
pub async fn sink_suite(s: Arc<dyn Sink>) {
    for pass in 0..2 {
        let r: &dyn Sink = if pass == 0 { &*s } else { &s };
        sink_round_trip(r).await;
        sink_idempotent_put(r).await;
        sink_title_collision(r).await;
        sink_delete_isolation(r).await;
        sink_aux(r).await;
        sink_remove_one(r).await;
        sink_paging(r).await;
        sink_aux_stream(r).await;
    }
}

async fn key_len(key: &str, s: &dyn Sink) -> u64 {
    s.get(key).await.expect("get").map_or(0, |b| b.len() as u64)
}

/// `aux_writer`: the object appears whole at `finish` (the previous one stays until then),
/// as `put_aux` of the same bytes would make it; a writer dropped unfinished changes
/// nothing; a bad name is refused. `get_range` reads slices of it.
pub async fn sink_aux_stream(s: &dyn Sink) {
    let job = JobId::new();
    let old = b"old\n".to_vec();
    let key = s
        .put_aux(&job, "stream.jsonl", old.clone())
        .await
        .expect("put_aux");
    let parts: Vec<Vec<u8>> = (0..40u8)
        .map(|i| vec![b'a' + i % 26; 1 + 7919 * usize::from(i % 5)])
        .collect();
    let mut w = s
        .aux_writer(&job, "stream.jsonl")
        .await
        .expect("aux_writer");
    for p in &parts {
        w.write(p).await.expect("write");
        assert_eq!(
            s.get(&key).await.expect("get").as_deref(),
            Some(&old[..]),
            "{s}: a streamed object showed before finish"
        );
    }
    assert_eq!(w.finish().await.expect("finish"), key, "{s}: streamed key");
    let whole = parts.concat();
    assert_eq!(
        s.get(&key).await.expect("get"),
        Some(whole.clone()),
        "{s}: streamed bytes"
    );

    let mut w = s
        .aux_writer(&job, "stream.jsonl")
        .await
        .expect("aux_writer");
    w.write(b"never\n").await.expect("write");
    drop(w);
    assert_eq!(
        s.get(&key).await.expect("get"),
        Some(whole),
        "{s}: a dropped writer wrote"
    );

    let empty = s.aux_writer(&job, "empty.txt").await.expect("aux_writer");
    let k = empty.finish().await.expect("finish of nothing");
    assert_eq!(
        s.get(&k).await.expect("get"),
        Some(Vec::new()),
        "{s}: empty object"
    );

    let size = key_len(&key, s).await;
    for (offset, len) in [
        (0u64, 5usize),
        (7919, 20_000),
        (size - 3, 10),
        (size + 9, 4),
    ] {
        let got = s.get_range(&key, offset, len).await.expect("get_range");
        let all = s.get(&key).await.expect("get").unwrap_or_default();
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(all.len());
        let want = all[start..start.saturating_add(len).min(all.len())].to_vec();
        assert_eq!(got, Some(want), "{s}: get_range({offset}, {len})");
    }
    assert_eq!(
        s.get_range(&format!("{job}/missing.txt"), 0, 4)
            .await
            .expect("get_range"),
        None,
        "{s}: get_range of no object"
    );

    let err = s
        .aux_writer(&job, "../x")
        .await
        .err()
        .expect("a bad aux name is refused");
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{s}: {err}");
    s.delete_job(&job).await.expect("delete_job");
}

/// Follows `list_page` to the end with pages of `limit`, checking each page's size.
async fn all_pages(s: &dyn Sink, job: &JobId, limit: usize) -> Vec<crate::page::StoredDoc> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..1000 {
        let page = s
            .list_page(job, after.as_deref(), limit)
            .await
            .expect("list_page");
        assert!(
            page.docs.len() <= limit.max(1),
            "{s}: a page of {} documents for a limit of {limit}",
            page.docs.len()
        );
        out.extend(page.docs);
        match page.next {
            Some(n) => after = Some(n),
            None => return out,
        }
    }
    panic!("{s}: list_page never ended (limit {limit})");
}

/// `list_page` covers a job of more documents than one page: every document once, none
/// twice, in the same order at every page size (1 included, and 0 counted as 1); a removed
/// document is not listed; `list` is the same listing; another job's documents never show.
pub async fn sink_paging(s: &dyn Sink) {
    let job = JobId::new();
    let other = JobId::new();
    let mut want = Vec::new();
    // Put out of URL order: a pager must not rely on the order documents came in.
    for n in [4, 0, 6, 2, 5, 1, 3] {
        let d = sample_doc(
            &job,
            &format!("https://example.com/p/{n}"),
            Some(&format!("Page {n}")),
            &format!("body {n}\n"),
        );
        want.push(s.put(&d).await.expect("put"));
    }
    // A re-put lands once; the other job's document is not this job's.
    let again = sample_doc(&job, "https://example.com/p/3", Some("Page 3"), "body 3\n");
    s.put(&again).await.expect("re-put");
    let foreign = sample_doc(&other, "https://example.com/p/0", Some("Page 0"), "x\n");
    s.put(&foreign).await.expect("put other");
    want.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
    let whole = all_pages(s, &job, 100).await;
    let mut sorted = whole.clone();
    sorted.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
    assert_eq!(sorted, want, "{s}: one page lists every document once");
    for limit in [0, 1, 2, 3, 6, 7] {
        assert_eq!(
            all_pages(s, &job, limit).await,
            whole,
            "{s}: pages of {limit} list another set or order"
        );
    }
    assert_eq!(s.list(&job).await.expect("list"), whole, "{s}: list");
    s.remove(&job, &want[2].url).await.expect("remove");
    let left = all_pages(s, &job, 2).await;
    let mut expect = whole.clone();
    expect.retain(|d| d.url != want[2].url);
    assert_eq!(left, expect, "{s}: listing after a remove");
    assert!(
        all_pages(s, &JobId::new(), 3).await.is_empty(),
        "{s}: an unknown job lists nothing"
    );
    s.delete_job(&job).await.expect("cleanup");
    s.delete_job(&other).await.expect("cleanup");
}

/// `remove` takes one URL's document out of its job (file and listing), leaves the job's
/// other documents and other jobs alone, and is safe to re-run; `delete_aux` likewise.
pub async fn sink_remove_one(s: &dyn Sink) {
    let job = JobId::new();
    let other = JobId::new();
    let a = sample_doc(&job, "https://example.com/a", Some("A"), "a\n");
    let b = sample_doc(&job, "https://example.com/b", Some("B"), "b\n");
    let a2 = sample_doc(&other, "https://example.com/a", Some("A"), "a\n");
    let ka = s.put(&a).await.expect("put a");
    let kb = s.put(&b).await.expect("put b");
    let k2 = s.put(&a2).await.expect("put other a");
    let removed = s.remove(&job, &a.meta.url).await.expect("remove");
    assert_eq!(
        removed.as_ref(),
        Some(&ka),
        "{s}: remove returns what was stored"
    );
    assert!(
        s.get(&ka.key).await.expect("get").is_none(),
        "{s}: removed doc still there"
    );
    assert_eq!(
        s.list(&job).await.expect("list"),
        vec![kb.clone()],
        "{s}: listing after remove"
    );
    assert!(
        s.get(&kb.key).await.expect("get").is_some(),
        "{s}: sibling removed"
    );
    assert!(
        s.get(&k2.key).await.expect("get").is_some(),
        "{s}: other job's doc removed"
    );
    assert_eq!(
        s.remove(&job, &a.meta.url).await.expect("re-remove"),
        None,
        "{s}: re-remove"
    );
    // Put back, it is listed again.
    let again = s.put(&a).await.expect("put again");
    assert_eq!(again.url, a.meta.url, "{s}");
    assert_eq!(
        s.list(&job).await.expect("list").len(),
        2,
        "{s}: put after remove"
    );
    let aux = s
        .put_aux(&job, "pending-x.md", b"x".to_vec())
        .await
        .expect("aux");
    s.delete_aux(&job, "pending-x.md")
        .await
        .expect("delete aux");
    assert!(
        s.get(&aux).await.expect("get").is_none(),
        "{s}: aux still there"
    );
    s.delete_aux(&job, "pending-x.md")
        .await
        .expect("re-delete aux");
    s.delete_job(&job).await.expect("cleanup");
    s.delete_job(&other).await.expect("cleanup");
}

// ---------------------------------------------------------------- DedupStore

/// insert-if-absent, insert_many with repeats, contains, isolation, clear.
pub async fn dedup_basics(d: &dyn DedupStore) {
    let j1 = JobId::new();
    let j2 = JobId::new();
    assert!(
        d.insert(&j1, "example.com/a").await.expect("insert"),
        "{d}: first insert"
    );
    assert!(
        !d.insert(&j1, "example.com/a").await.expect("insert"),
        "{d}: second insert won"
    );
    assert!(
        d.contains(&j1, "example.com/a").await.expect("contains"),
        "{d}"
    );
    assert!(
        !d.contains(&j2, "example.com/a").await.expect("contains"),
        "{d}: jobs not isolated"
    );
    let keys: Vec<String> = ["b", "a", "b", "c"]
        .iter()
        .map(|k| format!("example.com/{k}"))
        .collect();
    let flags = d.insert_many(&j1, &keys).await.expect("insert_many");
    assert_eq!(
        flags,
        vec![true, false, false, true],
        "{d}: insert_many flags"
    );
    assert!(
        d.insert(&j2, "example.com/a").await.expect("insert"),
        "{d}: other job"
    );
    d.clear_job(&j1).await.expect("clear");
    assert!(
        !d.contains(&j1, "example.com/a").await.expect("contains"),
        "{d}: clear"
    );
    assert!(
        d.contains(&j2, "example.com/a").await.expect("contains"),
        "{d}: clear isolation"
    );
    d.clear_job(&j2).await.expect("clear");
}

/// 32 concurrent inserts of one key: exactly one winner.
pub async fn dedup_single_winner(d: Arc<dyn DedupStore>) {
    for round in 0..3 {
        let job = JobId::new();
        let key = format!("example.com/race/{round}");
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                let d = Arc::clone(&d);
                let job = job.clone();
                let key = key.clone();
                tokio::spawn(async move { d.insert(&job, &key).await })
            })
            .collect();
        let mut wins = 0;
        for t in tasks {
            if t.await.expect("join").expect("insert") {
                wins += 1;
            }
        }
        assert_eq!(wins, 1, "{d}: {wins} winners for one key");
        d.clear_job(&job).await.expect("clear");
    }
}

/// TTL window: a key is present until the TTL passes, then insertable again. `d` must use
/// `clock` and a TTL of `ttl`.
pub async fn dedup_ttl_window(d: &dyn DedupStore, clock: &ManualClock, ttl: Duration) {
    let job = JobId::new();
    assert!(
        d.insert(&job, "example.com/t").await.expect("insert"),
        "{d}"
    );
    clock.advance(ttl - Duration::from_secs(60));
    assert!(
        !d.insert(&job, "example.com/t").await.expect("insert"),
        "{d}: expired too early"
    );
    assert!(
        d.contains(&job, "example.com/t").await.expect("contains"),
        "{d}"
    );
    clock.advance(Duration::from_secs(120));
    assert!(
        !d.contains(&job, "example.com/t").await.expect("contains"),
        "{d}: TTL not enforced"
    );
    assert!(
        d.insert(&job, "example.com/t").await.expect("insert"),
        "{d}: expired key not reinsertable"
    );
    d.clear_job(&job).await.expect("clear");
}

/// Every dedup check that needs no clock, through `&dyn` and `Arc<dyn>`.
pub async fn dedup_suite(d: Arc<dyn DedupStore>) {
    dedup_basics(&*d).await;
    dedup_basics(&d).await;
    dedup_single_winner(Arc::clone(&d)).await;
}

// ---------------------------------------------------------------- Frontier

/// Breadth-first order, leases, completion, requeue, isolation.
pub async fn frontier_basics(f: &dyn Frontier) {
    let j = JobId::new();
    let other = JobId::new();
    let e = |p: &str, d: u32| FrontierEntry::new(url(&format!("https://example.com/{p}")), d);
    f.push(&j, vec![e("b1", 1), e("a0", 0), e("b2", 1)])
        .await
        .expect("push");
    f.push(&other, vec![e("o", 0)]).await.expect("push");
    assert_eq!(f.pending(&j).await.expect("pending"), 3, "{f}");
    let first = f.pop(&j).await.expect("pop").expect("entry");
    assert_eq!(first, e("a0", 0), "{f}: not breadth-first");
    let second = f.pop(&j).await.expect("pop").expect("entry");
    assert_eq!(second, e("b1", 1), "{f}: not FIFO within a depth");
    assert_eq!(
        f.pending(&j).await.expect("pending"),
        3,
        "{f}: leased entries must count"
    );
    f.complete(&j, &first.url).await.expect("complete");
    f.complete(&j, &first.url).await.expect("complete twice");
    assert_eq!(f.pending(&j).await.expect("pending"), 2, "{f}");
    assert_eq!(
        f.requeue_leased(&j).await.expect("requeue"),
        1,
        "{f}: requeue count"
    );
    let again = f.pop(&j).await.expect("pop").expect("entry");
    assert_eq!(again, e("b1", 1), "{f}: requeued entry not first");
    f.complete(&j, &again.url).await.expect("complete");
    let last = f.pop(&j).await.expect("pop").expect("entry");
    f.complete(&j, &last.url).await.expect("complete");
    assert!(
        f.pop(&j).await.expect("pop").is_none(),
        "{f}: extra entries"
    );
    assert_eq!(f.pending(&j).await.expect("pending"), 0, "{f}");
    assert_eq!(
        f.pending(&other).await.expect("pending"),
        1,
        "{f}: jobs not isolated"
    );
    f.clear_job(&other).await.expect("clear");
    assert_eq!(f.pending(&other).await.expect("pending"), 0, "{f}: clear");
    f.clear_job(&j).await.expect("clear");
}

/// Every frontier check, through `&dyn` and `Arc<dyn>`.
pub async fn frontier_suite(f: Arc<dyn Frontier>) {
    frontier_basics(&*f).await;
    frontier_basics(&f).await;
}

// ---------------------------------------------------------------- JobStore

fn record(max_pages: u32, assistant: Option<&str>) -> JobRecord {
    let req = CrawlRequest::builder("https://example.com/")
        .max_pages(max_pages)
        .assistant_id(assistant.map(str::to_owned))
        .build()
        .expect("request");
    JobRecord::new(JobId::new(), req, OffsetDateTime::now_utc())
}

/// create, get, list by assistant, finish once, delete.
pub async fn jobs_lifecycle(s: &dyn JobStore) {
    let assistant = format!("asst-{}", JobId::new());
    let r = record(10, Some(&assistant));
    s.create(&r).await.expect("create");
    assert!(
        s.create(&r).await.is_err(),
        "{s}: duplicate create accepted"
    );
    let got = s.get(&r.id).await.expect("get").expect("record");
    assert_eq!(got.status, JobStatus::Running, "{s}");
    assert_eq!(got.request, r.request, "{s}: request round trip");
    let other = record(10, Some("someone-else"));
    s.create(&other).await.expect("create");
    let mine = s.list(Some(&assistant)).await.expect("list");
    assert_eq!(mine.len(), 1, "{s}: list leaks other assistants' jobs");
    assert!(
        s.finish(&r.id, JobStatus::Completed, None)
            .await
            .expect("finish"),
        "{s}"
    );
    assert!(
        !s.finish(&r.id, JobStatus::Failed, Some("late".into()))
            .await
            .expect("finish"),
        "{s}: second finish changed state"
    );
    let got = s.get(&r.id).await.expect("get").expect("record");
    assert_eq!(
        (got.status, got.failure.as_deref()),
        (JobStatus::Completed, None),
        "{s}"
    );
    assert!(got.completed_at.is_some(), "{s}: completed_at");
    s.delete(&r.id).await.expect("delete");
    assert!(s.get(&r.id).await.expect("get").is_none(), "{s}: delete");
    assert!(s.delete(&r.id).await.is_err(), "{s}: deleting unknown job");
    s.delete(&other.id).await.expect("cleanup");
}

/// Counters: reservations never exceed the budget under 32 concurrent callers; processed
/// never exceeds total; reasons are counted.
pub async fn jobs_budget(s: Arc<dyn JobStore>) {
    let r = record(17, None);
    s.create(&r).await.expect("create");
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let s = Arc::clone(&s);
            let id = r.id.clone();
            tokio::spawn(async move {
                let mut won = 0;
                for _ in 0..3 {
                    if s.reserve_page(&id).await.expect("reserve") {
                        won += 1;
                    }
                }
                won
            })
        })
        .collect();
    let mut won = 0;
    for t in tasks {
        won += t.await.expect("join");
    }
    assert_eq!(won, 17, "{s}: {won} reservations for a budget of 17");
    for i in 0..17 {
        let o = if i % 3 == 0 {
            PageOutcome::Skipped("http_404".into())
        } else {
            PageOutcome::Stored
        };
        s.record_page(&r.id, &o).await.expect("record");
    }
    s.record_page(&r.id, &PageOutcome::Stored)
        .await
        .expect("record extra");
    s.record_excluded(&r.id, "robots_disallowed")
        .await
        .expect("excluded");
    let counts = [
        ("robots_disallowed".to_owned(), 2),
        ("links_per_page".to_owned(), 40_000),
    ]
    .into_iter()
    .collect();
    s.record_excluded_counts(&r.id, &counts)
        .await
        .expect("excluded counts");
    let p = s.get(&r.id).await.expect("get").expect("record").progress;
    assert_eq!(
        (p.pages_total, p.pages_processed),
        (17, 17),
        "{s}: counters"
    );
    assert_eq!(
        (p.stored, p.skipped.get("http_404").copied()),
        (11, Some(6)),
        "{s}"
    );
    assert_eq!(p.excluded.get("robots_disallowed").copied(), Some(3), "{s}");
    assert_eq!(
        p.excluded.get("links_per_page").copied(),
        Some(40_000),
        "{s}"
    );
    s.record_excluded_many(&r.id, "robots_disallowed", 3)
        .await
        .expect("excluded many");
    s.record_excluded_many(&r.id, "sitemap_off_site", 0)
        .await
        .expect("excluded none");
    let p = s.get(&r.id).await.expect("get").expect("record").progress;
    assert_eq!(p.excluded.get("robots_disallowed").copied(), Some(6), "{s}");
    assert!(
        !p.excluded.contains_key("sitemap_off_site"),
        "{s}: n = 0 adds no reason"
    );
    s.delete(&r.id).await.expect("cleanup");
}

/// The knowledge-base hand-off: only a COMPLETED job, one holder at a time under 8
/// concurrent callers, failed with its reason and attempt count, retried, delivered once,
/// never failed again after; an expired lease can be taken over.
pub async fn jobs_ingestion(s: Arc<dyn JobStore>) {
    let lease = Duration::from_secs(600);
    let r = record(5, None);
    s.create(&r).await.expect("create");
    let got = s.get(&r.id).await.expect("get").expect("record");
    assert_eq!(
        got.ingestion,
        Ingestion::default(),
        "{s}: a new job's hand-off"
    );
    assert_eq!(
        s.begin_ingestion(&r.id, lease).await.expect("begin"),
        IngestionClaim::NotCompleted,
        "{s}: hand-off of a running job"
    );
    s.finish(&r.id, JobStatus::Completed, None)
        .await
        .expect("finish");
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let s = Arc::clone(&s);
            let id = r.id.clone();
            tokio::spawn(async move { s.begin_ingestion(&id, lease).await.expect("begin") })
        })
        .collect();
    let mut claims = Vec::new();
    for t in tasks {
        claims.push(t.await.expect("join"));
    }
    let mine = claims
        .iter()
        .filter(|c| **c == IngestionClaim::Mine { attempt: 1 })
        .count();
    let busy = claims
        .iter()
        .filter(|c| **c == IngestionClaim::Busy)
        .count();
    assert_eq!((mine, busy), (1, 7), "{s}: {claims:?}");
    let got = s.get(&r.id).await.expect("get").expect("record");
    assert_eq!(
        (got.ingestion.state, got.ingestion.attempts),
        (IngestionState::Pending, 1),
        "{s}: an attempt in progress"
    );
    s.end_ingestion(&r.id, Some("webhook answered 400".into()))
        .await
        .expect("end");
    let got = s.get(&r.id).await.expect("get").expect("record");
    assert_eq!(got.status, JobStatus::Completed, "{s}: a failed hand-off");
    assert_eq!(
        (
            got.ingestion.state,
            got.ingestion.reason.as_deref(),
            got.ingestion.attempts
        ),
        (IngestionState::Failed, Some("webhook answered 400"), 1),
        "{s}"
    );
    assert!(
        !got.ingestion.in_progress(0),
        "{s}: the failed attempt let go"
    );
    assert_eq!(
        s.begin_ingestion(&r.id, lease).await.expect("begin"),
        IngestionClaim::Mine { attempt: 2 },
        "{s}: retry after a failure"
    );
    s.end_ingestion(&r.id, None).await.expect("end");
    let got = s.get(&r.id).await.expect("get").expect("record");
    assert_eq!(
        (
            got.ingestion.state,
            got.ingestion.reason.as_deref(),
            got.ingestion.attempts
        ),
        (IngestionState::Delivered, None, 2),
        "{s}"
    );
    assert_eq!(
        s.begin_ingestion(&r.id, lease).await.expect("begin"),
        IngestionClaim::Delivered,
        "{s}: a delivered job handed over again"
    );
    s.end_ingestion(&r.id, Some("late".into()))
        .await
        .expect("end");
    let got = s.get(&r.id).await.expect("get").expect("record");
    assert_eq!(
        got.ingestion.state,
        IngestionState::Delivered,
        "{s}: delivered went back"
    );
    // A holder that died: its lease ends and another attempt takes over.
    let o = record(5, None);
    s.create(&o).await.expect("create");
    s.finish(&o.id, JobStatus::Completed, None)
        .await
        .expect("finish");
    assert_eq!(
        s.begin_ingestion(&o.id, Duration::ZERO)
            .await
            .expect("begin"),
        IngestionClaim::Mine { attempt: 1 },
        "{s}"
    );
    assert_eq!(
        s.begin_ingestion(&o.id, lease).await.expect("begin"),
        IngestionClaim::Mine { attempt: 2 },
        "{s}: an expired lease"
    );
    let unknown = JobId::new();
    let e = s.begin_ingestion(&unknown, lease).await.unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::NotFound, "{s}: {e}");
    s.delete(&r.id).await.expect("cleanup");
    s.delete(&o.id).await.expect("cleanup");
}

/// Every job store check, through `&dyn` and `Arc<dyn>`.
pub async fn jobs_suite(s: Arc<dyn JobStore>) {
    jobs_lifecycle(&*s).await;
    jobs_lifecycle(&s).await;
    jobs_budget(Arc::clone(&s)).await;
    jobs_ingestion(Arc::clone(&s)).await;
    let wrapped: Arc<dyn JobStore> = Arc::new(Arc::clone(&s));
    jobs_ingestion(wrapped).await;
}

// ---------------------------------------------------------------- CrawlLedger

/// Admission in order with dedup, exclusions and the budget; finishing a page counts it and
/// ends its lease. `l` must keep its state in `jobs` and `frontier`.
pub async fn ledger_admit_and_finish(
    l: &dyn CrawlLedger,
    jobs: &dyn JobStore,
    frontier: &dyn Frontier,
) {
    let r = record(3, None);
    jobs.create(&r).await.expect("create");
    let c = |p: &str, excluded: Option<&str>| {
        Candidate::new(
            format!("example.com/{p}"),
            FrontierEntry::new(url(&format!("https://example.com/{p}")), 1),
            excluded.map(str::to_owned),
        )
    };
    let got = l
        .admit(
            &r.id,
            vec![
                c("a", None),
                c("b", Some("robots_disallowed")),
                c("a", None),
                c("c", None),
            ],
        )
        .await
        .expect("admit");
    assert_eq!(
        got,
        vec![
            Admit::Admitted,
            Admit::Excluded,
            Admit::Seen,
            Admit::Admitted
        ],
        "{l}"
    );
    let got = l
        .admit(&r.id, vec![c("b", None), c("d", None), c("e", None)])
        .await
        .expect("admit");
    assert_eq!(
        got,
        vec![Admit::Seen, Admit::Admitted, Admit::OverBudget],
        "{l}"
    );
    let p = jobs
        .get(&r.id)
        .await
        .expect("get")
        .expect("record")
        .progress;
    assert_eq!(p.pages_total, 3, "{l}: reservations");
    assert_eq!(p.excluded.get("robots_disallowed"), Some(&1), "{l}");
    assert_eq!(
        p.excluded.get("max_pages"),
        None,
        "{l}: over budget is counted by finish_page"
    );
    assert_eq!(
        frontier.pending(&r.id).await.expect("pending"),
        3,
        "{l}: queued"
    );
    // Past the budget nothing is stored: "e" and a new "f" are over budget again, "b" and
    // "d" are known, and a robots-disallowed "g" is over budget too (no record either).
    let got = l
        .admit(
            &r.id,
            vec![
                c("e", None),
                c("b", None),
                c("f", None),
                c("d", None),
                c("g", Some("robots_disallowed")),
            ],
        )
        .await
        .expect("admit");
    assert_eq!(
        got,
        vec![
            Admit::OverBudget,
            Admit::Seen,
            Admit::OverBudget,
            Admit::Seen,
            Admit::OverBudget
        ],
        "{l}: past the budget"
    );
    let e = frontier.pop(&r.id).await.expect("pop").expect("entry");
    let counts: ExcludedCounts = [
        ("max_pages".to_owned(), 2),
        ("links_per_page".to_owned(), 7),
    ]
    .into_iter()
    .collect();
    l.finish_page(&r.id, &e.url, &PageOutcome::Stored, &counts)
        .await
        .expect("finish");
    let p = jobs
        .get(&r.id)
        .await
        .expect("get")
        .expect("record")
        .progress;
    assert_eq!((p.pages_processed, p.stored), (1, 1), "{l}");
    assert_eq!(p.excluded.get("max_pages"), Some(&2), "{l}");
    assert_eq!(p.excluded.get("links_per_page"), Some(&7), "{l}");
    assert_eq!(
        frontier.pending(&r.id).await.expect("pending"),
        2,
        "{l}: lease not ended"
    );
    frontier.clear_job(&r.id).await.expect("clear");
    jobs.delete(&r.id).await.expect("cleanup");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{MemoryDedup, MemoryFrontier, MemoryJobStore, MemorySink};

    #[tokio::test]
    async fn memory_backends_pass_the_suite() {
        sink_suite(Arc::new(MemorySink::new())).await;
        dedup_suite(Arc::new(MemoryDedup::new())).await;
        frontier_suite(Arc::new(MemoryFrontier::new())).await;
        jobs_suite(Arc::new(MemoryJobStore::new())).await;
        let (f, d, j) = (
            Arc::new(MemoryFrontier::new()),
            Arc::new(MemoryDedup::new()),
            Arc::new(MemoryJobStore::new()),
        );
        let l = crate::traits::ComposedLedger::new(Arc::clone(&f) as _, d, Arc::clone(&j) as _);
        ledger_admit_and_finish(&l, &*j, &*f).await;
        let clock = Arc::new(ManualClock::new(OffsetDateTime::now_utc()));
        let ttl = Duration::from_secs(24 * 3600);
        let d = MemoryDedup::with_clock(ttl, Arc::clone(&clock) as _);
        dedup_ttl_window(&d, &clock, ttl).await;
    }
}
