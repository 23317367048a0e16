//! The HTTP service: [`app`] builds the router (testable without a socket), [`conn::serve`] serves it
//! until a shutdown signal and then lets in-flight requests finish.
//!
//! Client mistakes get a 4xx with a JSON body naming the field; nothing a client sends can
//! cause a 500 or a panic.

pub mod conn;
pub mod metrics;
pub mod openapi;
pub mod playground;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request as HttpRequest, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use subtle::ConstantTimeEq;

use crate::contract::ModelSpec;
use crate::contract::Request;
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
    /// The bearer token clients must send, if any.
    pub token: Option<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("body_limit", &self.body_limit)
            .field("body_timeout", &self.body_timeout)
            .field("max_message_chars", &self.max_message_chars)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            body_limit: 1 << 20,
            body_timeout: Duration::from_secs(10),
            max_message_chars: 16_000,
            token: None,
        }
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
    pub fn get(&self, rs: &crate::compile::RuleSet) -> Option<Arc<dyn Model>> {
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
    pub fn prepare(&self, rs: &crate::compile::RuleSet) {
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
}

/// A JSON error body: `{"error": {"code": …, "field": …, "message": …}}`.
fn error(status: StatusCode, code: &str, field: Option<&str>, message: &str) -> Response {
    let body = json!({"error": {"code": code, "field": field, "message": message}});
    (status, Json(body)).into_response()
}

/// The service's routes.
pub fn app(state: Arc<AppState>) -> Router {
    let body_limit = state.config.body_limit;
    let protected = Router::new()
        .route("/v1/route", post(route))
        .route("/v1/rules", get(rules_status))
        .route("/v1/rules/reload", post(reload))
        .route("/metrics", get(metrics))
        .route("/v1/catalogue", get(playground::catalogue))
        .route("/v1/try", post(playground::try_it))
        .route("/v1/replay/last", get(playground::replay_last))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth));
    Router::new()
        // The page itself loads without the token; it asks for one when the API wants it.
        .route("/", get(playground::page))
        .route("/openapi.json", get(|| async { Json(openapi::document()) }))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .merge(protected)
        .fallback(|| async { error(StatusCode::NOT_FOUND, "not_found", None, "no such endpoint") })
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(middleware::from_fn_with_state(state.clone(), read_body))
        .with_state(state)
}

/// Reads the whole body first, within the size limit and the body timeout, so that a slow or
/// stalled upload is answered (413, 408) instead of holding a worker; then marks the request as
/// being worked on (its connection is not closed for room or idleness while it is decided).
async fn read_body(State(state): State<Arc<AppState>>, req: HttpRequest, next: Next) -> Response {
    use http_body_util::BodyExt as _;
    let (parts, body) = req.into_parts();
    let limit = state.config.body_limit;
    let limited = http_body_util::Limited::new(body, limit);
    let bytes = match tokio::time::timeout(state.config.body_timeout, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            state.metrics.bad_request();
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                Some("body"),
                &format!("the body is larger than {limit} bytes"),
            );
        }
        Ok(Err(_)) => {
            state.metrics.bad_request();
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                Some("body"),
                "the body could not be read",
            );
        }
        Err(_) => {
            state.metrics.bad_request();
            let mut resp = error(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                Some("body"),
                &format!(
                    "the body did not arrive within {} s",
                    state.config.body_timeout.as_secs_f64()
                ),
            );
            resp.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            return resp;
        }
    };
    let _working = parts
        .extensions
        .get::<conn::ConnHandle>()
        .map(conn::ConnHandle::working);
    next.run(HttpRequest::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
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
        resp
    }
}

async fn route(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    let started = Instant::now();
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .is_none_or(|v| is_json_media_type(v.as_bytes()));
    if !json_body {
        state.metrics.bad_request();
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            None,
            "send the request as application/json",
        );
    }
    let Ok(text) = simdutf8::basic::from_utf8(&body) else {
        state.metrics.bad_request();
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            Some("body"),
            "the body is not UTF-8",
        );
    };
    let req = match Request::from_json(text) {
        Ok(r) => r,
        Err(e) => {
            state.metrics.bad_request();
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                Some(&e.field),
                &e.message,
            );
        }
    };
    let max = state.config.max_message_chars;
    if let Some(i) = req
        .messages
        .iter()
        .position(|m| m.content.chars().count() > max)
    {
        state.metrics.bad_request();
        let field = format!("messages[{i}].content");
        let message = format!("the message is longer than {max} characters");
        return error(
            StatusCode::BAD_REQUEST,
            "message_too_long",
            Some(&field),
            &message,
        );
    }
    // One ruleset for the whole request, across the model call.
    let Some(rules) = state.rules.current() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            None,
            "no valid ruleset is loaded; see GET /v1/rules",
        );
    };
    let decision = match state.model.get(&rules) {
        Some(model) => engine::decide(&rules, &req, Some(&*model)).await,
        None => engine::decide_without_model(&rules, &req),
    };
    match decision {
        Ok(d) => {
            state.metrics.decision(&d, started.elapsed().as_secs_f64());
            Json(d).into_response()
        }
        Err(e) => {
            state.metrics.bad_request();
            error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                Some(e.field()),
                &e.to_string(),
            )
        }
    }
}

/// Whether a `Content-Type` value is JSON: the media type `application/json` (any case, with
/// or without parameters such as `charset`), not merely a value starting with those letters.
fn is_json_media_type(value: &[u8]) -> bool {
    let Ok(value) = std::str::from_utf8(value) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

async fn rules_status(State(state): State<Arc<AppState>>) -> Response {
    let mut status = serde_json::to_value(state.rules.status()).unwrap_or_default();
    status["model"] = json!(state.model.name());
    Json(status).into_response()
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
