//! Render throughput and memory: 50 script-built pages on 127.0.0.1, with 1 and with 4 tabs.
//!
//! `cargo bench -p crawl-render --bench render` prints pages/s and the peak resident memory of
//! this process plus its Chromium processes. A plain program (no criterion): a render takes
//! hundreds of milliseconds, so a few timed passes say what is needed.

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawl_core::Renderer;
use crawl_render::{ChromeConfig, ChromeRenderer};
use futures::StreamExt;

const PAGES: u32 = 50;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(run());
}

async fn run() {
    let site = common::Site::start(9, 9).await;
    for tabs in [1usize, 4] {
        let renderer = match ChromeRenderer::new(ChromeConfig::default().with_max_tabs(tabs)) {
            Ok(r) => r,
            Err(e) => {
                println!(
                    "SKIPPED: chromium not found (install with apt-get install -y chromium): {e}"
                );
                return;
            }
        };
        // Start the browser outside the timed part.
        renderer
            .render(&site.request("page/0"))
            .await
            .expect("warm-up render");
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let peak_pss = Arc::new(AtomicU64::new(0));
        let sampler = {
            let (stop, peak, peak_pss) =
                (Arc::clone(&stop), Arc::clone(&peak), Arc::clone(&peak_pss));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    peak.fetch_max(tree_kib("status", "VmRSS"), Ordering::Relaxed);
                    peak_pss.fetch_max(tree_kib("smaps_rollup", "Pss:"), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };
        let started = Instant::now();
        let requests: Vec<_> = (1..=PAGES)
            .map(|n| site.request(&format!("page/{n}")))
            .collect();
        let ok = futures::stream::iter(requests.iter())
            .map(|req| renderer.render(req))
            .buffer_unordered(tabs)
            .filter(|r| std::future::ready(r.as_ref().is_ok_and(|p| p.html.contains("<h1>Page"))))
            .count()
            .await;
        let elapsed = started.elapsed();
        let hwm = tree_kib("status", "VmHWM");
        stop.store(true, Ordering::Relaxed);
        let _ = sampler.join();
        println!(
            "tabs={tabs}: {ok}/{PAGES} pages in {:.2} s = {:.1} pages/s; process tree (this \
             process + Chromium), sampled every 50 ms: peak PSS {:.0} MiB, peak summed RSS {:.0} \
             MiB (counts shared pages once per process); sum of VmHWM {:.0} MiB",
            elapsed.as_secs_f64(),
            f64::from(PAGES) / elapsed.as_secs_f64(),
            peak_pss.load(Ordering::Relaxed) as f64 / 1024.0,
            peak.load(Ordering::Relaxed) as f64 / 1024.0,
            hwm as f64 / 1024.0,
        );
        renderer.shutdown().await;
    }
}

/// Sum of a `/proc/<pid>/<file>` field (in KiB) over this process and all its descendants.
fn tree_kib(file: &str, field: &str) -> u64 {
    let me = std::process::id();
    let mut parent: HashMap<u32, u32> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
                .and_then(|p| p.parse().ok());
            if let Some(ppid) = ppid {
                parent.insert(pid, ppid);
            }
        }
    }
    let in_tree = |mut pid: u32| loop {
        if pid == me {
            return true;
        }
        match parent.get(&pid) {
            Some(&p) if p != 0 && p != pid => pid = p,
            _ => return false,
        }
    };
    parent
        .keys()
        .copied()
        .chain(std::iter::once(me))
        .filter(|&p| in_tree(p))
        .collect::<std::collections::HashSet<_>>()
        .into_iter()
        .map(|pid| proc_kib(pid, file, field))
        .sum()
}

fn proc_kib(pid: u32, file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
