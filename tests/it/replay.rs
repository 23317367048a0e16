//! `turnout replay` on the shipped corpus: what the rules do to it, and exactly what one edit of
//! a guard changes.

use crate::common::root;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use turnout::contract::Request;
use turnout::engine;
use turnout::model::scripted::ScriptedModel;

fn replay(args: &[&str]) -> (Option<i32>, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_turnout"))
        .arg("replay")
        .args(args)
        .current_dir(root())
        .output()
        .expect("turnout replay runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (
        out.status.code(),
        v,
        format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)),
    )
}

/// A copy of the shipped rules in a temporary directory.
fn copy_of_rules() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in turnout::source::rule_files(&root().join("rules")).expect("rules") {
        let name = f.file_name().expect("name");
        std::fs::copy(&f, dir.path().join(name)).expect("copy");
    }
    dir
}

const CORPUS: &str = "examples/corpus/requests.jsonl";

#[test]
fn identical_rules_change_nothing() {
    let copy = copy_of_rules();
    let (code, v, out) = replay(&[
        CORPUS,
        "--rules",
        "rules",
        "--against",
        copy.path().to_str().expect("utf-8"),
        "--model",
        "none",
        "--format",
        "json",
        "--fail-on-change",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["changed"], 0, "{out}");
    let lines = v["lines"].as_u64().expect("lines");
    let on_disk = std::fs::read_to_string(root().join(CORPUS))
        .expect("corpus")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    assert_eq!(lines, on_disk as u64, "every line of {CORPUS} replayed");
    assert_eq!(v["summary"]["total"].as_u64(), Some(lines));
    assert!(v["requests_per_second"].as_f64().is_some_and(|r| r > 0.0));
}

/// The corpus lines whose decision by `rules` has `rule` in its trace, decided through the
/// library as `turnout replay` without `--model` decides them: each line's recorded answer,
/// else the embedded router.
fn lines_where(rules: &Path, rule: &str) -> Vec<u64> {
    let rs = turnout::compile::load_dir(rules)
        .ruleset
        .expect("valid rules");
    let embedded = "embedded"
        .parse::<turnout::contract::ModelSpec>()
        .expect("spec")
        .build()
        .expect("embedded builds")
        .expect("a model");
    embedded.prepare(&rs);
    let text = std::fs::read_to_string(root().join(CORPUS)).expect("corpus");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).expect("json");
        let req: Request = serde_json::from_value(v["request"].clone()).expect("request");
        let script: Option<turnout::rules::testcase::ModelScript> =
            serde_json::from_value(v.get("model").cloned().unwrap_or(Value::Null)).ok();
        let d = match &script {
            Some(script) => {
                let model = ScriptedModel::from_script(Some(script)).expect("script");
                rt.block_on(engine::decide(
                    &rs,
                    &req,
                    engine::Options::model(Some(&model)),
                ))
            }
            None => rt.block_on(engine::decide(
                &rs,
                &req,
                engine::Options::model(Some(&*embedded)),
            )),
        }
        .expect("decided");
        if d.trace.iter().any(|s| s.rule.as_deref() == Some(rule)) {
            out.push(i as u64 + 1);
        }
    }
    out
}

#[test]
fn one_edited_guard_changes_exactly_the_decisions_it_vetoed() {
    // The edit: the sell-listing guard never fires any more.
    let copy = copy_of_rules();
    let guards = copy.path().join("guards.yaml");
    let text = std::fs::read_to_string(&guards).expect("guards");
    let edited = text.replacen(
        "    drop_when:\n      all:\n        - mentions: buying_words\n        - not: {mentions: selling_words}",
        "    drop_when:\n      all:\n        - mentions: buying_words\n        - not: {mentions: selling_words}\n        - longer_than: 100000",
        1,
    );
    assert_ne!(edited, text, "the guard was not found");
    std::fs::write(&guards, edited).expect("write");
    let vetoed = lines_where(&root().join("rules"), "sell-listing-when-buying");
    assert!(
        !vetoed.is_empty(),
        "the corpus has no line the guard vetoes"
    );
    let (code, v, out) = replay(&[
        CORPUS,
        "--rules",
        copy.path().to_str().expect("utf-8"),
        "--against",
        "rules",
        "--format",
        "json",
        "--fail-on-change",
    ]);
    assert_eq!(code, Some(1), "--fail-on-change: {out}");
    let changed: Vec<u64> = v["diff"]["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| c["line"].as_u64().expect("line"))
        .collect();
    assert_eq!(changed, vetoed, "{out}");
    assert_eq!(v["changed"].as_u64(), Some(vetoed.len() as u64));
    for c in v["diff"]["changes"].as_array().expect("changes") {
        assert_eq!(c["from"], "chat", "{c}");
        assert_eq!(c["to"], "tool sell_listing", "{c}");
        assert_eq!(
            c["rules"],
            serde_json::json!(["-sell-listing-when-buying"]),
            "{c}"
        );
    }
    let (code, _, out) = replay(&[
        CORPUS,
        "--rules",
        copy.path().to_str().expect("utf-8"),
        "--against",
        "rules",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!("changed: {} of ", vetoed.len())),
        "{out}"
    );
    assert!(out.contains("chat → tool sell_listing"), "{out}");
}

#[test]
fn unreadable_lines_are_named_and_fail_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("c.jsonl");
    std::fs::write(
        &corpus,
        "{\"messages\": [{\"role\": \"user\", \"content\": \"привет\"}]}\nnot json\n{\"request\": {\"messages\": []}}\n",
    )
    .expect("write");
    let (code, v, out) = replay(&[
        corpus.to_str().expect("utf-8"),
        "--model",
        "none",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(2), "{out}");
    let bad: Vec<u64> = v["bad_lines"]
        .as_array()
        .expect("bad lines")
        .iter()
        .map(|b| b["line"].as_u64().expect("line"))
        .collect();
    assert_eq!(bad, [2, 3]);
    assert_eq!(v["summary"]["total"], 1);
}

#[test]
fn a_served_corpus_shows_what_each_save_changed() {
    let copy = copy_of_rules();
    let corpus = root().join(CORPUS);
    let served = super::common::Served::start(
        copy.path(),
        &[
            "--model",
            "none",
            "--corpus",
            corpus.to_str().expect("utf-8"),
        ],
    );
    let last = || -> Value { served.json("GET", "/v1/replay/last", &Value::Null).1 };
    // The start-up replay: a summary, nothing to compare with yet.
    let first = last();
    assert!(first["summary"]["total"].as_u64() >= Some(500), "{first}");
    assert!(first["diff"].is_null(), "{first}");
    // Save an edit that switches the sell-listing guard off.
    let guards = copy.path().join("guards.yaml");
    let text = std::fs::read_to_string(&guards).expect("guards");
    std::fs::write(
        &guards,
        text.replacen(
            "        - not: {mentions: selling_words}",
            "        - not: {mentions: selling_words}\n        - longer_than: 100000",
            1,
        ),
    )
    .expect("save");
    let started = std::time::Instant::now();
    let report = loop {
        let r = last();
        if r["to_version"] != first["to_version"] && !r["diff"].is_null() {
            break r;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{r}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(report["from_version"], first["to_version"]);
    let vetoed = lines_where(&root().join("rules"), "sell-listing-when-buying");
    assert_eq!(
        report["diff"]["changed"].as_u64(),
        Some(vetoed.len() as u64),
        "{report}"
    );
    assert_eq!(report["diff"]["groups"][0]["from"], "chat");
    assert_eq!(report["diff"]["groups"][0]["to"], "tool sell_listing");
}

/// `rule_effects[rule]` of a JSON report: (matched, fired, decided, agreed).
fn effect(report: &Value, rule: &str) -> (u64, u64, u64, u64) {
    let e = &report["rule_effects"][rule];
    let n = |k: &str| {
        e[k].as_u64()
            .unwrap_or_else(|| panic!("no {k} for {rule}: {report}"))
    };
    (n("matched"), n("fired"), n("decided"), n("agreed"))
}

#[test]
fn a_search_rule_taken_out_changes_the_lines_it_decided_not_those_where_it_agreed_with_the_model() {
    // The edit: the search phrases never match any more.
    let copy = copy_of_rules();
    let search = copy.path().join("search.yaml");
    let text = std::fs::read_to_string(&search).expect("search");
    let edited = text.replacen(
        "      when:\n        any:\n          - mentions: search_patterns\n          - mentions: search_typo_words\n          - mentions: search_loose_phrases\n          - mentions: search_requests\n",
        "      when: {longer_than: 1000000}\n",
        1,
    );
    assert_ne!(edited, text, "the rule's condition was not found");
    std::fs::write(&search, edited).expect("write");
    let copy = copy.path().to_str().expect("utf-8");

    // With the recorded answers: most lines it matches, the model had asked for search itself.
    let (code, base, out) = replay(&[CORPUS, "--format", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let (matched, fired, decided, agreed) = effect(&base, "search-patterns");
    assert_eq!(matched, decided + agreed, "{out}");
    assert!(
        decided > 0 && agreed > 0,
        "decided {decided}, agreed {agreed}"
    );
    assert!(
        fired < matched,
        "lines where the model asked first are matched, not fired"
    );
    let (_, v, out) = replay(&[
        CORPUS,
        "--rules",
        copy,
        "--against",
        "rules",
        "--format",
        "json",
    ]);
    assert_eq!(
        v["changed"].as_u64(),
        Some(decided),
        "exactly the lines it decided: {out}"
    );
    for c in v["diff"]["changes"].as_array().expect("changes") {
        assert!(
            c["from"].as_str().is_some_and(|f| f.ends_with("+search")),
            "{c}"
        );
        assert_eq!(c["rules"], serde_json::json!(["-search-patterns"]), "{c}");
    }
    assert_eq!(
        v["before"]["web_search"].as_u64().expect("before") - decided,
        v["summary"]["web_search"].as_u64().expect("after"),
        "before → after totals"
    );

    // The rules alone: every line it matches, it decides, and the edit changes them all.
    let (_, alone, out) = replay(&[CORPUS, "--model", "none", "--format", "json"]);
    assert_eq!(alone["recorded_answers_replaced"], true, "{out}");
    let (matched_alone, fired_alone, decided_alone, _) = effect(&alone, "search-patterns");
    assert_eq!(matched_alone, fired_alone, "no model asked for anything");
    assert!(
        matched_alone > decided,
        "{matched_alone} lines matched without the model"
    );
    let (_, v, out) = replay(&[
        CORPUS,
        "--rules",
        copy,
        "--against",
        "rules",
        "--model",
        "none",
        "--format",
        "json",
    ]);
    assert_eq!(v["changed"].as_u64(), Some(decided_alone), "{out}");
}

#[test]
fn the_report_keeps_what_an_edit_broke_apart_from_what_the_old_rules_already_missed() {
    // Against the same rules nothing is the edit's doing: every missed expectation is one the
    // old rules already missed, listed with its context.
    let (code, same, out) = replay(&[CORPUS, "--against", "rules", "--format", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let e = &same["expectations"];
    assert_eq!(e["broken"], serde_json::json!([]), "{out}");
    assert_eq!(e["fixed"], serde_json::json!([]), "{out}");
    let missed = same["summary"]["unexpected"]
        .as_array()
        .expect("unexpected");
    assert_eq!(
        e["already_missed"].as_array().map(Vec::len),
        Some(missed.len())
    );
    assert_eq!(e["met_before"], e["met_after"]);

    // The sell-listing guard switched off: the lines it vetoed change, and those that expected
    // the veto are broken by the edit; what was missed before stays apart.
    let copy = copy_of_rules();
    let guards = copy.path().join("guards.yaml");
    let text = std::fs::read_to_string(&guards).expect("guards");
    let edited = text.replacen(
        "        - not: {mentions: selling_words}",
        "        - not: {mentions: selling_words}\n        - longer_than: 100000",
        1,
    );
    assert_ne!(edited, text, "the guard was not found");
    std::fs::write(&guards, edited).expect("write");
    let copy = copy.path().to_str().expect("utf-8");
    let (_, v, out) = replay(&[
        CORPUS,
        "--rules",
        copy,
        "--against",
        "rules",
        "--format",
        "json",
    ]);
    let lines_of = |list: &Value| -> Vec<u64> {
        list.as_array()
            .expect("a list")
            .iter()
            .map(|u| u["line"].as_u64().expect("line"))
            .collect()
    };
    let changed = lines_of(&v["diff"]["changes"]);
    let broken = lines_of(&v["expectations"]["broken"]);
    assert!(!broken.is_empty(), "{out}");
    assert!(broken.iter().all(|l| changed.contains(l)), "{out}");
    assert_eq!(
        lines_of(&v["expectations"]["already_missed"]),
        lines_of(&e["already_missed"]),
        "the old misses are not the edit's"
    );
    // Each change carries the whole request and its context for scripts.
    for c in v["diff"]["changes"].as_array().expect("changes") {
        assert!(c["request"]["messages"].is_array(), "{c}");
        assert!(c["context"].is_array(), "{c}");
    }
    let (_, _, human) = replay(&[CORPUS, "--rules", copy, "--against", "rules"]);
    assert!(human.contains("broken by the edit:"), "{human}");
    assert!(human.contains("already missed before the edit"), "{human}");
    assert!(
        human.contains("model: "),
        "examples show the recorded answer: {human}"
    );
}

#[test]
fn a_generation_mode_is_shown_beside_the_message_it_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("c.jsonl");
    std::fs::write(
        &corpus,
        r#"{"id":"drawn","request":{"messages":[{"role":"user","content":"a cat on a roof"}],"generation_mode":"image"}}
"#,
    )
    .expect("write");
    // Two versions of small rules: the new one routes the word "cat".
    let rules = |word: &str| {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = format!(
            "tools:\n  - {{id: switch, description: skills, chip: s, arguments: {{type: object, properties: {{skill: {{enum: [coach, none]}}}}}}}}\n  - {{id: alpha, description: first, chip: alpha}}\nword_lists:\n  - {{id: pings, description: trigger, words: [{word}]}}\npre_rules:\n  - id: ping-rule\n    description: routes it\n    when: {{mentions: pings}}\n    then: {{calls: [{{tool: alpha}}]}}\nskills:\n  - {{id: coach, description: coaching, badge: Coach, auto: true}}\nrouter: {{skill_tool: switch, skill_argument: skill, leave_skill_value: none}}\n"
        );
        std::fs::write(dir.path().join("r.yaml"), text).expect("write");
        dir
    };
    let (old_dir, new_dir) = (rules("ping"), rules("cat"));
    let old = old_dir.path().to_str().expect("utf-8");
    let new = new_dir.path().to_str().expect("utf-8");
    let (_, v, out) = replay(&[
        corpus.to_str().expect("utf-8"),
        "--rules",
        new,
        "--against",
        old,
        "--model",
        "none",
        "--format",
        "json",
    ]);
    let change = &v["diff"]["changes"][0];
    assert_eq!(change["id"], "drawn", "{out}");
    assert_eq!(
        change["context"],
        serde_json::json!(["generation_mode=image"]),
        "{out}"
    );
    let (_, _, human) = replay(&[
        corpus.to_str().expect("utf-8"),
        "--rules",
        new,
        "--against",
        old,
        "--model",
        "none",
    ]);
    assert!(
        human.contains("line 1 (drawn): a cat on a roof  [generation_mode=image]"),
        "{human}"
    );
}

/// The kinds of a `--disagreements` JSON report: kind → (count, groups).
fn kinds(report: &Value) -> std::collections::BTreeMap<String, (u64, Vec<Value>)> {
    report["disagreements"]
        .as_array()
        .expect("disagreements")
        .iter()
        .map(|k| {
            (
                k["kind"].as_str().expect("kind").to_owned(),
                (
                    k["count"].as_u64().expect("count"),
                    k["groups"].as_array().expect("groups").clone(),
                ),
            )
        })
        .collect()
}

/// Whether an example's recorded answer (its `model: …` context item) asks for web search.
fn answered_search(example: &Value) -> bool {
    example["context"]
        .as_array()
        .expect("context")
        .iter()
        .filter_map(Value::as_str)
        .any(|c| c.starts_with("model: ") && c.contains("web_search"))
}

#[test]
fn disagreements_name_where_the_rules_miss_and_become_cases_that_lint_runs() {
    let copy = copy_of_rules();
    let cases = copy.path().join("tests").join("from_traffic.yaml");
    std::fs::create_dir_all(cases.parent().expect("dir")).expect("tests dir");
    let (code, v, out) = replay(&[
        CORPUS,
        "--disagreements",
        "--format",
        "json",
        "--emit-cases",
        cases.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, Some(0), "{out}");
    let found = kinds(&v);
    for (kind, (count, groups)) in &found {
        let sum: u64 = groups
            .iter()
            .map(|g| g["count"].as_u64().expect("count"))
            .sum();
        assert_eq!(*count, sum, "{kind}: the groups add up");
    }
    // Each kind the shipped corpus shows.
    for kind in [
        "candidate_phrase",
        "candidate_false_positive",
        "guard_veto",
        "pre_rule",
    ] {
        assert!(found[kind].0 > 0, "no {kind}: {v}");
    }
    // A candidate phrase: the model asked for web search; a false positive: it did not.
    for g in &found["candidate_phrase"].1 {
        for e in g["examples"].as_array().expect("examples") {
            assert!(answered_search(e), "{e}");
        }
    }
    for g in &found["candidate_false_positive"].1 {
        for e in g["examples"].as_array().expect("examples") {
            assert!(!answered_search(e), "{e}");
            assert!(
                e["decision"]
                    .as_str()
                    .is_some_and(|d| d.ends_with("+search")),
                "{e}"
            );
        }
    }
    for g in &found["guard_veto"].1 {
        assert!(
            g["key"].as_str().is_some_and(|k| k.contains("(dropped ")),
            "{g}"
        );
    }

    // The cases load, and pass as written, in the rules' own tests.
    let emitted = std::fs::read_to_string(&cases).expect("cases written");
    let file: turnout::rules::testcase::TestFile =
        serde_yaml::from_str(&emitted).expect("the cases are a rule test file");
    let n = file.cases.len();
    assert!(n > 0, "{emitted}");
    let lint = Command::new(env!("CARGO_BIN_EXE_turnout"))
        .arg("lint")
        .arg(copy.path())
        .output()
        .expect("turnout lint runs");
    let lint_out = format!(
        "{}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    assert!(!lint_out.contains("from_traffic.yaml:"), "{lint_out}");
    let (code, _, out) = {
        let out = Command::new(env!("CARGO_BIN_EXE_turnout"))
            .args(["test", "--rules"])
            .arg(copy.path())
            .arg(&cases)
            .output()
            .expect("turnout test runs");
        (
            out.status.code(),
            (),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.trim_end().ends_with(&format!("{n} passed, 0 failed")),
        "{out}"
    );

    // Only the kinds asked for, in the human report too.
    let (_, _, human) = replay(&[CORPUS, "--disagreements", "--kinds", "pre-rule"]);
    assert!(human.contains("pre-rules settled the message"), "{human}");
    assert!(!human.contains("candidate phrases"), "{human}");
}

#[test]
fn a_search_phrase_taken_out_shows_what_it_decided_and_with_model_none_all_it_matched() {
    // The edit: one entry of the search phrases, «погода», taken out of its list.
    let copy = copy_of_rules();
    let words = copy.path().join("words.yaml");
    let text = std::fs::read_to_string(&words).expect("words");
    let edited = text.replacen("\n      - погода$\n", "\n", 1);
    assert_ne!(edited, text, "the entry was not found");
    std::fs::write(&words, edited).expect("write");
    let copy = copy.path().to_str().expect("utf-8");

    // The lines the entry matches, by the shipped rules alone, and whether the recorded
    // answer asked for web search on them.
    let rs = turnout::compile::load_dir(&root().join("rules"))
        .ruleset
        .expect("valid rules");
    let corpus = std::fs::read_to_string(root().join(CORPUS)).expect("corpus");
    let mut matched = Vec::new();
    let mut model_asked = Vec::new();
    for (i, line) in corpus.lines().enumerate() {
        let v: Value = serde_json::from_str(line).expect("json");
        let req: Request = serde_json::from_value(v["request"].clone()).expect("request");
        let d = engine::decide_without_model(&rs, &req).expect("decided");
        let by_entry = d.trace.iter().any(|s| {
            s.rule.as_deref() == Some("search-patterns")
                && s.why.contains("(search_patterns: 'погода$')")
        });
        if by_entry {
            matched.push(i as u64 + 1);
            model_asked.push(
                v["model"]["calls"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c["tool"] == "web_search")),
            );
        }
    }
    assert!(
        !matched.is_empty(),
        "the corpus has no line the entry matches"
    );
    let changed = |v: &Value| -> Vec<u64> {
        v["diff"]["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .map(|c| c["line"].as_u64().expect("line"))
            .collect()
    };

    // With the recorded answers, the entry decided only the lines where the model did not ask
    // for search; on the others it agreed with the model and nothing changes.
    let decided: Vec<u64> = matched
        .iter()
        .zip(&model_asked)
        .filter(|(_, asked)| !**asked)
        .map(|(l, _)| *l)
        .collect();
    let (_, v, out) = replay(&[
        CORPUS,
        "--rules",
        copy,
        "--against",
        "rules",
        "--format",
        "json",
    ]);
    assert_eq!(changed(&v), decided, "{out}");

    // The rules alone: every line it matched changes, and only those.
    let (_, v, out) = replay(&[
        CORPUS,
        "--rules",
        copy,
        "--against",
        "rules",
        "--model",
        "none",
        "--format",
        "json",
    ]);
    assert_eq!(changed(&v), matched, "{out}");
    for c in v["diff"]["changes"].as_array().expect("changes") {
        assert_eq!(c["from"], "chat +search", "{c}");
        assert_eq!(c["to"], "chat", "{c}");
    }
}
