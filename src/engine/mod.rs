//! The pipeline for one message, one file per stage in request order:
//! `pre` (pre-rules; the first that fires settles the message) → `router` (the model call
//! and validation of its answer; skill and search switches taken out) → `search` (the web
//! search detector) → `guards` (vetoes) → the [`Decision`] with its trace.
//!
//! A request borrows one `RuleSet` from start to end, across the model's `await`, so every
//! stage sees the same version.

pub(crate) mod eval;
mod guards;
mod pre;
pub(crate) mod probe;
mod router;
mod search;

use crate::compile::RuleSet;
use crate::contract::{
    Call, Decision, EffectKind, ModelCall, Outcome, Request, RequestError, Stage, TraceStep,
};
use crate::model::Model;
use crate::text::Normalized;
use eval::{Ctx, Pending};

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
pub(crate) async fn decide_probed(
    rs: &RuleSet,
    req: &Request,
    model: Option<&dyn Model>,
    probe: Option<&probe::Probe>,
) -> Result<Decision, RequestError> {
    decide_inner(rs, req, model, probe, None).await
}

/// [`decide`] as if the pre-rule, search rule, guard or context rule `rule` were not in the
/// rules: what a replay asks to tell a rule that decided a message from one that agreed with
/// the model.
pub async fn decide_without_rule(
    rs: &RuleSet,
    req: &Request,
    model: Option<&dyn Model>,
    rule: &str,
) -> Result<Decision, RequestError> {
    decide_inner(rs, req, model, None, Some(rule)).await
}

async fn decide_inner(
    rs: &RuleSet,
    req: &Request,
    model: Option<&dyn Model>,
    probe: Option<&probe::Probe>,
    skip: Option<&str>,
) -> Result<Decision, RequestError> {
    let normalized = prepare(rs, req)?;
    let mut run = Run::new(rs, req, &normalized);
    run.cx.probe = probe;
    run.skip = skip;
    if !run.pre_rules() {
        match model {
            Some(model) => run.call_model(model).await,
            None => run.not_called(),
        }
    }
    Ok(run.finish())
}

/// Routes one message with rules only, without an async runtime (what `--model none` does).
pub fn decide_without_model(rs: &RuleSet, req: &Request) -> Result<Decision, RequestError> {
    let normalized = prepare(rs, req)?;
    let mut run = Run::new(rs, req, &normalized);
    if !run.pre_rules() {
        run.not_called();
    }
    Ok(run.finish())
}

fn prepare(rs: &RuleSet, req: &Request) -> Result<Normalized, RequestError> {
    req.check()?;
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
    /// A rule to act as if absent ([`decide_without_rule`]).
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
