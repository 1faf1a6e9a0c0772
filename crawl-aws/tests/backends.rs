//! Focused behaviour of the AWS backends against moto: S3 key bounds, metadata, delete
//! isolation with pagination, concurrent title collisions, DynamoDB races and budgets.
//! Needs `KB_CRAWL_AWS_ENDPOINT` (see `scripts/moto.sh`).

use crate::common;

use std::collections::HashSet;
use std::sync::Arc;

use aws_sdk_s3::primitives::ByteStream;
use crawl_core::conformance::{dedup_single_winner, jobs_budget, sample_doc};
use crawl_core::keys::document_keys;
use crawl_core::{
    CrawlRequest, DedupStore, ErrorKind, JobId, JobRecord, JobStatus, JobStore, PageOutcome, Sink,
};
use futures::StreamExt;
use time::OffsetDateTime;

#[tokio::test]
async fn s3_keys_with_a_long_title_and_prefix_fit_1024_bytes() {
    let Some(ep) = common::endpoint() else { return };
    let prefix = format!("{}/kb", "p".repeat(crawl_aws::MAX_PREFIX_BYTES - 3));
    let s = common::sink(&ep, &prefix).await;
    let job = JobId::new();
    let host = ["a".repeat(63), "b".repeat(63), "c".repeat(63)].join(".");
    let title = "Ünïcödé title with many words ".repeat(40);
    let long_job: JobId = format!("job-{}", "f".repeat(60)).parse().expect("job id");
    for (j, url) in [
        (&job, format!("https://{host}.example/a")),
        (&long_job, format!("https://{host}.example:8443/b")),
    ] {
        let d = sample_doc(j, &url, Some(&title), "body\n");
        let (plain, hashed) = document_keys(&d);
        assert!(s.object_key(&plain).len() <= 1024);
        assert!(s.object_key(&hashed).len() <= 1024, "{}", hashed.len());
        let st = s.put(&d).await.expect("put long key");
        assert_eq!(st.key, plain);
        assert_eq!(s.get(&st.key).await.expect("get"), Some(d.to_file_bytes()));
        let other = sample_doc(j, &format!("{url}/other"), Some(&title), "other\n");
        let st2 = s.put(&other).await.expect("put hashed long key");
        assert_eq!(st2.key, document_keys(&other).1);
    }
    let too_long = crawl_aws::S3Sink::builder()
        .bucket("some-bucket")
        .prefix("x".repeat(crawl_aws::MAX_PREFIX_BYTES + 1))
        .build()
        .await
        .expect_err("prefix over the limit");
    assert_eq!(too_long.kind(), ErrorKind::InvalidInput);
}

#[tokio::test]
async fn s3_objects_carry_content_type_url_and_hash_metadata() {
    let Some(ep) = common::endpoint() else { return };
    let s = common::sink(&ep, "kb").await;
    assert_eq!(s.to_string(), format!("S3Sink({}/kb)", s.bucket()));
    let job = JobId::new();
    let d = sample_doc(
        &job,
        "https://bücher.example/straße?q=ä&x=1#frag",
        Some("Bücher"),
        "# Straße\n",
    );
    let st = s.put(&d).await.expect("put");
    let head = s
        .client()
        .head_object()
        .bucket(s.bucket())
        .key(s.object_key(&st.key))
        .send()
        .await
        .expect("head");
    assert_eq!(head.content_type(), Some("text/markdown; charset=utf-8"));
    let meta = head.metadata().expect("metadata");
    assert_eq!(
        meta.get("url").map(String::as_str),
        Some(d.meta.url.as_str())
    );
    assert!(meta["url"].is_ascii());
    assert_eq!(meta.get("content-hash"), Some(&d.content_hash()));
    let manifest = s.write_manifest(&job).await.expect("manifest");
    assert_eq!(manifest, format!("{job}/manifest.json"));
    let m: serde_json::Value = serde_json::from_slice(
        &s.get(&manifest)
            .await
            .expect("get")
            .expect("manifest bytes"),
    )
    .expect("json");
    assert_eq!(m[d.meta.url.as_str()]["key"], st.key.as_str());
    assert_eq!(
        m[d.meta.url.as_str()]["content_hash"],
        d.content_hash().as_str()
    );
    assert_eq!(s.delete_job(&job).await.expect("delete"), 1);
}

/// A document is its own manifest entry (issue 15: one PutObject a stored page): after
/// puts, a re-put and a title collision, the job holds the documents and its aux object and
/// nothing else, and the listing (from the documents' metadata) is what the puts returned;
/// a sink that did not write them (another process) removes one by URL, the one at the
/// hashed key included.
#[tokio::test]
async fn s3_a_document_is_its_own_manifest_entry() {
    let Some(ep) = common::endpoint() else { return };
    let s = common::sink(&ep, "kb").await;
    let job = JobId::new();
    let a = sample_doc(&job, "https://example.com/a", Some("Same"), "a\n");
    let b = sample_doc(&job, "https://example.com/b", Some("Same"), "b\n");
    let c = sample_doc(&job, "https://example.com/c?x=1", None, "c\n");
    let mut want = Vec::new();
    for d in [&a, &b, &c] {
        want.push(s.put(d).await.expect("put"));
    }
    assert_eq!(s.put(&b).await.expect("re-put"), want[1]);
    assert_eq!(want[1].key, document_keys(&b).1, "b takes the hashed key");
    s.put_aux(&job, "site-template.md", b"t".to_vec())
        .await
        .expect("aux");
    let objects: HashSet<String> = s
        .client()
        .list_objects_v2()
        .bucket(s.bucket())
        .prefix(s.object_key(&format!("{job}/")))
        .send()
        .await
        .expect("list objects")
        .contents()
        .iter()
        .filter_map(|o| o.key().map(str::to_owned))
        .collect();
    let mut expect: HashSet<String> = want.iter().map(|d| s.object_key(&d.key)).collect();
    expect.insert(s.object_key(&format!("{job}/site-template.md")));
    assert_eq!(
        objects, expect,
        "objects besides the documents and the aux one"
    );
    let mut listed = s.list(&job).await.expect("list");
    listed.sort_by(|x, y| x.url.as_str().cmp(y.url.as_str()));
    assert_eq!(listed, want);
    let other = common::sink_of(&ep, s.bucket(), "kb").await;
    assert_eq!(
        other.remove(&job, &b.meta.url).await.expect("remove b"),
        Some(want[1].clone())
    );
    assert_eq!(
        other.remove(&job, &b.meta.url).await.expect("re-remove"),
        None
    );
    assert_eq!(
        other.remove(&job, &c.meta.url).await.expect("remove c"),
        Some(want[2].clone())
    );
    assert_eq!(s.list(&job).await.expect("list"), vec![want[0].clone()]);
    assert!(s.get(&want[1].key).await.expect("get").is_none());
    assert_eq!(s.delete_job(&job).await.expect("delete"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s3_delete_job_paginates_and_spares_a_job_whose_id_extends_it() {
    let Some(ep) = common::endpoint() else { return };
    let s = Arc::new(common::sink(&ep, "kb").await);
    let j1: JobId = "job-1".parse().expect("id");
    let j10: JobId = "job-10".parse().expect("id");
    // 1,100 raw document objects (more than one ListObjectsV2 page and one DeleteObjects
    // batch), written straight through the client to keep the test fast.
    let raw = 1100;
    futures::stream::iter(0..raw)
        .map(|i| {
            let s = Arc::clone(&s);
            async move {
                s.client()
                    .put_object()
                    .bucket(s.bucket())
                    .key(s.object_key(&format!("job-1/example.com/p{i}.md")))
                    .body(ByteStream::from_static(b"x"))
                    .send()
                    .await
                    .expect("raw put");
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    let d1 = sample_doc(&j1, "https://example.com/real", Some("Real"), "1\n");
    let d10 = sample_doc(&j10, "https://example.com/real", Some("Real"), "10\n");
    s.put(&d1).await.expect("put");
    let k10 = s.put(&d10).await.expect("put").key;
    s.put_aux(&j1, "chunks.jsonl", b"{}\n".to_vec())
        .await
        .expect("aux");
    s.put_aux(&j10, "chunks.jsonl", b"{}\n".to_vec())
        .await
        .expect("aux");
    assert_eq!(s.delete_job(&j1).await.expect("delete"), raw + 1);
    assert_eq!(s.delete_job(&j1).await.expect("re-delete"), 0);
    assert!(
        s.get(&k10).await.expect("get").is_some(),
        "job-10 doc deleted"
    );
    assert!(s.get("job-10/chunks.jsonl").await.expect("get").is_some());
    assert_eq!(s.list(&j10).await.expect("list").len(), 1);
    assert!(s.list(&j1).await.expect("list").is_empty());
    assert_eq!(s.delete_job(&j10).await.expect("delete"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s3_concurrent_same_title_puts_from_8_tasks_get_distinct_keys() {
    let Some(ep) = common::endpoint() else { return };
    let s = Arc::new(common::sink(&ep, "kb").await);
    let job = JobId::new();
    let docs: Vec<_> = (0..8)
        .map(|i| {
            sample_doc(
                &job,
                &format!("https://example.com/page/{i}"),
                Some("Same Title"),
                &format!("body {i}\n"),
            )
        })
        .collect();
    let tasks: Vec<_> = docs
        .iter()
        .cloned()
        .map(|d| {
            let s = Arc::clone(&s);
            tokio::spawn(async move { s.put(&d).await.expect("put") })
        })
        .collect();
    let mut stored = Vec::new();
    for t in tasks {
        stored.push(t.await.expect("join"));
    }
    let keys: HashSet<_> = stored.iter().map(|st| st.key.clone()).collect();
    assert_eq!(keys.len(), 8, "two URLs share a key: {keys:?}");
    let plain = document_keys(&docs[0]).0;
    assert!(keys.contains(&plain), "nobody got the plain key");
    for (d, st) in docs.iter().zip(&stored) {
        assert_eq!(s.get(&st.key).await.expect("get"), Some(d.to_file_bytes()));
        assert_eq!(s.put(d).await.expect("re-put").key, st.key, "re-put moved");
    }
    assert_eq!(s.list(&job).await.expect("list").len(), 8);
    assert_eq!(s.delete_job(&job).await.expect("delete"), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamo_dedup_32_way_race_has_one_winner() {
    let Some(ep) = common::endpoint() else { return };
    let d = common::dedup(&ep, None).await;
    assert_eq!(d.to_string(), format!("DynamoDedup({})", d.table()));
    dedup_single_winner(Arc::new(d)).await;
}

#[tokio::test]
async fn dynamo_dedup_handles_long_keys_and_clears_past_one_batch() {
    let Some(ep) = common::endpoint() else { return };
    let d = common::dedup(&ep, None).await;
    let job = JobId::new();
    let long = format!("example.com/{}", "q".repeat(3000));
    assert!(d.insert(&job, &long).await.expect("insert"));
    assert!(!d.insert(&job, &long).await.expect("insert"));
    assert!(d.contains(&job, &long).await.expect("contains"));
    let keys: Vec<String> = (0..60).map(|i| format!("example.com/{i}")).collect();
    assert!(d
        .insert_many(&job, &keys)
        .await
        .expect("many")
        .iter()
        .all(|f| *f));
    d.clear_job(&job).await.expect("clear");
    assert!(!d.contains(&job, &long).await.expect("contains"));
    assert!(!d.contains(&job, "example.com/59").await.expect("contains"));
    assert!(d
        .insert(&job, "example.com/0")
        .await
        .expect("insert after clear"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamo_job_budget_is_exact_under_32_concurrent_reservers() {
    let Some(ep) = common::endpoint() else { return };
    let s = common::jobs(&ep).await;
    assert_eq!(s.to_string(), format!("DynamoJobStore({})", s.table()));
    jobs_budget(Arc::new(s)).await;
}

#[tokio::test]
async fn dynamo_job_store_reports_unknown_jobs_and_keeps_odd_reasons() {
    let Some(ep) = common::endpoint() else { return };
    let s = common::jobs(&ep).await;
    let ghost = JobId::new();
    for e in [
        s.reserve_page(&ghost).await.expect_err("reserve"),
        s.record_page(&ghost, &PageOutcome::Stored)
            .await
            .expect_err("record"),
        s.record_excluded(&ghost, "x").await.expect_err("excluded"),
        s.finish(&ghost, JobStatus::Completed, None)
            .await
            .expect_err("finish"),
    ] {
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    }
    let req = CrawlRequest::builder("https://example.com/")
        .max_pages(2)
        .build()
        .expect("request");
    let r = JobRecord::new(JobId::new(), req, OffsetDateTime::now_utc());
    s.create(&r).await.expect("create");
    assert_eq!(
        s.create(&r).await.expect_err("dup").kind(),
        ErrorKind::Conflict
    );
    assert!(s.reserve_page(&r.id).await.expect("reserve"));
    s.record_page(&r.id, &PageOutcome::Skipped("trap.calendar #1".into()))
        .await
        .expect("record");
    s.record_excluded(&r.id, "max_pages")
        .await
        .expect("excluded");
    assert!(s
        .finish(&r.id, JobStatus::Failed, Some("boom".into()))
        .await
        .expect("finish"));
    let got = s.get(&r.id).await.expect("get").expect("record");
    assert_eq!(got.progress.skipped.get("trap.calendar #1"), Some(&1));
    assert_eq!(got.progress.excluded.get("max_pages"), Some(&1));
    assert_eq!(
        (got.status, got.failure.as_deref()),
        (JobStatus::Failed, Some("boom"))
    );
    assert_eq!(got.started_at, r.started_at);
    assert_eq!(s.list(None).await.expect("list").len(), 1);
    assert!(s.finish(&r.id, JobStatus::Running, None).await.is_err());
    s.delete(&r.id).await.expect("delete");
}

#[tokio::test]
async fn s3_get_on_a_missing_bucket_is_an_error_not_an_absent_key() {
    let Some(ep) = common::endpoint() else { return };
    let s = crawl_aws::S3Sink::builder()
        .bucket(common::unique("absent"))
        .endpoint_url(&ep)
        .static_credentials("testing", "testing")
        .build()
        .await
        .expect("build");
    let e = s.get("job-1/x.md").await.expect_err("missing bucket");
    assert_eq!(e.backend(), Some(s.to_string().as_str()));
    assert!(!e.is_temporary(), "{e}");
}
