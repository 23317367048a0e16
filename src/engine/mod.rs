//! The pipeline for one message, one file per stage in request order:
//! [`pre`] (pre-rules; the first that fires settles the message) → [`router`] (the model call
//! and validation of its answer; skill and search switches taken out) → [`search`] (the web
//! search detector) → [`guards`] (vetoes) → the [`Decision`] with its [`trace`].
//!
//! A request borrows one `RuleSet` from start to end, across the model's `await`, so every
//! stage sees the same version.

pub mod eval;
mod guards;
mod pre;
pub mod probe;
pub mod request;
mod router;
mod search;
pub mod trace;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compile::RuleSet;
use crate::model::Model;
use eval::Ctx;
use request::{Request, RequestError};
pub use trace::{Stage, TraceStep};

/// How the message is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Words only: the chat model answers.
    Chat,
    /// The active skill answers.
    Skill,
    /// One or two tool calls.
    Tool,
}

/// A tool call that survived the pipeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    /// The tool's id.
    pub tool: Arc<str>,
    /// Its arguments.
    pub arguments: Value,
    /// The user must confirm it with a button (consequential action).
    pub confirm: bool,
    /// The line the client shows while the tool works.
    pub chip: Arc<str>,
}

/// What to do with the message, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// Chat, skill or tool.
    pub outcome: Outcome,
    /// The surviving calls, in execution order.
    pub calls: Vec<Call>,
    /// The active skill after this message.
    pub skill: Option<Arc<str>>,
    /// The badge of that skill.
    pub skill_badge: Option<Arc<str>>,
    /// Whether the answer uses web search.
    pub web_search: bool,
    /// Whether the router model was asked.
    pub model_called: bool,
    /// Every rule that fired or vetoed, in order.
    pub trace: Vec<TraceStep>,
    /// The version of the ruleset that decided.
    pub rules_version: Arc<str>,
    /// How the model call went, for metrics and logs (not part of the JSON decision).
    #[serde(skip)]
    pub model_call: Option<ModelCall>,
}

/// How long the router model took, and how it failed if it did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelCall {
    /// Time from the call to its answer (or to the timeout).
    pub latency: std::time::Duration,
    /// The failure kind (`ModelError::kind`), or a validation failure such as `unknown_tool`.
    pub error: Option<&'static str>,
}

/// A call on its way through the pipeline.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub tool: usize,
    pub arguments: Value,
}

/// Routes one message. `model: None` means rules only: the router is never called.
///
/// Call it inside a Tokio runtime with the time driver enabled (the model call has a timeout).
pub async fn decide(
    rs: &RuleSet,
    req: &Request,
    model: Option<&dyn Model>,
) -> Result<Decision, RequestError> {
    decide_probed(rs, req, model, None).await
}

/// [`decide`], recording in `probe` which word lists the conditions consulted (test coverage).
pub async fn decide_probed(
    rs: &RuleSet,
    req: &Request,
    model: Option<&dyn Model>,
    probe: Option<&probe::Probe>,
) -> Result<Decision, RequestError> {
    let normalized = prepare(rs, req)?;
    let mut run = Run::new(rs, req, &normalized);
    run.cx.probe = probe;
    if !run.pre_rules() {
        match model {
            Some(model) => run.call_model(model).await,
            None => run.note(Stage::Router, "not called", "model 'none': rules only"),
        }
    }
    Ok(run.finish())
}

/// Routes one message with rules only, without an async runtime (what `--model none` does).
pub fn decide_without_model(rs: &RuleSet, req: &Request) -> Result<Decision, RequestError> {
    let normalized = prepare(rs, req)?;
    let mut run = Run::new(rs, req, &normalized);
    if !run.pre_rules() {
        run.note(Stage::Router, "not called", "model 'none': rules only");
    }
    Ok(run.finish())
}

fn prepare(rs: &RuleSet, req: &Request) -> Result<String, RequestError> {
    req.check()?;
    Ok(rs
        .normalizer
        .normalize(req.user_message().unwrap_or_default()))
}

/// The state of one message in the pipeline.
pub(crate) struct Run<'a> {
    cx: Ctx<'a>,
    calls: Vec<Pending>,
    model_called: bool,
    model_call: Option<ModelCall>,
    model_search: bool,
    trace: Vec<TraceStep>,
}

impl<'a> Run<'a> {
    fn new(rs: &'a RuleSet, req: &'a Request, normalized: &'a str) -> Self {
        let mut trace = Vec::new();
        let skill = req.skill.as_deref().and_then(|id| {
            let found = rs.skill_ids.get(id).copied();
            if found.is_none() {
                trace.push(TraceStep::new(
                    Stage::Pre,
                    None,
                    "skill ignored",
                    format!("the request's skill '{id}' is not in the rules"),
                ));
            }
            found
        });
        Run {
            cx: Ctx {
                rs,
                req,
                text: normalized,
                chars: req.user_message().map_or(0, |m| m.chars().count()),
                skill,
                probe: None,
                last_hit: std::cell::Cell::new(None),
            },
            calls: Vec::new(),
            model_called: false,
            model_call: None,
            model_search: false,
            trace,
        }
    }

    fn note(&mut self, stage: Stage, effect: &'static str, why: &'static str) {
        self.trace.push(TraceStep::new(stage, None, effect, why));
    }

    fn finish(mut self) -> Decision {
        self.take_switches();
        let web_search = self.search();
        self.guards();
        let rs = self.cx.rs;
        let calls: Vec<Call> = self
            .calls
            .into_iter()
            .map(|p| {
                let tool = &rs.tools[p.tool];
                Call {
                    tool: tool.id.clone(),
                    arguments: p.arguments,
                    confirm: tool.confirm,
                    chip: tool.chip.clone(),
                }
            })
            .collect();
        let skill = self.cx.skill.map(|i| &rs.skills[i]);
        let outcome = if !calls.is_empty() {
            Outcome::Tool
        } else if skill.is_some() {
            Outcome::Skill
        } else {
            Outcome::Chat
        };
        Decision {
            outcome,
            calls,
            skill: skill.map(|s| s.id.clone()),
            skill_badge: skill.map(|s| s.badge.clone()),
            web_search,
            model_called: self.model_called,
            trace: self.trace,
            rules_version: rs.version.clone(),
            model_call: self.model_call,
        }
    }
}
