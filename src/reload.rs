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

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::{ArcSwap, ArcSwapOption};
use notify::event::{AccessKind, AccessMode, EventKind, MetadataKind, ModifyKind};
use notify::{PollWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, NoCache, new_debouncer, new_debouncer_opt};
use serde::Serialize;

use crate::compile::{self, Limits, RuleSet};
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

/// The serving ruleset of one rules directory.
pub struct LiveRules {
    dir: PathBuf,
    limits: Limits,
    accept: Option<Accept>,
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
        let live = Arc::new(Self {
            dir: dir.to_path_buf(),
            limits,
            accept,
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

    fn set_watcher(&self, health: WatcherHealth) {
        self.watcher.store(Arc::new(health));
    }
}

/// How long the watcher waits for a burst of events to settle.
pub const DEBOUNCE: Duration = Duration::from_millis(150);
/// How often the polling fallback looks at the files.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How often the supervisor checks that the watched directory is still the one at the path.
pub const CHECK_INTERVAL: Duration = Duration::from_millis(500);

/// Whether an event can mean that a file's content changed. Opening, reading and closing a file
/// without writing (what every reload does) cannot; neither can an access-time update.
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        _ => true,
    }
}

/// One armed watch: it stops when dropped.
struct Armed {
    /// `native` or `poll`.
    mode: &'static str,
    _debouncers: Vec<Box<dyn std::any::Any + Send>>,
}

/// What the watches tell the supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Something in the directory may have changed.
    Changed,
    /// The directory itself was deleted, replaced or moved: the watch on it is dead.
    Replaced,
}

/// Keeps the watcher running; dropping it stops watching.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The identity of what is at `dir` now (device and inode; `None`: nothing there).
fn identity(dir: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(dir).ok()?;
    if !meta.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        Some((0, 0))
    }
}

/// Watches `live`'s directory (recursively) and calls `changed` after each settled burst of
/// content events, and whenever the directory at the path was replaced (the new one may hold
/// anything). Falls back to polling when the native watcher cannot be set up. The first watch
/// is set up before this returns, so a service that says it is listening is also watching.
pub fn watch(live: Arc<LiveRules>, changed: impl Fn() + Send + Sync + 'static) -> Watcher {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Seen>();
    let mut state = Supervisor {
        dir: live.dir.clone(),
        armed: None,
        rearmed: 0,
    };
    state.check(&live, &changed, &tx, true, false);
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("rules-watcher".into())
        .spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match rx.recv_timeout(CHECK_INTERVAL) {
                    Ok(first) => {
                        // Take the whole burst that arrived together: one reload covers it.
                        let mut seen = vec![first];
                        seen.extend(rx.try_iter());
                        if seen.contains(&Seen::Replaced) {
                            state.check(&live, &changed, &tx, false, true);
                        } else {
                            changed();
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        state.check(&live, &changed, &tx, false, false);
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        });
    match thread {
        Ok(t) => Watcher {
            stop,
            thread: Some(t),
        },
        Err(e) => {
            tracing::error!(error = %e, "cannot start the rules watcher; use SIGHUP or POST /v1/rules/reload");
            Watcher { stop, thread: None }
        }
    }
}

/// What the watcher thread keeps between checks.
struct Supervisor {
    dir: PathBuf,
    armed: Option<(Armed, Option<(u64, u64)>)>,
    rearmed: u64,
}

impl Supervisor {
    /// Re-arms when the directory at the path is not the one watched (deleted, replaced, moved
    /// away), when the watch broke, or when the events said so (`replaced`: a new directory
    /// may even reuse the old one's inode).
    fn check(
        &mut self,
        live: &LiveRules,
        changed: &dyn Fn(),
        tx: &mpsc::Sender<Seen>,
        at_start: bool,
        replaced: bool,
    ) {
        let now = identity(&self.dir);
        let stale = replaced
            || match &self.armed {
                None => true,
                Some((_, watched)) => *watched != now,
            };
        if !stale {
            return;
        }
        self.armed = None;
        let Some(id) = now else {
            live.set_watcher(WatcherHealth {
                up: false,
                mode: "off",
                error: Some(format!(
                    "the rules directory {} is missing",
                    self.dir.display()
                )),
                rearmed: self.rearmed,
            });
            return;
        };
        match arm(&self.dir, tx) {
            Ok(w) => {
                let mode = w.mode;
                if !at_start {
                    self.rearmed += 1;
                    tracing::info!(dir = %self.dir.display(), mode, "the rules directory was replaced; watching the new one");
                }
                live.set_watcher(WatcherHealth {
                    up: true,
                    mode,
                    error: None,
                    rearmed: self.rearmed,
                });
                self.armed = Some((w, Some(id)));
                // Whatever changed before the watch was set up (since the start-up load, or in
                // the new directory) is seen now; an unchanged directory costs one read and
                // nothing else.
                changed();
            }
            Err(e) => live.set_watcher(WatcherHealth {
                up: false,
                mode: "off",
                error: Some(e.to_string()),
                rearmed: self.rearmed,
            }),
        }
    }
}

/// Sets up the watches for `dir`: the directory itself, recursively (native if possible,
/// polling otherwise), sending `Changed` after each settled burst holding a content event;
/// and the folder above it, sending `Replaced` when an entry named like `dir` is created,
/// deleted or renamed there.
fn arm(dir: &Path, tx: &mpsc::Sender<Seen>) -> Result<Armed, notify::Error> {
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let inside = |tx: mpsc::Sender<Seen>, root: PathBuf| {
        move |result: DebounceEventResult| match result {
            Ok(events) => {
                let gone = events.iter().any(|e| {
                    matches!(
                        e.kind,
                        EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
                    ) && e.paths.contains(&root)
                });
                if gone {
                    let _ = tx.send(Seen::Replaced);
                } else if events.iter().any(|e| changes_content(&e.kind)) {
                    let _ = tx.send(Seen::Changed);
                }
            }
            Err(errors) => {
                for e in errors {
                    tracing::warn!(error = %e, "rule watcher error");
                }
                // Events may have been lost: look at the directory anyway.
                let _ = tx.send(Seen::Changed);
            }
        }
    };
    let native =
        new_debouncer(DEBOUNCE, None, inside(tx.clone(), root.clone())).and_then(|mut d| {
            d.watch(dir, RecursiveMode::Recursive)?;
            Ok(d)
        });
    let (mode, main): (&'static str, Box<dyn std::any::Any + Send>) = match native {
        Ok(d) => ("native", Box::new(d)),
        Err(e) => {
            tracing::warn!(error = %e, "native file watching unavailable; polling the rules directory");
            let config = notify::Config::default().with_poll_interval(POLL_INTERVAL);
            let mut d = new_debouncer_opt::<_, PollWatcher, NoCache>(
                DEBOUNCE,
                None,
                inside(tx.clone(), root.clone()),
                NoCache,
                config,
            )?;
            d.watch(dir, RecursiveMode::Recursive)?;
            ("poll", Box::new(d))
        }
    };
    let mut debouncers = vec![main];
    if let (Some(parent), Some(name)) = (root.parent(), root.file_name()) {
        let name = name.to_os_string();
        let tx = tx.clone();
        let above = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
            if let Ok(events) = result
                && events.iter().any(|e| {
                    matches!(
                        e.kind,
                        EventKind::Create(_)
                            | EventKind::Remove(_)
                            | EventKind::Modify(ModifyKind::Name(_))
                    ) && e
                        .paths
                        .iter()
                        .any(|p| p.file_name() == Some(name.as_os_str()))
                })
            {
                let _ = tx.send(Seen::Replaced);
            }
        })
        .and_then(|mut d| {
            d.watch(parent, RecursiveMode::NonRecursive)?;
            Ok(d)
        });
        // Without it, a replacement is still found by the identity check (unless the new
        // directory reuses the old inode).
        match above {
            Ok(d) => debouncers.push(Box::new(d)),
            Err(e) => {
                tracing::debug!(error = %e, "cannot watch the folder above the rules directory")
            }
        }
    }
    Ok(Armed {
        mode,
        _debouncers: debouncers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, RemoveKind, RenameMode};

    #[test]
    fn only_events_that_can_change_content_count() {
        for kind in [
            EventKind::Access(AccessKind::Open(notify::event::AccessMode::Any)),
            EventKind::Access(AccessKind::Read),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)),
        ] {
            assert!(!changes_content(&kind), "{kind:?}");
        }
        for kind in [
            EventKind::Create(CreateKind::File),
            EventKind::Modify(ModifyKind::Data(DataChange::Content)),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            EventKind::Remove(RemoveKind::File),
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            EventKind::Any,
        ] {
            assert!(changes_content(&kind), "{kind:?}");
        }
    }
}
