//! Linked documents into the host's knowledge base, on moto with the real SDKs: a loopback
//! site links a PDF and a Word file (and hostile ones: a PDF over the 20 MB cap, a "PDF"
//! that answers HTML). With `linkedDocuments` the PDF and the DOCX become documents of
//! their own type (row first, object `….pdf` / `….docx` with its own `ContentType`); a
//! re-sync of an unchanged PDF writes nothing, a changed one is re-ingested at the same
//! document identity. Without the option they stay `not_html`, as before.

use crate::common;
use crate::kb_host;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use crawl_aws::kb::{document_id, AgentCoreIngestor};
use crawl_core::linked::{self, MAX_LINKED_BYTES, TYPE_MISMATCH};
use crawl_core::memory::MemorySink;
use crawl_core::{CrawlRequest, Crawler, DynSink, Guardrails, JobRecord, JobStatus};
use crawl_core::{Sink, SitemapMode, StoredDoc};
use kb_host::{aws, host, Aws, Host};
use sha2::Digest;

/// The assistant's document rows, by `sourceFileId` (the URL).
async fn rows(aws: &Aws, h: &Host) -> BTreeMap<String, HashMap<String, AttributeValue>> {
    let out = aws
        .ddb
        .query()
        .table_name(&h.table)
        .key_condition_expression("PK = :pk AND begins_with(SK, :d)")
        .expression_attribute_values(":pk", AttributeValue::S(format!("AST#{}", h.assistant)))
        .expression_attribute_values(":d", AttributeValue::S("DOC#".into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    out.items()
        .iter()
        .map(|i| (text(i, "sourceFileId"), i.clone()))
        .collect()
}

fn text(item: &HashMap<String, AttributeValue>, k: &str) -> String {
    match item.get(k) {
        Some(AttributeValue::S(v) | AttributeValue::N(v)) => v.clone(),
        other => panic!("{k}: {other:?} in {item:?}"),
    }
}

async fn object(aws: &Aws, h: &Host, key: &str) -> (Option<String>, Vec<u8>) {
    let out = aws
        .s3
        .get_object()
        .bucket(&h.bucket)
        .key(key)
        .send()
        .await
        .unwrap();
    let ct = out.content_type().map(str::to_owned);
    let body = out.body.collect().await.unwrap().into_bytes().to_vec();
    (ct, body)
}

async fn object_count(aws: &Aws, h: &Host) -> usize {
    let out = aws
        .s3
        .list_objects_v2()
        .bucket(&h.bucket)
        .send()
        .await
        .unwrap();
    out.contents().len()
}

fn pdf(version: u32) -> Vec<u8> {
    format!("%PDF-1.4\n% The student handbook, edition {version}.\n%%EOF\n").into_bytes()
}

/// A minimal stored zip holding `names` (empty files): a Word file when one is under `word/`.
fn zip(names: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for name in names {
        let offset = out.len() as u32;
        out.extend_from_slice(b"PK\x03\x04\x14\0\0\0\0\0\0\0\0\0");
        out.extend_from_slice(&[0; 12]);
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name.as_bytes());
        central.extend_from_slice(b"PK\x01\x02\x14\0\x14\0\0\0\0\0\0\0\0\0");
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&(names.len() as u16).to_le_bytes());
    out.extend_from_slice(&(names.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// The site: `/` links a PDF (its bytes change with `version`; strong ETag, `304` on a
/// match), a DOCX, a PDF over the cap and a "PDF" that answers HTML.
async fn serve(version: Arc<AtomicU32>) -> String {
    use axum::http::{header, HeaderMap, StatusCode, Uri};
    use axum::response::{IntoResponse, Response};
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
        let v = version.load(Ordering::SeqCst);
        async move {
            let ok = |ct: &str, body: Vec<u8>| -> Response {
                (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, ct.to_owned())],
                    body,
                )
                    .into_response()
            };
            match uri.path() {
                "/" => ok(
                    "text/html; charset=utf-8",
                    "<!doctype html><html><head><title>Home</title></head><body><main>\
                     <h1>Home</h1><p>The department's documents are linked below.</p><ul>\
                     <li><a href=\"/files/handbook.pdf\">Handbook</a></li>\
                     <li><a href=\"/files/notes.docx\">Notes</a></li>\
                     <li><a href=\"/files/big.pdf\">Big</a></li>\
                     <li><a href=\"/files/fake.pdf\">Fake</a></li></ul></main></body></html>"
                        .into(),
                ),
                "/files/handbook.pdf" => {
                    let tag = format!("\"handbook-{v}\"");
                    if headers
                        .get(header::IF_NONE_MATCH)
                        .and_then(|t| t.to_str().ok())
                        == Some(tag.as_str())
                    {
                        (StatusCode::NOT_MODIFIED, [(header::ETAG, tag)]).into_response()
                    } else {
                        (
                            StatusCode::OK,
                            [
                                (header::CONTENT_TYPE, linked::PDF.to_owned()),
                                (header::ETAG, tag),
                            ],
                            pdf(v),
                        )
                            .into_response()
                    }
                }
                "/files/notes.docx" => ok(
                    linked::DOCX,
                    zip(&["[Content_Types].xml", "word/document.xml"]),
                ),
                "/files/big.pdf" => {
                    let mut body = b"%PDF-1.4\n".to_vec();
                    body.resize(MAX_LINKED_BYTES + 1, b'0');
                    ok(linked::PDF, body)
                }
                "/files/fake.pdf" => ok(
                    linked::PDF,
                    b"<!doctype html><html><body><p>Not a PDF.</p></body></html>".to_vec(),
                ),
                _ => StatusCode::NOT_FOUND.into_response(),
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

async fn ingestor(endpoint: &str, h: &Host, sink: DynSink) -> AgentCoreIngestor {
    AgentCoreIngestor::builder()
        .sink(sink)
        .assistants_table(&h.table)
        .documents_bucket(&h.bucket)
        .vector_index(&h.vector_bucket, &h.index)
        .assistant(&h.assistant)
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap()
}

async fn run(crawler: &Crawler, url: &str, linked: bool) -> JobRecord {
    let req = CrawlRequest::builder(url)
        .max_depth(1)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .sitemap(SitemapMode::Off)
        .linked_documents(linked)
        .build()
        .unwrap();
    let (_, handle) = crawler.start_sync("kb-test", req).await.unwrap();
    let record = handle.wait().await.unwrap();
    assert_eq!(record.status, JobStatus::Completed, "{record:?}");
    record
}

#[tokio::test]
async fn a_linked_pdf_becomes_a_pdf_document_of_the_assistant_and_syncs_like_a_page() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let aws = aws(&endpoint).await;
    let h = host(&aws).await;
    let version = Arc::new(AtomicU32::new(1));
    let url = serve(Arc::clone(&version)).await;
    let sink = Arc::new(MemorySink::new());
    let agent = ingestor(&endpoint, &h, Arc::clone(&sink) as DynSink).await;
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as DynSink)
        .ingestor(Arc::new(agent.clone()) as crawl_core::DynIngestor)
        .build()
        .unwrap();

    let first = run(&crawler, &url, true).await;
    let p = &first.progress;
    assert_eq!(p.skipped.get("too_large"), Some(&1), "{p:?}");
    assert_eq!(p.skipped.get(TYPE_MISMATCH), Some(&1), "{p:?}");
    assert_eq!(p.changes.added, 3, "home, handbook.pdf, notes.docx: {p:?}");
    let report = agent.last_report();
    assert_eq!(report.written, 3, "{report:?}");
    let first_rows = rows(&aws, &h).await;
    assert_eq!(first_rows.len(), 3, "{:?}", first_rows.keys());
    let pdf_url = format!("{url}files/handbook.pdf");
    let doc = document_id(&h.assistant, &pdf_url);
    let row = &first_rows[&pdf_url];
    assert_eq!(text(row, "documentId"), doc);
    assert_eq!(text(row, "contentType"), linked::PDF);
    assert_eq!(text(row, "filename"), "handbook.pdf");
    assert_eq!(text(row, "status"), "uploading");
    assert_eq!(text(row, "sizeBytes"), pdf(1).len().to_string());
    assert_eq!(
        text(row, "sourceEtag"),
        hex::encode(sha2::Sha256::digest(pdf(1)))
    );
    let key = text(row, "s3Key");
    assert_eq!(
        key,
        format!("assistants/{}/documents/{doc}/handbook.pdf", h.assistant)
    );
    assert_eq!(
        object(&aws, &h, &key).await,
        (Some(linked::PDF.to_owned()), pdf(1))
    );
    let docx = &first_rows[&format!("{url}files/notes.docx")];
    assert_eq!(text(docx, "contentType"), linked::DOCX);
    assert!(text(docx, "s3Key").ends_with("/notes.docx"), "{docx:?}");
    let (ct, _) = object(&aws, &h, &text(docx, "s3Key")).await;
    assert_eq!(ct.as_deref(), Some(linked::DOCX));
    let home = &first_rows[&url];
    assert_eq!(text(home, "contentType"), "text/markdown");
    assert_eq!(object_count(&aws, &h).await, 3);

    // Re-sync, nothing changed: the PDF is `unchanged` (304 to the stored ETag), nothing
    // is written.
    let second = run(&crawler, &url, true).await;
    let c = &second.progress.changes;
    assert_eq!(
        (c.added, c.changed, c.unchanged, c.removed),
        (0, 0, 3, 0),
        "{c:?}"
    );
    let report = agent.last_report();
    assert_eq!(
        (report.written, report.already_current),
        (0, 0),
        "{report:?}"
    );
    let again = rows(&aws, &h).await;
    assert_eq!(text(&again[&pdf_url], "updatedAt"), text(row, "updatedAt"));

    // The PDF changes: `changed`, the same document id, the new bytes.
    version.store(2, Ordering::SeqCst);
    let third = run(&crawler, &url, true).await;
    let c = &third.progress.changes;
    assert_eq!((c.added, c.changed, c.removed), (0, 1, 0), "{c:?}");
    assert_eq!(agent.last_report().written, 1, "{:?}", agent.last_report());
    let after = rows(&aws, &h).await;
    assert_eq!(after.len(), 3);
    let row = &after[&pdf_url];
    assert_eq!(text(row, "documentId"), doc, "same document identity");
    assert_eq!(
        text(row, "sourceEtag"),
        hex::encode(sha2::Sha256::digest(pdf(2)))
    );
    assert_eq!(text(row, "s3Key"), key);
    assert_eq!(
        object(&aws, &h, &key).await,
        (Some(linked::PDF.to_owned()), pdf(2))
    );
    assert_eq!(object_count(&aws, &h).await, 3);
}

#[tokio::test]
async fn without_the_option_linked_files_stay_not_html() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let aws = aws(&endpoint).await;
    let h = host(&aws).await;
    let url = serve(Arc::new(AtomicU32::new(1))).await;
    let sink = Arc::new(MemorySink::new());
    let agent = ingestor(&endpoint, &h, Arc::clone(&sink) as DynSink).await;
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as DynSink)
        .ingestor(Arc::new(agent.clone()) as crawl_core::DynIngestor)
        .build()
        .unwrap();
    let record = run(&crawler, &url, false).await;
    let p = &record.progress;
    assert_eq!(p.skipped.get("not_html"), Some(&4), "{p:?}");
    assert_eq!(p.stored, 1, "{p:?}");
    let docs: Vec<StoredDoc> = sink.list(&record.id).await.unwrap();
    assert_eq!(docs.len(), 1);
    assert!(docs[0].key.ends_with(".md"), "{docs:?}");
    let rows = rows(&aws, &h).await;
    assert_eq!(rows.keys().cloned().collect::<Vec<_>>(), vec![url.clone()]);
    assert_eq!(text(&rows[&url], "contentType"), "text/markdown");
}

/// Bedrock takes linked documents too: the PDF lands under the data source's prefix with its
/// own key extension and `ContentType`, with its metadata sidecar, in the run's one
/// ingestion job.
#[cfg(feature = "bedrock-kb")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_pdf_reaches_a_bedrock_data_source_as_a_pdf_with_its_sidecar() {
    use common::recorder::Recorder;
    use crawl_aws::kb::{BedrockKbIngestor, SIDECAR_SUFFIX};
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let aws = aws(&endpoint).await;
    let bucket = common::unique("bedrock-kb");
    aws.s3.create_bucket().bucket(&bucket).send().await.unwrap();
    let bedrock = Recorder::start().await;
    let url = serve(Arc::new(AtomicU32::new(1))).await;
    let sink = Arc::new(MemorySink::new());
    let ingestor = BedrockKbIngestor::builder()
        .sink(Arc::clone(&sink) as DynSink)
        .bucket(&bucket)
        .prefix("sites/dept")
        .knowledge_base("KB12345678", "DS87654321")
        .endpoint_url(&endpoint)
        .bedrock_endpoint_url(&bedrock.url)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as DynSink)
        .ingestor(Arc::new(ingestor.clone()))
        .build()
        .unwrap();
    run(&crawler, &url, true).await;
    assert_eq!(
        ingestor.last_report().written,
        3,
        "{:?}",
        ingestor.last_report()
    );
    assert_eq!(bedrock.requests().len(), 1, "one ingestion job");
    let keys: Vec<String> = aws
        .s3
        .list_objects_v2()
        .bucket(&bucket)
        .send()
        .await
        .unwrap()
        .contents()
        .iter()
        .filter_map(|o| o.key().map(str::to_owned))
        .collect();
    let pdf_key = keys
        .iter()
        .find(|k| k.starts_with("sites/dept/") && k.ends_with("/handbook.pdf"))
        .unwrap_or_else(|| panic!("no PDF among {keys:?}"));
    let h = Host {
        table: String::new(),
        bucket: bucket.clone(),
        vector_bucket: String::new(),
        index: String::new(),
        assistant: String::new(),
        seen: Default::default(),
    };
    assert_eq!(
        object(&aws, &h, pdf_key).await,
        (Some(linked::PDF.to_owned()), pdf(1))
    );
    let (_, sidecar) = object(&aws, &h, &format!("{pdf_key}{SIDECAR_SUFFIX}")).await;
    let sidecar: serde_json::Value = serde_json::from_slice(&sidecar).unwrap();
    assert_eq!(
        sidecar["metadataAttributes"]["url"],
        format!("{url}files/handbook.pdf")
    );
    let docx = keys.iter().find(|k| k.ends_with("/notes.docx")).unwrap();
    assert_eq!(
        object(&aws, &h, docx).await.0.as_deref(),
        Some(linked::DOCX)
    );
}
