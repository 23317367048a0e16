//! The service as a library: what `turnout serve` runs, for a program that embeds it. A
//! [`Service`] owns everything around the routes: the live rules and their reload worker (one
//! reload at a time, on a blocking thread), the directory watchers, SIGHUP, the router model,
//! the corpus replayed after each reload, the decision log and the shadow rules. The command
//! line only turns its flags into [`Settings`], builds the runtime and waits for a signal.
//!
//! ```no_run
//! # async fn run() -> Result<(), String> {
//! use turnout::server::service::{Service, Settings};
//! let service = Service::start(Settings::new("rules")).await?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.map_err(|e| e.to_string())?;
//! service.serve(listener, std::future::pending()).await;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::conn::{self, Stopped};
use super::playground::Corpus;
use super::{AppState, Config, Metrics, ModelSlot, decision_log, shadow};
use crate::contract::ModelSpec;
use crate::diag::{Code, Diagnostic};
use crate::model::spec::{BuildOptions, KeySource};
use crate::reload::{self, LiveRules, Trigger};
use crate::source::Limits;

/// Everything a service is started with; [`Settings::new`] gives `turnout serve`'s defaults.
#[derive(Debug)]
pub struct Settings {
    /// The rules directory (watched).
    pub rules: PathBuf,
    /// The router model; `None`: the rules' `router.model`, else the embedded router.
    pub model: Option<ModelSpec>,
    /// Where the hosted models' API key is read from.
    pub keys: KeySource,
    /// Largest router model answer read, in bytes.
    pub max_model_answer_bytes: usize,
    /// Limits on rule files.
    pub limits: Limits,
    /// How long the rules directory must be quiet before a removal of a rule file applies.
    pub delete_settle: Duration,
    /// A corpus (JSON lines) replayed after every successful reload, for the page.
    pub corpus: Option<PathBuf>,
    /// The decision log, if any.
    pub decision_log: Option<decision_log::Settings>,
    /// The shadow rules directory and how the shadow works, if any.
    pub shadow: Option<(PathBuf, shadow::Settings)>,
    /// Request limits and the token.
    pub config: Config,
    /// Connection limits.
    pub connections: conn::Limits,
    /// How long in-flight requests may finish after the shutdown future resolves.
    pub shutdown_grace: Duration,
}

impl Settings {
    /// `turnout serve`'s default for `--delete-settle-ms`.
    pub const DELETE_SETTLE: Duration = Duration::from_secs(1);
    /// `turnout serve`'s default for `--shutdown-grace`: longer than the default model timeout
    /// of 15 s, so a request waiting on the model is not cut off.
    pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(20);

    /// The defaults of `turnout serve` for the rules in `rules` (each default is written once,
    /// where its setting lives, and the flags' defaults are read from there).
    pub fn new(rules: impl Into<PathBuf>) -> Self {
        Self {
            rules: rules.into(),
            model: None,
            keys: KeySource::from_file(None),
            max_model_answer_bytes: crate::model::DEFAULT_MAX_ANSWER_BYTES,
            limits: Limits::default(),
            delete_settle: Self::DELETE_SETTLE,
            corpus: None,
            decision_log: None,
            shadow: None,
            config: Config::DEFAULT,
            connections: conn::Limits::DEFAULT,
            shutdown_grace: Self::SHUTDOWN_GRACE,
        }
    }
}

/// A started service: rules loaded (or waiting to be fixed), model ready, watchers, SIGHUP and
/// the reload worker running. [`Service::serve`] answers requests on a listener.
pub struct Service {
    state: Arc<AppState>,
    connections: conn::Limits,
    shutdown_grace: Duration,
    _watchers: Vec<reload::Watcher>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").finish_non_exhaustive()
    }
}

impl Service {
    /// Loads the rules and starts everything but the listener. Must run inside a Tokio runtime
    /// (with time and signals). An error is what stops a start: a model named in the settings
    /// that cannot be built, a corpus or decision log that cannot be opened.
    pub async fn start(settings: Settings) -> Result<Self, String> {
        let options = BuildOptions {
            keys: settings.keys.clone(),
            max_answer_bytes: settings.max_model_answer_bytes,
        };
        // A model named in the settings is the operator's choice: one that cannot be built
        // stops the start. One named by the rules is checked by every reload instead.
        let (model, accept) = match &settings.model {
            Some(spec) => (
                ModelSlot::fixed(spec.build_opts(&options).map_err(|e| e.to_string())?),
                None,
            ),
            None => (
                ModelSlot::from_rules(options),
                Some(model_check(settings.keys.clone())),
            ),
        };
        let model = Arc::new(model);
        let slot = model.clone();
        let prepare: reload::Prepare = Box::new(move |rs| slot.prepare(rs));
        let (rules, report) =
            LiveRules::load_prepared(&settings.rules, settings.limits, accept, Some(prepare));
        rules.set_delete_settle(settings.delete_settle);
        super::log_reload(&report);
        match rules.current() {
            Some(rs) => drop(model.get(&rs)),
            None => {
                tracing::warn!(dir = %settings.rules.display(), "no valid ruleset yet: /readyz answers 503 until the rules are fixed")
            }
        }
        let metrics = Arc::new(Metrics::new());
        metrics.reload(&report);
        metrics.rules_read(report.bytes_read);
        let corpus = match &settings.corpus {
            Some(path) => Some(Arc::new(read_corpus(path)?)),
            None => None,
        };
        let decision_log = match &settings.decision_log {
            Some(log) => {
                let started = decision_log::DecisionLog::start(log.clone(), metrics.clone())?;
                tracing::info!(path = %log.path.display(), messages = log.messages.as_str(), "decisions logged");
                Some(started)
            }
            None => None,
        };
        let mut watchers = Vec::new();
        let shadow = (settings.shadow.as_ref())
            .map(|(dir, how)| {
                let limits = *rules.limits();
                start_shadow(dir, *how, settings.delete_settle, limits, metrics.clone())
            })
            .transpose()?;
        let shadow_tx = shadow.as_ref().map(|(_, tx)| tx.clone());
        let state = Arc::new(AppState {
            rules: rules.clone(),
            model,
            metrics,
            budget: super::body::Budget::new(settings.config.body_budget),
            config: settings.config,
            corpus,
            decision_log,
            shadow: shadow.map(|(s, _)| s),
        });
        super::replay_corpus(&state).await;

        // Reload requests from the watcher and SIGHUP go through one channel to one task, so
        // reloads run one at a time, on a blocking thread, never on the request workers; a
        // full channel means a reload is already pending, which will see the latest files.
        let (tx, rx) = mpsc::channel::<Trigger>(1);
        let watch_tx = tx.clone();
        watchers.push(reload::watch(rules.clone(), move || {
            let _ = watch_tx.try_send(Trigger::Watch);
        }));
        spawn_sighup(tx, shadow_tx.clone());
        if let (Some(shadow), Some(tx)) = (&state.shadow, shadow_tx) {
            watchers.push(reload::watch(shadow.rules().clone(), move || {
                let _ = tx.try_send(Trigger::Watch);
            }));
        }
        tokio::spawn(reload_task(state.clone(), rx));
        Ok(Self {
            state,
            connections: settings.connections,
            shutdown_grace: settings.shutdown_grace,
            _watchers: watchers,
        })
    }

    /// What the routes share: the live rules, the model, the metrics, the log and the shadow.
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Answers requests on `listener` until `shutdown` resolves, then lets in-flight requests
    /// finish within the grace period and writes out the decision log's queue (up to 2 s).
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Stopped {
        let app = super::app(self.state.clone());
        let stopped = conn::serve(
            listener,
            app,
            self.connections,
            self.state.metrics.clone(),
            shutdown,
            self.shutdown_grace,
        )
        .await;
        if let Some(log) = &self.state.decision_log {
            log.drain(Duration::from_secs(2));
        }
        stopped
    }
}

/// The acceptance test for rules when the model comes from `router.model`: a ruleset whose
/// model this service could not build (a hosted API without its key) is refused by a reload
/// just as the next start would refuse it, so an accepted edit can never stop the next start.
fn model_check(keys: KeySource) -> reload::Accept {
    Box::new(move |rs| {
        let router = rs.router();
        let spec = ModelSpec::choose(None, router);
        match spec.check(&keys) {
            Ok(()) => Vec::new(),
            Err(e) => vec![
                Diagnostic::error(
                    Code::ModelUnavailable,
                    format!("router.model '{spec}' cannot be used by this service: {e}"),
                )
                .at(router.model_at.clone())
                .hint("set the key where the service runs, or start it with --model"),
            ],
        }
    })
}

fn read_corpus(path: &Path) -> Result<Corpus, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the corpus {}: {e}", path.display()))?;
    let (corpus, bad) = Corpus::new(&text);
    for b in &bad {
        tracing::warn!(line = b.line, error = %b.error, corpus = %path.display(), "corpus line skipped");
    }
    tracing::info!(
        requests = corpus.len(),
        "corpus replayed after every reload"
    );
    Ok(corpus)
}

/// Runs the reloads the channel asks for, one at a time. A reload that leaves a removal of rule
/// files pending arms one timer for when its settle window ends; any later reload re-arms or
/// clears it, so there is never more than one and nothing polls.
async fn reload_task(state: Arc<AppState>, mut rx: mpsc::Receiver<Trigger>) {
    let mut settle_at: Option<tokio::time::Instant> = None;
    loop {
        let report = match settle_at {
            Some(at) => tokio::select! {
                trigger = rx.recv() => match trigger {
                    Some(t) => Some(super::reload_now(&state, t).await),
                    None => return,
                },
                () = tokio::time::sleep_until(at) => super::settle_now(&state).await,
            },
            None => match rx.recv().await {
                Some(t) => Some(super::reload_now(&state, t).await),
                None => return,
            },
        };
        settle_at = report
            .as_ref()
            .and_then(|r| r.pending_removal.as_ref())
            .map(|p| tokio::time::Instant::now() + Duration::from_millis(p.applies_in_ms));
    }
}

/// Loads the shadow directory as the live one is loaded (its own reload task; no model: the
/// shadow never calls one) and starts the shadow's thread.
fn start_shadow(
    dir: &Path,
    how: shadow::Settings,
    delete_settle: Duration,
    limits: Limits,
    metrics: Arc<Metrics>,
) -> Result<(shadow::Shadow, mpsc::Sender<Trigger>), String> {
    let (rules, report) = LiveRules::load_prepared(dir, limits, None, None);
    rules.set_delete_settle(delete_settle);
    shadow::log_reload(&report);
    if rules.current().is_none() {
        tracing::warn!(dir = %dir.display(), "no valid shadow ruleset yet: requests are counted as result=\"unavailable\" until it is fixed");
    }
    let shadow = shadow::Shadow::start(rules.clone(), how, metrics)?;
    let (tx, rx) = mpsc::channel::<Trigger>(1);
    tokio::spawn(shadow::reloads(rules, rx));
    tracing::info!(dir = %dir.display(), queue = how.queue, "shadow rules decide every request on the side");
    Ok((shadow, tx))
}

#[cfg(unix)]
fn spawn_sighup(tx: mpsc::Sender<Trigger>, shadow: Option<mpsc::Sender<Trigger>>) {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::hangup()) {
        Ok(mut hup) => {
            tokio::spawn(async move {
                while hup.recv().await.is_some() {
                    let _ = tx.try_send(Trigger::Signal);
                    if let Some(shadow) = &shadow {
                        let _ = shadow.try_send(Trigger::Signal);
                    }
                }
            });
        }
        Err(e) => tracing::warn!(error = %e, "SIGHUP reload unavailable"),
    }
}

#[cfg(not(unix))]
fn spawn_sighup(_tx: mpsc::Sender<Trigger>, _shadow: Option<mpsc::Sender<Trigger>>) {}
