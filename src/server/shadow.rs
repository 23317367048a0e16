//! Shadow rules (`serve --shadow DIR`): a candidate rules directory, loaded, watched and
//! validated exactly like the live one ([`LiveRules`]), that decides every live request on the
//! side and never changes an answer.
//!
//! A request hands its request and its decision to a bounded queue once it is decided and goes
//! on; one thread of its own decides them again with the shadow rules. It gives the engine the
//! router's answer the live decision got, as the decision log records it
//! ([`replay::log::recorded_script`]): no second model call, and the same decision an offline
//! `turnout replay` of the log against the two directories makes. A request the live rules
//! settled without asking the model is decided by the shadow rules alone. A full queue drops
//! the request and counts it; the differences (what the user would see differs) are counted
//! and the last ones kept for `GET /v1/shadow`, with both decisions.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::Metrics;
use super::background::{self, Priority, Step};
use crate::contract::{Decision, Request};
use crate::reload::{LiveRules, ReloadReport, Status, Trigger};
use crate::replay::{self, Line, log};

/// How the shadow works.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Most requests waiting to be decided by the shadow rules.
    pub queue: usize,
    /// Differences kept for `/v1/shadow`.
    pub keep: usize,
    /// How the shadow's thread shares the cores with requests.
    pub priority: Priority,
}

impl Settings {
    /// `turnout serve`'s defaults (its flags' defaults are these).
    pub const DEFAULT: Self = Self {
        queue: 1024,
        keep: 100,
        priority: Priority::Idle,
    };
}

impl Default for Settings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One live request on its way to the shadow rules.
struct Job {
    time: SystemTime,
    id: Option<String>,
    endpoint: &'static str,
    rules_only: bool,
    request: Request,
    decision: Decision,
}

/// A request the shadow rules decided differently.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    /// When it was decided live (RFC 3339, UTC).
    pub time: String,
    /// The request id (the client's `X-Request-Id`), if it had one.
    pub id: Option<String>,
    /// The endpoint that answered it.
    pub endpoint: &'static str,
    /// The user's message.
    pub message: String,
    /// Live and shadow decisions, in a few words.
    pub live_label: String,
    pub shadow_label: String,
    /// The whole request.
    pub request: Request,
    /// The router's answer both decisions were made with, as a test case's `model:` (none:
    /// rules only, the model was not called).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<crate::rules::testcase::ModelScript>,
    /// The decision that was answered (its `rules_version` is the live one).
    pub live: Decision,
    /// The decision of the shadow rules (its `rules_version` is the shadow's).
    pub shadow: Decision,
}

/// Counts of what the shadow did, since the start.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Counts {
    /// Decided the same as live.
    pub same: u64,
    /// Decided differently.
    pub different: u64,
    /// Dropped: the queue was full.
    pub dropped: u64,
    /// Not decided: the shadow directory has no valid ruleset.
    pub unavailable: u64,
}

/// What the shadow thread and the requests share. The counts are atomics, not under the
/// differences' lock: the shadow thread may hold that lock while it gets no core (it runs at
/// idle priority), and a request that drops must never wait for it.
struct Shared {
    rules: Arc<LiveRules>,
    metrics: Arc<Metrics>,
    keep: usize,
    /// By [`Seen`].
    counts: [AtomicU64; 4],
    /// The last differences; only the shadow thread and `GET /v1/shadow` take it.
    differences: Mutex<VecDeque<Difference>>,
}

/// What became of one live request, as counted: its place in [`Shared::counts`].
#[derive(Debug, Clone, Copy)]
enum Seen {
    Same,
    Different,
    Dropped,
    Unavailable,
}

impl Seen {
    const ALL: [Seen; 4] = [
        Seen::Same,
        Seen::Different,
        Seen::Dropped,
        Seen::Unavailable,
    ];

    /// The metric's `result` label.
    fn label(self) -> &'static str {
        match self {
            Seen::Same => "same",
            Seen::Different => "different",
            Seen::Dropped => "dropped",
            Seen::Unavailable => "unavailable",
        }
    }
}

impl Shared {
    fn differences(&self) -> std::sync::MutexGuard<'_, VecDeque<Difference>> {
        // A panic while holding it leaves differences that are still differences.
        self.differences.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self, seen: Seen) {
        self.metrics.shadow_decision(seen.label());
        self.counts[seen as usize].fetch_add(1, Ordering::Relaxed);
    }

    fn counts(&self) -> Counts {
        let [same, different, dropped, unavailable] =
            self.counts.each_ref().map(|c| c.load(Ordering::Relaxed));
        Counts {
            same,
            different,
            dropped,
            unavailable,
        }
    }
}

/// The handle requests send to the shadow through.
pub struct Shadow {
    tx: background::Sender<Job>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Shadow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shadow")
            .field("dir", &self.shared.rules.dir())
            .finish_non_exhaustive()
    }
}

impl Shadow {
    /// Starts the thread that decides with `rules` (the shadow directory, loaded and watched by
    /// the caller).
    pub fn start(
        rules: Arc<LiveRules>,
        settings: Settings,
        metrics: Arc<Metrics>,
    ) -> Result<Self, String> {
        let (tx, rx) = background::queue::<Job>(settings.queue);
        metrics.shadow_results(&Seen::ALL.map(Seen::label));
        let shared = Arc::new(Shared {
            rules,
            metrics,
            keep: settings.keep,
            counts: Default::default(),
            differences: Mutex::new(VecDeque::new()),
        });
        let worker = shared.clone();
        background::spawn("shadow", settings.priority, move || run(&worker, &rx))?;
        Ok(Self { tx, shared })
    }

    /// The shadow's rules.
    pub fn rules(&self) -> &Arc<LiveRules> {
        &self.shared.rules
    }

    /// Queues a live decision for the shadow rules, or drops and counts it when the queue is
    /// full. Never waits.
    pub fn submit(
        &self,
        id: Option<String>,
        endpoint: &'static str,
        rules_only: bool,
        request: Request,
        decision: Decision,
    ) {
        let job = Job {
            time: SystemTime::now(),
            id,
            endpoint,
            rules_only,
            request,
            decision,
        };
        if self.tx.try_send(job).is_err() {
            self.shared.count(Seen::Dropped);
        }
    }

    /// The counts, and the last differences, newest first.
    pub fn seen(&self) -> (Counts, Vec<Difference>) {
        let counts = self.shared.counts();
        let differences = self.shared.differences().iter().rev().cloned().collect();
        (counts, differences)
    }

    /// What `/v1/rules` shows of the shadow: its reload status and counts.
    pub fn status(&self) -> (Status, Counts) {
        (self.shared.rules.status(), self.shared.counts())
    }
}

/// How long the shadow thread naps when a look finds the queue empty (the naps grow to
/// [`background::IDLE_NAP`] while nothing comes), so that a busy service wakes it a couple of
/// hundred times a second rather than once a request (a wake-up of a waiting thread costs the
/// request that sends it a system call, and cost the shadow more than its second decision
/// did); `--shadow-queue` must hold what arrives meanwhile (1,024: 200,000 requests a second).
const BATCH: Duration = Duration::from_millis(5);

/// The shadow thread: decides each queued request with the shadow rules serving now, taking
/// the queue as [`background::drain`] does.
fn run(shared: &Shared, rx: &background::Receiver<Job>) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "the shadow rules cannot run: no async runtime");
            return;
        }
    };
    background::drain(rx, BATCH, |step| {
        if let Step::Item(job) = step {
            decide(shared, &rt, job);
        }
    });
}

/// Decides one live request again with the shadow rules serving now, and counts (and keeps)
/// what came out.
fn decide(shared: &Shared, rt: &tokio::runtime::Runtime, job: Job) {
    let Some(rs) = shared.rules.current() else {
        shared.count(Seen::Unavailable);
        return;
    };
    let line = Line {
        number: 0,
        id: job.id.clone(),
        request: job.request,
        model: log::recorded_script(&job.decision),
        expect: None,
        recorded: None,
        rules_only: job.rules_only,
    };
    let Some(shadow) = rt.block_on(replay::decide_recorded(&rs, &line)) else {
        shared.count(Seen::Unavailable);
        return;
    };
    if !replay::differ(&job.decision, &shadow) {
        shared.count(Seen::Same);
        return;
    }
    shared.count(Seen::Different);
    let difference = Difference {
        time: log::rfc3339(job.time),
        id: job.id,
        endpoint: job.endpoint,
        message: line.request.user_message().unwrap_or_default().to_owned(),
        live_label: replay::label(&job.decision),
        shadow_label: replay::label(&shadow),
        request: line.request,
        model: line.model,
        live: job.decision,
        shadow,
    };
    if shared.keep > 0 {
        let mut kept = shared.differences();
        if kept.len() >= shared.keep {
            kept.pop_front();
        }
        kept.push_back(difference);
    }
}

/// Runs the shadow directory's reloads the channel asks for (its watcher, `SIGHUP`), one at a
/// time on a blocking thread, as the live rules' are; a pending removal of rule files is
/// re-checked when its settle window ends.
pub async fn reloads(rules: Arc<LiveRules>, mut rx: tokio::sync::mpsc::Receiver<Trigger>) {
    let mut settle_at: Option<tokio::time::Instant> = None;
    loop {
        let trigger = match settle_at {
            Some(at) => tokio::select! {
                t = rx.recv() => match t { Some(t) => Some(t), None => return },
                () = tokio::time::sleep_until(at) => None,
            },
            None => match rx.recv().await {
                Some(t) => Some(t),
                None => return,
            },
        };
        let live = rules.clone();
        let report = tokio::task::spawn_blocking(move || match trigger {
            Some(t) => Some(live.reload(t)),
            None => live.settle(),
        })
        .await
        .ok()
        .flatten();
        if let Some(r) = &report {
            log_reload(r);
        }
        settle_at = report
            .as_ref()
            .and_then(|r| r.pending_removal.as_ref())
            .map(|p| tokio::time::Instant::now() + Duration::from_millis(p.applies_in_ms));
    }
}

/// Logs a reload of the shadow rules: a swap at info, a refused change at warn (the shadow
/// keeps its last good rules, and the live rules are not touched).
pub fn log_reload(r: &ReloadReport) {
    if !r.ok && !r.unchanged {
        let diagnostics: Vec<String> = r.diagnostics.iter().map(ToString::to_string).collect();
        tracing::warn!(
            trigger = ?r.trigger,
            serving = r.version.as_deref().unwrap_or("none"),
            diagnostics = %diagnostics.join("\n"),
            "shadow rules refused; the shadow keeps its last good rules"
        );
    } else if r.changed {
        tracing::info!(trigger = ?r.trigger, version = r.version.as_deref().unwrap_or(""), "shadow rules reloaded");
    }
}
