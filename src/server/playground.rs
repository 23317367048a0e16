//! The product manager's workbench in the service: the playground page at `/` (HTML, CSS and
//! JavaScript embedded in the binary), what it asks for (`/v1/catalogue`, `/v1/try`), and, when
//! the service is given a corpus (`--corpus FILE`), the replay diff of every saved edit
//! (`/v1/replay/last`): what the save changed on real traffic, seconds after saving.

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use axum::Json;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{AppState, bad_request, error};
use crate::contract::{Decision, GenerationMode};
use crate::model::Model;
use crate::model::scripted::ScriptedModel;
use crate::replay::{self, Line};
use crate::ruleset::RuleSet;

/// The page, built into the binary.
const PAGE: &str = include_str!("../../assets/playground.html");

pub(super) async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
        .into_response()
}

/// What the page needs to offer choices: skills, tools, generation modes, integrations.
pub(super) async fn catalogue(State(state): State<Arc<AppState>>) -> Response {
    let Some(rs) = state.rules.current() else {
        return super::not_ready();
    };
    let skills: Vec<Value> = rs
        .skills()
        .iter()
        .map(|s| json!({"id": s.id, "badge": s.badge, "auto": s.auto}))
        .collect();
    let tools: Vec<Value> = rs
        .tools()
        .iter()
        .map(
            |t| json!({"id": t.id, "chip": t.chip, "confirm": t.confirm, "arguments": t.arguments}),
        )
        .collect();
    let modes: Vec<&str> = GenerationMode::ALL.iter().map(|m| m.as_str()).collect();
    Json(json!({
        "version": rs.version,
        "skills": skills,
        "tools": tools,
        "generation_modes": modes,
        "integrations": rs.integrations(),
    }))
    .into_response()
}

/// One message with its context and, optionally, a scripted router answer: the decision. The
/// body goes through the same checks, limits and metrics as `/v1/route`.
pub(super) async fn try_it(State(state): State<Arc<AppState>>, req: HttpRequest) -> Response {
    let mut origin = super::Origin::of("/v1/try", &req);
    let body = match super::body::read_json(&state, req).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    origin.body_bytes = body.bytes.len();
    let text = match super::body_text(&state, &body.bytes) {
        Ok(t) => t,
        Err(resp) => return resp,
    };
    let parsed = match super::openapi::TryRequest::from_json(text) {
        Ok(t) => t,
        Err(e) => return bad_request(&state, "invalid_request", &e.field, &e.message),
    };
    let req = parsed.request;
    // With the router's answer as a test case's `model:` (none: the model was not asked), so
    // that a copied case replays what the page showed.
    let wrap = |d: &Decision| {
        let model = replay::log::recorded_script(d);
        (
            Json(json!({ "decision": d, "model": model })).into_response(),
            None,
        )
    };
    match &parsed.model {
        Some(script) => match ScriptedModel::from_script(Some(script)) {
            Ok(model) => {
                super::decide_and_answer(&state, req, origin, Some(&model), "request.", wrap).await
            }
            Err(e) => bad_request(&state, "invalid_request", "model", &e),
        },
        None => super::decide_and_answer(&state, req, origin, None, "request.", wrap).await,
    }
}

/// Examples the page shows per group of disagreements.
const DISAGREEMENT_EXAMPLES: usize = 5;

/// A rules version and the decisions it gave on the corpus.
type Replayed = (Arc<str>, Vec<Option<Decision>>);

/// The corpus a service replays after every successful reload, and the last result.
pub struct Corpus {
    lines: Vec<Line>,
    /// The decisions of the last version replayed, to compare the next one with.
    previous: std::sync::Mutex<Option<Replayed>>,
    last: ArcSwapOption<Value>,
}

impl Corpus {
    /// A corpus read from its text (see [`crate::replay::read_corpus`]); unreadable lines are
    /// returned for the caller to report.
    pub fn new(text: &str) -> (Self, Vec<replay::BadLine>) {
        let (lines, bad) = replay::read_corpus(text);
        (
            Self {
                lines,
                previous: std::sync::Mutex::new(None),
                last: ArcSwapOption::empty(),
            },
            bad,
        )
    }

    /// How many requests it holds.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Replays the corpus with `rs` and records the diff against the version replayed before.
    /// Lines without a recorded answer go to `model` when it is local (embedded, scripted);
    /// a hosted model is never called for a replay, so they are decided by the rules alone.
    pub async fn replay(&self, rs: &RuleSet, model: Option<Arc<dyn Model>>) {
        let local = model
            .as_ref()
            .filter(|m| !m.name().contains(':'))
            .map(|m| &**m);
        let decisions = replay::run(rs, &self.lines, local, |_| {}).await;
        let summary = replay::summarize(&self.lines, &decisions);
        // Where the rules and the model disagree on the corpus, as `turnout replay
        // --disagreements` reports it, with the answer each example was decided with.
        let found = replay::disagree::find(rs, &self.lines, &decisions, local).await;
        let disagreements = replay::disagree::report(
            &self.lines,
            &found,
            &replay::disagree::Kind::ALL,
            DISAGREEMENT_EXAMPLES,
        );
        let previous = {
            let mut slot = self.previous.lock().unwrap_or_else(|p| p.into_inner());
            slot.replace((rs.version.clone(), decisions.clone()))
        };
        let (from_version, diff, before) = match &previous {
            Some((v, old)) if **v != *rs.version => (
                Some(v.to_string()),
                Some(replay::diff(&self.lines, old, &decisions)),
                Some(replay::summarize(&self.lines, old)),
            ),
            _ => (None, None, None),
        };
        let report = json!({
            "from_version": from_version,
            "to_version": rs.version,
            "at_unix": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            "lines": self.lines.len(),
            "model": local.map_or("none", |m| m.name()),
            "diff": diff,
            "summary": summary,
            // The previous version's summary: the page's chart shows before → after.
            "summary_before": before,
            "disagreements": disagreements,
        });
        self.last.store(Some(Arc::new(report)));
    }
}

/// The last corpus replay: what the last save changed.
pub(super) async fn replay_last(State(state): State<Arc<AppState>>) -> Response {
    let Some(corpus) = &state.corpus else {
        return error(
            StatusCode::NOT_FOUND,
            "no_corpus",
            None,
            "the service was started without --corpus",
        );
    };
    match corpus.last.load_full() {
        Some(v) => Json((*v).clone()).into_response(),
        None => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            None,
            "the corpus has not been replayed yet",
        ),
    }
}
