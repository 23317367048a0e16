//! Rule test cases: each case's request goes through the real pipeline with the case's scripted
//! router answer, and the decision is compared with what the case expects. Used by
//! `turnout test` and `turnout lint`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::compile::did_you_mean;
use crate::contract::Decision;
use crate::diag::{Code, Diagnostic, Location};
use crate::engine;
use crate::engine::probe::Probe;
use crate::model::scripted::ScriptedModel;
use crate::rules::testcase::{Case, Expect, TestFile};
use crate::ruleset::RuleSet;
use crate::source::check::SchemaCheck;
use crate::source::{self, load};

/// A case read from a file, with where it is.
#[derive(Debug, Clone)]
pub struct LoadedCase {
    /// The case.
    pub case: Case,
    /// Where it starts.
    pub location: Location,
    /// Where each key of its `expect` is written (`outcome`, `tools`, …), to point a failure at
    /// the expectation that failed.
    pub expect_at: Vec<(String, Location)>,
}

/// The result of one case.
#[derive(Debug)]
#[non_exhaustive]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// Where it is written.
    pub location: Location,
    /// What differed from the expectation (empty: passed).
    pub failures: Vec<String>,
    /// The decision the pipeline made (absent when the request itself was refused).
    pub decision: Option<Decision>,
}

impl CaseResult {
    /// Whether the case passed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The keys of a test case's `expect`, as its failures name them.
const EXPECT_KEYS: &[&str] = &[
    "outcome",
    "tools",
    "skill",
    "web_search",
    "model_called",
    "confirm",
    "fired",
    "not_fired",
    "arguments",
];

/// The test files of a rules directory: `DIR/tests/**/*.yaml`, in path order.
pub fn test_files(rules_dir: &Path) -> Vec<PathBuf> {
    load::test_files(rules_dir)
}

/// The cases read from test files, and what could not run.
pub struct Cases {
    /// The cases to run.
    pub cases: Vec<LoadedCase>,
    /// Why some could not.
    pub diagnostics: Vec<Diagnostic>,
    /// Cases that cannot run: every case of a file that failed to load (one for a file whose
    /// cases cannot even be counted), and each case that names what does not exist. They count
    /// as failed, so a broken file never shrinks the count silently.
    pub not_run: usize,
    /// Each test file's path and text as read: what the findings point into.
    pub texts: Vec<(PathBuf, String)>,
}

/// How many cases a test file that failed to load holds, read as plain YAML; at least one.
fn cases_in(text: &str) -> usize {
    serde_yaml::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("cases").and_then(|c| c.as_array()).map(Vec::len))
        .unwrap_or(1)
        .max(1)
}

/// Reads, validates and checks the references of the cases in `files` against `rs`. Cases that
/// refer to an unknown tool, skill or rule are reported and left out (and counted in
/// [`Cases::not_run`]).
pub fn load_cases(rs: &RuleSet, files: &[PathBuf]) -> Cases {
    let check = SchemaCheck::tests();
    let mut cases = Vec::new();
    let mut diagnostics = Vec::new();
    let mut not_run = 0;
    let mut texts = Vec::new();
    for path in files {
        let text = match load::read_text(path) {
            Ok(t) => t,
            Err(d) => {
                diagnostics.push(d);
                not_run += 1;
                continue;
            }
        };
        texts.push((path.clone(), text));
        let text = &texts[texts.len() - 1].1;
        let limits = source::Limits::default();
        let (value, spans) = match source::parse_checked(path, text, check, &limits) {
            Ok(v) => v,
            Err(found) => {
                diagnostics.extend(found);
                not_run += cases_in(text);
                continue;
            }
        };
        let file: TestFile = match serde_path_to_error::deserialize(value) {
            Ok(f) => f,
            Err(e) => {
                diagnostics.push(source::not_the_format(path, text, &spans, &e));
                not_run += cases_in(text);
                continue;
            }
        };
        for (i, case) in file.cases.into_iter().enumerate() {
            let at = |p: &str| source::locate(path, &spans, &format!("/cases/{i}{p}"));
            let before = diagnostics.len();
            check_references(rs, &case, &at, &mut diagnostics);
            // A case that names what does not exist is wrong already; running it would only
            // add a second, confusing failure.
            if diagnostics.len() != before {
                not_run += 1;
            } else {
                let expect_at = EXPECT_KEYS
                    .iter()
                    .map(|k| ((*k).to_owned(), at(&format!("/expect/{k}"))))
                    .collect();
                cases.push(LoadedCase {
                    case,
                    location: at(""),
                    expect_at,
                });
            }
        }
    }
    Cases {
        cases,
        diagnostics,
        not_run,
        texts,
    }
}

fn check_references(
    rs: &RuleSet,
    case: &Case,
    at: &dyn Fn(&str) -> Location,
    out: &mut Vec<Diagnostic>,
) {
    let tool_ids: Vec<String> = rs.tools().iter().map(|t| t.id.to_string()).collect();
    let skill_ids: Vec<String> = rs.skills().iter().map(|s| s.id.to_string()).collect();
    let rule_ids: Vec<String> = rs.rule_ids().map(str::to_owned).collect();
    for (j, c) in case.model.iter().flat_map(|m| m.calls.iter().enumerate()) {
        if c.unknown && tool_ids.contains(&c.tool) {
            let d = Diagnostic::error(
                Code::KnownTool,
                format!(
                    "the case '{}' says tool '{}' is unknown, but the rules define it",
                    case.name, c.tool
                ),
            )
            .at(Some(at(&format!("/model/calls/{j}/unknown"))))
            .hint("remove 'unknown: true', or name a tool the rules do not have");
            out.push(d);
        }
    }
    let mut refer = |kind: Code, id: &str, known: &[String], pointer: String| {
        if !known.iter().any(|k| k == id) {
            let mut d = Diagnostic::error(
                kind,
                format!(
                    "the case '{}' refers to an unknown {} '{id}'",
                    case.name,
                    &kind.as_str()[8..]
                ),
            )
            .at(Some(at(&pointer)));
            if let Some(h) = did_you_mean(id, known) {
                d = d.hint(h);
            }
            out.push(d);
        }
    };
    if let Some(model) = &case.model {
        for (j, c) in model.calls.iter().enumerate() {
            if !c.unknown {
                refer(
                    Code::UnknownTool,
                    &c.tool,
                    &tool_ids,
                    format!("/model/calls/{j}/tool"),
                );
            }
        }
    }
    let e = &case.expect;
    for (key, list) in [("tools", &e.tools), ("confirm", &e.confirm)] {
        for (j, t) in list.iter().flatten().enumerate() {
            refer(
                Code::UnknownTool,
                t,
                &tool_ids,
                format!("/expect/{key}/{j}"),
            );
        }
    }
    if let Some(s) = &case.request.skill {
        refer(Code::UnknownSkill, s, &skill_ids, "/request/skill".into());
    }
    if let Some(Some(s)) = &e.skill {
        refer(Code::UnknownSkill, s, &skill_ids, "/expect/skill".into());
    }
    for (key, list) in [("fired", &e.fired), ("not_fired", &e.not_fired)] {
        for (j, r) in list.iter().flatten().enumerate() {
            refer(
                Code::UnknownRule,
                r,
                &rule_ids,
                format!("/expect/{key}/{j}"),
            );
        }
    }
}

/// Runs one case through the pipeline with its scripted model.
pub async fn run_case(rs: &RuleSet, loaded: &LoadedCase) -> CaseResult {
    run_case_probed(rs, loaded, None).await
}

/// [`run_case`], recording in `probe` which word lists the decision consulted (coverage).
pub(crate) async fn run_case_probed(
    rs: &RuleSet,
    loaded: &LoadedCase,
    probe: Option<&Probe>,
) -> CaseResult {
    let case = &loaded.case;
    let mut result = CaseResult {
        name: case.name.clone(),
        location: loaded.location.clone(),
        failures: Vec::new(),
        decision: None,
    };
    let model = match ScriptedModel::from_script(case.model.as_ref()) {
        Ok(m) => m,
        Err(e) => {
            result.failures.push(e);
            return result;
        }
    };
    let options = engine::Options {
        model: Some(&model),
        probe,
        ..engine::Options::default()
    };
    match engine::decide(rs, &case.request, options).await {
        Ok(decision) => {
            result.failures = compare(&case.expect, &decision);
            result.decision = Some(decision);
        }
        Err(e) => result
            .failures
            .push(format!("the request was refused: {e}")),
    }
    // Point at the first expectation that failed ("tools: expected …" → `expect.tools`).
    if let Some(key) = result.failures.first().and_then(|f| f.split(':').next())
        && let Some((_, at)) = loaded.expect_at.iter().find(|(k, _)| k == key)
    {
        result.location = at.clone();
    }
    result
}

/// Runs every case, in order.
pub async fn run_cases(rs: &RuleSet, cases: &[LoadedCase]) -> Vec<CaseResult> {
    let mut out = Vec::with_capacity(cases.len());
    for c in cases {
        out.push(run_case(rs, c).await);
    }
    out
}

/// Every difference between the expectation and the decision, as "key: expected X, got Y".
pub fn compare(expect: &Expect, d: &Decision) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |key: &str, expected: String, actual: String| {
        if expected != actual {
            out.push(format!("{key}: expected {expected}, got {actual}"));
        }
    };
    if let Some(o) = expect.outcome {
        check("outcome", json(&o), json(&d.outcome));
    }
    let tools: Vec<&str> = d.calls.iter().map(|c| &*c.tool).collect();
    if let Some(t) = &expect.tools {
        check("tools", json(t), json(&tools));
    }
    if let Some(s) = &expect.skill {
        check("skill", json(s), json(&d.skill));
    }
    if let Some(w) = expect.web_search {
        check("web_search", json(&w), json(&d.web_search));
    }
    if let Some(m) = expect.model_called {
        check("model_called", json(&m), json(&d.model_called));
    }
    if let Some(c) = &expect.confirm {
        let confirmed: Vec<&str> = d
            .calls
            .iter()
            .filter(|c| c.confirm)
            .map(|c| &*c.tool)
            .collect();
        check("confirm", json(c), json(&confirmed));
    }
    let fired: Vec<&str> = d.trace.iter().filter_map(|s| s.rule.as_deref()).collect();
    for id in expect.fired.iter().flatten() {
        if !fired.contains(&id.as_str()) {
            out.push(format!(
                "fired: expected rule '{id}' in the trace, it is not"
            ));
        }
    }
    for id in expect.not_fired.iter().flatten() {
        if fired.contains(&id.as_str()) {
            out.push(format!("not_fired: rule '{id}' is in the trace"));
        }
    }
    if let Some(args) = &expect.arguments {
        if args.len() != d.calls.len() {
            out.push(format!(
                "arguments: expected {} calls, got {}",
                args.len(),
                d.calls.len()
            ));
        }
        for (i, (want, call)) in args.iter().zip(&d.calls).enumerate() {
            if !contains(&call.arguments, want) {
                out.push(format!(
                    "arguments[{i}]: expected to contain {}, got {}",
                    json(want),
                    json(&call.arguments)
                ));
            }
        }
    }
    out
}

/// Whether `actual` contains `want` (objects: every key of `want`, recursively; else equal).
fn contains(actual: &Value, want: &Value) -> bool {
    match (actual, want) {
        (Value::Object(a), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| a.get(k).is_some_and(|av| contains(av, wv))),
        _ => actual == want,
    }
}

fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
