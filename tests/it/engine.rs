//! The pipeline, driven through the library with small rule sets written here, so each test
//! shows one mechanism independent of the shipped pack.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use turnout::RuleSet;
use turnout::compile::{Loaded, load_texts};
use turnout::contract::{Decision, EffectKind, FactKind, Outcome, Request, Stage};
use turnout::engine;
use turnout::model::scripted::ScriptedModel;
use turnout::model::{Model, ModelAnswer, ModelError, RawCall, RouterInput};

const RULES: &str = r#"
tools:
  - id: skill_switch
    description: switch a skill
    chip: switching
    arguments:
      type: object
      properties: {skill: {enum: [coach, none]}}
      required: [skill]
  - id: search
    description: web search
    chip: searching
  - id: shop
    description: find products
    chip: shopping
    arguments:
      type: object
      properties: {query: {type: string}}
      required: [query]
      additionalProperties: false
  - id: publish
    description: publish a post
    chip: publishing
    confirm: true
  - id: edit
    description: edit the open file
    chip: editing
    arguments:
      type: object
      properties: {file: {type: string}, instruction: {type: string}}
      required: [file]
  - id: partner_mail
    description: partner mail
    chip: mail
    available_when: {integration: partner}
skills:
  - {id: coach, description: coaching, badge: Coach, auto: true}
  - {id: files, description: files, badge: Files, auto: false}
word_lists:
  - id: markers
    description: words that start a new task
    words: ["find", "mail$"]
  - id: where_to_buy
    description: info questions
    words: ["where to buy", "where can i buy"]
  - id: pricing
    description: price questions
    words: ["how much", "price$"]
    patterns: ['top\s*-?\s*\d+']
pre_rules:
  - id: interview-continues
    description: short answers to the skill's question stay in the skill
    when:
      all:
        - skill_active: true
        - assistant_asked: true
        - shorter_than: 40
        - not: {mentions: markers}
    then: {skill: active}
  - id: open-file-edit
    description: edits of the named open file go straight to the editor
    when: {open_file_named: true}
    then:
      calls: [{tool: edit, arguments: {file: "{open_file}", instruction: "do: {message}"}}]
router:
  timeout_ms: 200
  skill_tool: skill_switch
  skill_argument: skill
  leave_skill_value: none
  notes:
    - {id: shop-vs-search, description: confusion, text: "shop is for buying"}
search:
  tool: search
  off_when: {skill_active: true}
  rules:
    - id: price-patterns
      description: price questions need fresh data
      when: {mentions: pricing}
guards:
  - id: shop-info-question
    description: where-to-buy questions get words, not cards
    tools: [shop]
    drop_when: {mentions: where_to_buy}
  - id: no-loops
    description: identical successful calls are not repeated
    drop_when: {repeats_successful_call: true}
"#;

fn ruleset() -> RuleSet {
    let loaded = load(RULES);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    loaded.ruleset.expect("rules compile")
}

fn load(yaml: &str) -> Loaded {
    load_texts(&[(PathBuf::from("rules/test.yaml"), yaml.to_owned())])
}

fn req(v: Value) -> Request {
    serde_json::from_value(v).expect("valid request")
}

fn user(text: &str) -> Request {
    req(json!({"messages": [{"role": "user", "content": text}]}))
}

fn calls(list: &[(&str, Value)]) -> ScriptedModel {
    ScriptedModel::calls(
        list.iter()
            .map(|(t, a)| RawCall {
                tool: (*t).into(),
                arguments: a.clone(),
            })
            .collect(),
    )
}

async fn decide(rs: &RuleSet, r: &Request, m: &dyn Model) -> Decision {
    engine::decide(rs, r, engine::Options::model(Some(m)))
        .await
        .expect("routable")
}

fn tools(d: &Decision) -> Vec<&str> {
    d.calls.iter().map(|c| &*c.tool).collect()
}

#[tokio::test]
async fn pre_rule_settles_without_calling_the_model() {
    let rs = ruleset();
    let r = req(json!({
        "messages": [{"role": "assistant", "content": "How old is the child?"},
                     {"role": "user", "content": "3 years"}],
        "skill": "coach"
    }));
    let d = decide(&rs, &r, &calls(&[("shop", json!({"query": "x"}))])).await;
    assert_eq!(d.outcome, Outcome::Skill);
    assert!(!d.model_called);
    assert_eq!(d.skill.as_deref(), Some("coach"));
    assert_eq!(d.skill_badge.as_deref(), Some("Coach"));
    assert_eq!(d.trace[0].rule.as_deref(), Some("interview-continues"));
}

#[tokio::test]
async fn a_marker_word_sends_the_reply_to_the_router() {
    let rs = ruleset();
    let r = req(json!({
        "messages": [{"role": "assistant", "content": "How old is the child?"},
                     {"role": "user", "content": "find my mail"}],
        "skill": "coach"
    }));
    let d = decide(&rs, &r, &calls(&[])).await;
    assert!(d.model_called);
    assert_eq!(d.outcome, Outcome::Skill, "the skill stays active");
}

#[tokio::test]
async fn pre_rule_templates_fill_message_and_open_file() {
    let rs = ruleset();
    let r = req(json!({
        "messages": [{"role": "user", "content": "add a row to Budget 2025"}],
        "ui": {"open_file": {"name": "Budget 2025"}}
    }));
    let d = engine::decide_without_model(&rs, &r).expect("routable");
    assert_eq!(tools(&d), ["edit"]);
    assert_eq!(
        d.calls[0].arguments,
        json!({"file": "Budget 2025", "instruction": "do: add a row to Budget 2025"})
    );
}

#[tokio::test]
async fn model_errors_mean_plain_chat() {
    let rs = ruleset();
    for e in [
        ModelError::Timeout,
        ModelError::Http(500),
        ModelError::Garbage("{".into()),
    ] {
        let d = decide(
            &rs,
            &user("hello there"),
            &ScriptedModel::failing(e.clone()),
        )
        .await;
        assert_eq!(d.outcome, Outcome::Chat);
        assert!(d.calls.is_empty());
        assert!(
            d.trace.iter().any(|s| s.effect.contains(e.kind())),
            "{:?}",
            d.trace
        );
    }
}

struct Sleeper;

#[async_trait]
impl Model for Sleeper {
    fn name(&self) -> &str {
        "sleeper"
    }
    async fn route(&self, _: &RouterInput<'_>) -> Result<ModelAnswer, ModelError> {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(ModelAnswer::default())
    }
}

#[tokio::test]
async fn the_router_timeout_comes_from_the_rules() {
    let rs = ruleset();
    let started = Instant::now();
    let d = decide(&rs, &user("hello there"), &Sleeper).await;
    let waited = started.elapsed();
    assert_eq!(d.outcome, Outcome::Chat);
    assert!(d.trace.iter().any(|s| s.effect == "model error: timeout"));
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

#[tokio::test]
async fn an_invalid_answer_is_discarded_whole() {
    let rs = ruleset();
    let cases = [
        (
            vec![
                ("shop", json!({"query": "a"})),
                ("publish", json!({})),
                ("shop", json!({"query": "b"})),
            ],
            "too_many_calls",
        ),
        (
            vec![("shop", json!({"query": "a"})), ("teleport", json!({}))],
            "unknown_tool",
        ),
        (vec![("shop", json!({"query": 7}))], "invalid_arguments"),
        (vec![("partner_mail", json!({}))], "unavailable_tool"),
    ];
    for (answer, kind) in cases {
        let d = decide(&rs, &user("buy a kettle"), &calls(&answer)).await;
        assert_eq!(d.outcome, Outcome::Chat, "{kind}");
        let step = d
            .trace
            .iter()
            .find(|s| s.stage == Stage::Validate)
            .expect("validation step");
        assert!(step.effect.contains(kind), "{kind}: {step:?}");
    }
}

#[tokio::test]
async fn conditional_tools_are_offered_and_accepted_only_in_context() {
    let rs = ruleset();
    let with = req(
        json!({"messages": [{"role": "user", "content": "mail"}], "integrations": ["partner"]}),
    );
    let d = decide(&rs, &with, &calls(&[("partner_mail", json!({}))])).await;
    assert_eq!(tools(&d), ["partner_mail"]);
    let offered = |d: &Decision| {
        d.trace
            .iter()
            .find(|s| s.stage == Stage::Router)
            .map(|s| s.why.to_string())
    };
    assert!(offered(&d).is_some_and(|w| w.contains("offered 6 tools")));
    let without = decide(&rs, &user("mail"), &calls(&[])).await;
    assert!(offered(&without).is_some_and(|w| w.contains("offered 5 tools")));
}

#[tokio::test]
async fn skill_switch_sets_and_leaves_the_skill() {
    let rs = ruleset();
    let d = decide(
        &rs,
        &user("coach me"),
        &calls(&[("skill_switch", json!({"skill": "coach"}))]),
    )
    .await;
    assert_eq!(
        (d.outcome, d.skill.as_deref()),
        (Outcome::Skill, Some("coach"))
    );
    assert!(d.calls.is_empty(), "the switch is not a call to run");

    let mut r = user("stop coaching");
    r.skill = Some("coach".into());
    let d = decide(
        &rs,
        &r,
        &calls(&[("skill_switch", json!({"skill": "none"}))]),
    )
    .await;
    assert_eq!((d.outcome, d.skill.as_deref()), (Outcome::Chat, None));

    // A button-only skill is refused by the schema's enum: nothing switches.
    let d = decide(
        &rs,
        &user("files"),
        &calls(&[("skill_switch", json!({"skill": "files"}))]),
    )
    .await;
    assert_eq!((d.outcome, d.skill.as_deref()), (Outcome::Chat, None));
}

#[tokio::test]
async fn search_patterns_or_the_model_turn_search_on_but_not_in_a_skill() {
    let rs = ruleset();
    let d = decide(&rs, &user("How much is a top-10 laptop"), &calls(&[])).await;
    assert!(d.web_search);
    let step = d
        .trace
        .iter()
        .find(|s| s.stage == Stage::Search)
        .expect("search step");
    assert_eq!(step.rule.as_deref(), Some("price-patterns"));
    assert!(
        step.why.contains("'how much'") && step.why.contains("at 0..8"),
        "{}",
        step.why
    );

    let d = decide(
        &rs,
        &user("tell me a joke"),
        &calls(&[("search", json!({}))]),
    )
    .await;
    assert!(d.web_search);
    assert!(d.calls.is_empty());

    let mut r = user("how much is it, really, in the end");
    r.skill = Some("coach".into());
    r.web_search_toggle = true;
    let d = decide(&rs, &r, &calls(&[("search", json!({}))])).await;
    assert!(!d.web_search);
}

#[tokio::test]
async fn guards_veto_with_the_matched_pattern_and_where() {
    let rs = ruleset();
    let d = decide(
        &rs,
        &user("Where to buy spare parts"),
        &calls(&[
            ("shop", json!({"query": "spare parts"})),
            ("publish", json!({})),
        ]),
    )
    .await;
    assert_eq!(tools(&d), ["publish"]);
    assert!(d.calls[0].confirm);
    let step = d
        .trace
        .iter()
        .find(|s| s.stage == Stage::Guard)
        .expect("guard step");
    assert_eq!(step.rule.as_deref(), Some("shop-info-question"));
    assert_eq!(step.effect, "dropped shop");
    assert!(
        step.why.contains("'where to buy'") && step.why.contains("0..12"),
        "{}",
        step.why
    );
}

#[tokio::test]
async fn a_bare_command_of_fewer_words_than_a_guard_allows_is_dropped_and_the_trace_counts_them() {
    let rules = RULES.replace(
        "  - id: no-loops\n",
        "  - id: bare-shop\n    description: a bare command asks back\n    tools: [shop]\n    drop_when: {fewer_words_than: 3}\n  - id: no-loops\n",
    );
    let loaded = load(&rules);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let rs = loaded.ruleset.expect("rules compile");
    let shop = calls(&[("shop", json!({"query": "kettle"}))]);
    // Two words, and a hyphenated word is one: dropped.
    for bare in ["find kettle", "find something-cheap", "  find -- kettle!"] {
        let d = decide(&rs, &user(bare), &shop).await;
        assert!(tools(&d).is_empty(), "{bare}: {:?}", tools(&d));
        let step = (d.trace.iter())
            .find(|s| s.rule.as_deref() == Some("bare-shop"))
            .expect("guard step");
        assert!(
            step.why.contains("the message has 2 words (limit 3)"),
            "{}",
            step.why
        );
    }
    // Three words are a request with something said about it: kept.
    let d = decide(&rs, &user("find a kettle"), &shop).await;
    assert_eq!(tools(&d), ["shop"]);
}

#[tokio::test]
async fn identical_successful_calls_are_not_repeated() {
    let rs = ruleset();
    let mut r = user("again please");
    r.recent_calls = serde_json::from_value(json!([
        {"tool": "shop", "arguments": {"query": "kettle"}, "ok": true}
    ]))
    .expect("calls");
    let d = decide(&rs, &r, &calls(&[("shop", json!({"query": "kettle"}))])).await;
    assert!(d.calls.is_empty());
    let d = decide(&rs, &r, &calls(&[("shop", json!({"query": "toaster"}))])).await;
    assert_eq!(tools(&d), ["shop"]);
}

#[test]
fn bad_requests_are_refused() {
    let rs = ruleset();
    for (bad, why) in [
        (json!({"messages": []}), "at least one message"),
        (
            json!({"messages": [{"role": "user", "content": "   "}]}),
            "empty",
        ),
        (
            json!({"messages": [{"role": "assistant", "content": "hi"}]}),
            "role 'user'",
        ),
    ] {
        let e = engine::decide_without_model(&rs, &req(bad.clone())).expect_err("refused");
        assert_eq!(e.field(), "messages", "{bad}");
        assert!(e.to_string().contains(why), "{bad}: {e}");
    }
}

#[test]
fn an_id_written_twice_is_an_error_at_the_second() {
    let context = "  embedded:\n    context:\n".to_owned()
        + &["first", "second"]
            .map(|d| format!("      - {{id: same, description: {d}, when: {{draft_shown: true}}, rule_out: [shop]}}\n"))
            .concat();
    let twice = RULES.replace("  notes:\n", &(context + "  notes:\n"));
    let loaded = load(&twice);
    assert!(loaded.ruleset.is_none());
    let d = crate::common::diagnostic(&loaded, "duplicate-id");
    assert!(d.message.contains("context rule 'same'"), "{d}");
    assert!(line_of(&twice, d).contains("description: second"), "{d}");
}

/// The line of `yaml` that `d` points at; the test fails when it points nowhere.
fn line_of<'a>(yaml: &'a str, d: &turnout::Diagnostic) -> &'a str {
    let loc = d.location.as_ref().expect("located");
    yaml.lines().nth(loc.line - 1).expect("line exists")
}

#[test]
fn every_problem_is_reported_with_its_place() {
    let broken = RULES
        .replace("tools: [shop]", "tools: [shopp]")
        .replace("{mentions: pricing}", "{mentions: prcing}")
        .replace(r"'top\s*-?\s*\d+'", "'top(('");
    let loaded = load(&broken);
    assert!(loaded.ruleset.is_none());
    let codes: Vec<&str> = loaded.diagnostics.iter().map(|d| d.code.as_str()).collect();
    for code in ["unknown-tool", "unknown-list", "bad-regex"] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}");
    }
    let tool = crate::common::diagnostic(&loaded, "unknown-tool");
    assert_eq!(tool.hint.as_deref(), Some("did you mean 'shop'?"));
    let loc = tool.location.as_ref().expect("located");
    let line = broken.lines().nth(loc.line - 1).expect("line exists");
    assert!(
        line[loc.column - 1..].starts_with("shopp"),
        "{line:?} col {}",
        loc.column
    );
}

#[test]
fn the_version_changes_with_the_content() {
    let a = ruleset();
    let b = load(&RULES.replace("timeout_ms: 200", "timeout_ms: 300"))
        .ruleset
        .expect("compiles");
    assert_ne!(a.version, b.version);
    assert_eq!(a.version, ruleset().version);
}

#[test]
fn the_decision_future_can_move_between_threads() {
    // The service runs decisions on a multi-threaded runtime: the future must be Send.
    fn is_send<T: Send>(_: &T) {}
    let rs = ruleset();
    let r = user("hello");
    let model = calls(&[]);
    let fut = engine::decide(&rs, &r, engine::Options::model(Some(&model)));
    is_send(&fut);
}

/// `RULES` with a `matching` section that declares the language's endings, and `price` and
/// `stock*` as pricing words.
fn with_word_endings(matching: &str) -> RuleSet {
    let yaml = RULES.replace(
        r#"words: ["how much", "price$"]"#,
        r#"words: ["how much", "price", "stock*"]"#,
    ) + matching;
    let loaded = load(&yaml);
    assert!(
        !loaded.diagnostics.iter().any(turnout::Diagnostic::is_error),
        "{:?}",
        loaded.diagnostics
    );
    loaded.ruleset.expect("rules compile")
}

#[test]
fn declared_endings_make_a_stem_match_its_word_in_its_forms() {
    let rs = with_word_endings(
        "matching:\n  description: English endings\n  word_endings: [s, es, d, ed, ing]\n",
    );
    let search = |text: &str| {
        engine::decide_without_model(&rs, &user(text))
            .expect("routable")
            .web_search
    };
    for (text, want) in [
        ("the price of milk", true),
        ("prices of milk", true),
        ("we priced it", true),
        ("a priceless view", false),
        ("pricey but nice", false),
        // `*` keeps starting a word.
        ("stockholm weather", true),
    ] {
        assert_eq!(search(text), want, "{text}");
    }
    // Without the endings, the same entry starts a word, as before.
    let plain = with_word_endings("");
    let d = engine::decide_without_model(&plain, &user("a priceless view")).expect("routable");
    assert!(d.web_search);
}

#[test]
fn a_star_inside_a_word_is_refused_at_its_place() {
    let yaml = RULES.replace(
        r#"words: ["how much", "price$"]"#,
        r#"words: ["how much", "pr*ice"]"#,
    );
    let loaded = load(&yaml);
    assert!(loaded.ruleset.is_none());
    let d = crate::common::diagnostic(&loaded, "bad-word");
    assert!(d.message.contains("'*' may only end a word"), "{d}");
    assert!(line_of(&yaml, d).contains("pr*ice"), "{d}");
}

#[test]
fn a_message_typed_in_another_script_reaches_the_lists_through_the_table() {
    // Greek stands in for any second script: the engine knows none.
    let yaml = RULES.replace(r#"words: ["how much", "price$"]"#, r#"words: ["πρικε"]"#)
        + "matching:\n  description: Greek typed in Latin letters\n  transliterate:\n    table: {p: π, r: ρ, i: ι, k: κ, e: ε}\n";
    let rs = load(&yaml).ruleset.expect("rules compile");
    let d = engine::decide_without_model(&rs, &user("prike?")).expect("routable");
    assert!(d.web_search, "{:?}", d.trace);
    let step = d
        .trace
        .iter()
        .find(|t| t.stage == Stage::Search)
        .expect("a search step");
    assert!(
        step.why.contains("read from another script"),
        "{}",
        step.why
    );
    assert!(
        step.why.contains("at 0..5"),
        "the span is in the message as written: {}",
        step.why
    );
    // Mostly in the lists' script: the Latin word stays Latin.
    let d = engine::decide_without_model(&rs, &user("πόσο κοστίζει prike")).expect("routable");
    assert!(!d.web_search, "{:?}", d.trace);
    // A word with a hyphen and digits in it («plan-2026») is read run by run of the table's
    // letters.
    for message in ["prike-2026?", "prike_2025?"] {
        let d = engine::decide_without_model(&rs, &user(message)).expect("routable");
        assert!(d.web_search, "{message}: {:?}", d.trace);
    }
}

#[tokio::test]
async fn a_guard_step_is_typed_with_its_rule_subject_and_match_in_the_original() {
    let rs = ruleset();
    // Normalisation drops the emoji and folds the case: the match's span and text are the
    // user's, not the normalised message's.
    let message = "🙂 So, WHERE TO BUY boots?";
    let m = calls(&[("shop", json!({"query": "boots"}))]);
    let d = decide(&rs, &user(message), &m).await;
    let step = d
        .trace
        .iter()
        .find(|s| s.stage == Stage::Guard)
        .expect("a guard step");
    assert_eq!(step.rule.as_deref(), Some("shop-info-question"));
    assert_eq!(step.kind, EffectKind::Dropped);
    assert_eq!(step.subject.as_deref(), Some("shop"));
    let [hit] = &step.matches[..] else {
        panic!("one match: {:?}", step.matches)
    };
    assert_eq!(&*hit.list, "where_to_buy");
    assert_eq!(hit.entry, "where to buy");
    let chars: Vec<char> = message.chars().collect();
    let at: String = chars[hit.start..hit.end].iter().collect();
    assert_eq!(at, "WHERE TO BUY");
    assert_eq!(hit.text, "WHERE TO BUY");
    // The prose stays, for the command line.
    assert!(step.effect.contains("dropped shop"), "{step:?}");
    assert!(step.why.contains("matched"), "{step:?}");
}

#[tokio::test]
async fn the_search_phrase_is_recorded_when_the_model_asked_for_search_itself() {
    let rs = ruleset();
    let m = calls(&[("search", json!({}))]);
    let d = decide(&rs, &user("how much is a ticket"), &m).await;
    assert!(d.web_search);
    let step = d
        .trace
        .iter()
        .find(|s| s.stage == Stage::Search)
        .expect("a search step");
    // The model decided: no rule in `rule` (replay counts the rule as agreeing), but the rule
    // that also holds and what it matched are there.
    assert_eq!(step.rule, None);
    assert_eq!(step.kind, EffectKind::SearchAsked);
    assert_eq!(step.subject.as_deref(), Some("price-patterns"));
    assert_eq!(
        step.matches
            .iter()
            .map(|m| (&*m.list, m.start, m.end, m.text.as_str()))
            .collect::<Vec<_>>(),
        [("pricing", 0, 8, "how much")]
    );
    // Without the model's call, the rule decides, and says so in `rule`.
    let d = decide(&rs, &user("how much is a ticket"), &calls(&[])).await;
    let step = d
        .trace
        .iter()
        .find(|s| s.stage == Stage::Search)
        .expect("a search step");
    assert_eq!(step.rule.as_deref(), Some("price-patterns"));
    assert_eq!(step.kind, EffectKind::SearchOn);
}

#[tokio::test]
async fn every_step_has_a_kind_and_facts_say_what_the_prose_says() {
    let rs = ruleset();
    let r = req(json!({
        "messages": [
            {"role": "assistant", "content": "How old is the child?"},
            {"role": "user", "content": "three"}
        ],
        "skill": "coach"
    }));
    let d = decide(&rs, &r, &calls(&[])).await;
    let step = &d.trace[0];
    assert_eq!(step.rule.as_deref(), Some("interview-continues"));
    assert_eq!(step.kind, EffectKind::SettledSkill);
    assert_eq!(step.subject.as_deref(), Some("coach"));
    let kinds: Vec<FactKind> = step.facts.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            FactKind::SkillActive,
            FactKind::AssistantAsked,
            FactKind::Length,
            FactKind::NothingFrom
        ]
    );
    assert_eq!(step.facts[2].count, Some(5));
    assert_eq!(step.facts[2].limit, Some(40));
    let json = serde_json::to_value(step).expect("JSON");
    assert_eq!(json["kind"], "settled_skill");
    assert_eq!(
        json["facts"][0],
        json!({"kind": "skill_active", "name": "coach"})
    );
}

/// The `--jsonl` pipeline as a library call: one decision per line in the input's order, on
/// several threads, each bad line an error object on its own line, and the run goes on.
#[test]
fn json_lines_are_decided_in_order_and_a_bad_line_is_an_error_on_its_line() {
    let rs = ruleset();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut jsonl = engine::Jsonl::new(&rs, None, &rt);
    jsonl.max_line_bytes = 200;
    let good = |text: &str| json!({"messages": [{"role": "user", "content": text}]}).to_string();
    let mut input = Vec::new();
    for i in 0..3000 {
        input.extend_from_slice(good(&format!("hello {i}")).as_bytes());
        input.push(b'\n');
    }
    input.extend_from_slice(b"not json\n\n");
    input.extend_from_slice(format!("{}\n", good(&"x".repeat(300))).as_bytes());
    input.extend_from_slice(b"{\"messages\": \"\xff\"}\n");
    input.extend_from_slice(good("the last").as_bytes());
    let mut output = Vec::new();
    let mut counted = 0;
    let mut told = Vec::new();
    let ok = jsonl
        .run(
            input.as_slice(),
            &mut output,
            3,
            |n| counted += n,
            |e| told.push(e.to_owned()),
        )
        .expect("the run");
    assert!(!ok, "bad lines make the run not ok");
    let lines: Vec<Value> = String::from_utf8(output)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // The blank line is skipped; every other line has its line.
    assert_eq!(lines.len(), 3004);
    assert_eq!(counted, 3005, "lines read, the blank one too");
    for (i, d) in lines[..3000].iter().enumerate() {
        assert_eq!(d["outcome"], "chat", "line {}", i + 1);
        assert_eq!(d["rules_version"], rs.version.as_ref());
    }
    assert_eq!(lines[3000]["line"], 3001);
    assert_eq!(lines[3001]["line"], 3003);
    assert!(
        lines[3001]["error"]
            .as_str()
            .is_some_and(|e| e.contains("longer than 200 bytes")),
        "{}",
        lines[3001]
    );
    assert!(
        lines[3002]["error"]
            .as_str()
            .is_some_and(|e| e.contains("not UTF-8")),
        "{}",
        lines[3002]
    );
    assert_eq!(lines[3003]["outcome"], "chat");
    assert_eq!(told.len(), 3);
    assert!(told[0].starts_with("line 3001: "), "{told:?}");
}
