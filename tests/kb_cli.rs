//! `examples/crawl --kb agentcore://...` on moto: the AWS endpoint and credentials come from
//! the SDK's environment (`AWS_ENDPOINT_URL`), the first run puts every stored page into the
//! assistant's knowledge base, a second run of the same command after the site changed syncs
//! it, and a bad URI is refused with the wrong part named. Needs `KB_CRAWL_AWS_ENDPOINT`
//! (scripts/moto.sh); skipped without it unless `KB_CRAWL_REQUIRE_SERVICES=1`.

#[path = "../crawl-aws/tests/common/mod.rs"]
mod common;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use kb_crawl::aws::kb::AgentCoreIngestor;
use kb_crawl::memory::MemorySink;
use support::{copy_dir, Fixture};

fn example_binary() -> PathBuf {
    // target/debug/deps/kb_cli-xxxx -> target/debug/examples/crawl
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let bin = dir.join("examples").join("crawl");
    assert!(
        bin.exists(),
        "{} not built (cargo test builds examples; cargo build --example crawl --features aws-kb)",
        bin.display()
    );
    bin
}

fn crawl(endpoint: &str, url: &str, out: &Path, kb: &str) -> Output {
    Command::new(example_binary())
        .args([
            url,
            "--out",
            out.to_str().unwrap(),
            "--depth",
            "1",
            "--rate",
            "0",
        ])
        .args([
            "--allow-private-network",
            "--lift-guardrails",
            "--json",
            "--kb",
            kb,
        ])
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env_remove("KB_CRAWL_AWS_ENDPOINT")
        .output()
        .unwrap()
}

fn summary(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "crawl failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_flag_crawls_into_the_hosts_knowledge_base_and_a_second_run_syncs() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let site = tempfile::tempdir().unwrap();
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/site"),
        site.path(),
    );
    let fx = Fixture::serve(site.path().to_owned()).await;
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

    let first = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri));
    assert_eq!(first["status"], "COMPLETED", "{first}");
    let stored = first["stored"].as_u64().unwrap();
    assert!(stored >= 4, "{first}");
    assert_eq!(first["kb"]["written"], stored, "{first}");
    let docs = host.documents(assistant).await.unwrap();
    assert_eq!(docs.len() as u64, stored, "{docs:#?}");
    assert!(docs.iter().all(|d| d.status == "uploading"
        && d.adapter.as_deref() == Some("kb-crawl")
        && d.s3_key.starts_with(&format!(
            "assistants/{assistant}/documents/{}/",
            d.document_id
        ))));
    let b = fx.url("/b/");
    assert!(
        docs.iter().any(|d| d.url.as_deref() == Some(b.as_str())),
        "{docs:#?}"
    );

    // The site changes: /b/ is gone (404) and /c/ gains a paragraph. The same command syncs.
    std::fs::remove_file(site.path().join("b/index.html")).unwrap();
    let c = site.path().join("c/index.html");
    let html = std::fs::read_to_string(&c).unwrap().replace(
        "</article>",
        "<p>A new paragraph about the courses of the coming year, long enough to count.</p></article>",
    );
    std::fs::write(&c, html).unwrap();
    let second = summary(&crawl(&endpoint, &fx.url("/"), out.path(), &uri));
    assert_eq!(second["sourceId"], first["sourceId"], "{second}");
    assert_eq!(second["changes"]["removed"], 1, "{second}");
    assert_eq!(second["changes"]["changed"], 1, "{second}");
    assert_eq!(second["kb"]["deleted"], 1, "{second}");
    assert_eq!(second["kb"]["written"], 1, "{second}");
    let after = host.documents(assistant).await.unwrap();
    assert_eq!(after.len(), docs.len() - 1, "{after:#?}");
    assert!(after.iter().all(|d| d.url.as_deref() != Some(b.as_str())));

    // A bad URI is refused before anything is crawled, naming the wrong part.
    let bad = crawl(
        &endpoint,
        &fx.url("/"),
        out.path(),
        &format!("agentcore://{table}/{bucket}?index={vectors}/{index}"),
    );
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("kb: assistant: required"), "{err}");
}
