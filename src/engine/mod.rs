//! The pipeline for one message, one file per stage in request order:
//! `pre` (pre-rules; the first that fires settles the message) → `router` (the model call
//! and validation of its answer; skill and search switches taken out) → `search` (the web
//! search detector) → `guards` (vetoes) → the [`Decision`] with its trace.
//!
//! A request borrows one `RuleSet` from start to end, across the model's `await`, so every
//! stage sees the same version.

pub(crate) mod eval;
mod guards;
mod jsonl;
mod pre;
pub(crate) mod probe;
mod router;
mod search;

use crate::contract::{
    Call, Decision, EffectKind, ModelCall, Outcome, Request, RequestError, Stage, TraceStep,
};
use crate::model::Model;
use crate::ruleset::RuleSet;
use crate::text::Normalized;
use eval::{Ctx, Pending};
pub use jsonl::{Jsonl, JsonlError};

/// What a request is held to beyond its format, whoever decides it: the service
/// (`serve --max-message-chars`), `route`, `replay` and the test cases alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest message, in characters.
    pub max_message_chars: usize,
}

impl Limits {
    /// `turnout serve`'s and `turnout route`'s defaults (their flags' defaults are these).
    pub const DEFAULT: Self = Self {
        max_message_chars: 16_000,
    };

    /// No limit: for requests a service has already accepted (a replay of its log, the shadow).
    pub const NONE: Self = Self {
        max_message_chars: usize::MAX,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How to decide a request: the router model (`None`: rules only, the router is never called)
/// and the limits.
#[derive(Clone, Copy, Default)]
pub struct Options<'a> {
    /// The router model.
    pub model: Option<&'a dyn Model>,
    /// What the request is held to.
    pub limits: Limits,
    /// Records which word lists the conditions consulted (test coverage).
    pub(crate) probe: Option<&'a probe::Probe>,
    /// A pre-rule, search rule, guard or context rule to act as if absent: what a replay asks
    /// to tell a rule that decided a message from one that agreed with the model.
    pub skip: Option<&'a str>,
}

impl<'a> Options<'a> {
    /// With `model` and the default limits.
    pub fn model(model: Option<&'a dyn Model>) -> Self {
        Self {
            model,
            ..Self::default()
        }
    }
}

/// Routes one message: the one way every caller decides (the service, `route`, `replay`, the
/// test cases). Call it inside a Tokio runtime with the time driver enabled when there is a
/// model (its call has a timeout); rules only, it never waits ([`ready`] runs it).
pub async fn decide(
    rs: &RuleSet,
    req: &Request,
    options: Options<'_>,
) -> Result<Decision, RequestError> {
    let normalized = prepare(rs, req, &options.limits)?;
    let mut run = Run::new(rs, req, &normalized);
    run.cx.probe = options.probe;
    run.skip = options.skip;
    if !run.pre_rules() {
        match options.model {
            Some(model) => run.call_model(model).await,
            None => run.not_called(),
        }
    }
    Ok(run.finish())
}

/// Runs a decision that does not wait (rules only: [`decide`] without a model) to its end on
/// this thread, without a runtime; `None` if it waited after all.
pub fn ready<T>(decision: impl Future<Output = T>) -> Option<T> {
    let decision = std::pin::pin!(decision);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match decision.poll(&mut cx) {
        std::task::Poll::Ready(d) => Some(d),
        std::task::Poll::Pending => None,
    }
}

/// Rules only, with the default limits, without an async runtime: [`decide`] with no model,
/// run by [`ready`].
pub fn decide_without_model(rs: &RuleSet, req: &Request) -> Result<Decision, RequestError> {
    ready(decide(rs, req, Options::default()))
        .unwrap_or_else(|| unreachable!("a decision without a model never waits"))
}

fn prepare(rs: &RuleSet, req: &Request, limits: &Limits) -> Result<Normalized, RequestError> {
    req.check()?;
    req.check_limits(limits.max_message_chars)?;
    Ok(rs
        .normalizer
        .normalize_mapped(req.user_message().unwrap_or_default()))
}

/// The state of one message in the pipeline.
pub(crate) struct Run<'a> {
    cx: Ctx<'a>,
    calls: Vec<Pending>,
    model_called: bool,
    model_call: Option<ModelCall>,
    model_search: bool,
    trace: Vec<TraceStep>,
    /// A rule to act as if absent ([`Options::skip`]).
    skip: Option<&'a str>,
}

impl<'a> Run<'a> {
    fn new(rs: &'a RuleSet, req: &'a Request, normalized: &'a Normalized) -> Self {
        // A decision's trace is a few steps: room for them, instead of growing by copies.
        let mut trace = Vec::with_capacity(6);
        let skill = req.skill.as_deref().and_then(|id| {
            let found = rs.skill_ids.get(id).copied();
            if found.is_none() {
                trace.push(
                    TraceStep::new(
                        Stage::Pre,
                        None,
                        "skill ignored",
                        format!("the request's skill '{id}' is not in the rules"),
                    )
                    .kind(EffectKind::SkillIgnored)
                    .subject(id),
                );
            }
            found
        });
        Run {
            cx: Ctx {
                rs,
                req,
                text: &normalized.text,
                norm: normalized,
                chars: req.user_message().map_or(0, |m| m.chars().count()),
                skill,
                probe: None,
                hits: rs.scanner.scan_normalized(normalized),
                words: std::cell::Cell::new(None),
                part: std::cell::OnceCell::new(),
            },
            calls: Vec::new(),
            model_called: false,
            model_call: None,
            model_search: false,
            trace,
            skip: None,
        }
    }

    /// Whether the rule `id` is to be passed over.
    fn skips(&self, id: &str) -> bool {
        self.skip == Some(id)
    }

    fn not_called(&mut self) {
        self.trace.push(
            TraceStep::new(
                Stage::Router,
                None,
                "not called",
                "model 'none': rules only",
            )
            .kind(EffectKind::NotCalled),
        );
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
