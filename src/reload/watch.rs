//! The watcher: turns file events into reloads (see the parent module), and survives the
//! rules directory being deleted, replaced or moved.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, EventKind, MetadataKind, ModifyKind};
use notify::{PollWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, NoCache, new_debouncer, new_debouncer_opt};

use super::live::{LiveRules, WatcherHealth};

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
        dir: live.dir().to_path_buf(),
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
