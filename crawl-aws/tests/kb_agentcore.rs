//! The host's document contract end to end on moto (S3, DynamoDB, S3 Vectors, SSM) with the
//! real SDKs: a loopback site crawled into an assistant's knowledge base, then changed (one
//! page shorter, one removed, one added) and synced. A stand-in of the host's ingestion,
//! written here from the contract (`shared/notes/host-knowledge-base.md`), plays the S3 event
//! → chunking → S3 Vectors pipeline: on each new object under `assistants/` it parses the key
//! as the host does, writes `chunkCount` vectors `{document_id}#i` with the host's metadata
//! and sets the row `complete`.

use crate::common;
use crate::kb_host;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_s3vectors::types::{PutInputVector, VectorData};
use aws_smithy_types::Document;
use crawl_aws::kb::{document_id, AgentCoreIngestor, MAX_DOCUMENT_BYTES};
use crawl_core::memory::MemorySink;
use crawl_core::{
    CrawlRequest, Crawler, DiffDocs, DynSink, Guardrails, Ingestor, JobId, JobRecord, JobStatus,
    Result, RunDiff, Sink, SitemapMode, StoredDoc,
};
use kb_host::{aws, host, s, Aws, Host};

/// The host's chunker, reduced: one chunk per paragraph of the markdown body.
fn chunks(markdown: &str) -> Vec<String> {
    let body = markdown
        .strip_prefix("---\n")
        .and_then(|b| b.split_once("\n---\n").map(|(_, rest)| rest))
        .unwrap_or(markdown);
    let parts: Vec<String> = body
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    if parts.is_empty() {
        vec![String::new()]
    } else {
        parts
    }
}

/// The stand-in of the host's ingestion Lambda, run once per new object under
/// `assistants/`. Returns how many objects it ingested.
async fn host_ingest(aws: &Aws, h: &Host) -> usize {
    let objects = list_objects(aws, &h.bucket, "assistants/").await;
    let mut done = 0;
    for (key, etag) in objects {
        if !h.seen.lock().unwrap().insert((key.clone(), etag)) {
            continue;
        }
        // assistant id = key part 1, document id = part 3, filename = the rest.
        let parts: Vec<&str> = key.splitn(5, '/').collect();
        assert_eq!(parts.len(), 5, "the host cannot parse {key}");
        assert_eq!((parts[0], parts[2]), ("assistants", "documents"), "{key}");
        let (assistant, document, filename) = (parts[1], parts[3], parts[4]);
        let body = aws
            .s3
            .get_object()
            .bucket(&h.bucket)
            .key(&key)
            .send()
            .await
            .unwrap()
            .body
            .collect()
            .await
            .unwrap()
            .into_bytes();
        let text = String::from_utf8(body.to_vec()).unwrap();
        let pieces = chunks(&text);
        let update = || {
            aws.ddb
                .update_item()
                .table_name(&h.table)
                .key("PK", s(format!("AST#{assistant}")))
                .key("SK", s(format!("DOC#{document}")))
                .expression_attribute_names("#s", "status")
        };
        update()
            .update_expression("SET #s = :s")
            .expression_attribute_values(":s", s("chunking"))
            .send()
            .await
            .unwrap();
        let vectors: Vec<PutInputVector> = pieces
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let meta = Document::Object(HashMap::from([
                    ("text".to_owned(), Document::String(t.clone())),
                    (
                        "document_id".to_owned(),
                        Document::String(document.to_owned()),
                    ),
                    (
                        "assistant_id".to_owned(),
                        Document::String(assistant.to_owned()),
                    ),
                    ("source".to_owned(), Document::String(filename.to_owned())),
                ]));
                PutInputVector::builder()
                    .key(format!("{document}#{i}"))
                    .data(VectorData::Float32(vec![1.0, i as f32, 0.5, 0.25]))
                    .metadata(meta)
                    .build()
                    .unwrap()
            })
            .collect();
        aws.vectors
            .put_vectors()
            .vector_bucket_name(&h.vector_bucket)
            .index_name(&h.index)
            .set_vectors(Some(vectors))
            .send()
            .await
            .unwrap();
        // The host's status updates are unconditional.
        update()
            .update_expression("SET #s = :s, chunkCount = :n")
            .expression_attribute_values(":s", s("complete"))
            .expression_attribute_values(":n", AttributeValue::N(pieces.len().to_string()))
            .send()
            .await
            .unwrap();
        done += 1;
    }
    done
}

async fn list_objects(aws: &Aws, bucket: &str, prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pages = aws
        .s3
        .list_objects_v2()
        .bucket(bucket)
        .prefix(prefix)
        .into_paginator()
        .send();
    while let Some(p) = pages.next().await {
        for o in p.unwrap().contents() {
            out.push((
                o.key().unwrap().to_owned(),
                o.e_tag().unwrap_or_default().to_owned(),
            ));
        }
    }
    out
}

/// The assistant's document rows, by document id.
async fn rows(aws: &Aws, h: &Host) -> BTreeMap<String, HashMap<String, AttributeValue>> {
    let out = aws
        .ddb
        .query()
        .table_name(&h.table)
        .key_condition_expression("PK = :pk AND begins_with(SK, :d)")
        .expression_attribute_values(":pk", s(format!("AST#{}", h.assistant)))
        .expression_attribute_values(":d", s("DOC#"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    out.items()
        .iter()
        .map(|i| (text(i, "documentId"), i.clone()))
        .collect()
}

fn text(item: &HashMap<String, AttributeValue>, k: &str) -> String {
    match item.get(k) {
        Some(AttributeValue::S(v)) => v.clone(),
        Some(AttributeValue::N(v)) => v.clone(),
        other => panic!("{k}: {other:?} in {item:?}"),
    }
}

async fn vector_keys(aws: &Aws, h: &Host) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut token: Option<String> = None;
    loop {
        let out = aws
            .vectors
            .list_vectors()
            .vector_bucket_name(&h.vector_bucket)
            .index_name(&h.index)
            .return_metadata(true)
            .set_next_token(token.clone())
            .send()
            .await
            .unwrap();
        for v in out.vectors() {
            keys.insert(v.key().to_owned());
        }
        match out.next_token() {
            Some(t) if !t.is_empty() => token = Some(t.to_owned()),
            _ => break,
        }
    }
    keys
}

/// Everything the host holds for the assistant agrees: one complete row, one object and
/// `chunkCount` vectors per current page, nothing else. Returns url → (document id, chunks).
async fn check_consistent(aws: &Aws, h: &Host, pages: &[&str]) -> BTreeMap<String, (String, u64)> {
    let rows = rows(aws, h).await;
    let objects: BTreeSet<String> = list_objects(aws, &h.bucket, "")
        .await
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let mut by_url = BTreeMap::new();
    let mut expected_vectors = BTreeSet::new();
    for (id, row) in &rows {
        assert_eq!(text(row, "status"), "complete", "{row:?}");
        assert_eq!(text(row, "assistantId"), h.assistant);
        assert_eq!(text(row, "sourceConnectorId"), "web");
        assert_eq!(text(row, "sourceAdapterKey"), "kb-crawl");
        assert_eq!(text(row, "contentType"), "text/markdown");
        assert!(text(row, "createdAt").ends_with('Z') && text(row, "updatedAt").ends_with('Z'));
        let url = text(row, "sourceFileId");
        assert_eq!(*id, document_id(&h.assistant, &url), "stable id of {url}");
        assert!(id.starts_with("DOC-") && id.len() == 16, "{id}");
        let key = text(row, "s3Key");
        assert_eq!(
            key,
            format!(
                "assistants/{}/documents/{id}/{}",
                h.assistant,
                text(row, "filename")
            )
        );
        assert!(objects.contains(&key), "row without object: {key}");
        let head = aws
            .s3
            .head_object()
            .bucket(&h.bucket)
            .key(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(head.content_type(), Some("text/markdown"));
        assert_eq!(
            head.content_length().unwrap().to_string(),
            text(row, "sizeBytes")
        );
        let n: u64 = text(row, "chunkCount").parse().unwrap();
        expected_vectors.extend((0..n).map(|i| format!("{id}#{i}")));
        by_url.insert(url, (id.clone(), n));
    }
    assert_eq!(
        objects.len(),
        rows.len(),
        "objects without a row (nothing else may sit under assistants/): {objects:?}"
    );
    assert_eq!(
        vector_keys(aws, h).await,
        expected_vectors,
        "orphan or missing vectors"
    );
    let urls: BTreeSet<&str> = by_url
        .keys()
        .map(|u| u.rsplit_once('/').unwrap().1)
        .collect();
    let want: BTreeSet<&str> = pages.iter().map(|p| p.trim_start_matches('/')).collect();
    assert_eq!(urls, want);
    by_url
}

/// The site: v1 has /, /a (long), /b, /c; v2 makes /a shorter, removes /b (404) and adds /d.
fn page(version: u32, path: &str) -> Option<String> {
    let links = if version == 1 {
        "/a /b /c"
    } else {
        "/a /b /c /d"
    };
    let body: String = match (version, path) {
        (_, "/") => "<p>The home page of the department lists what it offers.</p>".into(),
        (1, "/a") => (1..=6)
            .map(|i| format!("<p>Admissions rule {i}: applications need document number {i}.</p>"))
            .collect(),
        (_, "/a") => "<p>Admissions: apply by April.</p><p>Two letters are enough.</p>".into(),
        (1, "/b") => "<p>Bursary office hours are Monday to Friday.</p>".into(),
        (_, "/c") => "<p>Courses run in two semesters of fifteen weeks.</p>".into(),
        (v, "/d") if v >= 2 => "<p>Directions to the campus by bus and train.</p>".into(),
        _ => return None,
    };
    let nav: String = links
        .split(' ')
        .map(|l| format!("<li><a href=\"{l}\">Go to {l}</a></li>"))
        .collect();
    Some(format!(
        "<!doctype html><html><head><title>Page {path}</title></head><body>\
         <nav><ul>{nav}</ul></nav><main><h1>Page {path}</h1>{body}</main></body></html>"
    ))
}

async fn serve(version: Arc<AtomicU32>) -> String {
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let version = Arc::clone(&version);
        async move {
            match page(version.load(Ordering::SeqCst), uri.path()) {
                Some(html) => (
                    axum::http::StatusCode::OK,
                    [("content-type", "text/html; charset=utf-8")],
                    html,
                ),
                None => (
                    axum::http::StatusCode::NOT_FOUND,
                    [("content-type", "text/plain")],
                    String::new(),
                ),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/")
}

/// Hands each diff to the real ingestor and keeps it, so the test can deliver it again.
#[derive(Debug)]
struct Keep {
    inner: AgentCoreIngestor,
    last: Mutex<Option<(JobRecord, DiffDocs)>>,
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Keep({})", self.inner)
    }
}

#[async_trait]
impl Ingestor for Keep {
    async fn on_completed(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<()> {
        let docs = diff.collect().await?;
        *self.last.lock().unwrap() = Some((job.clone(), docs));
        self.inner.on_completed(job, diff).await
    }
    async fn on_deleted(&self, job: &JobRecord) -> Result<()> {
        self.inner.on_deleted(job).await
    }
}

async fn ingestor(endpoint: &str, h: &Host, sink: DynSink) -> AgentCoreIngestor {
    AgentCoreIngestor::builder()
        .sink(sink)
        .assistants_table(&h.table)
        .documents_bucket(&h.bucket)
        .vector_index(&h.vector_bucket, &h.index)
        .assistant(&h.assistant)
        .imported_by("user-1")
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap()
}

async fn run(crawler: &Crawler, url: &str) -> JobRecord {
    let req = CrawlRequest::builder(url)
        .max_depth(2)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .sitemap(SitemapMode::Off)
        .build()
        .unwrap();
    let (_, handle) = crawler.start_sync("kb-test", req).await.unwrap();
    let record = handle.wait().await.unwrap();
    assert_eq!(record.status, JobStatus::Completed, "{record:?}");
    record
}

#[tokio::test]
async fn a_site_and_its_changes_become_the_assistants_documents_without_orphans() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let aws = aws(&endpoint).await;
    let h = host(&aws).await;
    let version = Arc::new(AtomicU32::new(1));
    let url = serve(Arc::clone(&version)).await;
    let sink = Arc::new(MemorySink::new());
    let agent = ingestor(&endpoint, &h, Arc::clone(&sink) as DynSink).await;
    let keep = Arc::new(Keep {
        inner: agent.clone(),
        last: Mutex::default(),
    });
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as DynSink)
        .ingestor(Arc::clone(&keep) as crawl_core::DynIngestor)
        .build()
        .unwrap();

    // First crawl: one complete row, one object and one vector set per page.
    let first = run(&crawler, &url).await;
    let report = agent.last_report();
    assert_eq!((report.written, report.deleted), (4, 0), "{report:?}");
    // Before the host's pipeline ran, every row is `uploading` with its provenance.
    for row in rows(&aws, &h).await.values() {
        assert_eq!(text(row, "status"), "uploading");
        assert_eq!(text(row, "importedByUserId"), "user-1");
        assert_eq!(text(row, "kbCrawlJobId"), first.id.as_str());
        assert!(text(row, "sourceEtag").len() >= 32);
    }
    assert_eq!(host_ingest(&aws, &h).await, 4);
    let before = check_consistent(&aws, &h, &["", "a", "b", "c"]).await;
    let a = &before[&format!("{url}a")];
    assert_eq!(a.1, 7, "heading and six paragraphs: {before:?}");

    // The site changes: /a shorter, /b removed, /d added. The sync leaves no orphan.
    version.store(2, Ordering::SeqCst);
    let second = run(&crawler, &url).await;
    let c = &second.progress.changes;
    assert_eq!((c.added, c.changed, c.removed), (1, 1, 1), "{c:?}");
    let report = agent.last_report();
    assert_eq!((report.written, report.deleted), (2, 1), "{report:?}");
    assert_eq!(
        host_ingest(&aws, &h).await,
        2,
        "the changed and the added page"
    );
    let after = check_consistent(&aws, &h, &["", "a", "c", "d"]).await;
    let a2 = &after[&format!("{url}a")];
    assert_eq!(a2.0, a.0, "a changed page keeps its document id");
    assert_eq!(a2.1, 3, "the shorter page has fewer chunks: {after:?}");
    assert_eq!(after[&url], before[&url], "the home page did not change");

    // A re-delivered diff writes nothing: no second row, no new object for the host.
    let (job, docs) = keep.last.lock().unwrap().clone().unwrap();
    let again = agent.sync(&job, &RunDiff::from_docs(docs)).await.unwrap();
    assert_eq!(
        (again.written, again.already_current, again.deleted),
        (0, 2, 0),
        "{again:?}"
    );
    assert_eq!(host_ingest(&aws, &h).await, 0);
    assert_eq!(
        check_consistent(&aws, &h, &["", "a", "c", "d"]).await,
        after
    );

    // Deleting the source's first run removes its documents in the host's order.
    agent.on_deleted(&first).await.unwrap();
    assert!(rows(&aws, &h).await.is_empty());
    assert!(list_objects(&aws, &h.bucket, "").await.is_empty());
    assert!(vector_keys(&aws, &h).await.is_empty());
    agent.on_deleted(&first).await.unwrap();
}

#[tokio::test]
async fn an_oversized_page_is_skipped_with_a_reason_and_names_come_from_ssm() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let aws = aws(&endpoint).await;
    let h = host(&aws).await;
    // The host publishes its table and bucket names in SSM.
    let prefix = common::unique("stack");
    for (suffix, value) in [
        ("rag/assistants-table-name", &h.table),
        ("rag/documents-bucket-name", &h.bucket),
    ] {
        aws.ssm
            .put_parameter()
            .name(format!("/{prefix}/{suffix}"))
            .value(value)
            .r#type(aws_sdk_ssm::types::ParameterType::String)
            .send()
            .await
            .unwrap();
    }
    let sink = Arc::new(MemorySink::new());
    let agent = AgentCoreIngestor::builder()
        .sink(Arc::clone(&sink) as DynSink)
        .ssm_prefix(&prefix)
        .vector_index(&h.vector_bucket, &h.index)
        .endpoint_url(&endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    assert!(agent.to_string().contains(&h.table), "{agent}");

    let job = JobId::new();
    let small = sink
        .put_aux(
            &job,
            "small.md",
            b"---\ntitle: \"S\"\n---\n\n# Small\n\nFits.\n".to_vec(),
        )
        .await
        .unwrap();
    let big = sink
        .put_aux(&job, "big.md", vec![b'x'; MAX_DOCUMENT_BYTES + 1])
        .await
        .unwrap();
    let doc = |path: &str, key: String| {
        StoredDoc::new(
            format!("https://x.test/{path}").parse().unwrap(),
            key,
            path.repeat(8),
        )
    };
    let req = CrawlRequest::builder("https://x.test/").build().unwrap();
    let mut record = JobRecord::new(job, req, time::OffsetDateTime::UNIX_EPOCH);
    // No assistant configured: the job's own.
    record.assistant_id = Some(h.assistant.clone());
    let diff = RunDiff::all_added(vec![doc("small", small), doc("big", big)]);
    let report = agent.sync(&record, &diff).await.unwrap();
    assert_eq!(report.written, 1, "{report:?}");
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    let (url, reason) = &report.skipped[0];
    assert_eq!(url, "https://x.test/big");
    assert!(
        reason.starts_with("too_large:") && reason.contains("20 MB"),
        "{reason}"
    );
    let rows = rows(&aws, &h).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        text(rows.values().next().unwrap(), "sourceFileId"),
        "https://x.test/small"
    );
    let objects = list_objects(&aws, &h.bucket, "").await;
    assert_eq!(objects.len(), 1, "{objects:?}");
    assert!(objects[0]
        .0
        .starts_with(&format!("assistants/{}/documents/DOC-", h.assistant)));

    // A job without an assistant, and none configured, is refused with the field named.
    record.assistant_id = None;
    let e = agent.sync(&record, &diff).await.unwrap_err();
    assert!(e.to_string().contains("assistant:"), "{e}");
}
