//! A crawl killed with SIGKILL resumes with `--resume JOB_ID` and ends with every page stored
//! exactly once.

use crate::support;

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

/// Runs the CLI on `url` into `out` to its end; returns the `--json` summary.
fn crawl_to_end(bin: &Path, url: &str, out: &Path, extra: &[&str]) -> serde_json::Value {
    let o = Command::new(bin)
        .args(extra)
        .arg(url)
        .args([
            "--out",
            out.to_str().unwrap(),
            "--depth",
            "4",
            "--rate",
            "20",
        ])
        .args(["--allow-private-network", "--lift-guardrails", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "crawl failed: {o:?}");
    serde_json::from_slice(&o.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_killed_mid_run_and_resumed_ends_with_the_same_diff() {
    let site = tempfile::tempdir().unwrap();
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/site");
    support::copy_dir(&fixture, site.path());
    let fx = Fixture::serve(site.path().to_owned()).await;
    let url = fx.url("/");
    let bin = example_binary();
    let (plain, killed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for out in [plain.path(), killed.path()] {
        let first = crawl_to_end(&bin, &url, out, &[]);
        assert_eq!(first["status"], "COMPLETED", "{first}");
    }
    let files_before = md_files(killed.path());

    // The site changes: one page edited, one deleted.
    let page2 = site.path().join("b/page2.html");
    let html = std::fs::read_to_string(&page2).unwrap();
    std::fs::write(
        &page2,
        html.replacen(
            "</h1>",
            "</h1><p>A new paragraph about registration deadlines for the spring term.</p>",
            1,
        ),
    )
    .unwrap();
    std::fs::remove_file(site.path().join("b/page3.html")).unwrap();

    let reference = crawl_to_end(&bin, &url, plain.path(), &[]);
    assert_eq!(reference["status"], "COMPLETED", "{reference}");
    assert_eq!(reference["changes"]["changed"], 1, "{reference}");
    assert_eq!(reference["changes"]["removed"], 1, "{reference}");

    // The same sync, killed with SIGKILL once it made requests, then resumed.
    let hits_before = fx.hits().len();
    let mut child = Command::new(&bin)
        .arg(&url)
        .args([
            "--out",
            killed.path().to_str().unwrap(),
            "--depth",
            "4",
            "--rate",
            "5",
        ])
        .args(["--allow-private-network", "--lift-guardrails", "--json"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let job = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(stderr)
            .read_line(&mut line)
            .unwrap();
        line.split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned()
    })
    .await
    .unwrap();
    assert!(job.starts_with("job-"), "no job id on stderr: {job:?}");
    let start = Instant::now();
    while fx.hits().len() < hits_before + 6 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "sync made no progress"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "sync ended before it could be killed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (bin2, out2) = (bin.clone(), killed.path().to_owned());
    let resumed = tokio::task::spawn_blocking(move || {
        Command::new(&bin2)
            .args(["--resume", &job, "--out", out2.to_str().unwrap()])
            .args(["--allow-private-network", "--lift-guardrails", "--json"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(resumed.status.success(), "resume failed: {resumed:?}");
    let summary: serde_json::Value = serde_json::from_slice(&resumed.stdout).unwrap();
    assert_eq!(summary["status"], "COMPLETED", "{summary}");
    assert_eq!(
        summary["changes"], reference["changes"],
        "{summary}\n{reference}"
    );
    assert_eq!(
        summary["stored"], reference["stored"],
        "{summary}\n{reference}"
    );
    // Nothing stored before is lost: every page of the first run but the deleted one is
    // still there, at the same path, once.
    let after = md_files(killed.path());
    let deleted: Vec<&PathBuf> = files_before.iter().filter(|f| !after.contains(f)).collect();
    assert_eq!(deleted.len(), 1, "{deleted:?}");
    assert!(url_of_missing(deleted[0]).is_none());
    assert_eq!(after.len(), files_before.len() - 1);

    // --fresh starts a new source: every page added again, under the new run's own folder.
    let fresh = crawl_to_end(&bin, &url, plain.path(), &["--fresh"]);
    assert_eq!(fresh["changes"]["added"], fresh["stored"], "{fresh}");
    assert_ne!(fresh["outDir"], reference["outDir"], "{fresh}");
    assert!(fresh["outDir"]
        .as_str()
        .unwrap()
        .ends_with(fresh["crawlJobId"].as_str().unwrap()));
}

/// A deleted file has no URL to read.
fn url_of_missing(file: &Path) -> Option<String> {
    std::fs::read_to_string(file).ok()
}
