//! Where the rules and the router model disagree on a replay (`turnout replay --disagreements`):
//! for deterministic rules, exactly where they miss.
//!
//! Four kinds, each grouped and counted with examples:
//! - **candidate phrases**: the model asked for web search and no search rule would have
//!   (the line decided once more with the model's search call taken out of its answer);
//! - **candidate false positives**: a search rule turned web search on, and the model, asked,
//!   did not ask for it;
//! - **guard vetoes**: a guard dropped a call of the model's answer;
//! - **pre-rules**: a pre-rule settled the message before the model was asked.
//!
//! Each found line can be written as a rule test case ([`cases`]): its request, the router's
//! answer (without the search call, for a candidate phrase, so that the case tests the search
//! rules), and what the rules decide now as its `expect`. The cases pass as written; a product
//! manager flips the expectations that should change, and the rules follow.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Line, context, decide_line, label};
use crate::contract::{Decision, Stage};
use crate::model::Model;
use crate::rules::testcase::{Case, Expect, ModelScript, ScriptedCall, TestFile};
use crate::ruleset::RuleSet;

/// A kind of disagreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Kind {
    /// The model asked for web search; no search rule would have.
    CandidatePhrase,
    /// A search rule turned web search on; the model did not ask.
    CandidateFalsePositive,
    /// A guard dropped a call the model made.
    GuardVeto,
    /// A pre-rule settled the message; the model was not asked.
    PreRule,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 4] = [
        Self::CandidatePhrase,
        Self::CandidateFalsePositive,
        Self::GuardVeto,
        Self::PreRule,
    ];

    /// What it means, for people.
    pub fn title(self) -> &'static str {
        match self {
            Self::CandidatePhrase => {
                "the model asked for web search and no search rule fired (candidate phrases)"
            }
            Self::CandidateFalsePositive => {
                "search rules fired and the model did not ask (candidate false positives)"
            }
            Self::GuardVeto => "guards vetoed the model",
            Self::PreRule => "pre-rules settled the message (the model was not asked)",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::CandidatePhrase => "candidate phrase",
            Self::CandidateFalsePositive => "candidate false positive",
            Self::GuardVeto => "guard veto",
            Self::PreRule => "pre-rule",
        }
    }
}

/// One line that shows a disagreement.
#[derive(Debug, Clone)]
pub struct Found {
    /// Which kind.
    pub kind: Kind,
    /// What it is grouped by: the rule (and what it did), or the decision for a phrase.
    pub key: String,
    /// The line's index in the replayed lines.
    pub index: usize,
    /// The router's answer the case is written with.
    pub model: Option<ModelScript>,
    /// What the rules decide with that answer.
    pub decision: Decision,
}

/// A line of a group, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct Example {
    /// Its line number.
    pub line: usize,
    /// Its id.
    pub id: Option<String>,
    /// The user's message.
    pub message: String,
    /// The request's context and the recorded answer ([`context::shown`]).
    pub context: Vec<String>,
    /// The decision, in a few words.
    pub decision: String,
    /// The whole request.
    pub request: crate::contract::Request,
    /// The router's answer it was decided with, as a test case's `model:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelScript>,
}

/// The lines of one kind that share a key.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// The rule (and its effect), or the decision.
    pub key: String,
    /// How many lines.
    pub count: usize,
    /// The first of them.
    pub examples: Vec<Example>,
}

/// The lines of one kind.
#[derive(Debug, Clone, Serialize)]
pub struct KindReport {
    /// Which kind.
    pub kind: Kind,
    /// What it means.
    pub title: &'static str,
    /// How many lines.
    pub count: usize,
    /// Grouped, the largest group first.
    pub groups: Vec<Group>,
}

/// The tool the model asks for web search with, in `rs`.
fn search_tool(rs: &RuleSet) -> Option<&str> {
    rs.search.as_ref().map(|s| &*rs.tools[s.tool].id)
}

/// The router's answer a decision was made with, as a test case's `model:` section: the line's
/// recorded answer, else what the model answered during the replay.
fn answer_of(rs: &RuleSet, line: &Line, d: &Decision) -> Option<ModelScript> {
    if line.model.is_some() {
        return line.model.clone();
    }
    let call = d.model_call.as_ref()?;
    match &call.received {
        Some(calls) => Some(ModelScript {
            calls: calls
                .iter()
                .map(|c| ScriptedCall {
                    tool: c.tool.clone(),
                    arguments: c.arguments.clone(),
                    unknown: rs.tool(&c.tool).is_none(),
                })
                .collect(),
            error: None,
        }),
        None => Some(ModelScript {
            calls: Vec::new(),
            error: Some(super::log::script_error(call.error.unwrap_or("unknown")).to_owned()),
        }),
    }
}

/// Every disagreement on `lines`, decided by `rs` as `decisions` (made by [`super::run`] with
/// `model`), in line order.
pub async fn find(
    rs: &RuleSet,
    lines: &[Line],
    decisions: &[Option<Decision>],
    model: Option<&dyn Model>,
) -> Vec<Found> {
    let search = search_tool(rs);
    let mut out = Vec::new();
    for (index, (line, d)) in lines.iter().zip(decisions).enumerate() {
        let Some(d) = d else { continue };
        let received = d.model_call.as_ref().and_then(|c| c.received.as_ref());
        let asked_search =
            received.is_some_and(|calls| calls.iter().any(|c| Some(c.tool.as_str()) == search));
        let found = |kind, key: String, model, decision| Found {
            kind,
            key,
            index,
            model,
            decision,
        };
        if let (true, true, Some(tool)) = (asked_search, d.web_search, search) {
            // Would a search rule have turned it on, had the model not asked?
            if let Some(alone) = decide_line(rs, line, model, None, Some(tool)).await {
                let by_rule = alone
                    .trace
                    .iter()
                    .any(|s| s.stage == Stage::Search && s.rule.is_some());
                if !by_rule {
                    let mut script = answer_of(rs, line, d);
                    if let Some(s) = &mut script {
                        s.calls.retain(|c| c.tool != tool);
                    }
                    out.push(found(Kind::CandidatePhrase, label(&alone), script, alone));
                }
            }
        }
        for step in &d.trace {
            let Some(rule) = step.rule.as_deref() else {
                continue;
            };
            let kind = match step.stage {
                Stage::Search if received.is_some() && !asked_search => {
                    Kind::CandidateFalsePositive
                }
                Stage::Guard if received.is_some_and(|c| !c.is_empty()) => Kind::GuardVeto,
                Stage::Pre if !d.model_called && step.effect.starts_with("settled") => {
                    Kind::PreRule
                }
                _ => continue,
            };
            let key = match kind {
                Kind::GuardVeto => format!("{rule} ({})", step.effect),
                _ => rule.to_owned(),
            };
            out.push(found(kind, key, answer_of(rs, line, d), d.clone()));
        }
    }
    out
}

/// `found` grouped by kind (only `kinds`) and key, with up to `examples` lines a group.
pub fn report(lines: &[Line], found: &[Found], kinds: &[Kind], examples: usize) -> Vec<KindReport> {
    let mut out = Vec::new();
    for kind in Kind::ALL.into_iter().filter(|k| kinds.contains(k)) {
        let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
        let mut count = 0;
        for f in found.iter().filter(|f| f.kind == kind) {
            count += 1;
            let group = groups.entry(&f.key).or_insert_with(|| Group {
                key: f.key.clone(),
                count: 0,
                examples: Vec::new(),
            });
            group.count += 1;
            if group.examples.len() < examples {
                let line = &lines[f.index];
                group.examples.push(Example {
                    line: line.number,
                    id: line.id.clone(),
                    message: line.request.user_message().unwrap_or_default().to_owned(),
                    context: context::shown(line),
                    decision: label(&f.decision),
                    request: line.request.clone(),
                    model: f.model.clone(),
                });
            }
        }
        let mut groups: Vec<Group> = groups.into_values().collect();
        groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
        out.push(KindReport {
            kind,
            title: kind.title(),
            count,
            groups,
        });
    }
    out
}

/// Longest message quoted in a case's name, in characters.
const NAME_CHARS: usize = 60;

/// The lines of `found` of `kinds` as rule test cases (at most `max`; a line found twice is
/// written once): the request, the answer, and the decision as `expect`.
pub fn cases(lines: &[Line], found: &[Found], kinds: &[Kind], max: usize) -> TestFile {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for f in found.iter().filter(|f| kinds.contains(&f.kind)) {
        if out.len() >= max {
            break;
        }
        if !seen.insert(f.index) {
            continue;
        }
        let line = &lines[f.index];
        let message = line.request.user_message().unwrap_or_default();
        let d = &f.decision;
        let where_from = line
            .id
            .clone()
            .unwrap_or_else(|| format!("line {}", line.number));
        out.push(Case {
            name: format!(
                "{} ({}, {where_from}): {}",
                f.kind.name(),
                f.key,
                crate::contract::parse::cut_to(message, NAME_CHARS)
            ),
            behaviours: Vec::new(),
            request: line.request.clone(),
            model: f.model.clone(),
            expect: Expect {
                outcome: Some(d.outcome),
                tools: Some(d.calls.iter().map(|c| c.tool.to_string()).collect()),
                skill: Some(d.skill.as_deref().map(str::to_owned)),
                web_search: Some(d.web_search),
                model_called: Some(d.model_called),
                ..Expect::default()
            },
        });
    }
    TestFile { cases: out }
}
