//! How schema errors read: every kind of mistake a product manager makes, located and explained.

use super::*;
use crate::diag::Code;
use crate::rules::schema::*;
use crate::source::yaml::parse_yaml;
use std::path::PathBuf;

fn rules_check(text: &str) -> Vec<Diagnostic> {
    let path = PathBuf::from("rules/r.yaml");
    let (value, spans) = parse_yaml(&path, text).expect("well-formed YAML");
    SchemaCheck::rules().check(&path, &value, &spans)
}

fn tests_check(text: &str) -> Vec<Diagnostic> {
    let path = PathBuf::from("rules/tests/t.yaml");
    let (value, spans) = parse_yaml(&path, text).expect("well-formed YAML");
    SchemaCheck::tests().check(&path, &value, &spans)
}

fn only(diags: &[Diagnostic]) -> &Diagnostic {
    assert_eq!(diags.len(), 1, "expected one diagnostic, got: {diags:#?}");
    &diags[0]
}

fn at(d: &Diagnostic) -> (usize, usize) {
    let loc = d.location.as_ref().expect("located");
    (loc.line, loc.column)
}

const VALID_RULES: &str = "\
# yaml-language-server: $schema=../schemas/rules.schema.json
tools:
  - id: lookup
    description: Searches the web.
    chip: Searching…
  - id: send_mail
    description: Sends a letter.
    chip: Sending…
    confirm: true
    available_when: {integration: google}
    arguments:
      type: object
      properties: {to: {type: string}}
    examples: [write to Ann]
skills:
  - {id: interview, description: Asks questions., badge: Interview, auto: true}
word_lists:
  - id: greetings
    description: Hello words.
    words: [hello, good morning]
    patterns: ['\\bhi\\b']
pre_rules:
  - id: keep-skill
    description: Stay in the skill.
    when: {all: [{skill_active: true}, {not: {longer_than: 200}}, {skill_active: interview}]}
    then: {skill: active}
  - id: mail
    description: Mail.
    when:
      any:
        - attachment: {kind: photo, face: false}
        - generation_mode: any
        - ui_mode: mail
    then:
      calls:
        - tool: send_mail
          arguments: {to: '{message}'}
router:
  history: 6
  temperature: 0
  max_tokens: 500
  timeout_ms: 15000
  max_calls: 2
  skill_tool: mode_switch
  skill_argument: skill
  leave_skill_value: none
  instructions: [{id: ambiguity, description: d, text: t}]
  notes: [{id: n1, description: d, text: t}]
search:
  tool: lookup
  off_when: {generation_mode: image}
  rules: [{id: prices, description: d, when: {mentions: greetings}}]
guards:
  - id: no-repeat
    description: Do not send twice.
    tools: [send_mail]
    drop_when:
      any:
        - repeats_successful_call: true
        - argument: {name: to, one_of: [a, 1, null]}
        - argument_in_message: to
        - shorter_than: 3
        - {assistant_asked: false}
        - {draft_shown: true}
        - {file_open: true}
        - {open_file_named: false}
        - {search_toggle: true}
";

#[test]
fn committed_schemas_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    if std::env::var_os("TURNOUT_WRITE_SCHEMAS").is_some() {
        write_schemas(&dir).expect("write schemas");
    }
    for (file, generated) in [
        (RULES_SCHEMA_FILE, rules_schema()),
        (TESTS_SCHEMA_FILE, tests_schema()),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        let committed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert!(
            committed == generated,
            "schemas/{file} is out of date with the types in src/rules: regenerate it with \
                 `cargo run -- schema --write schemas` (or `TURNOUT_WRITE_SCHEMAS=1 cargo test \
                 --lib committed_schemas_are_current`) and commit the result"
        );
    }
}

#[test]
fn schemas_are_identified_draft_2020_12() {
    for (schema, id, title) in [
        (
            rules_schema(),
            "urn:turnout:schema:rules",
            "turnout rule file",
        ),
        (
            tests_schema(),
            "urn:turnout:schema:tests",
            "turnout rule test file",
        ),
    ] {
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["$id"], id);
        assert_eq!(schema["title"], title);
        assert!(schema["$defs"].is_object());
        assert!(jsonschema::meta::is_valid(&schema));
        assert!(schema_text(&schema).ends_with("}\n"));
    }
}

#[test]
fn a_complete_rule_file_passes_and_deserializes() {
    let diags = rules_check(VALID_RULES);
    assert!(diags.is_empty(), "{diags:#?}");
    let (value, _) = parse_yaml(Path::new("r.yaml"), VALID_RULES).expect("yaml");
    let file: crate::rules::RuleFile = serde_json::from_value(value).expect("serde agrees");
    assert_eq!(file.guards.len(), 1);
}

#[test]
fn a_complete_test_file_passes_and_deserializes() {
    let text = "\
cases:
  - name: greets
    behaviours: [B1]
    request:
      messages:
        - {role: assistant, content: Hi?}
        - {role: user, content: hello}
      skill: null
      draft_shown: true
      ui: {mode: mail, open_file: {name: a.txt}, tab: inbox}
      generation_mode: image
      attachments: [{kind: photo, face: true}]
      integrations: [google]
      recent_calls: [{tool: send_mail, arguments: {to: a}, ok: true}]
    model: {calls: [{tool: lookup, arguments: {q: x}}]}
    expect:
      outcome: tool
      tools: [lookup]
      skill: null
      model_called: true
      confirm: []
      fired: [a]
      not_fired: [b]
      arguments: [{q: x}]
  - name: model fails
    request: {messages: [{role: user, content: x}]}
    model: {error: http_503}
    expect: {outcome: chat}
";
    let diags = tests_check(text);
    assert!(diags.is_empty(), "{diags:#?}");
    let (value, _) = parse_yaml(Path::new("t.yaml"), text).expect("yaml");
    let file: crate::rules::testcase::TestFile =
        serde_json::from_value(value).expect("serde agrees");
    assert_eq!(file.cases.len(), 2);
}

/// The YAML files in the repository that point editors at these schemas must pass them.
#[test]
fn repository_files_pass_their_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, check, marker) in [
        (
            "rules",
            SchemaCheck::rules(),
            "$schema=../schemas/rules.schema.json",
        ),
        (
            "rules/tests",
            SchemaCheck::tests(),
            "$schema=../../schemas/tests.schema.json",
        ),
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if !text.contains(marker) {
                continue;
            }
            let (value, spans) = parse_yaml(&path, &text).expect("well-formed YAML");
            let diags = check.check(&path, &value, &spans);
            assert!(
                diags.is_empty(),
                "{}",
                diags.iter().map(|d| format!("{d}\n")).collect::<String>()
            );
        }
    }
}

#[test]
fn unknown_key_is_located_at_the_key_with_did_you_mean() {
    let text = "guards:\n  - id: g\n    description: d\n    drop_whn: {mentions: x}\n";
    let diags = rules_check(text);
    // One mistake, one finding: 'drop_when' is missing because it is misspelt.
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = diags
        .iter()
        .find(|d| d.code == Code::UnknownKey)
        .expect("unknown key");
    assert_eq!(d.message, "unknown key 'drop_whn' in guard");
    assert_eq!(
        d.hint.as_deref(),
        Some("did you mean 'drop_when'? allowed keys: id, description, tools, drop_when")
    );
    assert_eq!(d.rule.as_deref(), Some("g"));
    assert_eq!(at(d), (4, 5));
    // A misspelling of something else leaves the missing key reported.
    let text = "guards:\n  - id: g\n    description: d\n    tool: [x]\n";
    let codes: Vec<Code> = rules_check(text).iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::MissingKey, Code::UnknownKey]);
    let text = "guards:\n  - id: g\n    description: d\n    whatever: 1\n";
    let codes: Vec<Code> = rules_check(text).iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::MissingKey, Code::UnknownKey]);

    let d = only(&rules_check("guardz: []\n")).clone();
    assert_eq!(
        d.message,
        "unknown key 'guardz' at the top level of the rule file"
    );
    assert!(
        d.hint
            .as_deref()
            .unwrap_or("")
            .starts_with("did you mean 'guards'?")
    );

    // Nothing close: no did-you-mean, only the list.
    let d = only(&rules_check("zzzzzz: 1\n")).clone();
    assert!(
        d.hint
            .as_deref()
            .unwrap_or("")
            .starts_with("allowed keys: tools, skills")
    );
}

#[test]
fn missing_key_is_located_at_the_mapping() {
    let text = "guards:\n  - id: g\n    drop_when: {file_open: true}\n";
    let d = only(&rules_check(text)).clone();
    assert_eq!(d.code, Code::MissingKey);
    assert_eq!(d.message, "missing key 'description' in guard");
    assert_eq!(at(&d), (2, 5));
    assert!(d.hint.as_deref().unwrap_or("").contains("complaint"));
}

#[test]
fn wrong_type_says_what_was_found() {
    let text = "router:\n  skill_tool: mode_switch\n  skill_argument: skill\n  leave_skill_value: none\n  timeout_ms: \"240\"\n";
    let d = only(&rules_check(text)).clone();
    assert_eq!(d.code, Code::WrongType);
    assert_eq!(d.message, "expected a number, found the string \"240\"");
    assert_eq!(d.hint.as_deref(), Some("remove the quotes: write 240"));
    assert_eq!(at(&d), (5, 15));

    let text = "guards:\n  - id: g\n    description: d\n    tools: lookup\n    drop_when: {file_open: true}\n";
    let d = only(&rules_check(text)).clone();
    assert_eq!(d.message, "expected a list, found the string \"lookup\"");

    let text = "guards:\n  - id: g\n    description: d\n    drop_when: {longer_than: 2.5}\n";
    let d = only(&rules_check(text)).clone();
    assert_eq!(d.message, "expected a whole number, found the number 2.5");

    let d = only(&rules_check("- a\n")).clone();
    assert_eq!(
        d.message,
        "expected a mapping (key: value pairs), found a list"
    );
    assert_eq!(at(&d), (1, 1));
}

#[test]
fn unknown_condition_lists_the_conditions() {
    let text = "guards:\n  - id: g\n    description: d\n    drop_when: {mention: x}\n";
    let d = only(&rules_check(text)).clone();
    assert_eq!(d.code, Code::UnknownKey);
    assert!(
        d.message.starts_with(
            "unknown condition 'mention'; expected one of: all, any, not, longer_than, "
        ),
        "{d}"
    );
    assert!(d.message.ends_with("repeats_successful_call"), "{d}");
    assert_eq!(d.hint.as_deref(), Some("did you mean 'mentions'?"));
    assert_eq!(at(&d), (4, 17));

    // Deep inside all/any/not, in block style.
    let text = "guards:\n  - id: g\n    description: d\n    drop_when:\n      not:\n        any:\n          - mentions: x\n          - file_opn: true\n";
    let d = only(&rules_check(text)).clone();
    assert!(d.message.starts_with("unknown condition 'file_opn'"), "{d}");
    assert_eq!(d.hint.as_deref(), Some("did you mean 'file_open'?"));
    assert_eq!(at(&d), (8, 13));

    // A bare name where a mapping is needed.
    let text = "search:\n  tool: t\n  off_when: file_open\n";
    let d = only(&rules_check(text)).clone();
    assert_eq!(d.code, Code::WrongType);
    assert_eq!(
        d.message,
        "the condition 'file_open' needs a value, written as 'file_open: ...'"
    );
}

#[test]
fn wrong_nested_condition_value_reports_the_nested_error() {
    let text = "guards:\n  - id: g\n    description: d\n    drop_when:\n      all:\n        - longer_than: \"240\"\n        - attachment: {kind: photo, fase: true}\n        - skill_active: 3\n";
    let diags = rules_check(text);
    assert_eq!(diags.len(), 3, "{diags:#?}");
    assert_eq!(
        diags[0].message,
        "expected a number, found the string \"240\""
    );
    assert_eq!(at(&diags[0]), (6, 24));
    assert_eq!(diags[1].code, Code::UnknownKey);
    assert_eq!(diags[1].message, "unknown key 'fase' in 'attachment'");
    assert_eq!(
        diags[1].hint.as_deref(),
        Some("did you mean 'face'? allowed keys: kind, face")
    );
    assert_eq!(at(&diags[1]), (7, 37));
    assert_eq!(
        diags[2].message,
        "expected true/false or a string, found the number 3"
    );
    // The tagged-enum reasoning also covers `then:` actions.
    let text = "pre_rules:\n  - id: p\n    description: d\n    when: {file_open: true}\n    then: {skil: active}\n";
    let d = only(&rules_check(text)).clone();
    assert!(
        d.message
            .starts_with("unknown action 'skil'; expected one of: skill, calls"),
        "{d}"
    );
}

#[test]
fn several_keys_in_one_condition() {
    let text =
        "guards:\n  - id: g\n    description: d\n    drop_when: {mentions: x, file_open: true}\n";
    let d = only(&rules_check(text)).clone();
    assert_eq!(
        d.message,
        // In the order written.
        "a condition takes exactly one key, found 2: mentions, file_open"
    );
    assert!(d.hint.as_deref().unwrap_or("").contains("'all:'"));
    let text = "guards:\n  - id: g\n    description: d\n    drop_when: {}\n";
    let d = only(&rules_check(text)).clone();
    assert_eq!(d.code, Code::MissingKey);
    assert!(
        d.message
            .starts_with("empty condition; write one of: all, any"),
        "{d}"
    );
}

#[test]
fn names_and_patterns_in_test_files() {
    let text = "cases:\n  - name: n\n    request: {messages: [{role: usr, content: hi}]}\n    model: {error: boom}\n    expect: {outcome: tools}\n";
    let diags = tests_check(text);
    assert_eq!(diags.len(), 3, "{diags:#?}");
    assert_eq!(
        diags[0].message,
        "unknown role 'usr'; expected one of: user, assistant, system"
    );
    assert_eq!(diags[0].hint.as_deref(), Some("did you mean 'user'?"));
    assert_eq!(diags[1].message, "\"boom\" is not a valid 'error'");
    assert_eq!(
        diags[2].message,
        "unknown outcome 'tools'; expected one of: chat, skill, tool"
    );
    assert_eq!(diags[2].hint.as_deref(), Some("did you mean 'tool'?"));
}

#[test]
fn empty_file_is_one_diagnostic() {
    for text in ["", "# only a comment\n", "---\n"] {
        let d = only(&rules_check(text)).clone();
        assert_eq!(d.code, Code::EmptyFile);
        assert_eq!(d.message, "the file is empty");
        assert_eq!(at(&d), (1, 1));
    }
    let d = only(&tests_check("")).clone();
    assert_eq!(d.hint.as_deref(), Some("a test file needs 'cases'"));
}

#[test]
fn strange_values_are_refused_each_with_a_located_finding() {
    for text in [
        "1\n",
        "\"text\"\n",
        "true\n",
        "[]\n",
        "{}\n",
        "guards: [1, null, [], {}]\n",
        "tools: [{id: 1, description: [], chip: {}}]\n",
        "router: null\nsearch:\n",
        "pre_rules: [{when: [], then: []}]\n",
        "guards: [{drop_when: {all: {any: {not: [1]}}}}]\n",
        "a/b~c: 1\n",
    ] {
        for (found, valid) in [
            // No sections (or empty ones) is a rule file with nothing in it.
            (
                rules_check(text),
                text == "{}\n" || text.starts_with("router: null"),
            ),
            (tests_check(text), false),
        ] {
            assert_eq!(found.is_empty(), valid, "{text:?}: {found:?}");
            for d in found {
                assert!(d.is_error(), "{text:?}: {d}");
                let loc = d.location.as_ref().expect("located");
                assert!(loc.line >= 1 && loc.column >= 1, "{text:?}: {d}");
                assert!(!d.message.is_empty());
            }
        }
    }
}

#[test]
fn allowed_keys_read_in_declaration_order() {
    let d = only(&rules_check(
        "guards: [{id: g, description: d, drop_whn: {longer_than: 1}}]\n",
    ))
    .clone();
    assert_eq!(d.code, Code::UnknownKey);
    assert!(
        d.hint
            .as_deref()
            .is_some_and(|h| h.ends_with("allowed keys: id, description, tools, drop_when")),
        "{d}"
    );
}

#[test]
fn did_you_mean_needs_a_close_name() {
    assert_eq!(did_you_mean("κλειδ", ["κλειδί"]), Some("κλειδί"));
    assert_eq!(
        did_you_mean("mention", ["mentions", "not"]),
        Some("mentions")
    );
    assert_eq!(did_you_mean("xyz", ["mentions", "not"]), None);
    assert_eq!(did_you_mean("no", ["id"]), None);
}
