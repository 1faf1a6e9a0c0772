//! `examples/crawl --kb URI` against moto, as a user runs it: the AWS endpoint and
//! credentials come from the SDK's environment (`AWS_ENDPOINT_URL`), the first run puts every
//! stored page into the knowledge base, a second run of the same command after the site
//! changed syncs it (only the changes), and a bad URI is refused with the wrong part named
//! before anything is written. Needs `KB_CRAWL_AWS_ENDPOINT` (scripts/moto.sh); skipped
//! without it unless `KB_CRAWL_REQUIRE_SERVICES=1`. The example is built with this test's
//! features when missing or stale (tests/support/example.rs).

use crate::common;
// Not under support/mod.rs: crawl-aws's tests include that file, and this one names the
// facade's features.
#[path = "support/example.rs"]
mod example;
use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use kb_crawl::aws::kb::AgentCoreIngestor;
use kb_crawl::memory::MemorySink;
use serde_json::Value;
use support::{copy_dir, Fixture};

fn crawl_binary() -> PathBuf {
    example::binary("crawl", "kb targets: agentcore, bedrock")
}

/// `crawl URL --out OUT --kb KB --json` with the SDK's environment pointed at `endpoint`
/// (no `--kb` when `kb` is empty).
fn crawl(endpoint: &str, url: &str, out: &Path, kb: &str, env: &[(&str, &str)]) -> Output {
    let kb: &[&str] = if kb.is_empty() { &[] } else { &["--kb", kb] };
    Command::new(crawl_binary())
        .arg(url)
        .arg("--out")
        .arg(out)
        .args(["--depth", "1", "--rate", "0", "--sitemap", "off"])
        .args(["--allow-private-network", "--lift-guardrails", "--json"])
        .args(kb)
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_PROFILE")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn summary(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "crawl failed ({:?}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Object keys under `prefix` in `bucket`, listed on moto without the SDK (moto does not
/// check signatures; the facade's tests have no S3 client).
async fn object_keys(endpoint: &str, bucket: &str, prefix: &str) -> BTreeSet<String> {
    let url = format!("{endpoint}/{bucket}?list-type=2&max-keys=1000&prefix={prefix}");
    let xml = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert!(xml.contains("<ListBucketResult"), "{xml}");
    assert!(!xml.contains("<IsTruncated>true"), "{xml}");
    xml.split("<Key>")
        .skip(1)
        .filter_map(|s| s.split_once("</Key>").map(|(k, _)| k.replace("&amp;", "&")))
        .collect()
}

/// GET of one object on moto: an anonymous GET is refused (the object is private), so the
/// request names moto's test credentials (moto reads the access key, not the signature).
async fn object(endpoint: &str, bucket: &str, key: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(format!("{endpoint}/{bucket}/{key}"))
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, \
             SignedHeaders=host, Signature=00",
        )
        .send()
        .await
        .unwrap()
}

/// The site fixture copied to a folder the test may change, served on loopback.
async fn site() -> (tempfile::TempDir, Fixture) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/site"),
        dir.path(),
    );
    let fx = Fixture::serve(dir.path().to_owned()).await;
    (dir, fx)
}

/// The site changes: /b/ is gone (404) and /c/ gains a paragraph.
fn change(site: &Path) {
    std::fs::remove_file(site.join("b/index.html")).unwrap();
    let c = site.join("c/index.html");
    let html = std::fs::read_to_string(&c).unwrap().replace(
        "</article>",
        "<p>A new paragraph about the courses of the coming year, long enough to count.</p></article>",
    );
    std::fs::write(&c, html).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_flag_crawls_into_the_hosts_knowledge_base_and_a_second_run_syncs() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let (dir, fx) = site().await;
    let (table, bucket) = (common::unique("rag-assistants"), common::unique("rag-docs"));
    let (vectors, index) = (common::unique("rag-vectors"), "rag-vector-index-v1");
    let assistant = "AST-cli-test";
    // The host's side: its table, buckets and index, created on the stand-in.
    let host = AgentCoreIngestor::builder()
        .sink(Arc::new(MemorySink::new()))
        .assistants_table(&table)
        .documents_bucket(&bucket)
        .vector_index(&vectors, index)
        .endpoint_url(&endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    host.create_host_if_missing().await.unwrap();
    let uri = format!("agentcore://{table}/{bucket}?assistant={assistant}&index={vectors}/{index}");
    let out = tempfile::tempdir().unwrap();
    let prefix = format!("assistants/{assistant}/");

    // Rows and objects are exactly one per current page: same keys, every object there.
    let check = |docs: Vec<kb_crawl::aws::kb::HostDocument>, objects: BTreeSet<String>| {
        let keys: BTreeSet<String> = docs.iter().map(|d| d.s3_key.clone()).collect();
        assert_eq!(keys, objects, "rows' s3Key vs objects: {docs:#?}");
        assert_eq!(keys.len(), docs.len(), "{docs:#?}");
        assert!(docs.iter().all(|d| d.status == "uploading"
            && d.adapter.as_deref() == Some("kb-crawl")
            && d.s3_key
                .starts_with(&format!("{prefix}documents/{}/", d.document_id))
            && d.s3_key.ends_with(".md")));
        docs
    };

    let first = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri, &[]));
    assert_eq!(first["status"], "COMPLETED", "{first}");
    assert_eq!(first["ingestion"], "delivered", "{first}");
    let stored = first["stored"].as_u64().unwrap();
    assert!(stored >= 4, "{first}");
    assert_eq!(first["kb"]["written"], stored, "{first}");
    assert_eq!(first["kb"]["deleted"], 0, "{first}");
    let docs = check(
        host.documents(assistant).await.unwrap(),
        object_keys(&endpoint, &bucket, &prefix).await,
    );
    assert_eq!(docs.len() as u64, stored, "{docs:#?}");
    let (b, c) = (fx.url("/b/"), fx.url("/c/"));
    let b_doc = docs
        .iter()
        .find(|d| d.url.as_deref() == Some(b.as_str()))
        .unwrap_or_else(|| panic!("no row for {b}: {docs:#?}"))
        .clone();
    let c_doc = docs
        .iter()
        .find(|d| d.url.as_deref() == Some(c.as_str()))
        .unwrap()
        .clone();
    let c_before = object(&endpoint, &bucket, &c_doc.s3_key)
        .await
        .text()
        .await
        .unwrap();
    assert!(c_before.contains(&format!("url: \"{c}\"")), "{c_before}");

    // The same command again after the site changed: a sync, only the changes delivered.
    change(dir.path());
    let second = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri, &[]));
    assert_eq!(second["sourceId"], first["sourceId"], "{second}");
    assert_eq!(second["changes"]["removed"], 1, "{second}");
    assert_eq!(second["changes"]["changed"], 1, "{second}");
    assert_eq!(second["kb"]["deleted"], 1, "{second}");
    assert_eq!(second["kb"]["written"], 1, "{second}");
    let after = check(
        host.documents(assistant).await.unwrap(),
        object_keys(&endpoint, &bucket, &prefix).await,
    );
    assert_eq!(after.len(), docs.len() - 1, "{after:#?}");
    assert!(after.iter().all(|d| d.url.as_deref() != Some(b.as_str())));
    assert_eq!(
        object(&endpoint, &bucket, &b_doc.s3_key).await.status(),
        404
    );
    // /c/ keeps its document id; its object now has the new paragraph.
    assert!(after.iter().any(|d| d.document_id == c_doc.document_id));
    let c_after = object(&endpoint, &bucket, &c_doc.s3_key)
        .await
        .text()
        .await
        .unwrap();
    assert!(!c_before.contains("courses of the coming year"));
    assert!(c_after.contains("courses of the coming year"), "{c_after}");

    // A third run with nothing changed writes nothing.
    let third = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri, &[]));
    assert_eq!(third["kb"]["written"], 0, "{third}");
    assert_eq!(third["kb"]["deleted"], 0, "{third}");
    assert_eq!(host.documents(assistant).await.unwrap().len(), after.len());
}

#[test]
fn a_bad_kb_uri_is_refused_naming_the_part_before_anything_is_written() {
    let root = tempfile::tempdir().unwrap();
    for (uri, part) in [
        (
            "agentcore://rag-table/rag-bucket?index=vbk/idx",
            "kb: assistant: required",
        ),
        (
            "agentcore://rag-table/Rag_Bucket?assistant=a&index=vbk/idx",
            "kb: documents bucket:",
        ),
        ("bedrock://kb-bucket/docs?kb=KB1", "kb: ds: required"),
        ("bedrock://kb-bucket/docs?kb=KB-1&ds=DS1", "kb: kb:"),
        ("s3://kb-bucket/docs", "kb: scheme:"),
    ] {
        let out = root.path().join("out");
        // No service is asked: the endpoint is a closed port.
        let o = crawl("http://127.0.0.1:9", "http://127.0.0.1:9/", &out, uri, &[]);
        assert_eq!(o.status.code(), Some(2), "{uri}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(part), "{uri}: {err}");
        assert!(o.stdout.is_empty(), "{uri}");
        assert!(!out.exists(), "{uri}: {} was written", out.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_flag_keeps_a_bedrock_data_source_current_with_one_ingestion_job_per_changed_run() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let (dir, fx) = site().await;
    let bucket = common::unique("bedrock-cli");
    let made = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(made.status().is_success(), "{made:?}");
    // StartIngestionJob goes to the recorder (the SDK's per-service endpoint variable),
    // everything else to moto.
    let bedrock = common::recorder::Recorder::start().await;
    let env = [("AWS_ENDPOINT_URL_BEDROCK_AGENT", bedrock.url.as_str())];
    let (kb, ds) = ("KBCLI0001", "DSCLI0001");
    let uri = format!("bedrock://{bucket}/kb/site?kb={kb}&ds={ds}");
    let out = tempfile::tempdir().unwrap();
    let sidecars = |keys: &BTreeSet<String>| {
        let docs: BTreeSet<&str> = keys
            .iter()
            .filter(|k| !k.ends_with(".metadata.json"))
            .map(String::as_str)
            .collect();
        for d in &docs {
            assert!(
                keys.contains(&format!("{d}.metadata.json")),
                "{d}: {keys:#?}"
            );
            assert!(d.starts_with("kb/site/") && d.ends_with(".md"), "{d}");
        }
        assert_eq!(docs.len() * 2, keys.len(), "{keys:#?}");
        docs.len() as u64
    };

    let first = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri, &env));
    assert_eq!(first["ingestion"], "delivered", "{first}");
    let stored = first["stored"].as_u64().unwrap();
    let keys = object_keys(&endpoint, &bucket, "kb/site/").await;
    assert_eq!(sidecars(&keys), stored);
    assert_eq!(first["kb"]["written"], stored, "{first}");
    assert_eq!(first["kb"]["ingestionJobs"].as_array().unwrap().len(), 1);
    let calls = bedrock.requests();
    assert_eq!(calls.len(), 1, "{calls:#?}");
    common::recorder::Recorder::assert_start_ingestion_job(&calls[0], kb, ds);
    // The sidecar of /b/ names it; remember its keys.
    let mut b_keys = None;
    for k in keys.iter().filter(|k| k.ends_with(".metadata.json")) {
        let v: Value =
            serde_json::from_str(&object(&endpoint, &bucket, k).await.text().await.unwrap())
                .unwrap();
        if v["metadataAttributes"]["url"] == fx.url("/b/") {
            b_keys = Some((k.trim_end_matches(".metadata.json").to_owned(), k.clone()));
        }
    }
    let (b_doc, b_sidecar) = b_keys.expect("a sidecar for /b/");

    // Nothing changed: nothing written, no ingestion job.
    let same = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri, &env));
    assert_eq!(same["kb"]["written"], 0, "{same}");
    assert_eq!(same["kb"]["ingestionJobs"], serde_json::json!([]), "{same}");
    assert_eq!(bedrock.requests().len(), 1);

    // /b/ removed, /c/ changed: both objects of /b/ deleted, one more ingestion job.
    change(dir.path());
    let second = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri, &env));
    assert_eq!(
        (
            second["kb"]["written"].as_u64(),
            second["kb"]["deleted"].as_u64()
        ),
        (Some(1), Some(1)),
        "{second}"
    );
    let after = object_keys(&endpoint, &bucket, "kb/site/").await;
    assert_eq!(sidecars(&after), stored - 1);
    assert!(
        !after.contains(&b_doc) && !after.contains(&b_sidecar),
        "{after:#?}"
    );
    let calls = bedrock.requests();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    common::recorder::Recorder::assert_start_ingestion_job(&calls[1], kb, ds);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_crawled_before_without_kb_reaches_the_knowledge_base_whole() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let (_dir, fx) = site().await;
    let (table, bucket) = (common::unique("rag-assistants"), common::unique("rag-docs"));
    let vectors = common::unique("rag-vectors");
    let assistant = "AST-cli-seed";
    let host = AgentCoreIngestor::builder()
        .sink(Arc::new(MemorySink::new()))
        .assistants_table(&table)
        .documents_bucket(&bucket)
        .vector_index(&vectors, "rag-index")
        .endpoint_url(&endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    host.create_host_if_missing().await.unwrap();
    let uri =
        format!("agentcore://{table}/{bucket}?assistant={assistant}&index={vectors}/rag-index");
    let out = tempfile::tempdir().unwrap();

    // Crawled first without --kb; the same site unchanged, now with --kb: the run's diff is
    // empty, yet every page must reach the knowledge base.
    let plain = summary(&crawl(&endpoint, &fx.url("/"), out.path(), "", &[]));
    assert!(plain.get("kb").is_none(), "{plain}");
    let stored = plain["stored"].as_u64().unwrap();
    let with_kb = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri, &[]));
    assert_eq!(with_kb["changes"]["added"], 0, "{with_kb}");
    assert_eq!(with_kb["kb"]["written"], stored, "{with_kb}");
    let docs = host.documents(assistant).await.unwrap();
    assert_eq!(docs.len() as u64, stored, "{docs:#?}");
    let objects = object_keys(&endpoint, &bucket, &format!("assistants/{assistant}/")).await;
    assert_eq!(objects.len() as u64, stored, "{objects:#?}");

    // Seeded once: the next run hands over only its (empty) diff.
    let again = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri, &[]));
    assert_eq!(again["kb"]["written"], 0, "{again}");
    assert_eq!(again["kb"]["alreadyCurrent"], 0, "{again}");
}

/// `crawl URL --out OUT --kb KB --json EXTRA...` (no `--kb` when `kb` is empty).
fn crawl_with(endpoint: &str, url: &str, out: &Path, kb: &str, extra: &[&str]) -> Output {
    let kb: &[&str] = if kb.is_empty() { &[] } else { &["--kb", kb] };
    Command::new(crawl_binary())
        .arg(url)
        .arg("--out")
        .arg(out)
        .args(["--depth", "1", "--rate", "0", "--sitemap", "off"])
        .args(["--allow-private-network", "--lift-guardrails", "--json"])
        .args(kb)
        .args(extra)
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_PROFILE")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linked_docs_flag_puts_the_sites_pdf_into_the_knowledge_base_as_a_pdf() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let (_dir, fx) = site().await;
    let (table, bucket) = (common::unique("rag-assistants"), common::unique("rag-docs"));
    let (vectors, index) = (common::unique("rag-vectors"), "rag-vector-index-v1");
    let assistant = "AST-cli-linked";
    let host = AgentCoreIngestor::builder()
        .sink(Arc::new(MemorySink::new()))
        .assistants_table(&table)
        .documents_bucket(&bucket)
        .vector_index(&vectors, index)
        .endpoint_url(&endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    host.create_host_if_missing().await.unwrap();
    let uri = format!("agentcore://{table}/{bucket}?assistant={assistant}&index={vectors}/{index}");
    let out = tempfile::tempdir().unwrap();
    let first = summary(&crawl_with(
        &endpoint,
        &fx.url("/"),
        out.path(),
        &uri,
        &["--linked-docs"],
    ));
    assert_eq!(first["status"], "COMPLETED", "{first}");
    assert!(first["skipped"].get("not_html").is_none(), "{first}");
    let pdf_url = fx.url("/doc.pdf");
    let docs = host.documents(assistant).await.unwrap();
    assert_eq!(first["kb"]["written"], docs.len() as u64, "{first}");
    let pdf = docs
        .iter()
        .find(|d| d.url.as_deref() == Some(pdf_url.as_str()))
        .unwrap_or_else(|| panic!("no row for {pdf_url}: {docs:#?}"));
    assert!(pdf.s3_key.ends_with("/doc.pdf"), "{pdf:?}");
    let got = object(&endpoint, &bucket, &pdf.s3_key).await;
    assert_eq!(
        got.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/pdf")
    );
    let want = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/site/doc.pdf"),
    )
    .unwrap();
    assert_eq!(got.bytes().await.unwrap().to_vec(), want);
    // Every other document is markdown, as without the flag.
    assert!(docs
        .iter()
        .filter(|d| d.document_id != pdf.document_id)
        .all(|d| d.s3_key.ends_with(".md")));
    // Beside the markdown in --out: the PDF's own bytes.
    let stored: Vec<PathBuf> = walk(out.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(std::fs::read(&stored[0]).unwrap(), want);

    // The same command again: the PDF is unchanged, nothing is written.
    let second = summary(&crawl_with(
        &endpoint,
        &fx.url("/"),
        out.path(),
        &uri,
        &["--linked-docs"],
    ));
    assert_eq!(second["changes"]["changed"], 0, "{second}");
    assert_eq!(second["kb"]["written"], 0, "{second}");
}

#[test]
fn linked_docs_without_kb_is_refused_before_anything_is_written() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("out");
    let o = crawl_with(
        "http://127.0.0.1:9",
        "http://127.0.0.1:9/",
        &out,
        "",
        &["--linked-docs"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("linked-docs: needs --kb"), "{err}");
    assert!(!out.exists(), "{} was written", out.display());
}

/// Every file under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
