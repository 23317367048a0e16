//! The live ruleset: an [`ArcSwapOption`] that a reload replaces only with a ruleset built
//! completely on the side. A reload that fails keeps the last good ruleset serving and records
//! why. Requests take one `Arc` at their start and keep it to the end, so a swap never mixes
//! two versions inside one decision.
//!
//! A reload reads the directory once ([`compile::read_dir`]); the digest of what it read is
//! both the new version and the "did anything change" test, so an unchanged directory is never
//! compiled, logged or counted again, and a broken file is reported once per distinct content.
//!
//! The watcher ([`watch`]) turns file events into reloads. Only events that can change content
//! count (a create, a write, a rename, a delete); the opens and reads a reload itself causes do
//! not, so an idle service reads nothing. It survives the directory being deleted, replaced or
//! moved (rsync- and git-style deploys): a supervisor thread checks the directory's identity
//! twice a second and re-arms the watch on whatever is at the path now. Its health is part of
//! [`Status`] and of the service's metrics.

#[cfg(feature = "watch")]
mod watch;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use arc_swap::{ArcSwap, ArcSwapOption};
use serde::Serialize;
#[cfg(feature = "watch")]
pub use watch::{CHECK_INTERVAL, DEBOUNCE, POLL_INTERVAL, Watcher, watch};

use crate::compile::{self, Limits, RuleSet};
use crate::diag::Diagnostic;

/// What started a reload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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
#[non_exhaustive]
pub struct ReloadReport {
    /// What started it.
    pub trigger: Trigger,
    /// Whether the files (still) give a valid ruleset. An unchanged directory keeps the
    /// verdict it had.
    pub ok: bool,
    /// Whether a new ruleset was swapped in.
    pub changed: bool,
    /// The files are byte for byte what the last attempt read: nothing was compiled, and the
    /// attempt is neither logged nor counted again.
    pub unchanged: bool,
    /// The version serving after the attempt.
    pub version: Option<String>,
    /// When it happened, in seconds since the Unix epoch.
    pub at_unix: f64,
    /// How long reading and compiling took, in milliseconds.
    pub took_ms: f64,
    /// How many bytes of rule files were read.
    pub bytes_read: u64,
    /// Every finding of the attempt (errors keep the old ruleset serving).
    pub diagnostics: Vec<Diagnostic>,
}

/// How the watcher is doing.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct WatcherHealth {
    /// Whether changes to the rules directory are being seen.
    pub up: bool,
    /// `native` (inotify), `poll` (where inotify is unavailable), or `off`.
    pub mode: &'static str,
    /// Why it is not up, if it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How often the watch was set up again after the directory was replaced or came back.
    pub rearmed: u64,
}

/// What `/v1/rules` shows.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
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
    /// The file watcher.
    pub watcher: WatcherHealth,
}

/// What the status page shows besides the ruleset, replaced whole after each attempt so that
/// reading it never waits for a reload.
#[derive(Debug, Default)]
struct Shown {
    loaded_at_unix: Option<f64>,
    last: Option<ReloadReport>,
}

/// An extra acceptance test a ruleset must pass to be swapped in (the service uses it to refuse
/// rules its next start could not use).
pub type Accept = Box<dyn Fn(&RuleSet) -> Vec<Diagnostic> + Send + Sync>;

/// Readies the router model for a ruleset before it is swapped in (the embedded router trains
/// here), so no request pays for it inside its timeout.
pub type Prepare = Box<dyn Fn(&RuleSet) + Send + Sync>;

/// The serving ruleset of one rules directory.
pub struct LiveRules {
    dir: PathBuf,
    limits: Limits,
    accept: Option<Accept>,
    prepare: Option<Prepare>,
    current: ArcSwapOption<RuleSet>,
    shown: ArcSwap<Shown>,
    watcher: ArcSwap<WatcherHealth>,
    /// Held by the one reload running; remembers the digest of what the last attempt read.
    reloading: Mutex<Option<[u8; 32]>>,
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

impl LiveRules {
    /// Loads `dir` once, within the default limits. The result may hold no ruleset (see
    /// [`LiveRules::status`]); the service is then not ready until a valid change arrives.
    pub fn load(dir: &Path) -> (Arc<Self>, ReloadReport) {
        Self::load_with(dir, Limits::default(), None)
    }

    /// Loads `dir` once within `limits`; `accept` is asked about every ruleset before it serves.
    pub fn load_with(
        dir: &Path,
        limits: Limits,
        accept: Option<Accept>,
    ) -> (Arc<Self>, ReloadReport) {
        Self::load_prepared(dir, limits, accept, None)
    }

    /// Like [`LiveRules::load_with`]; `prepare` readies the model for every accepted ruleset
    /// (at start-up and on each reload) before it serves.
    pub fn load_prepared(
        dir: &Path,
        limits: Limits,
        accept: Option<Accept>,
        prepare: Option<Prepare>,
    ) -> (Arc<Self>, ReloadReport) {
        let live = Arc::new(Self {
            dir: dir.to_path_buf(),
            limits,
            accept,
            prepare,
            current: ArcSwapOption::empty(),
            shown: ArcSwap::from_pointee(Shown::default()),
            watcher: ArcSwap::from_pointee(WatcherHealth {
                mode: "off",
                ..WatcherHealth::default()
            }),
            reloading: Mutex::new(None),
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

    /// The limits rule files are read within.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn lock(&self) -> MutexGuard<'_, Option<[u8; 32]>> {
        // A panic while holding the lock cannot leave the digest half-written.
        self.reloading.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Re-reads the directory; builds and swaps in a new ruleset if the content changed and is
    /// valid. Blocking (file IO and compilation): call it from a blocking thread. Reloads run
    /// one at a time; readers of [`status`](Self::status) never wait for one.
    pub fn reload(&self, trigger: Trigger) -> ReloadReport {
        let mut last_digest = self.lock();
        let started = std::time::Instant::now();
        let read = compile::read_dir(&self.dir, &self.limits);
        let bytes_read = read.bytes_read;
        let version = |rs: Option<Arc<RuleSet>>| rs.map(|r| r.version.to_string());
        if *last_digest == Some(read.digest) && trigger != Trigger::Startup {
            let last = self.shown.load().last.clone();
            return ReloadReport {
                trigger,
                ok: last.as_ref().is_none_or(|l| l.ok),
                changed: false,
                unchanged: true,
                version: version(self.current()),
                at_unix: now_unix(),
                took_ms: started.elapsed().as_secs_f64() * 1e3,
                bytes_read,
                diagnostics: last.map(|l| l.diagnostics).unwrap_or_default(),
            };
        }
        *last_digest = Some(read.digest);
        let mut loaded = compile::compile_read(read, &self.limits);
        if let (Some(rs), Some(accept)) = (&loaded.ruleset, &self.accept) {
            let refused = accept(rs);
            if refused.iter().any(Diagnostic::is_error) {
                loaded.ruleset = None;
            }
            loaded.diagnostics.extend(refused);
        }
        let ok = loaded.ruleset.is_some();
        let serving = self.current();
        let mut loaded_at = self.shown.load().loaded_at_unix;
        let changed = match loaded.ruleset {
            Some(rs) => {
                let same = serving.as_ref().is_some_and(|s| s.version == rs.version);
                if !same {
                    // Built on the side and readied before the swap: the first request on the
                    // new rules finds the model trained.
                    if let Some(prepare) = &self.prepare {
                        prepare(&rs);
                    }
                    self.current.store(Some(Arc::new(rs)));
                    loaded_at = Some(now_unix());
                }
                !same
            }
            None => false,
        };
        let report = ReloadReport {
            trigger,
            ok,
            changed,
            unchanged: false,
            version: version(self.current()),
            at_unix: now_unix(),
            took_ms: started.elapsed().as_secs_f64() * 1e3,
            bytes_read,
            diagnostics: loaded.diagnostics,
        };
        self.shown.store(Arc::new(Shown {
            loaded_at_unix: loaded_at,
            last: Some(report.clone()),
        }));
        report
    }

    /// What `/v1/rules` shows; never waits for a reload in progress.
    pub fn status(&self) -> Status {
        let current = self.current();
        let shown = self.shown.load();
        Status {
            dir: self.dir.clone(),
            version: current.as_ref().map(|r| r.version.to_string()),
            files: current.map(|r| r.files.clone()).unwrap_or_default(),
            loaded_at_unix: shown.loaded_at_unix,
            last_reload: shown.last.clone(),
            watcher: self.watcher_health(),
        }
    }

    /// How the file watcher is doing.
    pub fn watcher_health(&self) -> WatcherHealth {
        (**self.watcher.load()).clone()
    }

    #[cfg_attr(not(feature = "watch"), allow(dead_code))]
    fn set_watcher(&self, health: WatcherHealth) {
        self.watcher.store(Arc::new(health));
    }
}
