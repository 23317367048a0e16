//! Replaying a corpus of requests: what a rules version does to real traffic, and exactly what
//! an edit changes (`turnout replay`, and the service's `--corpus`).
//!
//! A corpus is JSON lines. A line is a request, or `{"id", "request", "model", "expect"}`: the
//! request, optionally the router answer recorded for it (a test case's `model:` section, so a
//! replay is deterministic and free), and optionally a partial expected decision (a test case's
//! `expect:`). Lines without a recorded answer go to the replay's model.
//!
//! A decision log (`turnout serve --decision-log`, see [`log`]) is read as it is: each line's
//! request, the router's answer as recorded, and the decision the service gave, which a replay
//! without `--against` is compared with. A line logged without its texts cannot be replayed and
//! is counted apart.
//!
//! Two decisions are the same when the user would see the same thing: outcome, calls (tool,
//! arguments, confirmation), skill, web search, and whether the model was asked. The version and
//! the trace's words are not compared; the rules in the trace name what made a difference.

mod attribution;
pub mod context;
pub mod disagree;
pub mod log;

pub use attribution::{RuleEffect, attribute};
pub use context::{Expectations, expectations};

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::contract::{Decision, Outcome, Request};
use crate::engine;
use crate::model::Model;
use crate::model::scripted::ScriptedModel;
use crate::rules::testcase::{Expect, ModelScript};
use crate::ruleset::RuleSet;
use crate::testing;

/// One line of a corpus.
#[derive(Debug, Clone)]
pub struct Line {
    /// Its line number in the file, from 1.
    pub number: usize,
    /// The id it carries, if any.
    pub id: Option<String>,
    /// The request.
    pub request: Request,
    /// The router answer recorded for it.
    pub model: Option<ModelScript>,
    /// What the decision must be (only the keys given).
    pub expect: Option<Expect>,
    /// The decision the service gave (a decision log's line).
    pub recorded: Option<Decision>,
    /// Decided by the rules alone where no answer is recorded: the service that logged it had
    /// no model (`--model none`).
    pub rules_only: bool,
}

/// A line that is not a usable request.
#[derive(Debug, Clone, Serialize)]
pub struct BadLine {
    /// Its line number, from 1.
    pub line: usize,
    /// Why.
    pub error: String,
}

/// A corpus or decision log, read.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    /// The lines that can be replayed.
    pub lines: Vec<Line>,
    /// The lines that are not usable requests.
    pub bad: Vec<BadLine>,
    /// The decision log lines written without their message texts (`--log-messages hash|none`).
    pub without_texts: Vec<BadLine>,
}

/// Reads a corpus: every usable line, and every line that is not (a decision log line without
/// its texts among them).
pub fn read_corpus(text: &str) -> (Vec<Line>, Vec<BadLine>) {
    let mut read = read_lines(text);
    read.bad.append(&mut read.without_texts);
    read.bad.sort_by_key(|b| b.line);
    (read.lines, read.bad)
}

/// Reads a corpus or a decision log (or a mix): the lines that can be replayed, those that are
/// not usable, and the log lines that carry no message text.
pub fn read_lines(text: &str) -> Lines {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wrapped {
        #[serde(default)]
        id: Option<String>,
        request: Value,
        #[serde(default)]
        model: Option<ModelScript>,
        #[serde(default)]
        expect: Option<Expect>,
    }
    let mut lines = Vec::new();
    let mut bad = Vec::new();
    let mut without_texts = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(raw) {
            Ok(v) => v,
            Err(e) => {
                bad.push(BadLine {
                    line: number,
                    error: format!("not JSON: {e}"),
                });
                continue;
            }
        };
        if log::is_log_line(&value) {
            match log::read(&value) {
                Ok(log::Read::Replayable {
                    id,
                    request,
                    model,
                    rules_only,
                    decision,
                }) => lines.push(Line {
                    number,
                    id,
                    request: *request,
                    model,
                    expect: None,
                    recorded: decision.map(|d| *d),
                    rules_only,
                }),
                Ok(log::Read::WithoutTexts { mode }) => without_texts.push(BadLine {
                    line: number,
                    error: format!(
                        "logged with --log-messages {mode}: the message texts are not in the log, so this line cannot be replayed"
                    ),
                }),
                Err(error) => bad.push(BadLine {
                    line: number,
                    error: format!("decision log line: {error}"),
                }),
            }
            continue;
        }
        let parsed = if value.get("request").is_some() {
            serde_json::from_value::<Wrapped>(value)
                .map_err(|e| e.to_string())
                .and_then(|w| {
                    Request::from_json(&w.request.to_string())
                        .map(|r| (w.id, r, w.model, w.expect))
                        .map_err(|e| e.to_string())
                })
        } else {
            Request::from_json(raw)
                .map(|r| (None, r, None, None))
                .map_err(|e| e.to_string())
        };
        match parsed {
            Ok((id, request, model, expect)) => lines.push(Line {
                number,
                id,
                request,
                model,
                expect,
                recorded: None,
                rules_only: false,
            }),
            Err(error) => bad.push(BadLine {
                line: number,
                error,
            }),
        }
    }
    Lines {
        lines,
        bad,
        without_texts,
    }
}

/// The decisions the lines record (a decision log's), one per line; `None` when no line
/// records one (a corpus). [`diff`] passes over the lines without one.
pub fn recorded(lines: &[Line]) -> Option<Vec<Option<Decision>>> {
    lines
        .iter()
        .any(|l| l.recorded.is_some())
        .then(|| lines.iter().map(|l| l.recorded.clone()).collect())
}

/// Decides every line with `rs`: the recorded answer where there is one, else `model` (`None`:
/// rules only; and for a line logged by a service without a model). `progress` is told how
/// many lines are done.
pub async fn run(
    rs: &RuleSet,
    lines: &[Line],
    model: Option<&dyn Model>,
    mut progress: impl FnMut(usize),
) -> Vec<Option<Decision>> {
    let mut out = Vec::with_capacity(lines.len());
    for (done, line) in lines.iter().enumerate() {
        out.push(decide_line(rs, line, model, None, None).await);
        progress(done + 1);
    }
    out
}

/// One line's decision from its recorded answer alone, never asking a model: a line without
/// one is decided by the rules alone (what the shadow rules of `serve --shadow` do).
pub async fn decide_recorded(rs: &RuleSet, line: &Line) -> Option<Decision> {
    decide_line(rs, line, None, None, None).await
}

/// One line's decision, as [`run`] makes it; with `skip`, as if that rule were not in `rs`;
/// with `drop_tool`, as if the model had not called that tool.
async fn decide_line(
    rs: &RuleSet,
    line: &Line,
    model: Option<&dyn Model>,
    skip: Option<&str>,
    drop_tool: Option<&str>,
) -> Option<Decision> {
    let scripted;
    let without;
    let mut model: Option<&dyn Model> = match &line.model {
        Some(script) => {
            scripted = ScriptedModel::from_script(Some(script)).ok()?;
            Some(&scripted)
        }
        None => model.filter(|_| !line.rules_only),
    };
    if let (Some(inner), Some(tool)) = (model, drop_tool) {
        without = attribution::Without { inner, tool };
        model = Some(&without);
    }
    // A logged request was accepted by the service that logged it, under its own limits.
    let options = engine::Options {
        model,
        skip,
        limits: engine::Limits::NONE,
        ..engine::Options::default()
    };
    engine::decide(rs, &line.request, options).await.ok()
}

/// What a replay gave, counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Lines decided.
    pub total: usize,
    /// Decisions by outcome.
    pub outcomes: BTreeMap<String, usize>,
    /// Calls by tool.
    pub tools: BTreeMap<String, usize>,
    /// Decisions with web search on.
    pub web_search: usize,
    /// Decisions by the skill active after them.
    pub skills: BTreeMap<String, usize>,
    /// How often each rule is in a trace (fired, or vetoed a call).
    pub rules: BTreeMap<String, usize>,
    /// Lines with an `expect`, and how many of those the decision does not match.
    pub expected: usize,
    /// Lines whose decision differs from their `expect`.
    pub unexpected: Vec<Unexpected>,
}

/// A line whose decision is not what it expects.
#[derive(Debug, Clone, Serialize)]
pub struct Unexpected {
    /// Its line number.
    pub line: usize,
    /// Its id.
    pub id: Option<String>,
    /// The user's message.
    pub message: String,
    /// The request's context and the recorded answer, in a few words each
    /// ([`context::shown`]).
    pub context: Vec<String>,
    /// What differed.
    pub failures: Vec<String>,
}

impl Unexpected {
    fn of(line: &Line, failures: Vec<String>) -> Self {
        Self {
            line: line.number,
            id: line.id.clone(),
            message: line.request.user_message().unwrap_or_default().to_owned(),
            context: context::shown(line),
            failures,
        }
    }
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Chat => "chat",
        Outcome::Skill => "skill",
        Outcome::Tool => "tool",
    }
}

/// Counts what `decisions` (one per line, in order) did.
pub fn summarize(lines: &[Line], decisions: &[Option<Decision>]) -> Summary {
    let mut s = Summary::default();
    for (line, d) in lines.iter().zip(decisions) {
        let Some(d) = d else { continue };
        s.total += 1;
        *s.outcomes
            .entry(outcome_name(d.outcome).to_owned())
            .or_default() += 1;
        for c in &d.calls {
            *s.tools.entry(c.tool.to_string()).or_default() += 1;
        }
        s.web_search += usize::from(d.web_search);
        if let Some(skill) = &d.skill {
            *s.skills.entry(skill.to_string()).or_default() += 1;
        }
        for step in &d.trace {
            if let Some(rule) = &step.rule {
                *s.rules.entry(rule.to_string()).or_default() += 1;
            }
        }
        if let Some(expect) = &line.expect {
            s.expected += 1;
            let failures = testing::compare(expect, d);
            if !failures.is_empty() {
                s.unexpected.push(Unexpected::of(line, failures));
            }
        }
    }
    s
}

/// What the user sees of a decision, in a few words: `tool TOOL`, `skill SKILL`,
/// `chat`, with `+search` when web search is on.
pub fn label(d: &Decision) -> String {
    let mut out = match d.outcome {
        Outcome::Tool => {
            let tools: Vec<&str> = d.calls.iter().map(|c| &*c.tool).collect();
            format!("tool {}", tools.join("+"))
        }
        Outcome::Skill => format!("skill {}", d.skill.as_deref().unwrap_or("?")),
        Outcome::Chat => "chat".to_owned(),
    };
    if d.web_search {
        out.push_str(" +search");
    }
    out
}

/// Whether two decisions differ in anything the user would see.
pub fn differ(a: &Decision, b: &Decision) -> bool {
    let calls = |d: &Decision| {
        d.calls
            .iter()
            .map(|c| (c.tool.clone(), c.arguments.clone(), c.confirm))
            .collect::<Vec<_>>()
    };
    a.outcome != b.outcome
        || calls(a) != calls(b)
        || a.skill != b.skill
        || a.web_search != b.web_search
        || a.model_called != b.model_called
}

/// One changed decision.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The corpus line.
    pub line: usize,
    /// Its id.
    pub id: Option<String>,
    /// The user's message.
    pub message: String,
    /// The request's context and the recorded answer, in a few words each
    /// ([`context::shown`]).
    pub context: Vec<String>,
    /// The whole request, and the router answer recorded for it: what a script needs to
    /// look at the line again or to turn it into a test case.
    pub request: Request,
    pub model: Option<ModelScript>,
    /// The decision before and after, in a few words.
    pub from: String,
    pub to: String,
    /// Rules in the new trace and not the old (`+id`), or in the old and not the new (`-id`).
    pub rules: Vec<String>,
}

/// The changes from one decision label to another.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// Before, in a few words.
    pub from: String,
    /// After.
    pub to: String,
    /// How many decisions changed so.
    pub count: usize,
    /// The rules that made the difference, with how often.
    pub rules: BTreeMap<String, usize>,
    /// Up to five of them.
    pub examples: Vec<Change>,
}

/// What an edit changes on a corpus.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// Lines compared.
    pub total: usize,
    /// Decisions that differ.
    pub changed: usize,
    /// The changes grouped by (before → after), the largest group first.
    pub groups: Vec<Group>,
    /// Every change, in corpus order.
    pub changes: Vec<Change>,
}

/// Compares the decisions of two rules versions on the same lines.
pub fn diff(lines: &[Line], old: &[Option<Decision>], new: &[Option<Decision>]) -> Diff {
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    let mut changes = Vec::new();
    let mut total = 0;
    for ((line, a), b) in lines.iter().zip(old).zip(new) {
        let (Some(a), Some(b)) = (a, b) else { continue };
        total += 1;
        if !differ(a, b) {
            continue;
        }
        let rules_of = |d: &Decision| -> Vec<String> {
            d.trace
                .iter()
                .filter_map(|s| s.rule.as_deref().map(str::to_owned))
                .collect()
        };
        let (ra, rb) = (rules_of(a), rules_of(b));
        let mut rules: Vec<String> = rb
            .iter()
            .filter(|r| !ra.contains(r))
            .map(|r| format!("+{r}"))
            .chain(
                ra.iter()
                    .filter(|r| !rb.contains(r))
                    .map(|r| format!("-{r}")),
            )
            .collect();
        rules.sort();
        rules.dedup();
        let (from, to) = (label(a), label(b));
        let group = groups
            .entry((from.clone(), to.clone()))
            .or_insert_with(|| Group {
                from: from.clone(),
                to: to.clone(),
                count: 0,
                rules: BTreeMap::new(),
                examples: Vec::new(),
            });
        group.count += 1;
        for r in &rules {
            *group.rules.entry(r.clone()).or_default() += 1;
        }
        let change = Change {
            line: line.number,
            id: line.id.clone(),
            message: line.request.user_message().unwrap_or_default().to_owned(),
            context: context::shown(line),
            request: line.request.clone(),
            model: line.model.clone(),
            from,
            to,
            rules,
        };
        if group.examples.len() < 5 {
            group.examples.push(change.clone());
        }
        changes.push(change);
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.from.cmp(&b.from)));
    Diff {
        total,
        changed: changes.len(),
        groups,
        changes,
    }
}
