//! The live ruleset: an [`ArcSwapOption`] that a reload replaces only with a ruleset built
//! completely on the side. A reload that fails keeps the last good ruleset serving and records
//! why. Requests take one `Arc` at their start and keep it to the end, so a swap never mixes
//! two versions inside one decision.
//!
//! The watcher re-reads the whole directory on any event (editors that save through a temp file
//! and a rename, Kubernetes ConfigMaps that swap a `..data` symlink, deletions) and reloads only
//! when the content changed, so bursts of events cost one compile at most.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;
use notify::{PollWatcher, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{
    DebounceEventResult, Debouncer, NoCache, RecommendedCache, new_debouncer, new_debouncer_opt,
};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::compile::{self, RuleSet};
use crate::diag::Diagnostic;

/// What started a reload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// The first load at start-up.
    Startup,
    /// A change seen by the file watcher.
    Watch,
    /// `SIGHUP`.
    Signal,
    /// `POST /v1/rules/reload`.
    Api,
}

/// The result of one reload attempt.
#[derive(Debug, Clone, Serialize)]
pub struct ReloadReport {
    /// What started it.
    pub trigger: Trigger,
    /// Whether the files (still) give a valid ruleset. An unchanged directory is a success.
    pub ok: bool,
    /// Whether a new ruleset was swapped in.
    pub changed: bool,
    /// The version serving after the attempt.
    pub version: Option<String>,
    /// When it happened, in seconds since the Unix epoch.
    pub at_unix: f64,
    /// How long reading and compiling took, in milliseconds.
    pub took_ms: f64,
    /// Every finding of the attempt (errors keep the old ruleset serving).
    pub diagnostics: Vec<Diagnostic>,
}

/// What `/v1/rules` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The rules directory.
    pub dir: PathBuf,
    /// The version serving, if any ruleset is loaded.
    pub version: Option<String>,
    /// The files it was built from.
    pub files: Vec<PathBuf>,
    /// When it was loaded, in seconds since the Unix epoch.
    pub loaded_at_unix: Option<f64>,
    /// The last reload attempt.
    pub last_reload: Option<ReloadReport>,
}

struct Inner {
    /// Fingerprint of the bytes last compiled, so unchanged directories are not recompiled.
    fingerprint: Option<[u8; 32]>,
    loaded_at_unix: Option<f64>,
    last: Option<ReloadReport>,
}

/// The serving ruleset of one rules directory.
pub struct LiveRules {
    dir: PathBuf,
    current: ArcSwapOption<RuleSet>,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for LiveRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveRules").field("dir", &self.dir).finish()
    }
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Hashes every rule file and test file under `dir` (names and bytes). Unreadable entries
/// count as changes, so the compiler gets to report them.
fn fingerprint(dir: &Path) -> [u8; 32] {
    let mut hasher = Sha256::new();
    let mut add = |files: Vec<PathBuf>| {
        for path in files {
            hasher.update(path.as_os_str().as_encoded_bytes());
            hasher.update([0]);
            match std::fs::read(&path) {
                Ok(bytes) => hasher.update(&bytes),
                Err(e) => hasher.update(e.to_string().as_bytes()),
            }
            hasher.update([0]);
        }
    };
    match compile::rule_files(dir) {
        Ok(files) => add(files),
        Err(e) => hasher.update(e.to_string().as_bytes()),
    }
    hasher.finalize().into()
}

impl LiveRules {
    /// Loads `dir` once. The result may hold no ruleset (see [`LiveRules::status`]); the service
    /// is then not ready until a valid change arrives.
    pub fn load(dir: &Path) -> (Arc<Self>, ReloadReport) {
        let live = Arc::new(Self {
            dir: dir.to_path_buf(),
            current: ArcSwapOption::empty(),
            inner: Mutex::new(Inner {
                fingerprint: None,
                loaded_at_unix: None,
                last: None,
            }),
        });
        let report = live.reload(Trigger::Startup);
        (live, report)
    }

    /// The ruleset serving now. Keep the `Arc` for the whole request.
    pub fn current(&self) -> Option<Arc<RuleSet>> {
        self.current.load_full()
    }

    /// The rules directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave `Inner` half-written: every field is
        // assigned whole, so the data is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Re-reads the directory; builds and swaps in a new ruleset if the content changed and is
    /// valid. Blocking (file IO and compilation): call it from a blocking thread.
    pub fn reload(&self, trigger: Trigger) -> ReloadReport {
        // One reload at a time: the lock is held across reading and compiling.
        let mut inner = self.inner();
        let started = std::time::Instant::now();
        let print = fingerprint(&self.dir);
        let serving = self.current.load();
        let version = |rs: &Option<Arc<RuleSet>>| rs.as_ref().map(|r| r.version.to_string());
        if inner.fingerprint == Some(print) && trigger != Trigger::Startup {
            let last = inner.last.clone();
            return ReloadReport {
                trigger,
                ok: last.as_ref().is_none_or(|l| l.ok),
                changed: false,
                version: version(&serving),
                at_unix: now_unix(),
                took_ms: started.elapsed().as_secs_f64() * 1e3,
                diagnostics: last.map(|l| l.diagnostics).unwrap_or_default(),
            };
        }
        inner.fingerprint = Some(print);
        let loaded = compile::load_dir(&self.dir);
        let ok = loaded.ruleset.is_some();
        let changed = match loaded.ruleset {
            Some(rs) => {
                let same = serving.as_ref().is_some_and(|s| s.version == rs.version);
                if !same {
                    self.current.store(Some(Arc::new(rs)));
                    inner.loaded_at_unix = Some(now_unix());
                }
                !same
            }
            None => false,
        };
        let report = ReloadReport {
            trigger,
            ok,
            changed,
            version: version(&self.current.load()),
            at_unix: now_unix(),
            took_ms: started.elapsed().as_secs_f64() * 1e3,
            diagnostics: loaded.diagnostics,
        };
        inner.last = Some(report.clone());
        report
    }

    /// What `/v1/rules` shows.
    pub fn status(&self) -> Status {
        let current = self.current();
        let inner = self.inner();
        Status {
            dir: self.dir.clone(),
            version: current.as_ref().map(|r| r.version.to_string()),
            files: current.map(|r| r.files.clone()).unwrap_or_default(),
            loaded_at_unix: inner.loaded_at_unix,
            last_reload: inner.last.clone(),
        }
    }
}

/// Keeps the file watcher running; dropping it stops watching.
pub enum Watcher {
    /// inotify (or the platform's native API).
    Native(Debouncer<RecommendedWatcher, RecommendedCache>),
    /// Polling, where the native watcher is unavailable or exhausted.
    Poll(Debouncer<PollWatcher, NoCache>),
}

impl Watcher {
    /// Whether the watcher polls instead of getting events.
    pub fn is_polling(&self) -> bool {
        matches!(self, Watcher::Poll(_))
    }
}

/// How long the watcher waits for a burst of events to settle.
pub const DEBOUNCE: Duration = Duration::from_millis(150);
/// How often the polling fallback looks at the files.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Watches the rules directory (recursively) and calls `changed` after each settled burst of
/// events. Falls back to polling when the native watcher cannot be set up.
pub fn watch(
    dir: &Path,
    changed: impl Fn() + Send + Sync + 'static,
) -> Result<Watcher, notify::Error> {
    let changed = Arc::new(changed);
    let handler = |changed: Arc<dyn Fn() + Send + Sync>| {
        move |result: DebounceEventResult| match result {
            Ok(events) if !events.is_empty() => changed(),
            Ok(_) => {}
            Err(errors) => {
                for e in errors {
                    tracing::warn!(error = %e, "rule watcher error");
                }
                // Events may have been lost: look at the directory anyway.
                changed();
            }
        }
    };
    let native = new_debouncer(DEBOUNCE, None, handler(changed.clone())).and_then(|mut d| {
        d.watch(dir, RecursiveMode::Recursive)?;
        Ok(d)
    });
    match native {
        Ok(d) => Ok(Watcher::Native(d)),
        Err(e) => {
            tracing::warn!(error = %e, "native file watching unavailable; polling the rules directory");
            let config = notify::Config::default().with_poll_interval(POLL_INTERVAL);
            let mut d = new_debouncer_opt::<_, PollWatcher, NoCache>(
                DEBOUNCE,
                None,
                handler(changed),
                NoCache,
                config,
            )?;
            d.watch(dir, RecursiveMode::Recursive)?;
            Ok(Watcher::Poll(d))
        }
    }
}
