//! Browser profile folders: created per launch, removed on every way a browser ends.
//!
//! Killing the browser process is not enough: its helpers (zygotes, renderers, the GPU, network
//! and storage services) outlive it for seconds on a loaded machine, re-parented away from us,
//! and write into the profile meanwhile, recreating files after the folder was removed (a
//! removal that checked once, 50 ms later, saw it gone; the folder came back). So before the
//! folder is removed every process of that browser is killed AND waited for: the helpers are
//! found by the `--user-data-dir=<profile>` argument Chromium gives each of them (inside the
//! one space-separated title they rewrite their command line to, so an argument-by-argument
//! match misses them, which may be why an earlier attempt at this failed), the browser
//! itself (and its crash handler) also by an environment variable, [`TAG`] (Chromium gives
//! its helpers a clean environment, so the variable alone would miss them).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Start of every profile folder's name; the creating process's id follows.
pub(crate) const PROFILE_PREFIX: &str = "kb-crawl-chromium-";

/// The environment variable that names a browser's profile in each of its processes.
pub(crate) const TAG: &str = "KB_CRAWL_CHROMIUM_PROFILE";

/// Longest wait for a browser's processes to end before removing its folder anyway.
const EXIT_LIMIT: Duration = Duration::from_secs(30);

/// A browser profile folder, disposed of when dropped (on a thread: its processes are killed
/// and waited for, then the folder removed), so a dropped renderer or a cancelled launch
/// leaves nothing.
#[derive(Debug)]
pub(crate) struct Profile(Option<PathBuf>);

impl Profile {
    /// Takes charge of the folder at `path`.
    pub(crate) fn new(path: PathBuf) -> Self {
        Profile(Some(path))
    }

    /// The folder.
    pub(crate) fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or(Path::new(""))
    }

    /// The folder, no longer disposed of on drop (the caller does it).
    pub(crate) fn into_path(mut self) -> Option<PathBuf> {
        self.0.take()
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        let Some(path) = self.0.take() else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("kb-crawl-profile-rm".into())
            .spawn({
                let path = path.clone();
                move || dispose(&path)
            });
        if spawned.is_err() {
            dispose(&path);
        }
    }
}

/// Kills every process of the browser whose profile is `path`, waits until none is left,
/// then removes the folder. Blocking.
pub(crate) fn dispose(path: &Path) {
    let started = Instant::now();
    loop {
        let pids = processes_of(path);
        if pids.is_empty() {
            break;
        }
        if started.elapsed() >= EXIT_LIMIT {
            tracing::warn!(path = %path.display(), ?pids, "browser processes still running; removing their profile anyway");
            break;
        }
        for pid in pids {
            kill(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    remove_profile(path);
}

/// The live processes (a zombie has neither arguments nor environment, so it is not counted)
/// of the browser whose profile is `path`. Empty where `/proc` does not exist.
fn processes_of(path: &Path) -> Vec<i32> {
    let with = |prefix: &str| {
        let mut v = prefix.as_bytes().to_vec();
        v.extend_from_slice(path.as_os_str().as_encoded_bytes());
        v
    };
    let (tag, arg) = (with(&format!("{TAG}=")), with("--user-data-dir="));
    let read = |file: &str, pid: i32| std::fs::read(format!("/proc/{pid}/{file}")).ok();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| u32::try_from(*pid).is_ok_and(|p| p != me))
        .filter(|pid| {
            read("cmdline", *pid).is_some_and(|c| names(&c, &arg))
                || read("environ", *pid).is_some_and(|e| names(&e, &tag))
        })
        .collect()
}

/// Whether `wanted` appears in `block` as a whole item: Chromium's helpers rewrite their
/// command line into one space-separated title, so items end at a NUL, a space or the end.
fn names(block: &[u8], wanted: &[u8]) -> bool {
    let mut from = 0;
    while let Some(i) = block[from..]
        .windows(wanted.len())
        .position(|w| w == wanted)
        .map(|i| i + from)
    {
        let before = i == 0 || matches!(block[i - 1], 0 | b' ');
        let after = block
            .get(i + wanted.len())
            .is_none_or(|c| matches!(c, 0 | b' '));
        if before && after {
            return true;
        }
        from = i + 1;
    }
    false
}

fn kill(pid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// Removes `path`, retrying while something still holds it (up to about 15 s).
fn remove_profile(path: &Path) {
    for _ in 0..300 {
        match std::fs::remove_dir_all(path) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    tracing::warn!(path = %path.display(), "could not remove a browser profile folder");
}

/// Removes the profile folders under `root` whose creating process no longer runs (a
/// process killed mid-crawl never cleans up). Only where `/proc` tells which processes run.
pub(crate) fn remove_orphans(root: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PROFILE_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let path = entry.path();
            tracing::debug!(path = %path.display(), "removing the profile of a process that is gone");
            dispose(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn an_argument_is_found_in_a_rewritten_command_line_as_a_whole_item() {
        let arg = b"--user-data-dir=/tmp/p-1";
        assert!(names(b"chromium\0--user-data-dir=/tmp/p-1\0", arg));
        assert!(names(
            b"chromium --type=utility --user-data-dir=/tmp/p-1 --lang=en",
            arg
        ));
        assert!(names(b"--user-data-dir=/tmp/p-1", arg));
        assert!(!names(b"chromium --user-data-dir=/tmp/p-10 x", arg));
        assert!(!names(b"chromium x--user-data-dir=/tmp/p-1", arg));
        assert!(names(
            b"a --user-data-dir=/tmp/p-10 --user-data-dir=/tmp/p-1",
            arg
        ));
    }
}
