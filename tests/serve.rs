//! `examples/serve.rs` as the README runs it (`--features api`): it serves the page and the
//! API, a website added as a source syncs into `--data`, and a restarted server over the same
//! `--data` still has the source, its settings and its run.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use support::Fixture;

fn serve_binary() -> PathBuf {
    // target/debug/deps/serve-xxxx -> target/debug/examples/serve
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let bin = dir.join("examples").join("serve");
    assert!(
        bin.exists(),
        "{} not built (cargo test --features api builds it)",
        bin.display()
    );
    bin
}

/// Starts serve on an ephemeral port; returns the process and its base URL (read from the
/// line it prints).
fn start(data: &Path) -> (Child, String) {
    let mut child = Command::new(serve_binary())
        .args(["--addr", "127.0.0.1:0", "--allow-private-network", "--data"])
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = lines
            .next()
            .expect("serve exited before it listened")
            .unwrap();
        if let Some(rest) = line.strip_prefix("Website Sources: ") {
            break rest
                .split_whitespace()
                .next()
                .unwrap()
                .trim_end_matches('/')
                .to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, base)
}

async fn get(http: &reqwest::Client, url: String) -> Value {
    let text = http.get(url).send().await.unwrap().text().await.unwrap();
    serde_json::from_str(&text).unwrap()
}

async fn post(http: &reqwest::Client, url: String, body: Value) -> (u16, Value) {
    let resp = http
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn wait_synced(http: &reqwest::Client, base: &str) -> Value {
    for _ in 0..600 {
        let v = get(http, format!("{base}/assistants/demo/sources")).await;
        // Completed, and its knowledge-base hand-off (the chunks) done.
        let last = &v["sources"][0]["lastSync"];
        if last["status"] == "COMPLETED" && last["ingestion"] == "delivered" {
            return v["sources"][0].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the source's first run did not complete within 60 s");
}

fn md_count(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                n += 1;
            }
        }
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_as_documented_and_keeps_its_sources_across_a_restart() {
    let fx = Fixture::site().await;
    let data = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let (mut child, base) = start(data.path());

    let page = http.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Website Sources"));

    let (status, created) = post(
        &http,
        format!("{base}/assistants/demo/sources"),
        json!({"url": fx.url("/"), "maxDepth": 2, "schedule": "weekly"}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let source = wait_synced(&http, &base).await;
    assert!(
        source["lastSync"]["pagesAdded"].as_u64().unwrap() >= 5,
        "{source}"
    );
    let files = md_count(data.path());
    assert!(files >= 5, "documents under --data: {files}");

    child.kill().unwrap();
    child.wait().unwrap();
    let (mut child, base) = start(data.path());
    let again = get(&http, format!("{base}/assistants/demo/sources")).await;
    assert_eq!(
        again["sources"][0]["sourceId"], source["sourceId"],
        "{again}"
    );
    assert_eq!(again["sources"][0]["schedule"], "weekly");
    assert_eq!(again["sources"][0]["nextSyncAt"], source["nextSyncAt"]);
    assert_eq!(again["sources"][0]["lastSync"], source["lastSync"]);
    // A sync after the restart finds every page unchanged.
    let id = source["sourceId"].as_str().unwrap();
    let (status, run) = post(
        &http,
        format!("{base}/assistants/demo/sources/{id}/sync"),
        json!({}),
    )
    .await;
    assert_eq!(status, 202, "{run}");
    let job = run["crawlJobId"].as_str().unwrap();
    let mut done = Value::Null;
    for _ in 0..600 {
        done = get(&http, format!("{base}/assistants/demo/crawl/{job}")).await;
        if done["status"] != "RUNNING" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(done["pagesAdded"], 0, "{done}");
    assert_eq!(
        done["pagesUnchanged"], source["lastSync"]["pagesAdded"],
        "every page unchanged: {done}"
    );
    assert_eq!(md_count(data.path()), files, "nothing written twice");
    child.kill().unwrap();
    child.wait().unwrap();
}
