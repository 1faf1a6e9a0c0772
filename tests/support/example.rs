//! An example binary of the facade built with the features this test binary was compiled with.
//!
//! `cargo test --test X` builds no example, and a binary left by an earlier build may be
//! stale or built without the features a test needs. [`binary`] checks the binary against
//! its dep-info (`examples/NAME.d`: every source file it was built from) and what its
//! `--version` says it was built with, and when it is missing, older than a source or
//! lacking, builds it with cargo into the same target folder and profile, with this test's
//! features (the kb-crawl features are known here through `cfg!`).

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::SystemTime;

/// The facade features this test binary was compiled with.
fn features() -> Vec<&'static str> {
    let all = [
        ("fs", cfg!(feature = "fs")),
        ("render-chrome", cfg!(feature = "render-chrome")),
        ("aws-s3", cfg!(feature = "aws-s3")),
        ("aws-dynamodb", cfg!(feature = "aws-dynamodb")),
        ("aws-sfn", cfg!(feature = "aws-sfn")),
        ("aws-lambda", cfg!(feature = "aws-lambda")),
        ("aws-lambda-api", cfg!(feature = "aws-lambda-api")),
        ("aws-sfn-runner", cfg!(feature = "aws-sfn-runner")),
        ("aws-agentcore", cfg!(feature = "aws-agentcore")),
        ("aws-bedrock-kb", cfg!(feature = "aws-bedrock-kb")),
        ("api", cfg!(feature = "api")),
        ("conformance", cfg!(feature = "conformance")),
    ];
    all.into_iter()
        .filter(|(_, on)| *on)
        .map(|(f, _)| f)
        .collect()
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Whether `bin` is at least as new as every source file its dep-info lists.
fn fresh(bin: &Path) -> bool {
    let (Some(built), Ok(dep)) = (mtime(bin), std::fs::read_to_string(bin.with_extension("d")))
    else {
        return false;
    };
    let Some((_, sources)) = dep.split_once(": ") else {
        return false;
    };
    // Paths are space-separated, a space inside one escaped as "\ ".
    let sources = sources
        .lines()
        .next()
        .unwrap_or_default()
        .replace("\\ ", "\u{0}");
    sources
        .split_whitespace()
        .map(|s| PathBuf::from(s.replace('\u{0}', " ")))
        .all(|src| mtime(&src).is_some_and(|m| m <= built))
}

static BUILD: Mutex<()> = Mutex::new(());

/// Whether `bin --version` mentions `needs`.
fn has(bin: &Path, needs: &str) -> bool {
    Command::new(bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(needs))
}

/// The path of example `name`, built first when missing, stale, or when its `--version`
/// does not mention `needs`.
pub fn binary(name: &str, needs: &str) -> PathBuf {
    // target/<profile>/deps/<test>-xxxx -> target/<profile>/examples/<name>
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_owned();
    let bin = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let _once = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if fresh(&bin) && has(&bin, needs) {
        return bin;
    }
    let target_dir = profile_dir.parent().unwrap();
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_owned(),
        Some(p) => p.to_owned(),
        None => "dev".to_owned(),
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--quiet", "-p", "kb-crawl", "--example", name])
        .args(["--profile", &profile, "--no-default-features"])
        .arg("--features")
        .arg(features().join(","))
        .arg("--target-dir")
        .arg(target_dir)
        .status()
        .unwrap();
    assert!(status.success(), "building example {name} failed");
    assert!(
        has(&bin, needs),
        "{} --version does not mention {needs}",
        bin.display()
    );
    bin
}
