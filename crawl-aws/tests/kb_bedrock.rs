//! The Bedrock Knowledge Bases layout on the wire: a loopback site crawled through
//! `BedrockKbIngestor` into a moto S3 bucket (documents and `.metadata.json` sidecars read
//! back with the real SDK), and `StartIngestionJob` sent to a loopback recorder standing in
//! for Bedrock's agent API (moto has none), which keeps the signed request: once per run
//! with changes, never for a run without changes; a removed page loses its object and its
//! sidecar. Needs `KB_CRAWL_AWS_ENDPOINT` (scripts/moto.sh); skipped without it unless
//! `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use common::recorder::Recorder;
use crawl_aws::kb::{BedrockKbIngestor, SIDECAR_SUFFIX};
use crawl_core::memory::MemorySink;
use crawl_core::{CrawlRequest, Crawler, DynSink, Guardrails, JobRecord, JobStatus, SitemapMode};
use serde_json::Value;

/// The site: v1 has /, /a, /b, /c; v2 changes /a and removes /b (404).
fn page(version: u32, path: &str) -> Option<String> {
    let body = match (version, path) {
        (_, "/") => "<p>The home page of the department lists what it offers.</p>",
        (1, "/a") => "<p>Admissions: apply by March with three letters of reference.</p>",
        (_, "/a") => "<p>Admissions: apply by April. Two letters of reference are enough.</p>",
        (1, "/b") => "<p>Bursary office hours are Monday to Friday, nine to five.</p>",
        (_, "/c") => "<p>Courses run in two semesters of fifteen weeks each year.</p>",
        _ => return None,
    };
    Some(format!(
        "<!doctype html><html><head><title>Page {path}</title></head><body>\
         <nav><a href=\"/a\">A</a> <a href=\"/b\">B</a> <a href=\"/c\">C</a></nav>\
         <main><h1>Page {path}</h1>{body}</main></body></html>"
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

async fn s3(endpoint: &str) -> aws_sdk_s3::Client {
    use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https();
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(http)
        .endpoint_url(endpoint)
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_s3::config::Credentials::new(
            "testing", "testing", None, None, "test",
        ))
        .load()
        .await;
    aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&sdk)
            .force_path_style(true)
            .build(),
    )
}

/// key → (content type, body) of every object in `bucket`.
async fn objects(s3: &aws_sdk_s3::Client, bucket: &str) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let list = s3.list_objects_v2().bucket(bucket).send().await.unwrap();
    assert_ne!(list.is_truncated(), Some(true));
    for o in list.contents() {
        let key = o.key().unwrap().to_owned();
        let got = s3
            .get_object()
            .bucket(bucket)
            .key(&key)
            .send()
            .await
            .unwrap();
        let ct = got.content_type().unwrap_or_default().to_owned();
        let body = got.body.collect().await.unwrap().into_bytes();
        out.insert(key, (ct, String::from_utf8(body.to_vec()).unwrap()));
    }
    out
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
    assert_eq!(
        record.ingestion.state,
        crawl_core::IngestionState::Delivered,
        "{record:?}"
    );
    record
}

/// Every document has its sidecar (and the other way round), with the page's attributes.
fn check_layout(objs: &BTreeMap<String, (String, String)>, prefix: &str, site: &str) -> usize {
    let docs: Vec<&String> = objs
        .keys()
        .filter(|k| !k.ends_with(SIDECAR_SUFFIX))
        .collect();
    assert_eq!(docs.len() * 2, objs.len(), "{objs:#?}");
    for key in &docs {
        assert!(key.starts_with(&format!("{prefix}/")), "{key}");
        let (ct, md) = &objs[*key];
        assert_eq!(ct, "text/markdown", "{key}");
        let (sct, sidecar) = objs
            .get(&format!("{key}{SIDECAR_SUFFIX}"))
            .unwrap_or_else(|| panic!("{key} has no sidecar"));
        assert_eq!(sct, "application/json");
        assert!(sidecar.len() < crawl_aws::kb::MAX_SIDECAR_BYTES);
        let v: Value = serde_json::from_str(sidecar).unwrap();
        let a = &v["metadataAttributes"];
        let url = a["url"].as_str().unwrap();
        assert!(url.starts_with(site), "{v}");
        assert!(md.contains(url), "{key}: the front matter names {url}");
        let path = url.trim_start_matches(site.trim_end_matches('/'));
        assert_eq!(a["title"], format!("Page {path}"), "{v}");
        assert!(a["source_id"].as_str().unwrap().starts_with("src-"), "{v}");
        assert!(a["crawled_at"].as_str().unwrap().ends_with('Z'), "{v}");
        assert_eq!(a["content_hash"].as_str().unwrap().len(), 64, "{v}");
    }
    docs.len()
}

fn url_of(objs: &BTreeMap<String, (String, String)>, key: &str) -> String {
    let v: Value = serde_json::from_str(&objs[&format!("{key}{SIDECAR_SUFFIX}")].1).unwrap();
    v["metadataAttributes"]["url"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_and_sidecars_land_on_s3_and_each_run_with_changes_starts_one_ingestion_job() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let s3 = s3(&endpoint).await;
    let bucket = common::unique("bedrock-kb");
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    let bedrock = Recorder::start().await;
    let (kb, ds, prefix) = ("KB12345678", "DS87654321", "sites/dept");
    let version = Arc::new(AtomicU32::new(1));
    let site = serve(Arc::clone(&version)).await;
    let sink = Arc::new(MemorySink::new());
    let ingestor = BedrockKbIngestor::builder()
        .sink(Arc::clone(&sink) as DynSink)
        .bucket(&bucket)
        .prefix(prefix)
        .knowledge_base(kb, ds)
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

    // First run: four pages, four documents with sidecars, one ingestion job.
    run(&crawler, &site).await;
    let first = objects(&s3, &bucket).await;
    assert_eq!(check_layout(&first, prefix, &site), 4, "{first:#?}");
    let calls = bedrock.requests();
    assert_eq!(calls.len(), 1, "{calls:#?}");
    Recorder::assert_start_ingestion_job(&calls[0], kb, ds);
    let report = ingestor.last_report();
    assert_eq!((report.written, report.deleted), (4, 0));
    assert_eq!(report.ingestion_jobs, ["JOB000001"]);

    // Second run, nothing changed: no write, no ingestion job.
    run(&crawler, &site).await;
    assert_eq!(objects(&s3, &bucket).await, first);
    assert_eq!(bedrock.requests().len(), 1, "{:#?}", bedrock.requests());
    assert_eq!(ingestor.last_report().written, 0);

    // Third run: /a changed, /b removed: its document and sidecar go, one more job.
    version.store(2, Ordering::SeqCst);
    run(&crawler, &site).await;
    let third = objects(&s3, &bucket).await;
    assert_eq!(check_layout(&third, prefix, &site), 3, "{third:#?}");
    let b_key = first
        .keys()
        .find(|k| !k.ends_with(SIDECAR_SUFFIX) && url_of(&first, k) == format!("{site}b"))
        .unwrap();
    assert!(!third.contains_key(b_key), "{b_key} left behind");
    assert!(!third.contains_key(&format!("{b_key}{SIDECAR_SUFFIX}")));
    let a_key = third
        .keys()
        .find(|k| !k.ends_with(SIDECAR_SUFFIX) && url_of(&third, k) == format!("{site}a"))
        .unwrap();
    assert!(
        third[a_key].1.contains("apply by April"),
        "{}",
        third[a_key].1
    );
    assert_ne!(
        first[&format!("{a_key}{SIDECAR_SUFFIX}")],
        third[&format!("{a_key}{SIDECAR_SUFFIX}")]
    );
    let calls = bedrock.requests();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    Recorder::assert_start_ingestion_job(&calls[1], kb, ds);
    assert_ne!(calls[0].body["clientToken"], calls[1].body["clientToken"]);
    let report = ingestor.last_report();
    assert_eq!((report.written, report.deleted), (1, 1));
}
