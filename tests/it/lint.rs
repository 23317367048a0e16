//! `turnout lint` as CI runs it: over the deliberately broken rule directories in `tests/lint/`
//! (one per check, each with an `expected` file listing exactly the findings it must give) and
//! over the shipped pack, in every output format.
use crate::common::root;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

#[path = "../../benches/genpack/mod.rs"]
mod genpack;

fn turnout(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_turnout"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("turnout runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fixtures() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("tests/lint"))
        .expect("tests/lint")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// `file:line:column: severity[code]` of every finding, the file relative to `dir`, from
/// `--format json` output.
fn findings(dir: &Path, stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .filter(|v| v.get("summary").is_none())
        .map(|v| {
            let place = match v["file"].as_str() {
                Some(f) => {
                    let rel = Path::new(f).strip_prefix(dir).expect("inside the fixture");
                    format!("{}:{}:{}: ", rel.display(), v["line"], v["column"])
                }
                None => String::new(),
            };
            format!(
                "{place}{}[{}]",
                v["severity"].as_str().expect("severity"),
                v["code"].as_str().expect("code")
            )
        })
        .collect()
}

fn relative(dir: &Path) -> PathBuf {
    dir.strip_prefix(root())
        .expect("under the crate")
        .to_path_buf()
}

#[test]
fn every_broken_directory_gives_exactly_its_expected_findings() {
    let dirs = fixtures();
    // The directories under tests/lint/ (`ls -d tests/lint/*/ | wc -l`): one per check, each
    // with its `expected` findings. A fixture added or removed changes this number with it.
    const FIXTURES: usize = 51;
    assert_eq!(
        dirs.len(),
        FIXTURES,
        "fixture directories under tests/lint/"
    );
    let entries = std::fs::read_dir(root().join("tests/lint"))
        .expect("tests/lint")
        .count();
    assert_eq!(
        entries, FIXTURES,
        "tests/lint/ holds only fixture directories"
    );
    for dir in dirs {
        let rel = relative(&dir);
        let arg = rel.to_str().expect("utf-8");
        let expected: Vec<String> = std::fs::read_to_string(dir.join("expected"))
            .unwrap_or_else(|e| panic!("{}/expected: {e}", rel.display()))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        let out = turnout(&["lint", "--format", "json", arg]);
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{arg}: {stderr}");
        let got = findings(&rel, &text(&out.stdout));
        assert_eq!(got, expected, "{arg}: findings differ");

        let errors = expected.iter().any(|e| e.contains("error["));
        let warnings = expected.iter().any(|e| e.contains("warning["));
        assert_eq!(
            out.status.code(),
            Some(i32::from(errors)),
            "{arg}: exit status"
        );
        let denied = turnout(&["lint", "--deny-warnings", "--format", "json", arg]);
        assert_eq!(
            denied.status.code(),
            Some(i32::from(errors || warnings)),
            "{arg}: exit status with --deny-warnings"
        );
    }
}

#[test]
fn every_check_of_the_issue_has_a_directory_that_triggers_it() {
    let mut codes = BTreeSet::new();
    for dir in fixtures() {
        let expected = std::fs::read_to_string(dir.join("expected")).unwrap_or_default();
        for line in expected.lines() {
            if let Some((_, code)) = line.split_once('[') {
                codes.insert(code.trim_end_matches(']').to_owned());
            }
        }
    }
    for code in [
        // input that is not a rule file
        "yaml-syntax",
        "wrong-type",
        "unknown-key",
        "empty-file",
        "not-text",
        // meaning
        "duplicate-id",
        "unknown-tool",
        "unknown-skill",
        "unknown-list",
        "bad-regex",
        "matches-empty",
        "shadowed-rule",
        "unreachable-guard",
        "skill-enum",
        "unconfirmed-consequential",
        "ungated-integration-tool",
        "duplicate-entry",
        "unused-list",
        // test cases
        "unknown-rule",
        "test-failed",
    ] {
        assert!(codes.contains(code), "no fixture triggers {code}");
    }
}

#[test]
fn human_output_shows_the_line_with_a_caret_and_a_hint() {
    let out = turnout(&["lint", "tests/lint/unknown-tool"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let expected = "\
tests/lint/unknown-tool/rules.yaml:11:13: error[unknown-tool]: unknown tool 'shop_serch'
   |
11 |     tools: [shop_serch]
   |             ^^^^^^^^^^
   = hint: did you mean 'shop_search'?
";
    assert!(stdout.contains(expected), "{stdout}");
    assert!(
        stdout
            .trim_end()
            .ends_with("tests/lint/unknown-tool: 2 errors, 0 warnings; test cases not run: the rules have errors"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_key_lists_the_allowed_keys_once() {
    let out = turnout(&["lint", "tests/lint/unknown-key"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "= hint: did you mean 'drop_when'? allowed keys: id, description, tools, drop_when"
        ),
        "{stdout}"
    );
    // The misspelt key is one mistake: no second finding about 'drop_when' missing.
    assert!(!stdout.contains("missing-key"), "{stdout}");
}

#[test]
fn a_truncated_file_points_at_where_it_stops() {
    let out = turnout(&["lint", "tests/lint/truncated-file"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("5 |     when: {all: [{longer_than: 3}, {shorter_than: \n  |                                                   ^\n"),
        "{stdout}"
    );
}

#[test]
fn json_is_one_object_per_finding_then_a_summary() {
    let out = turnout(&["lint", "--format", "json", "tests/lint/unknown-tool"]);
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 3);
    let first = &lines[0];
    assert_eq!(first["file"], "tests/lint/unknown-tool/rules.yaml");
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(7), Some(22))
    );
    assert_eq!(first["end_column"], 26);
    assert_eq!(first["code"], "unknown-tool");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["hint"], "did you mean 'draw'?");
    let summary = &lines[2]["summary"];
    assert_eq!(summary["errors"], 2);
    assert_eq!(summary["exit_status"], 1);
    assert_eq!(summary["tests"], serde_json::Value::Null);
}

#[test]
fn github_format_prints_workflow_annotations() {
    let out = turnout(&["lint", "--format", "github", "tests/lint/unknown-tool"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "::error file=tests/lint/unknown-tool/rules.yaml,line=11,col=13,endColumn=23,title=turnout unknown-tool::unknown tool 'shop_serch'%0Ahint: did you mean 'shop_search'?\n"
        ),
        "{stdout}"
    );
    let out = turnout(&["lint", "--format", "github", "tests/lint/unused-list"]);
    assert!(
        text(&out.stdout)
            .starts_with("::warning file=tests/lint/unused-list/rules.yaml,line=3,col=9,"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn unusable_input_exits_2() {
    let out = turnout(&["lint", "tests/lint/no-such-directory"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).contains("no such rules directory: tests/lint/no-such-directory"),
        "{}",
        text(&out.stdout)
    );
    // The worst status over several directories wins.
    let out = turnout(&[
        "lint",
        "tests/lint/unused-list",
        "tests/lint/no-such-directory",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[cfg(target_os = "linux")]
#[test]
fn a_rule_file_that_cannot_be_read_safely_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        root().join("tests/lint/unused-list/base.yaml"),
        dir.path().join("base.yaml"),
    )
    .expect("copy");
    // A pipe: reading it would block the reload forever.
    let fifo = Command::new("mkfifo")
        .arg(dir.path().join("pipe.yaml"))
        .status()
        .expect("mkfifo runs");
    assert!(fifo.success());
    // A link out of the directory (a file whose read fails even for root): never opened.
    std::os::unix::fs::symlink("/proc/self/mem", dir.path().join("memory.yaml")).expect("link");
    let out = turnout(&[
        "lint",
        "--format",
        "json",
        dir.path().to_str().expect("utf-8"),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("\"code\":\"unreadable\""), "{stdout}");
    assert!(stdout.contains("pipe.yaml"), "{stdout}");
    assert!(
        stdout.contains("\"code\":\"outside-rules-dir\""),
        "{stdout}"
    );
}

#[test]
fn warnings_fail_only_when_denied() {
    let out = turnout(&["lint", "tests/lint/shadowed-rule"]);
    assert_eq!(out.status.code(), Some(0));
    let out = turnout(&["lint", "--deny-warnings", "tests/lint/shadowed-rule"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("warnings are denied"));
}

#[test]
fn a_shadowed_rule_names_the_rule_that_fires_first() {
    let out = turnout(&["lint", "tests/lint/shadowed-rule"]);
    let stdout = text(&out.stdout);
    for expected in [
        "pre-rule 'image-mode-again' can never fire: whenever it holds, the earlier pre-rule 'image-mode' holds too",
        "pre-rule 'image-or-video' can never fire: whenever it holds, one of the earlier pre-rules 'image-mode', 'video-mode' holds",
        "pre-rule 'after-everything' can never fire: whenever it holds, the earlier pre-rule 'draft-either-way' holds too",
        "search rule 'coach-greetings' can never fire: whenever it holds, search.off_when holds too",
        "guard 'long-greeting-shop' can never fire: whenever it holds, the earlier guard 'greeting-shop' holds too",
        "guard 'greeting-or-price-draw' can never fire: whenever it holds, one of the earlier guards 'greeting-shop', 'price-draw' holds",
    ] {
        assert!(
            stdout.contains(expected),
            "{expected:?} missing from:\n{stdout}"
        );
    }
    // Narrower rules that still have cases of their own are not reported.
    for quiet in ["'any-mode-greeting' can", "'greeting-or-price' can"] {
        assert!(!stdout.contains(quiet), "{quiet:?} reported:\n{stdout}");
    }
}

#[test]
fn the_shipped_pack_is_clean_and_every_rule_is_exercised() {
    let out = turnout(&["lint", "--deny-warnings", "rules"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.starts_with("rules: 0 errors, 0 warnings; "),
        "{summary}"
    );
    assert!(summary.contains(" failed; coverage "), "{summary}");
    let json = turnout(&["lint", "--format", "json", "rules"]);
    let last: serde_json::Value =
        serde_json::from_str(text(&json.stdout).lines().last().unwrap_or_default())
            .expect("summary");
    let rules = &last["summary"]["coverage"]["rules"];
    // Every pre-rule, search rule and guard written in rules/ is counted.
    let written: usize = turnout::source::rule_files(&root().join("rules"))
        .expect("rules")
        .iter()
        .map(|p| {
            let doc: serde_json::Value =
                serde_yaml::from_str(&std::fs::read_to_string(p).expect("read")).expect("yaml");
            ["/pre_rules", "/guards", "/search/rules"]
                .iter()
                .filter_map(|k| doc.pointer(k).and_then(serde_json::Value::as_array))
                .map(Vec::len)
                .sum::<usize>()
        })
        .sum();
    assert_eq!(rules["total"].as_u64(), Some(written as u64), "{rules}");
    assert_eq!(
        rules["covered"], rules["total"],
        "a rule no test case exercises"
    );
    assert_eq!(last["summary"]["tests"]["failed"], 0);
}

#[test]
fn min_coverage_fails_below_the_threshold() {
    let out = turnout(&["lint", "--min-coverage", "100", "--format", "json", "rules"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("\"code\":\"min-coverage\""));
    let out = turnout(&["lint", "--min-coverage", "5%", "rules"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = turnout(&["lint", "--min-coverage", "101", "rules"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap refuses a percentage over 100"
    );
}

/// The `unused-list` fixture's base plus `rules` (rules.yaml) and `cases` (tests/cases.yaml).
fn coverage_pack(rules: &str, cases: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        root().join("tests/lint/unused-list/base.yaml"),
        dir.path().join("base.yaml"),
    )
    .expect("copy");
    std::fs::write(dir.path().join("rules.yaml"), rules).expect("write");
    std::fs::create_dir(dir.path().join("tests")).expect("mkdir");
    std::fs::write(dir.path().join("tests/cases.yaml"), cases).expect("write");
    dir
}

#[test]
fn a_negation_that_spared_a_match_counts_as_exercised() {
    let dir = coverage_pack(
        "word_lists:\n  - id: buy_verbs\n    description: buying\n    negated_by: {list: negations, within: 0}\n    words: [buy]\n  - id: negations\n    description: what makes a verb a prohibition\n    words: [not$, never$]\nguards:\n  - id: buying-is-no-search\n    description: a purchase is not a search\n    tools: [shop_search]\n    drop_when: {mentions: buy_verbs}\n",
        "cases:\n  - name: do not buy keeps the search\n    request: {messages: [{role: user, content: 'do not buy it'}]}\n    model: {calls: [{tool: shop_search}]}\n    expect: {tools: [shop_search]}\n",
    );
    let out = turnout(&["lint", "--coverage", dir.path().to_str().expect("utf-8")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "word list 'negations': 1 of 2 entries never matched in a test case: 'never$'"
        ),
        "{stdout}"
    );
}

#[test]
fn coverage_lists_what_no_case_exercised() {
    // Two rules, one exercised; a list with an entry no message contains.
    let dir = coverage_pack(
        "word_lists:\n  - id: greetings\n    description: hello words\n    words: [hello, hi$]\n    patterns: ['\\bhey+\\b']\nguards:\n  - id: greeting-shop\n    description: a greeting is not a purchase\n    tools: [shop_search]\n    drop_when: {mentions: greetings}\n  - id: short-draw\n    description: too short to draw\n    tools: [draw]\n    drop_when: {shorter_than: 2}\n",
        "cases:\n  - name: hello heyyy stops the shop\n    request: {messages: [{role: user, content: 'Hello, heyyy'}]}\n    model: {calls: [{tool: shop_search}]}\n    expect: {tools: [], fired: [greeting-shop]}\n",
    );
    let d = dir.path().to_str().expect("utf-8");
    let out = turnout(&["lint", "--coverage", d]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("rules.yaml:11: guard 'short-draw' never fired in a test case"),
        "{stdout}"
    );
    assert!(
        stdout.contains("rules.yaml:2: word list 'greetings': 1 of 3 entries never matched in a test case: 'hi$'"),
        "{stdout}"
    );
    assert!(
        stdout.contains("coverage 60.0% (3/5): rules 1/2, word-list entries 2/3"),
        "{stdout}"
    );
    // `turnout test --coverage` says the same, before its last line.
    let out = turnout(&["test", "--rules", d, "--coverage"]);
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.last().copied(),
        Some("1 passed, 0 failed"),
        "{stdout}"
    );
    assert!(stdout.contains("coverage 60.0% (3/5)"), "{stdout}");
    let out = turnout(&["test", "--rules", d, "--min-coverage", "75"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

#[test]
fn a_list_consulted_only_by_a_rule_that_was_not_evaluated_is_not_exercised() {
    // The guard watches another tool, so its list is never looked up, whatever the message says.
    let dir = coverage_pack(
        "word_lists:\n  - id: greetings\n    description: hello words\n    words: [hello]\nguards:\n  - id: greeting-draw\n    description: a greeting is not a picture\n    tools: [draw]\n    drop_when: {mentions: greetings}\n",
        "cases:\n  - name: hello shop\n    request: {messages: [{role: user, content: hello}]}\n    model: {calls: [{tool: shop_search}]}\n    expect: {tools: [shop_search]}\n",
    );
    let out = turnout(&["lint", dir.path().to_str().expect("utf-8")]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("word-list entries 0/1"), "{stdout}");
}

#[test]
fn schema_prints_the_json_schema_and_every_rule_file_points_an_editor_at_it() {
    let out = turnout(&["schema"]);
    assert!(out.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(schema["properties"]["integrations"].is_object());
    for (dir, modeline) in [
        (
            "rules",
            "# yaml-language-server: $schema=../schemas/rules.schema.json",
        ),
        (
            "rules/tests",
            "# yaml-language-server: $schema=../../schemas/tests.schema.json",
        ),
    ] {
        for entry in std::fs::read_dir(root().join(dir)).expect("dir") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "yaml") {
                let first = std::fs::read_to_string(&path).expect("read");
                assert_eq!(
                    first.lines().next(),
                    Some(modeline),
                    "{} lacks the modeline",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn the_example_ci_workflow_installs_a_pinned_turnout_lints_once_and_replays() {
    let workflow = std::fs::read_to_string(root().join("examples/ci/rules.yml")).expect("workflow");
    let doc: serde_json::Value = serde_yaml::from_str(&workflow).expect("valid YAML");
    let runs: Vec<String> = doc["jobs"]
        .as_object()
        .expect("jobs")
        .values()
        .flat_map(|job| job["steps"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["run"].as_str().map(str::to_owned))
        .collect();
    let has = |needle: &str| runs.iter().any(|r| r.contains(needle));
    // A rules-only repository has no Cargo.toml: it installs a pinned release, not a build.
    assert!(has("cargo install --locked --git"), "{workflow}");
    assert!(has("--tag"), "{workflow}");
    assert!(!has("cargo build"), "{workflow}");
    assert!(has("turnout lint --format github"), "{workflow}");
    // lint runs the test cases: a `turnout test` step would run them twice.
    assert!(!has("turnout test"), "{workflow}");
    assert!(has("turnout replay") && has("--against"), "{workflow}");
    // The comment is posted by comment.yml (see tests/it/ci.rs).
    let comment =
        std::fs::read_to_string(root().join("examples/ci/comment.yml")).expect("comment.yml");
    assert!(comment.contains("<!-- turnout-replay -->"), "{comment}");
}

#[test]
fn the_editor_schema_refuses_what_the_service_refuses() {
    // Before: these were clean in the JSON Schema (so in editors and check-jsonschema) but
    // refused by the compiler.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/rules.schema.json")).expect("schema"),
    )
    .expect("json");
    let validator = jsonschema::draft202012::new(&schema).expect("a valid schema");
    let refused = [
        "guards: [{id: g, description: d, drop_when: {any: []}}]",
        "word_lists: [{id: w, description: d, words: []}]",
        "word_lists: [{id: w, description: d}]",
        "word_lists: [{id: w, description: d, patterns: []}]",
        "matching: {description: d, folds: {ae: e}}",
        "matching: {description: d, folds: {e: a}}",
        "matching: {description: d, folds: {ё: ee}}",
        "router: {model: gpt-4o, skill_tool: s, skill_argument: a, leave_skill_value: none}",
        "router: {timeout_ms: 0, skill_tool: s, skill_argument: a, leave_skill_value: none}",
        "router: {max_calls: 0, skill_tool: s, skill_argument: a, leave_skill_value: none}",
    ];
    for text in refused {
        let doc: serde_json::Value = serde_yaml::from_str(text).expect("yaml");
        assert!(!validator.is_valid(&doc), "the schema accepts {text}");
    }
    let accepted = [
        "matching: {description: d, folds: {ё: е}}",
        "word_lists: [{id: w, description: d, patterns: ['\\d+']}]",
        "router: {model: 'openai:gpt-4o', skill_tool: s, skill_argument: a, leave_skill_value: none}",
    ];
    for text in accepted {
        let doc: serde_json::Value = serde_yaml::from_str(text).expect("yaml");
        assert!(validator.is_valid(&doc), "the schema refuses {text}");
    }
    // And every shipped rule file passes it.
    for file in turnout::source::rule_files(&root().join("rules")).expect("rules") {
        let doc: serde_json::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&file).expect("read")).expect("yaml");
        assert!(validator.is_valid(&doc), "{}", file.display());
    }
}

#[test]
fn github_format_keeps_the_summary_plain_and_annotates_the_failing_expectation() {
    let out = turnout(&["lint", "--format", "github", "tests/lint/test-failed"]);
    let stdout = text(&out.stdout);
    let summary = stdout.lines().last().unwrap_or_default();
    // Before: `coverage 15.6%25` (the annotation escape leaked into plain text).
    assert!(summary.contains("% ("), "{summary}");
    assert!(!summary.contains("%25"), "{summary}");
    // Before: annotated where the case starts; now at the `expect` key that failed.
    let failed = stdout
        .lines()
        .find(|l| l.contains("turnout test-failed"))
        .expect("an annotation");
    assert!(failed.contains("line=16,col=16"), "{failed}");
}

/// Regression: lint compared every rule with every earlier one, and the shipped pack grown 10×
/// took seconds in a release build and far longer in a debug one. Now about a second in a debug build.
#[test]
fn a_pack_ten_times_the_shipped_one_lints_clean_in_seconds() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let pack = dir.path().join("pack10");
    genpack::write_pack(&genpack::shipped(), &pack, 10).expect("the pack is written");
    let start = Instant::now();
    let out = turnout(&[
        "lint",
        "--deny-warnings",
        pack.to_str().expect("a UTF-8 path"),
    ]);
    let took = start.elapsed();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout
            .lines()
            .last()
            .unwrap_or_default()
            .contains(": 0 errors, 0 warnings; "),
        "{stdout}"
    );
    assert!(
        took < Duration::from_secs(10),
        "lint of the 10x pack took {took:?}"
    );
}

/// Regression: the shared generator grows a pack 100× into one 2.9 MB file of word lists, and
/// the 2 MiB default refused it (`too-large`) before it was read. A 3 MiB file loads with the
/// default limit; the limit still refuses a file over it.
#[test]
fn a_three_megabyte_rule_file_loads_with_the_default_limit() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let pack = dir.path().join("pack");
    genpack::write_pack(&genpack::shipped(), &pack, 1).expect("the pack is copied");
    // One list of 3 MiB of made-up stems, mentioned by a guard so that nothing is unused.
    let mut big = String::from(
        "word_lists:\n  - id: big_list\n    description: a list as large as a grown pack's\n    words:\n",
    );
    let mut n = 0u32;
    while big.len() < 3 << 20 {
        big.push_str(&format!("      - жжщ{n:07}\n"));
        n += 1;
    }
    big.push_str(
        "guards:\n  - id: big-list-guard\n    description: uses the big list\n    \
         drop_when: {mentions: big_list}\n",
    );
    std::fs::write(pack.join("zz_big.yaml"), &big).expect("write the big file");
    let dir_arg = pack.to_str().expect("a UTF-8 path");
    let out = turnout(&["lint", dir_arg]);
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("too-large"), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let out = turnout(&["lint", "--max-rule-file-bytes", "2097152", dir_arg]);
    assert!(
        text(&out.stdout).contains("too-large"),
        "the flag still lowers it"
    );
}

/// A rules directory of the shared base and one `rules.yaml`, without tests.
fn pack(rules: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        root().join("tests/lint/unknown-list/base.yaml"),
        dir.path().join("base.yaml"),
    )
    .expect("copy");
    std::fs::write(dir.path().join("rules.yaml"), rules).expect("write");
    dir
}

#[test]
fn each_mistake_a_product_manager_makes_is_explained_in_words_at_its_value() {
    // Before: `15.0` was `error[invalid]` at 1:1 ("expected usize"); `<<:` gave three findings
    // about '<<' and missing keys; an empty word had no hint; a capital in an id showed only
    // the regex.
    let dir = pack(
        "word_lists:\n  - id: greetings\n    description: hello words\n    words: [hello, \"\"]\n  - id: Greet-Words\n    description: more hello words\n    words: [hey]\nguards:\n  - id: greeting-draw\n    description: a greeting is not a picture\n    tools: [draw]\n    drop_when: {any: [{mentions: greetings}, {mentions: Greet-Words}]}\n",
    );
    let out = turnout(&["lint", dir.path().to_str().expect("utf-8")]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("this text is empty"), "{stdout}");
    assert!(
        stdout.contains("write the text between the quotes, or remove the entry"),
        "{stdout}"
    );
    assert!(
        stdout.contains("lower-case Latin letters, digits and '_'"),
        "{stdout}"
    );
    assert!(stdout.contains("did you mean 'greet_words'?"), "{stdout}");
    assert!(
        !stdout.contains("^[a-z]"),
        "the regex is not what a person reads:\n{stdout}"
    );

    let whole = turnout(&["lint", "tests/lint/whole-number"]);
    let stdout = text(&whole.stdout);
    assert!(
        stdout.contains("rules.yaml:13:24: error[wrong-type]: expected a whole number, found 15.0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("write it without the decimal point: 15"),
        "{stdout}"
    );

    let merge = turnout(&["lint", "tests/lint/merge-key"]);
    let stdout = text(&merge.stdout);
    assert!(
        stdout.contains("YAML merge keys ('<<: *name') are not supported"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("error[").count(),
        1,
        "one mistake, one finding:\n{stdout}"
    );
}

#[test]
fn a_clean_lint_of_the_shipped_pack_is_a_short_summary() {
    // Before: ~25 lines of word-list entries no case matched.
    let out = turnout(&["lint", "rules"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.lines().count() <= 5, "{stdout}");
    assert!(stdout.contains("--coverage lists them"), "{stdout}");
    let detailed = text(&turnout(&["lint", "--coverage", "rules"]).stdout);
    assert!(
        detailed.contains("entries never matched in a test case: '"),
        "--coverage lists the entries:\n{detailed}"
    );
}

#[test]
fn a_skipped_checks_note_is_one_line_once_and_never_for_a_missing_directory() {
    // Before: `lint rulez` added a three-line note to "no such directory".
    let out = turnout(&["lint", "rulez"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(!stdout.contains("skipped-checks"), "{stdout}");

    let dir = pack("word_lists:\n  - id: greetings\n    description: hello\n    words: [hello]\n");
    std::fs::write(dir.path().join("broken.yaml"), "guards:\n  - id: a\n    description: b\n    tools: [draw]\n    drop_when: {mentions: greetings\n").expect("write");
    std::fs::write(dir.path().join("broken2.yaml"), "pre_rules: [\n").expect("write");
    let out = turnout(&["lint", dir.path().to_str().expect("utf-8")]);
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches("skipped-checks").count(), 1, "{stdout}");
    let note = stdout
        .lines()
        .position(|l| l.contains("note[skipped-checks]"))
        .expect("the note");
    let next = stdout.lines().nth(note + 1).unwrap_or_default();
    assert!(!next.contains("hint"), "the note is one line:\n{stdout}");
}

#[test]
fn a_test_file_that_fails_to_load_counts_its_cases_as_failed() {
    // Before: a schema error in a file of three cases counted one failure and dropped the
    // three cases from the count ("1 passed, 1 failed").
    let dir = coverage_pack(
        "word_lists:\n  - id: greetings\n    description: hello words\n    words: [hello]\nguards:\n  - id: greeting-shop\n    description: a greeting is not a purchase\n    tools: [shop_search]\n    drop_when: {mentions: greetings}\n",
        "cases:\n  - name: hello stops the shop\n    request: {messages: [{role: user, content: hello}]}\n    model: {calls: [{tool: shop_search}]}\n    expect: {tools: []}\n",
    );
    std::fs::write(
        dir.path().join("tests/broken.yaml"),
        "cases:\n  - name: one\n    request: {messages: 5}\n    expect: {tools: []}\n  - name: two\n    request: {messages: [{role: user, content: hi}]}\n    expect: {tools: []}\n  - name: three\n    request: {messages: [{role: user, content: hey}]}\n    expect: {tools: []}\n",
    )
    .expect("write");
    let d = dir.path().to_str().expect("utf-8");
    let out = turnout(&["test", "--rules", d]);
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.lines().last(),
        Some("1 passed, 3 failed"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(1));
    let out = turnout(&["lint", d]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("passed, 3 failed"), "{stdout}");
}

#[test]
fn test_takes_a_rules_directory_as_lint_does() {
    // Before: `turnout test rules` read `rules` as a test file: "is a directory … 0 passed,
    // 1 failed".
    let out = turnout(&["test", "rules"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(" passed, 0 failed") && !last.starts_with("0 "),
        "{stdout}"
    );
}
