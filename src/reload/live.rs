//! The live ruleset and its reloads: [`LiveRules`], what a reload reports, and the status the
//! service shows (the module's page, [`crate::reload`], says how a reload behaves).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arc_swap::{ArcSwap, ArcSwapOption};
use serde::Serialize;

use crate::compile;
use crate::diag::Diagnostic;
use crate::ruleset::RuleSet;
use crate::source::{self, Limits};

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
    /// The settle window of a pending removal ended ([`LiveRules::settle`]).
    Settle,
}

impl Trigger {
    /// Whether an operator asked for this reload (start-up, `SIGHUP`, the API): it applies at
    /// once, even a removal.
    fn explicit(self) -> bool {
        matches!(self, Self::Startup | Self::Signal | Self::Api)
    }
}

/// A change that removes rule files, waiting for the directory to be quiet before it applies.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct PendingRemoval {
    /// The files of the serving ruleset the directory no longer holds, in path order.
    pub files: Vec<PathBuf>,
    /// How long until it applies if nothing else changes, in milliseconds.
    pub applies_in_ms: u64,
}

/// What one reload attempt came to: one value, of which `ok`, `changed` and `unchanged` are
/// views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReloadStatus {
    /// A new ruleset was built and swapped in (`changed`).
    Applied,
    /// The files are valid and give the version already serving: nothing to swap (a broken
    /// save put back as it was, say).
    Current,
    /// The files are byte for byte what the last attempt read: nothing was compiled, the
    /// standing verdict (`ok`, `diagnostics`) holds (`unchanged`).
    Unchanged,
    /// The files have errors (`diagnostics`); the last good ruleset keeps serving (`ok` false).
    Refused,
    /// The files remove rule files: nothing applies until the directory is quiet
    /// (`pending_removal`).
    PendingRemoval,
    /// The attempt itself failed (an internal error); the ruleset serving is kept.
    Failed,
}

/// The result of one reload attempt.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ReloadReport {
    /// What started it.
    pub trigger: Trigger,
    /// What it came to; the three booleans below follow from it.
    pub status: ReloadStatus,
    /// Whether the files (still) give a valid ruleset. An unchanged directory keeps the
    /// verdict it had.
    pub ok: bool,
    /// Whether a new ruleset was swapped in (`status` is `applied`).
    pub changed: bool,
    /// The files are byte for byte what the last attempt read (`status` is `unchanged`):
    /// nothing was compiled, and the attempt is neither logged nor counted again.
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
    /// Set when the files read remove rule files and wait for the directory to settle: nothing
    /// was compiled or swapped, and `ok` and `diagnostics` are the verdict still standing.
    pub pending_removal: Option<PendingRemoval>,
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
    /// A removal of rule files waiting for the directory to settle (null: none).
    pub pending_removal: Option<PendingRemoval>,
    /// The file watcher.
    pub watcher: WatcherHealth,
}

/// What the status page shows besides the ruleset, replaced whole after each attempt so that
/// reading it never waits for a reload.
#[derive(Debug, Default)]
struct Shown {
    loaded_at_unix: Option<f64>,
    last: Option<ReloadReport>,
    /// The removed files of a pending removal, when it was last seen, and how long it then
    /// had to wait.
    pending: Option<(Vec<PathBuf>, Instant, Duration)>,
}

/// A removal seen by the watcher and not applied yet.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    files: Vec<PathBuf>,
    /// The last watcher event that saw it: the directory has been quiet since.
    quiet_since: Instant,
}

/// What the one reload running keeps between attempts.
#[derive(Debug, Default)]
struct Reloading {
    /// The digest of what the last applied or judged attempt read (never a pending one's).
    last_digest: Option<[u8; 32]>,
    /// That attempt's verdict, which an unchanged directory keeps: (ok, diagnostics).
    verdict: Option<(bool, Vec<Diagnostic>)>,
    pending: Option<Pending>,
    /// How long the directory must be quiet before a removal applies; zero: at once.
    settle: Duration,
}

/// Whether a read that removes `removed` applies now or waits (and for how long), updating
/// `pending`. A watcher event (re)starts the window; the settle re-check applies once it has
/// passed; an explicit reload, a zero window or a read that removes nothing applies at once.
fn settle_verdict(
    pending: &mut Option<Pending>,
    removed: Vec<PathBuf>,
    trigger: Trigger,
    window: Duration,
    now: Instant,
) -> Option<Duration> {
    if removed.is_empty() || window.is_zero() || trigger.explicit() {
        *pending = None;
        return None;
    }
    let quiet_since = match (trigger, pending.as_ref()) {
        (Trigger::Settle, Some(p)) => p.quiet_since,
        (Trigger::Settle, None) => {
            // Nothing was waiting (an explicit reload settled it): the re-check is a reload
            // like any other.
            return None;
        }
        _ => now,
    };
    let quiet = now.saturating_duration_since(quiet_since);
    if quiet >= window {
        *pending = None;
        return None;
    }
    *pending = Some(Pending {
        files: removed,
        quiet_since,
    });
    Some(window - quiet)
}

/// A duration in whole milliseconds, rounded up: a timer set to it never fires early.
fn ceil_ms(d: Duration) -> u64 {
    u64::try_from(d.as_micros().div_ceil(1000)).unwrap_or(u64::MAX)
}

/// The files of `serving` that `read` no longer holds (a rename counts as a removal of the old
/// name), in path order. A file read empty counts as removed too: a tool's rewrite (truncate,
/// then write) shows an empty file first, and on a busy machine a watcher can see it before
/// the bytes arrive; like a removal, emptying waits for the directory to be quiet.
fn removed_files(serving: &RuleSet, read: &source::ReadDir) -> Vec<PathBuf> {
    let emptied =
        |f: &PathBuf| (read.texts.iter()).any(|(path, text)| path == f && text.trim().is_empty());
    serving
        .files
        .iter()
        .filter(|f| !read.files.contains(f) || emptied(f))
        .cloned()
        .collect()
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
    /// Held by the one reload running; remembers what the last attempt read.
    reloading: Mutex<Reloading>,
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
            reloading: Mutex::new(Reloading::default()),
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

    /// How long the directory must be quiet before a watcher-seen removal of rule files
    /// applies (zero, the default: at once). With a window, call [`settle`](Self::settle) when
    /// a report's `pending_removal` says it is due.
    pub fn set_delete_settle(&self, window: Duration) {
        self.lock().settle = window;
    }

    fn lock(&self) -> MutexGuard<'_, Reloading> {
        // A panic while holding the lock cannot leave the digest half-written.
        self.reloading.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Re-reads the directory; builds and swaps in a new ruleset if the content changed and is
    /// valid. A watcher-seen change that removes rule files waits for the directory to settle
    /// (see [`set_delete_settle`](Self::set_delete_settle)); the report says so. Blocking (file
    /// IO and compilation): call it from a blocking thread. Reloads run one at a time; readers
    /// of [`status`](Self::status) never wait for one.
    pub fn reload(&self, trigger: Trigger) -> ReloadReport {
        let mut state = self.lock();
        self.reload_locked(&mut state, trigger)
    }

    /// Re-checks a pending removal once its settle window has passed: applies what the
    /// directory holds if it stayed quiet, else reports how long it still waits. Reads nothing
    /// and gives `None` when no removal is pending (an explicit reload or the file coming back
    /// settled it).
    pub fn settle(&self) -> Option<ReloadReport> {
        let mut state = self.lock();
        state.pending.as_ref()?;
        Some(self.reload_locked(&mut state, Trigger::Settle))
    }

    fn reload_locked(&self, state: &mut Reloading, trigger: Trigger) -> ReloadReport {
        let started = Instant::now();
        let read = source::read_dir(&self.dir, &self.limits);
        let bytes_read = read.bytes_read;
        let version = |rs: Option<&Arc<RuleSet>>| rs.map(|r| r.version.to_string());
        let serving = self.current();
        let standing = || state.verdict.clone().unwrap_or((true, Vec::new()));
        if state.last_digest == Some(read.digest) && trigger != Trigger::Startup {
            let (ok, diagnostics) = standing();
            let report = ReloadReport {
                trigger,
                status: ReloadStatus::Unchanged,
                ok,
                changed: false,
                unchanged: true,
                version: version(serving.as_ref()),
                at_unix: now_unix(),
                took_ms: started.elapsed().as_secs_f64() * 1e3,
                bytes_read,
                diagnostics,
                pending_removal: None,
            };
            // The removed files came back as they were: the removal is dropped, and the status
            // says so instead of showing it pending.
            if state.pending.take().is_some() {
                tracing::info!(trigger = ?trigger, "the removed rule files are back as they were; nothing changed");
                let shown = self.shown.load();
                self.shown.store(Arc::new(Shown {
                    loaded_at_unix: shown.loaded_at_unix,
                    last: Some(report.clone()),
                    pending: None,
                }));
            }
            return report;
        }
        let removed = serving
            .as_deref()
            .map(|s| removed_files(s, &read))
            .unwrap_or_default();
        let window = state.settle;
        if let Some(wait) = settle_verdict(&mut state.pending, removed, trigger, window, started) {
            // Nothing is compiled or swapped, and the digest is not kept: the same files coming
            // back are an unchanged directory.
            let (ok, diagnostics) = standing();
            let files = state
                .pending
                .as_ref()
                .map(|p| p.files.clone())
                .unwrap_or_default();
            let report = ReloadReport {
                trigger,
                status: ReloadStatus::PendingRemoval,
                ok,
                changed: false,
                unchanged: false,
                version: version(serving.as_ref()),
                at_unix: now_unix(),
                took_ms: started.elapsed().as_secs_f64() * 1e3,
                bytes_read,
                diagnostics,
                pending_removal: Some(PendingRemoval {
                    files: files.clone(),
                    applies_in_ms: ceil_ms(wait),
                }),
            };
            let shown = self.shown.load();
            self.shown.store(Arc::new(Shown {
                loaded_at_unix: shown.loaded_at_unix,
                last: Some(report.clone()),
                pending: Some((files, started, wait)),
            }));
            return report;
        }
        state.last_digest = Some(read.digest);
        let mut loaded = compile::compile_read_quoting(read, &self.limits);
        if let (Some(rs), Some(accept)) = (&loaded.ruleset, &self.accept) {
            let refused = accept(rs);
            if refused.iter().any(Diagnostic::is_error) {
                loaded.ruleset = None;
            }
            loaded.diagnostics.extend(refused);
        }
        let ok = loaded.ruleset.is_some();
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
        state.verdict = Some((ok, loaded.diagnostics.clone()));
        let report = ReloadReport {
            trigger,
            status: match (ok, changed) {
                (true, true) => ReloadStatus::Applied,
                (true, false) => ReloadStatus::Current,
                (false, _) => ReloadStatus::Refused,
            },
            ok,
            changed,
            unchanged: false,
            version: version(self.current().as_ref()),
            at_unix: now_unix(),
            took_ms: started.elapsed().as_secs_f64() * 1e3,
            bytes_read,
            diagnostics: loaded.diagnostics,
            pending_removal: None,
        };
        self.shown.store(Arc::new(Shown {
            loaded_at_unix: loaded_at,
            last: Some(report.clone()),
            pending: None,
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
            pending_removal: shown
                .pending
                .as_ref()
                .map(|(files, seen, wait)| PendingRemoval {
                    files: files.clone(),
                    applies_in_ms: ceil_ms(wait.saturating_sub(seen.elapsed())),
                }),
            watcher: self.watcher_health(),
        }
    }

    /// How the file watcher is doing.
    pub fn watcher_health(&self) -> WatcherHealth {
        (**self.watcher.load()).clone()
    }

    #[cfg_attr(not(feature = "watch"), allow(dead_code))]
    pub(super) fn set_watcher(&self, health: WatcherHealth) {
        self.watcher.store(Arc::new(health));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = "
tools:
  - {id: alpha, description: first, chip: alpha}
  - {id: switch, description: skills, chip: switching, arguments: {type: object, properties: {skill: {enum: [coach, none]}}}}
skills:
  - {id: coach, description: coaching, badge: Coach, auto: true}
word_lists:
  - {id: pings, description: test trigger, words: [ping]}
pre_rules:
  - {id: ping-rule, description: routes pings, when: {mentions: pings}, then: {calls: [{tool: alpha}]}}
router: {skill_tool: switch, skill_argument: skill, leave_skill_value: none}
";
    const GUARDS: &str = "
guards:
  - {id: no-alpha, description: vetoes alpha, tools: [alpha], drop_when: {mentions: pings}}
";

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn a_removal_seen_by_the_watcher_waits_until_the_directory_is_quiet() {
        let window = Duration::from_millis(1000);
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut pending = None;
        let gone = || paths(&["guards.yaml"]);
        assert_eq!(
            settle_verdict(&mut pending, gone(), Trigger::Watch, window, t0),
            Some(window)
        );
        // Another event restarts the window.
        assert_eq!(
            settle_verdict(&mut pending, gone(), Trigger::Watch, window, at(300)),
            Some(window)
        );
        // The re-check before the window has passed waits for the rest of it.
        assert_eq!(
            settle_verdict(&mut pending, gone(), Trigger::Settle, window, at(900)),
            Some(Duration::from_millis(400))
        );
        assert_eq!(
            pending.as_ref().map(|p| (p.files.clone(), p.quiet_since)),
            Some((gone(), at(300)))
        );
        // Once quiet for the whole window, it applies.
        assert_eq!(
            settle_verdict(&mut pending, gone(), Trigger::Settle, window, at(1300)),
            None
        );
        assert_eq!(pending, None);
    }

    #[test]
    fn explicit_reloads_a_zero_window_and_reads_removing_nothing_apply_at_once() {
        let window = Duration::from_millis(1000);
        let now = Instant::now();
        for trigger in [Trigger::Startup, Trigger::Signal, Trigger::Api] {
            let mut pending = Some(Pending {
                files: paths(&["a.yaml"]),
                quiet_since: now,
            });
            let removed = paths(&["a.yaml"]);
            assert_eq!(
                settle_verdict(&mut pending, removed, trigger, window, now),
                None
            );
            assert_eq!(pending, None, "{trigger:?}");
        }
        let mut pending = None;
        let removed = paths(&["a.yaml"]);
        let zero = Duration::ZERO;
        assert_eq!(
            settle_verdict(&mut pending, removed, Trigger::Watch, zero, now),
            None
        );
        // A write that removes nothing applies at once and drops what was waiting.
        let mut pending = Some(Pending {
            files: paths(&["a.yaml"]),
            quiet_since: now,
        });
        assert_eq!(
            settle_verdict(&mut pending, Vec::new(), Trigger::Watch, window, now),
            None
        );
        assert_eq!(pending, None);
        // A re-check with nothing waiting any more is an ordinary reload.
        let removed = paths(&["a.yaml"]);
        assert_eq!(
            settle_verdict(&mut pending, removed, Trigger::Settle, window, now),
            None
        );
    }

    fn dir_with_guards() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("main.yaml"), MAIN).expect("write");
        std::fs::write(dir.path().join("guards.yaml"), GUARDS).expect("write");
        dir
    }

    #[test]
    fn each_attempt_says_what_it_came_to_in_one_status() {
        let dir = dir_with_guards();
        let (live, report) = LiveRules::load(dir.path());
        assert_eq!(report.status, ReloadStatus::Applied);
        let serving = report.version.clone();
        let guards = dir.path().join("guards.yaml");
        std::fs::write(&guards, "guards: [\n").expect("break");
        let r = live.reload(Trigger::Watch);
        assert_eq!(r.status, ReloadStatus::Refused);
        assert!(!r.ok && !r.changed && !r.unchanged, "{r:?}");
        // The refused line is quoted for a reader that cannot open the file.
        let at = r
            .diagnostics
            .iter()
            .find_map(|d| d.location.clone())
            .expect("located");
        assert_eq!(at.source.as_deref(), Some("guards: ["));
        let r = live.reload(Trigger::Api);
        assert_eq!(r.status, ReloadStatus::Unchanged);
        assert!(r.unchanged && !r.ok, "{r:?}");
        // Put back as it was: valid, the version already serving, nothing to swap.
        std::fs::write(&guards, GUARDS).expect("fix");
        let r = live.reload(Trigger::Watch);
        assert_eq!(r.status, ReloadStatus::Current);
        assert!(r.ok && !r.changed && !r.unchanged, "{r:?}");
        assert_eq!(r.version, serving);
        let json = serde_json::to_value(&r).expect("JSON");
        assert_eq!(json["status"], "current");
    }

    #[test]
    fn a_removed_file_put_back_unchanged_cancels_the_removal() {
        let dir = dir_with_guards();
        let (live, report) = LiveRules::load(dir.path());
        assert!(report.changed, "{report:?}");
        let serving = report.version.clone();
        live.set_delete_settle(Duration::from_secs(3600));
        let guards = dir.path().join("guards.yaml");
        std::fs::remove_file(&guards).expect("rm");
        let r = live.reload(Trigger::Watch);
        let pending = r.pending_removal.clone().expect("pending");
        assert_eq!(pending.files, vec![guards.clone()]);
        assert!(pending.applies_in_ms > 3_590_000, "{pending:?}");
        assert!(!r.changed && !r.unchanged && r.ok, "{r:?}");
        assert_eq!(r.version, serving);
        let status = live.status();
        assert_eq!(status.version, serving);
        let shown = status.pending_removal.expect("shown pending");
        assert_eq!(shown.files, vec![guards.clone()]);
        assert!(status.last_reload.and_then(|l| l.pending_removal).is_some());

        std::fs::write(&guards, GUARDS).expect("put back");
        let r = live.reload(Trigger::Watch);
        assert!(r.unchanged && r.pending_removal.is_none(), "{r:?}");
        assert_eq!(live.status().pending_removal, None);
        assert_eq!(live.settle().map(|r| r.trigger), None, "nothing to settle");
    }

    #[test]
    fn a_removal_applies_after_the_window_or_at_once_when_asked() {
        let dir = dir_with_guards();
        let (live, report) = LiveRules::load(dir.path());
        let serving = report.version.clone();
        live.set_delete_settle(Duration::from_millis(30));
        std::fs::remove_file(dir.path().join("guards.yaml")).expect("rm");
        let mut r = live.reload(Trigger::Watch);
        let mut rechecks = 0;
        while let Some(p) = r.pending_removal.clone() {
            std::thread::sleep(Duration::from_millis(p.applies_in_ms));
            r = live.settle().expect("still pending");
            rechecks += 1;
        }
        assert_eq!(rechecks, 1, "one re-check once the window has passed");
        assert!(r.changed && r.ok && r.trigger == Trigger::Settle, "{r:?}");
        assert_ne!(r.version, serving);
        assert_eq!(live.status().files, vec![dir.path().join("main.yaml")]);

        // An explicit reload does not wait, however long the window.
        live.set_delete_settle(Duration::from_secs(3600));
        std::fs::write(dir.path().join("guards.yaml"), GUARDS).expect("write");
        assert!(
            live.reload(Trigger::Watch).changed,
            "a create applies at once"
        );
        std::fs::remove_file(dir.path().join("guards.yaml")).expect("rm");
        let r = live.reload(Trigger::Signal);
        assert!(r.changed && r.pending_removal.is_none(), "{r:?}");
    }
}
