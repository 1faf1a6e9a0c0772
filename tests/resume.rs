//! A crawl killed with SIGKILL resumes with `--resume JOB_ID` and ends with every page stored
//! exactly once.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::Fixture;

fn example_binary() -> PathBuf {
    // target/debug/deps/resume-xxxx -> target/debug/examples/crawl
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let bin = dir.join("examples").join("crawl");
    assert!(
        bin.exists(),
        "{} not built (cargo test builds examples)",
        bin.display()
    );
    bin
}

fn md_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") && !p.ends_with("site-template.md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn url_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let line = text.lines().find(|l| l.starts_with("url: ")).unwrap();
    serde_json::from_str(&line[5..]).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_crawl_then_resume_stores_every_page_once() {
    let fx = Fixture::site().await;
    let bin = example_binary();
    let out = tempfile::tempdir().unwrap();
    let args = |extra: &[&str]| {
        let mut c = Command::new(&bin);
        c.args(extra)
            .args([
                "--out",
                out.path().to_str().unwrap(),
                "--depth",
                "4",
                "--rate",
                "5",
            ])
            .args([
                "--allow-private-network",
                "--lift-guardrails",
                "--json",
                "--concurrency",
                "4",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        c
    };
    let url = fx.url("/");
    let mut child = args(&[&url]).spawn().unwrap();
    let start = Instant::now();
    while md_files(out.path()).len() < 4 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "crawl made no progress"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "crawl ended before it could be killed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = md_files(out.path()).len();
    let job = std::fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("job-"))
        .unwrap();

    let mut resume = args(&["--resume", &job]);
    let resumed = tokio::task::spawn_blocking(move || resume.output().unwrap())
        .await
        .unwrap();
    assert!(resumed.status.success(), "resume failed: {resumed:?}");
    let summary: serde_json::Value = serde_json::from_slice(&resumed.stdout).unwrap();
    assert_eq!(summary["status"], "COMPLETED", "{summary}");
    assert_eq!(
        summary["pagesProcessed"], summary["pagesTotal"],
        "{summary}"
    );

    let files = md_files(out.path());
    assert!(files.len() > before, "resume stored nothing new");
    let mut by_url: BTreeMap<String, usize> = BTreeMap::new();
    for f in &files {
        *by_url.entry(url_of(f)).or_default() += 1;
    }
    assert!(
        by_url.values().all(|n| *n == 1),
        "a page was stored twice: {by_url:?}"
    );
    // The same crawl without interruption stores the same pages.
    assert_eq!(files.len(), 15, "{by_url:#?}");
    assert_eq!(summary["stored"], 15, "{summary}");
}
