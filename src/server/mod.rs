//! The HTTP service: [`app`] builds the router (testable without a socket), [`conn::serve`] serves it
//! until a shutdown signal and then lets in-flight requests finish.
//!
//! Client mistakes get a 4xx with a JSON body naming the field; nothing a client sends can
//! cause a 500 or a panic.

pub mod background;
pub mod body;
pub mod conn;
pub mod decision_log;
pub mod metrics;
pub mod openapi;
pub mod playground;
pub mod service;
pub mod shadow;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use subtle::ConstantTimeEq;

use crate::contract::ModelSpec;
use crate::contract::Request;
use crate::contract::parse::cut_to;
use crate::engine;
use crate::model::Model;
use crate::model::spec::BuildOptions;
use crate::reload::{LiveRules, Trigger};
pub use metrics::Metrics;

/// Limits and credentials of the service.
#[derive(Clone)]
pub struct Config {
    /// Largest request body, in bytes (413 above).
    pub body_limit: usize,
    /// Longest time a request body may take to arrive (408 after).
    pub body_timeout: Duration,
    /// Longest user message, in characters (400 above).
    pub max_message_chars: usize,
    /// Bytes of request bodies held at once across every connection (503 `busy` above): what
    /// bounds the memory of a flood of unfinished uploads. At least `body_limit`.
    pub body_budget: usize,
    /// The bearer token clients must send, if any.
    pub token: Option<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("body_limit", &self.body_limit)
            .field("body_timeout", &self.body_timeout)
            .field("max_message_chars", &self.max_message_chars)
            .field("body_budget", &self.body_budget)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl Config {
    /// `turnout serve`'s defaults (its flags' defaults are these), without a token.
    pub const DEFAULT: Self = Self {
        body_limit: 1 << 20,
        body_timeout: Duration::from_secs(10),
        max_message_chars: engine::Limits::DEFAULT.max_message_chars,
        body_budget: 32 << 20,
        token: None,
    };
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The router model of the service: chosen once, from the command line if it names one, else
/// from the first valid ruleset's `router.model` (the service may start before its rules are
/// valid).
pub struct ModelSlot {
    chosen: std::sync::OnceLock<Option<Arc<dyn Model>>>,
    options: BuildOptions,
}

impl ModelSlot {
    /// A slot that already holds `model` (`None`: rules only).
    pub fn fixed(model: Option<Arc<dyn Model>>) -> Self {
        let chosen = std::sync::OnceLock::new();
        let _ = chosen.set(model);
        Self {
            chosen,
            options: BuildOptions::default(),
        }
    }

    /// A slot that builds the model named by the rules, with these options, when a first valid
    /// ruleset is seen.
    pub fn from_rules(options: BuildOptions) -> Self {
        Self {
            chosen: std::sync::OnceLock::new(),
            options,
        }
    }

    /// The model for requests decided by `rs` (built on first use).
    pub fn get(&self, rs: &crate::ruleset::RuleSet) -> Option<Arc<dyn Model>> {
        self.chosen
            .get_or_init(|| {
                let spec = ModelSpec::choose(None, rs.router());
                match spec.build_opts(&self.options) {
                    Ok(m) => {
                        tracing::info!(model = %spec, "router model chosen");
                        m
                    }
                    Err(e) => {
                        // The reload's acceptance test refuses rules whose model cannot be
                        // built, so this only happens when the environment changed since.
                        tracing::error!(error = %e, "the router model cannot be built; deciding with rules only");
                        None
                    }
                }
            })
            .clone()
    }

    /// Readies the model for `rs` (building it first if the rules name it): called by every
    /// reload before the new rules serve.
    pub fn prepare(&self, rs: &crate::ruleset::RuleSet) {
        if let Some(model) = self.get(rs) {
            model.prepare(rs);
        }
    }

    /// The model's name, once chosen.
    pub fn name(&self) -> &str {
        match self.chosen.get() {
            Some(Some(m)) => m.name(),
            Some(None) => "none",
            None => "not chosen yet",
        }
    }
}

/// What every handler shares.
pub struct AppState {
    /// The serving rules.
    pub rules: Arc<LiveRules>,
    /// The router model.
    pub model: Arc<ModelSlot>,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// Limits and credentials.
    pub config: Config,
    /// The corpus replayed after every successful reload (`--corpus`).
    pub corpus: Option<Arc<playground::Corpus>>,
    /// The memory budget of request bodies in flight (`config.body_budget` bytes).
    pub budget: body::Budget,
    /// Where every decision is logged (`--decision-log`), if anywhere.
    pub decision_log: Option<decision_log::DecisionLog>,
    /// The shadow rules every decision is decided again with (`--shadow`), if any.
    pub shadow: Option<shadow::Shadow>,
}

/// Where a request came from, for the decision log: its endpoint, its id (the client's
/// `X-Request-Id`, else one made here) and the size of its body.
pub(crate) struct Origin {
    pub endpoint: &'static str,
    pub id: Option<String>,
    pub body_bytes: usize,
}

impl Origin {
    /// The origin of `req` at `endpoint` (the body's size is set once read).
    pub(crate) fn of(endpoint: &'static str, req: &HttpRequest) -> Self {
        // Printable ASCII, at most 128 characters: an id is a key, not a place for a payload.
        let id = req
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .filter(|v| {
                !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| (0x21..0x7f).contains(&b))
            })
            .map(str::to_owned);
        Self {
            endpoint,
            id,
            body_bytes: 0,
        }
    }
}

/// A request id unique in this process's life: its start time and a count.
fn new_request_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let start = *START.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    });
    format!("{start:x}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Longest message an error body carries, in characters: a message quoting a client's value
/// never echoes a large input back.
const MAX_ERROR_MESSAGE_CHARS: usize = 500;

/// A JSON error body: `{"error": {"code": …, "field": …, "message": …}}`.
pub(crate) fn error(
    status: StatusCode,
    code: &str,
    field: Option<&str>,
    message: &str,
) -> Response {
    let field = field.map(|f| cut_to(f, MAX_ERROR_MESSAGE_CHARS));
    let message = cut_to(message, MAX_ERROR_MESSAGE_CHARS);
    let body = json!({"error": {"code": code, "field": field, "message": message}});
    (status, Json(body)).into_response()
}

/// The service's routes.
pub fn app(state: Arc<AppState>) -> Router {
    let protected = Router::new()
        .route("/v1/route", post(route))
        .route("/v1/rules", get(rules_status))
        .route("/v1/rules/reload", post(reload))
        .route("/metrics", get(metrics))
        .route("/v1/catalogue", get(playground::catalogue))
        .route("/v1/try", post(playground::try_it))
        .route("/v1/replay/last", get(playground::replay_last))
        .route("/v1/shadow", get(shadow_differences))
        // Before any handler, so before a byte of a body is read.
        .route_layer(middleware::from_fn_with_state(state.clone(), auth));
    Router::new()
        // The page itself loads without the token; it asks for one when the API wants it.
        .route("/", get(playground::page))
        .route("/openapi.json", get(openapi_document))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .merge(protected)
        .method_not_allowed_fallback(|| async {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                None,
                "this endpoint does not take that method; the Allow header lists the ones it takes",
            )
        })
        .fallback(|| async { error(StatusCode::NOT_FOUND, "not_found", None, "no such endpoint") })
        .layer(middleware::from_fn(mark_working))
        .with_state(state)
}

/// Marks a request without a body as being worked on from the start (shutdown waits for it);
/// a request with a body is marked once its body has arrived ([`body::read_json`]), so a
/// half-sent upload never holds a shutdown.
async fn mark_working(req: HttpRequest, next: Next) -> Response {
    let has_body = req.headers().contains_key(header::TRANSFER_ENCODING)
        || req
            .headers()
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0");
    let _working = if has_body {
        None
    } else {
        req.extensions()
            .get::<conn::ConnHandle>()
            .map(conn::ConnHandle::working)
    };
    next.run(req).await
}

async fn auth(State(state): State<Arc<AppState>>, req: HttpRequest, next: Next) -> Response {
    let Some(token) = &state.config.token else {
        return next.run(req).await;
    };
    // The scheme is case-insensitive (RFC 9110, 11.1); the token is compared exactly.
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map_or("", |(_, token)| token.trim_start_matches(' '));
    if bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
        next.run(req).await
    } else {
        let mut resp = error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            None,
            "a valid bearer token is required",
        );
        resp.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        // Whatever body the client is sending is never read.
        resp.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
        resp
    }
}

/// A request refused after its body was read: counted, and answered with the JSON error.
pub(crate) fn bad_request(state: &AppState, code: &str, field: &str, message: &str) -> Response {
    state.metrics.bad_request();
    error(StatusCode::BAD_REQUEST, code, Some(field), message)
}

/// The body as UTF-8 text.
pub(crate) fn body_text<'a>(state: &AppState, bytes: &'a Bytes) -> Result<&'a str, Response> {
    simdutf8::basic::from_utf8(bytes)
        .map_err(|_| bad_request(state, "invalid_request", "body", "the body is not UTF-8"))
}

/// Decides `req` with the serving rules and `model` (the service's own when `None`), counts
/// it, logs it (`--decision-log`), and answers with `wrap` applied to the decision (the
/// response, and the decision's JSON when the response is just that, which the log then
/// reuses); `prefix` is
/// where the request sits in the body (`""` for `/v1/route`, `"request."` for `/v1/try`), for
/// the field an error names. The request's limits (`--max-message-chars`) are the engine's.
pub(crate) async fn decide_and_answer(
    state: &AppState,
    req: Request,
    origin: Origin,
    model: Option<&dyn Model>,
    prefix: &str,
    wrap: impl FnOnce(&crate::contract::Decision) -> (Response, Option<Bytes>),
) -> Response {
    let started = Instant::now();
    // One ruleset for the whole request, across the model call.
    let Some(rules) = state.rules.current() else {
        return not_ready();
    };
    let own = state.model.get(&rules);
    let model = model.or(own.as_deref());
    let options = engine::Options {
        model,
        limits: engine::Limits {
            max_message_chars: state.config.max_message_chars,
        },
        ..engine::Options::default()
    };
    let decision = engine::decide(&rules, &req, options).await;
    match decision {
        Ok(d) => {
            state.metrics.decision(&d, started.elapsed().as_secs_f64());
            // The answer is made first; the shadow and the log then take the request and the
            // decision off the request path, copied only when both want them.
            let (answer, json) = wrap(&d);
            let rules_only = model.is_none();
            let endpoint = origin.endpoint;
            match (&state.shadow, &state.decision_log) {
                (None, None) => {}
                (Some(shadow), None) => shadow.submit(origin.id, endpoint, rules_only, req, d),
                (shadow, Some(log)) => {
                    let id = origin.id.clone().unwrap_or_else(new_request_id);
                    if let Some(shadow) = shadow {
                        shadow.submit(origin.id, endpoint, rules_only, req.clone(), d.clone());
                    }
                    let router = model.map_or("none".into(), |m| m.name().to_owned().into());
                    log.record(id, endpoint, router, req, (d, json), origin.body_bytes);
                }
            }
            answer
        }
        Err(e) => bad_request(
            state,
            e.code(),
            &format!("{prefix}{}", e.field()),
            &e.to_string(),
        ),
    }
}

/// 503: no valid ruleset yet.
pub(crate) fn not_ready() -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "not_ready",
        None,
        "no valid ruleset is loaded; see GET /v1/rules",
    )
}

async fn route(State(state): State<Arc<AppState>>, req: HttpRequest) -> Response {
    let mut origin = Origin::of("/v1/route", &req);
    let body = match body::read_json(&state, req).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    origin.body_bytes = body.bytes.len();
    let text = match body_text(&state, &body.bytes) {
        Ok(t) => t,
        Err(resp) => return resp,
    };
    let req = match Request::from_json(text) {
        Ok(r) => r,
        Err(e) => return bad_request(&state, "invalid_request", &e.field, &e.message),
    };
    decide_and_answer(&state, req, origin, None, "", json_answer).await
}

/// The decision as the JSON answer, with its bytes for the decision log (what `Json` would
/// have written, serialised once for both).
fn json_answer(d: &crate::contract::Decision) -> (Response, Option<Bytes>) {
    // About what a decision with its trace takes, so the buffer seldom grows.
    let mut json = Vec::with_capacity(1 << 10);
    match serde_json::to_writer(&mut json, d) {
        Ok(()) => {
            let json = Bytes::from(json);
            let headers = [(header::CONTENT_TYPE, "application/json")];
            ((headers, json.clone()).into_response(), Some(json))
        }
        Err(_) => (Json(d).into_response(), None),
    }
}

/// `/openapi.json`: this service's own description (its message limit, and the token only
/// where one is set).
async fn openapi_document(State(state): State<Arc<AppState>>) -> Response {
    Json(openapi::document_with(&state.config)).into_response()
}

async fn rules_status(State(state): State<Arc<AppState>>) -> Response {
    let mut status = serde_json::to_value(state.rules.status()).unwrap_or_default();
    status["model"] = json!(state.model.name());
    // The shadow's own reload status (null: no --shadow).
    status["shadow"] = match &state.shadow {
        Some(shadow) => {
            let (rules, counts) = shadow.status();
            let mut v = serde_json::to_value(rules).unwrap_or_default();
            v["decisions"] = json!(counts);
            v
        }
        None => serde_json::Value::Null,
    };
    Json(status).into_response()
}

/// `/v1/shadow`: what the shadow rules (`--shadow`) did, and the last requests they decided
/// differently, newest first, with both decisions; 404 without `--shadow`.
async fn shadow_differences(State(state): State<Arc<AppState>>) -> Response {
    let Some(shadow) = &state.shadow else {
        return error(
            StatusCode::NOT_FOUND,
            "no_shadow",
            None,
            "the service runs without shadow rules; start it with --shadow DIR",
        );
    };
    let (counts, differences) = shadow.seen();
    let rules = shadow.rules();
    Json(json!({
        "dir": rules.dir(),
        "version": rules.current().map(|r| r.version.to_string()),
        "live_version": state.rules.current().map(|r| r.version.to_string()),
        "decisions": counts,
        "differences": differences,
    }))
    .into_response()
}

/// Reloads on a blocking thread (file IO and compilation) and records the result.
pub async fn reload_now(state: &AppState, trigger: Trigger) -> crate::reload::ReloadReport {
    let rules = state.rules.clone();
    let report = match tokio::task::spawn_blocking(move || rules.reload(trigger)).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "reload task failed");
            return crate::reload::ReloadReport {
                trigger,
                status: crate::reload::ReloadStatus::Failed,
                ok: false,
                changed: false,
                unchanged: false,
                version: state.rules.current().map(|r| r.version.to_string()),
                at_unix: 0.0,
                took_ms: 0.0,
                bytes_read: 0,
                diagnostics: Vec::new(),
                pending_removal: None,
            };
        }
    };
    record_reload(state, &report).await;
    report
}

/// Re-checks a pending removal of rule files on a blocking thread once its settle window has
/// passed, and records the result; `None` when nothing was pending any more.
pub async fn settle_now(state: &AppState) -> Option<crate::reload::ReloadReport> {
    let rules = state.rules.clone();
    match tokio::task::spawn_blocking(move || rules.settle()).await {
        Ok(Some(report)) => {
            record_reload(state, &report).await;
            Some(report)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::error!(error = %e, "reload task failed");
            None
        }
    }
}

async fn record_reload(state: &AppState, report: &crate::reload::ReloadReport) {
    state.metrics.rules_read(report.bytes_read);
    if let Some(pending) = &report.pending_removal {
        // Not a reload yet: logged, not counted.
        let files: Vec<String> = pending
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        tracing::info!(
            trigger = ?report.trigger,
            files = %files.join(", "),
            applies_in_ms = pending.applies_in_ms,
            "rule files removed; applying once the directory is quiet (putting them back cancels it)"
        );
    } else if !report.unchanged {
        // The same files as last time: said and counted already.
        log_reload(report);
        state.metrics.reload(report);
    }
    if report.changed {
        replay_corpus(state).await;
    }
}

/// Replays the corpus (when the service has one) with the rules serving now, so the page can
/// show what the last save changed.
pub async fn replay_corpus(state: &AppState) {
    if let (Some(corpus), Some(rules)) = (&state.corpus, state.rules.current()) {
        let model = state.model.get(&rules);
        corpus.replay(&rules, model).await;
    }
}

/// Logs a reload: a swap at info, a refused change at error with every diagnostic.
pub fn log_reload(r: &crate::reload::ReloadReport) {
    if !r.ok {
        let diagnostics: Vec<String> = r.diagnostics.iter().map(ToString::to_string).collect();
        tracing::error!(
            trigger = ?r.trigger,
            serving = r.version.as_deref().unwrap_or("none"),
            diagnostics = %diagnostics.join("\n"),
            "rules refused; the last good ruleset keeps serving"
        );
    } else if r.changed {
        tracing::info!(trigger = ?r.trigger, version = r.version.as_deref().unwrap_or(""), took_ms = r.took_ms, "rules reloaded");
    }
}

async fn reload(State(state): State<Arc<AppState>>) -> Response {
    let report = reload_now(&state, Trigger::Api).await;
    let status = if report.ok {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    (status, Json(report)).into_response()
}

async fn ready(State(state): State<Arc<AppState>>) -> Response {
    match state.rules.current() {
        Some(rs) => (StatusCode::OK, format!("ready {}\n", rs.version)).into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, "no valid ruleset loaded\n").into_response(),
    }
}

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    (
        // The encoder writes the OpenMetrics text format (it ends with `# EOF`).
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(state.rules.watcher_health().up),
    )
        .into_response()
}
