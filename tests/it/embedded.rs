//! The embedded (offline) router as a new user meets it: the article's own requests decided
//! with valid arguments, every tool of the pack reachable, arguments filled by the YAML's
//! `extract` (and said so in the trace), context, two calls, and training done at reload —
//! never inside a request's timeout.
use crate::common::root;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use turnout::RuleSet;
use turnout::contract::{Decision, Outcome, Request};
use turnout::model::Model;
use turnout::model::embedded::EmbeddedModel;

use crate::common::{Served, diagnostic};

fn pack() -> RuleSet {
    turnout::compile::load_dir(&root().join("rules"))
        .ruleset
        .expect("the shipped rules load")
}

/// The shipped pack and the embedded router prepared for it.
fn prepared() -> (RuleSet, EmbeddedModel) {
    let rs = pack();
    let model = EmbeddedModel::new();
    model.prepare(&rs);
    (rs, model)
}

fn request(v: Value) -> Request {
    serde_json::from_value(v).expect("a valid request")
}

fn say(text: &str) -> Request {
    request(json!({"messages": [{"role": "user", "content": text}]}))
}

async fn decide(rs: &RuleSet, model: &EmbeddedModel, req: &Request) -> Decision {
    turnout::engine::decide(rs, req, turnout::engine::Options::model(Some(model)))
        .await
        .expect("decided")
}

/// The messages of `cases` whose decision does not call the tools given, each with what it
/// called instead.
async fn wrong_tools(
    rs: &RuleSet,
    model: &EmbeddedModel,
    cases: &[(&str, &[&str])],
) -> Vec<String> {
    let requests: Vec<(Value, &[&str])> = (cases.iter())
        .map(|&(text, want)| {
            (
                json!({"messages": [{"role": "user", "content": text}]}),
                want,
            )
        })
        .collect();
    wrong_tools_for(rs, model, &requests).await
}

/// Asserts, message by message, the skill each of `cases` leaves active (`None`: none).
async fn assert_skills(rs: &RuleSet, model: &EmbeddedModel, cases: &[(&str, Option<&str>)]) {
    for &(text, want) in cases {
        let d = decide(rs, model, &say(text)).await;
        assert_eq!(d.skill.as_deref(), want, "{text}: {:#?}", d.trace);
    }
}

fn tools(d: &Decision) -> Vec<&str> {
    d.calls.iter().map(|c| &*c.tool).collect()
}

#[tokio::test]
async fn the_articles_own_requests_are_tool_decisions_with_valid_arguments() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str], Value); 4] = [
        (
            "Сколько визитов на сайте за неделю",
            &["site_traffic"],
            json!({"period": "week"}),
        ),
        (
            "Добавь цель в Метрике",
            &["metrika_manage"],
            json!({"action": "create", "object": "goal"}),
        ),
        (
            "Создай новую таблицу с визитами по дням",
            &["doc_create"],
            json!({"kind": "spreadsheet"}),
        ),
        (
            "посмотри статистику и напиши по ней пост",
            &["schai_stats", "post_draft"],
            json!({}),
        ),
    ];
    for (text, want, args) in cases {
        let d = decide(&rs, &model, &say(text)).await;
        assert_eq!(d.outcome, Outcome::Tool, "{text}: {:#?}", d.trace);
        assert_eq!(tools(&d), want, "{text}: {:#?}", d.trace);
        for (k, v) in args.as_object().expect("object") {
            assert_eq!(
                &d.calls[0].arguments[k], v,
                "{text}: {}",
                d.calls[0].arguments
            );
        }
        // The trace says what the router was sure of, and which words filled the arguments.
        assert!(
            d.trace
                .iter()
                .any(|s| s.effect.starts_with("embedded chose") && s.why.contains("runner-up")),
            "{:#?}",
            d.trace
        );
    }
    let d = decide(&rs, &model, &say("Сколько визитов на сайте за неделю")).await;
    assert!(
        d.trace.iter().any(|s| s.effect == "filled site_traffic.period = \"week\""
            && s.why.contains("недел")),
        "{:#?}",
        d.trace
    );
}

#[tokio::test]
async fn every_tool_of_the_pack_can_come_out_of_the_embedded_router() {
    let (rs, model) = prepared();
    let skill_tool = rs.router().skill_tool.clone();
    let mut never = Vec::new();
    for tool in rs.tools().iter().filter(|t| t.id != skill_tool) {
        let mut came_out = false;
        for text in &tool.examples {
            // The file the user names is open; Google is connected; a photo, an audio file and
            // a draft are on screen for the tools that work on them.
            let last = text.split_whitespace().last().unwrap_or_default();
            for context in [
                json!({"integrations": ["google"]}),
                json!({
                    "integrations": ["google"],
                    "attachments": [{"kind": "photo"}, {"kind": "audio"}],
                    "draft_shown": true,
                    "ui": {"open_file": {"name": last}}
                }),
            ] {
                let mut req = context;
                req["messages"] = json!([{"role": "user", "content": text}]);
                let d = decide(&rs, &model, &request(req)).await;
                if tools(&d).contains(&&*tool.id)
                    || (d.web_search && tool.id.as_ref() == "web_search")
                {
                    came_out = true;
                    break;
                }
            }
            if came_out {
                break;
            }
        }
        if !came_out {
            never.push(tool.id.to_string());
        }
    }
    assert!(never.is_empty(), "never decided offline: {never:?}");
}

#[tokio::test]
async fn context_rules_out_a_photo_tool_without_a_photo_and_favours_the_open_file() {
    let (rs, model) = prepared();
    let d = decide(&rs, &model, &say("что это?")).await;
    assert!(!tools(&d).contains(&"photo_describe"), "{:#?}", d.trace);
    assert!(
        d.trace
            .iter()
            .any(|s| s.effect == "context rule describe-needs-a-photo applies"),
        "{:#?}",
        d.trace
    );
    let with_photo = request(json!({
        "messages": [{"role": "user", "content": "что это?"}],
        "attachments": [{"kind": "photo"}]
    }));
    let d = decide(&rs, &model, &with_photo).await;
    assert_eq!(tools(&d), ["photo_describe"], "{:#?}", d.trace);
}

/// A message that asks for a tool the context rules out (a photo to describe, a recording to
/// transcribe, with none attached) is no request for the next most likely tool: with
/// `ask_back` on the context rule the router calls nothing, and the trace says which tool was
/// ruled out by which rule. Were these decided as before, «что на картинке» drew a picture and
/// «расшифруй голосовое» read text aloud.
#[tokio::test]
async fn a_request_for_a_tool_the_context_rules_out_asks_back_instead_of_taking_the_next() {
    let (rs, model) = prepared();
    let cases = [
        (
            "что на картинке",
            "tool:photo_describe",
            "describe-needs-a-photo",
        ),
        (
            "что изображено на фото",
            "tool:photo_describe",
            "describe-needs-a-photo",
        ),
        (
            "расшифруй голосовое",
            "tool:audio_transcribe",
            "transcribe-needs-audio",
        ),
        (
            "переведи аудио в текст",
            "tool:audio_transcribe",
            "transcribe-needs-audio",
        ),
    ];
    for (text, missing, rule) in cases {
        let d = decide(&rs, &model, &say(text)).await;
        assert_eq!(d.outcome, Outcome::Chat, "{text}: {:#?}", d.trace);
        let ruled_out = d
            .trace
            .iter()
            .flat_map(|s| &s.facts)
            .find(|f| f.kind == turnout::contract::FactKind::RuledOut)
            .unwrap_or_else(|| panic!("{text}: no ruled_out fact in {:#?}", d.trace));
        assert_eq!(ruled_out.name.as_deref(), Some(missing), "{text}");
        assert_eq!(ruled_out.value.as_deref(), Some(rule), "{text}");
    }
    // With what is missing attached, the tool is called.
    let attached = |text: &str, kind: &str| {
        request(json!({
            "messages": [{"role": "user", "content": text}],
            "attachments": [{"kind": kind}]
        }))
    };
    let d = decide(&rs, &model, &attached("что изображено на фото", "photo")).await;
    assert_eq!(tools(&d), ["photo_describe"], "{:#?}", d.trace);
    let d = decide(&rs, &model, &attached("расшифруй голосовое", "audio")).await;
    assert_eq!(tools(&d), ["audio_transcribe"], "{:#?}", d.trace);
    // Near misses: a request to draw or to read aloud is not a ruled-out tool's.
    let d = decide(&rs, &model, &say("нарисуй фото заката над морем")).await;
    assert_eq!(tools(&d), ["image_generate"], "{:#?}", d.trace);
    let d = decide(&rs, &model, &say("озвучь текст: добро пожаловать")).await;
    assert_eq!(tools(&d), ["speech_generate"], "{:#?}", d.trace);
}

#[tokio::test]
async fn english_words_inside_russian_are_read_as_the_packs_words() {
    // `matching.transliterate.words`: «article» is read as «статью», and «write», which a list
    // writes in Latin letters itself, stays as written for that list to match.
    let (rs, model) = prepared();
    let d = decide(&rs, &model, &say("write мне article про осенний сад")).await;
    assert_eq!(tools(&d), ["article_draft"], "{:#?}", d.trace);
    assert_eq!(
        rs.normalizer.normalize_message("write мне article"),
        "write мне статью"
    );
}

#[tokio::test]
async fn a_short_follow_up_is_read_with_the_assistants_message_before_it() {
    let (rs, model) = prepared();
    let after = |answer: &str, text: &str| {
        request(json!({"messages": [
            {"role": "assistant", "content": answer},
            {"role": "user", "content": text}
        ]}))
    };
    let stats = "В Schai за месяц у вас 214 новых подписчиков и 3 100 просмотров.";
    // Alone, «а за год?» names no tool; after the stats it asks for them again.
    let d = decide(&rs, &model, &say("а за год?")).await;
    assert_eq!(d.outcome, Outcome::Chat, "{:#?}", d.trace);
    let d = decide(&rs, &model, &after(stats, "а за год?")).await;
    assert_eq!(tools(&d), ["schai_stats"], "{:#?}", d.trace);
    let said = |d: &Decision, what: &str| {
        d.trace
            .iter()
            .any(|s| s.effect.contains(what) && s.effect.contains("before this one count"))
    };
    assert!(
        said(&d, "follow-up-reads-the-previous-message"),
        "the trace names the rule: {:#?}",
        d.trace
    );
    // A message that opens as a follow-up («давай …», «а …») leans on the answer harder: a
    // second video after one was made, not a plain answer.
    let video = "Готово: видео 8 секунд, собака бежит по пляжу.";
    let d = decide(&rs, &model, &say("давай ещё раз, только ночью")).await;
    assert_eq!(d.outcome, Outcome::Chat, "{:#?}", d.trace);
    let d = decide(&rs, &model, &after(video, "давай ещё раз, только ночью")).await;
    assert_eq!(tools(&d), ["video_generate"], "{:#?}", d.trace);
    // Thanks after an answer stays thanks, whatever the answer was about.
    let vacuums = "Нашёл четыре робота-пылесоса до 20 000 ₽: Dreame, Xiaomi, Polaris, Roborock.";
    let reminder = "Поставил напоминание «позвонить маме» на пятницу, 18:00.";
    for (answer, text) in [
        (vacuums, "спасибо, посмотрю"),
        (reminder, "отлично, спасибо!"),
        (stats, "ого, неплохо"),
    ] {
        let d = decide(&rs, &model, &after(answer, text)).await;
        assert_eq!(d.outcome, Outcome::Chat, "{text}: {:#?}", d.trace);
    }
}

/// A small pack (English, to keep it readable) with argument extraction.
fn extracting_pack(extract: &str) -> turnout::compile::Loaded {
    let yaml = format!(
        r#"
tools:
  - id: switch_mode
    description: Switch a conversation mode on or off.
    chip: Switching
    arguments:
      type: object
      properties: {{mode: {{type: string, enum: [none]}}}}
      required: [mode]
      additionalProperties: false
    examples: [leave this mode, back to normal chat]
  - id: shop
    description: Find products.
    chip: Shopping
    arguments:
      type: object
      properties:
        query: {{type: string}}
        kind: {{type: string, enum: [shoes, phone, other]}}
        max_price: {{type: number, minimum: 0}}
      required: [query, kind]
      additionalProperties: false
    examples: [find me running shoes, show cheap phones, pick a phone for me, find shoes under 50, buy new sneakers]
{extract}
router:
  skill_tool: switch_mode
  skill_argument: mode
  leave_skill_value: none
  embedded:
    chat_examples: [hello, thanks a lot, how are you, good night, you are funny, ok]
"#
    );
    turnout::compile::load_texts(&[(PathBuf::from("rules.yaml"), yaml)])
}

const SHOP_EXTRACT: &str = r#"    extract:
      kind:
        choose:
          - {value: shoes, words: [shoe, sneaker]}
          - {value: phone, words: [phone, smartphone]}
        default: other
      max_price:
        number:
          patterns: ['under (?P<number>\d+)\s*(?P<unit>k\b)?']
          units: {k: 1000}
      query:
        text:
          drop: [find, show, pick, me$, for$, a$]
          drop_patterns: ['under \d+\s*k?']"#;

#[tokio::test]
async fn arguments_come_from_the_yaml_and_the_trace_says_which_words_filled_them() {
    let loaded = extracting_pack(SHOP_EXTRACT);
    let rs = loaded
        .ruleset
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
    let model = EmbeddedModel::new();
    let d = decide(&rs, &model, &say("find me Nike running shoes under 2k")).await;
    assert_eq!(tools(&d), ["shop"], "{:#?}", d.trace);
    assert_eq!(
        d.calls[0].arguments,
        json!({"kind": "shoes", "max_price": 2000, "query": "Nike running shoes"})
    );
    assert!(
        d.trace
            .iter()
            .any(|s| s.effect == "filled shop.kind = \"shoes\"" && s.why.contains("'shoe'")),
        "{:#?}",
        d.trace
    );
    // Nothing matched: the default.
    let d = decide(&rs, &model, &say("show me something to buy, cheap")).await;
    if tools(&d) == ["shop"] {
        assert_eq!(d.calls[0].arguments["kind"], "other");
    }
}

#[test]
fn a_bad_extraction_is_refused_where_it_is_written() {
    let bad = SHOP_EXTRACT.replace("{value: phone,", "{value: tablet,");
    let loaded = extracting_pack(&bad);
    assert!(loaded.ruleset.is_none());
    let d = diagnostic(&loaded, "extract-bad-value");
    let at = d.location.as_ref().expect("a location");
    assert_eq!((at.line, at.column), (28, 21), "{d}");
    assert!(d.message.contains("\"tablet\""), "{d}");
    let unknown = SHOP_EXTRACT.replace("      max_price:", "      max_prise:");
    let loaded = extracting_pack(&unknown);
    let d = diagnostic(&loaded, "extract-unknown-argument");
    assert!(
        d.hint.as_deref().is_some_and(|h| h.contains("max_price")),
        "{d}"
    );
}

const SHOP_PRE_RULE: &str = r#"
pre_rules:
  - id: buy-means-shop
    description: a message that says buy is a shopping request, with the tool's own arguments
    when: {mentions: buy_words}
    then:
      calls: [{tool: shop, arguments: {query: "{extract}", kind: "{extract}", max_price: "{extract}"}}]
word_lists:
  - id: buy_words
    description: buying
    words: [buy]"#;

#[test]
fn a_pre_rule_call_fills_its_arguments_as_the_tools_extract_says() {
    let loaded = extracting_pack(&format!("{SHOP_EXTRACT}{SHOP_PRE_RULE}"));
    let rs = loaded
        .ruleset
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
    let d = turnout::engine::decide_without_model(&rs, &say("buy Nike running shoes under 2k"))
        .expect("decided");
    assert_eq!(tools(&d), ["shop"], "{:#?}", d.trace);
    assert_eq!(d.calls[0].arguments["kind"], "shoes");
    assert_eq!(d.calls[0].arguments["max_price"], 2000);
    assert!(
        d.calls[0].arguments["query"]
            .as_str()
            .is_some_and(|q| q.contains("Nike running shoes")),
        "{}",
        d.calls[0].arguments
    );
    // Nothing to extract and no default: the argument is left out, and validation says so.
    let d = turnout::engine::decide_without_model(&rs, &say("buy it")).expect("decided");
    assert!(
        d.calls
            .iter()
            .all(|c| c.arguments.get("max_price").is_none())
    );

    // A tool without an `extract` for the argument: refused where the template is written.
    let loaded = extracting_pack(SHOP_PRE_RULE);
    assert!(loaded.ruleset.is_none());
    let d = diagnostic(&loaded, "no-extract");
    assert!(d.location.is_some() && d.message.contains("'query'"), "{d}");
}

/// `choose` words forgive one typo as word lists do (`matching.typos`), unless the argument
/// says `typos: false`; a word some list knows is never read as their typo.
#[test]
fn choose_words_forgive_a_typo_as_word_lists_do() {
    // Another list (after the pre-rule's) knows «speaker», one letter from «sneaker».
    let typos = r#"
  - id: gadget_words
    description: a real word one letter from «sneaker»
    words: [speaker]
matching:
  description: typos from five letters
  typos: {from: 5}"#;
    let kind = |extract: &str, text: &str| {
        let loaded = extracting_pack(&format!("{extract}{SHOP_PRE_RULE}{typos}"));
        let rs = loaded
            .ruleset
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let d = turnout::engine::decide_without_model(&rs, &say(text)).expect("decided");
        assert_eq!(tools(&d), ["shop"], "{:#?}", d.trace);
        d.calls[0].arguments["kind"].clone()
    };
    assert_eq!(kind(SHOP_EXTRACT, "buy a smartphnoe under 2k"), "phone");
    assert_eq!(kind(SHOP_EXTRACT, "buy sneakres"), "shoes");
    // «speaker» is one letter from «sneaker», but a list knows it: no typo.
    assert_eq!(kind(SHOP_EXTRACT, "buy a speaker"), "other");
    let exact = SHOP_EXTRACT.replace(
        "        default: other",
        "        default: other\n        typos: false",
    );
    assert_eq!(kind(&exact, "buy a smartphnoe under 2k"), "other");
    assert_eq!(kind(&exact, "buy a smartphone under 2k"), "phone");
}

/// Copies the shipped rules (without their tests) into a temporary directory, with the
/// router's timeout set to `timeout_ms`.
fn rules_copy(timeout_ms: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(root().join("rules")).expect("rules") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let mut text = std::fs::read_to_string(&path).expect("read");
            if path.file_name().is_some_and(|n| n == "router.yaml") {
                text = text.replace("timeout_ms: 15000", &format!("timeout_ms: {timeout_ms}"));
            }
            let name = path.file_name().expect("name");
            std::fs::write(dir.path().join(name), text).expect("write");
        }
    }
    dir
}

fn route(served: &Served, text: &str) -> Value {
    let (status, d) = served.json(
        "POST",
        "/v1/route",
        &json!({"messages": [{"role": "user", "content": text}]}),
    );
    assert_eq!(status, 200, "{d}");
    d
}

#[test]
fn with_a_timeout_shorter_than_training_the_first_request_after_a_reload_is_decided_by_the_trained_model()
 {
    // 1 ms: far shorter than training on the pack's examples.
    let dir = rules_copy(1);
    let served = Served::start(dir.path(), &["--model", "embedded"]);
    let timed_out = |d: &Value| {
        d["trace"]
            .as_array()
            .is_some_and(|t| t.iter().any(|s| s["effect"] == "model error: timeout"))
    };
    let d = route(&served, "Сколько визитов на сайте за неделю");
    assert!(!timed_out(&d), "{d:#}");
    assert_eq!(d["calls"][0]["tool"], "site_traffic", "{d:#}");
    // A change to the rules: the reload trains before the new rules serve (the watcher may
    // see the change first; either way the version changes).
    let before = d["rules_version"].clone();
    let tools = dir.path().join("tools.yaml");
    let text = std::fs::read_to_string(&tools).expect("read");
    let text = text.replace(
        "      - сколько визитов на сайте за неделю\n",
        "      - сколько визитов на сайте за неделю\n      - сколько человек зашло на сайт\n",
    );
    std::fs::write(&tools, text).expect("write");
    let (status, report) = served.json("POST", "/v1/rules/reload", &json!({}));
    assert_eq!(status, 200, "{report}");
    assert_ne!(report["version"], before, "{report}");
    let d = route(&served, "сколько визитов было на сайте вчера");
    assert!(!timed_out(&d), "{d:#}");
    assert_eq!(d["rules_version"], report["version"], "{d:#}");
    assert_eq!(d["calls"][0]["tool"], "site_traffic", "{d:#}");
    assert_eq!(d["calls"][0]["arguments"]["period"], "yesterday", "{d:#}");
}

#[tokio::test]
async fn training_cut_off_by_a_request_timeout_is_kept_for_the_next_request() {
    // Rules never prepared (a library user calling decide directly): the first request starts
    // training and times out; training goes on and the next request uses it.
    let dir = rules_copy(1);
    let rs = turnout::compile::load_dir(Path::new(dir.path()))
        .ruleset
        .expect("rules");
    let model = EmbeddedModel::new();
    let d = decide(&rs, &model, &say("Сколько визитов на сайте за неделю")).await;
    assert_eq!(d.model_call.and_then(|c| c.error), Some("timeout"));
    let started = std::time::Instant::now();
    while !model.is_trained(&rs) {
        assert!(started.elapsed().as_secs() < 120, "training never finished");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let d = decide(&rs, &model, &say("Сколько визитов на сайте за неделю")).await;
    assert_eq!(tools(&d), ["site_traffic"], "{:#?}", d.trace);
}

#[tokio::test]
async fn a_caller_that_does_not_normalise_the_message_gets_the_same_answer() {
    // The engine hands the router the message it already normalised; a caller of the model
    // API that leaves `normalized` out gets the same calls and notes.
    let rs = pack();
    let model = EmbeddedModel::new();
    model.train(&rs);
    for text in [
        "Найди айфон 15 до 80 тыщ и сравни с самсунгом",
        "переведи «ДОБРОЕ утро» на английский",
        "привет",
    ] {
        let req = say(text);
        let normalized = rs.normalizer.normalize(text);
        let input = |normalized| turnout::model::RouterInput {
            normalized,
            ..turnout::model::RouterInput::new(&rs, &req.messages)
        };
        let given = model
            .route(&input(Some(&normalized)))
            .await
            .expect("an answer");
        let left_out = model.route(&input(None)).await.expect("an answer");
        assert_eq!(given.calls, left_out.calls, "{text}");
        assert_eq!(given.notes, left_out.notes, "{text}");
    }
}

/// Two families of the offline router's misses (issue 26), with near misses. A question about
/// whether something can be done («можно ли / возможно ли / реально ли» + a verb) is answered
/// in words, while the same verb asked for («можно удалить …?», «нельзя ли …», «можешь …»)
/// is done; a purchase said in the first person («куплю», «ищу») is a product search, while
/// advice on a film or a book is a conversation.
#[tokio::test]
async fn a_question_whether_it_can_be_done_is_answered_and_a_wish_to_buy_is_searched() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 12] = [
        ("можно ли удалить пост после публикации", &[]),
        ("возможно ли восстановить удалённый документ", &[]),
        ("реально ли вернуть удалённый черновик", &[]),
        ("можно удалить последний пост?", &["post_delete"]),
        ("нельзя ли удалить этот пост", &["post_delete"]),
        ("можешь удалить последний пост", &["post_delete"]),
        ("куплю айфон недорого", &["product_search"]),
        ("ищу зимние ботинки 42 размера", &["product_search"]),
        ("куплю велосипед детский до 10 тысяч", &["product_search"]),
        ("посоветуй фильм на вечер", &[]),
        ("посоветуй книгу про космос", &[]),
        ("посоветуй недорогой пылесос", &["product_search"]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A request frame's `boost_chat` (below 0) leans away from no tool, and the trace says so: a
/// polite request to draw is drawn, while a polite request to talk («расскажи», «объясни») is
/// still answered in words, and a question about whether it can be done is too.
#[tokio::test]
async fn a_polite_request_leans_away_from_no_tool_and_says_so() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 5] = [
        (
            "не могли бы вы нарисовать открытку для бабушки?",
            &["image_generate"],
        ),
        ("можешь нарисовать котика в космосе?", &["image_generate"]),
        ("можешь рассказать анекдот?", &[]),
        ("не могли бы вы объяснить, что такое инфляция?", &[]),
        ("можно ли нарисовать логотип самому?", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
    let d = decide(
        &rs,
        &model,
        &say("не могли бы вы нарисовать открытку для бабушки?"),
    )
    .await;
    assert!(
        d.trace.iter().any(|s| s
            .effect
            .contains("reads the rest as a request (-1.0 to no tool)")),
        "{:#?}",
        d.trace
    );
}

/// B6: a short request with a pronoun where its object should be («отправь это», «ответь ему»)
/// asks back; the same request with its object is done.
#[tokio::test]
async fn a_short_request_without_its_object_asks_back() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 5] = [
        ("перешли это", &[]),
        ("ответь ей", &[]),
        ("удали последнее", &[]),
        ("удали последний пост в ленте", &["post_delete"]),
        ("отправь маме письмо, что я доехала", &["mail_send"]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// B6: a general verb alone, with one general object, or with only a time asks back and the
/// trace names the rule; the same verb with something said about its object is done, and a
/// draft on screen or an open file gives the bare verb its object.
#[tokio::test]
async fn a_bare_command_asks_back_unless_the_context_gives_its_object() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 8] = [
        ("найди", &[]),
        ("проверь почту", &[]),
        ("обнови таблицу", &[]),
        ("напомни потом", &[]),
        ("поставь на завтра", &[]),
        ("найди письмо от банка про кредит", &["mail_search"]),
        ("напомни завтра в 9 позвонить маме", &["reminder_create"]),
        (
            "сделай график продаж по месяцам из этих цифр",
            &["chart_build"],
        ),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
    let d = decide(&rs, &model, &say("проверь почту")).await;
    assert!(
        d.trace
            .iter()
            .any(|s| s.rule.as_deref() == Some("bare-command-asks-back")),
        "{:#?}",
        d.trace
    );
    let publish = request(json!({
        "messages": [{"role": "user", "content": "опубликуй"}],
        "draft_shown": true
    }));
    assert_eq!(
        tools(&decide(&rs, &model, &publish).await),
        ["post_publish"]
    );
    let edit = request(json!({
        "messages": [{"role": "user", "content": "обнови таблицу"}],
        "ui": {"open_file": {"name": "Продажи.xlsx"}}
    }));
    assert_eq!(tools(&decide(&rs, &model, &edit).await), ["doc_edit"]);
}

/// Not a request: a report of what was done, a negated reminder, an idiom with a tool's word.
#[tokio::test]
async fn reports_negations_and_idioms_are_left_alone() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 6] = [
        ("я уже сам отправил отчёт начальнику, не переживай", &[]),
        ("вчера выложила пост про дачу, всем понравилось", &[]),
        ("не напоминай мне больше про бассейн", &[]),
        ("опять на работе нарисовался новый начальник", &[]),
        (
            "я уже отправил письмо, теперь напомни завтра проверить ответ",
            &["reminder_create"],
        ),
        ("напомни в пятницу про бассейн", &["reminder_create"]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[tokio::test]
async fn a_long_story_is_read_for_the_request_at_its_end() {
    let (rs, model) = prepared();
    // Read whole, each of these is no tool: the story outweighs the request
    // (`router.embedded.sentences_from`, 20 words in the pack).
    let story = "Сын весь вечер сидел над домашкой, плакал, говорит, учительница объясняет \
        быстро, а в учебнике ничего не понятно, я сама уже всё забыла со школы. Объясни ему, \
        пожалуйста, как складывать дроби с разными знаменателями.";
    // Since 2026-12-05 the subject («дроби», «домашка») and the verb of explaining open the
    // tutor for the whole message (explain-a-subject-opens-the-tutor).
    let d = decide(&rs, &model, &say(story)).await;
    assert_eq!(d.skill.as_deref(), Some("tutor"), "{:#?}", d.trace);
    // A story whose last sentence asks without an imperative (the story-then-request frame
    // needs one) is read sentence by sentence.
    let trip = "Мы с женой давно собирались в отпуск, всё откладывали из-за работы, а тут \
        наконец дали две недели в августе, хотим куда-нибудь к морю без пересадок. Интересно, \
        какие сейчас цены на билеты до Сочи.";
    let d = decide(&rs, &model, &say(trip)).await;
    assert!(
        d.trace
            .iter()
            .any(|t| t.effect == "read the long message sentence by sentence"),
        "{:#?}",
        d.trace
    );
    assert!(
        d.trace
            .iter()
            .any(|t| t.effect == "embedded chose web_search"),
        "{:#?}",
        d.trace
    );
    // A story that ends in a question for the chat stays with the chat.
    let tired = "Вчера полдня сидела над отчётом, потом ещё с начальником спорили из-за сроков, \
        потом дома дети, ужин, уроки, стирка. Как вы думаете, это вообще нормально так жить?";
    let d = decide(&rs, &model, &say(tired)).await;
    assert!(d.calls.is_empty() && d.skill.is_none(), "{:#?}", d.trace);
}

/// A request and a question in one message: the question is for the chat answer and does not
/// cancel the request (blind set 10: «напомни …, и как к нему лучше готовиться?» was no call).
/// A question about two things joined by «и» stays a question, and so does «одно и то же?».
#[tokio::test]
async fn a_request_with_a_question_after_it_is_still_made() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 4] = [
        (
            "напомни в 9 утра про собес, и как к нему вообще лучше готовиться?",
            &["reminder_create"],
        ),
        ("гугл задачи и твои напоминания это одно и то же?", &[]),
        (
            "гугл таски и гугл календарь — в чем разница, куда что писать?",
            &[],
        ),
        ("чем пост отличается от статьи и что лучше для блога?", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Words the user dictates are what to say, not what to do: a phrase to voice that reads like
/// small talk, or a letter's text, no longer pulls the whole message to a plain answer. The
/// trace names the quote frame; a question about a quoted phrase is still answered in words.
#[tokio::test]
async fn dictated_words_do_not_decide_what_the_message_asks_for() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 4] = [
        (
            "озвучь фразу: добро пожаловать в наш магазин",
            &["speech_generate"],
        ),
        (
            "надо, чтобы ты ответил Лене на письмо: макет согласован, счет выставлю сегодня",
            &["mail_reply"],
        ),
        ("что значит «найди себя»?", &[]),
        ("он сказал мне: «ну ты даёшь» — как это понимать?", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The letter's text read whole pulls to a plain answer; without it, the request is sure.
    let d = decide(
        &rs,
        &model,
        &say("надо, чтобы ты ответил Лене на письмо: макет согласован, счет выставлю сегодня"),
    )
    .await;
    let note = d
        .trace
        .iter()
        .find(|s| s.effect.contains("without the dictated words"))
        .unwrap_or_else(|| panic!("no quote note: {:#?}", d.trace));
    assert_eq!(note.rule.as_deref(), Some("dictated-words"), "{note:#?}");
    assert!(
        note.effect
            .contains("макет согласован, счет выставлю сегодня"),
        "{note:#?}"
    );
}

/// What a post, a voice-over or a song is about is not what the message asks: a topic said
/// with «как / почему / о том, как» after a creation verb, even after an adjective or a place
/// for the text, no longer pulls the request to a plain answer; a question asked of the
/// assistant in the same words still gets one.
#[tokio::test]
async fn a_topic_after_a_creation_verb_is_not_a_question() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 6] = [
        (
            "напиши статейку подробную, как я переехал в деревню и ни разу не пожалел",
            &["article_draft"],
        ),
        (
            "короче надо озвучить памятку для новичков ну как пользоваться кофемашиной",
            &["speech_generate"],
        ),
        (
            "сочини песенку про то, как мы всей семьёй лепили пельмени",
            &["music_generate"],
        ),
        ("напиши мне, почему небо голубое", &[]),
        ("напиши, как мне лучше поступить с соседом", &[]),
        ("как написать пост, чтобы его дочитали до конца?", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// «а ты умеешь …? сделай …»: an ability question followed by a request is the request; the
/// trace names the frame that read past the question. Without a request after it, the
/// question is still answered in words.
#[tokio::test]
async fn an_ability_question_followed_by_a_request_is_the_request() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 3] = [
        (
            "ты умеешь напоминалки ставить? напомни завтра в девять позвонить маме",
            &["reminder_create"],
        ),
        (
            "вы умеете картинки делать? нарисуйте логотип для кофейни с котом",
            &["image_generate"],
        ),
        ("а ты умеешь рисовать? интересно просто", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
    let d = decide(&rs, &model, &say(cases[0].0)).await;
    assert!(
        d.trace
            .iter()
            .any(|s| s.rule.as_deref() == Some("ability-then-request")),
        "{:#?}",
        d.trace
    );
}

/// «вечно забываю в два часа …» with a time on the clock asks for a reminder at that time, as
/// do other words for «напомни» («подать сигнал», «пни меня») with one; «забываю, где оставил
/// ключи» is a complaint about memory, not a request.
#[tokio::test]
async fn forgetting_at_a_time_asks_a_reminder_but_a_memory_complaint_does_not() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 7] = [
        (
            "вечно забываю в пол-восьмого капли в глаза закапать",
            &["reminder_create"],
        ),
        (
            "постоянно забываю в три часа забрать малую с продлёнки",
            &["reminder_create"],
        ),
        ("забываю где оставил ключи", &[]),
        ("что-то я стал забывать, что было утром", &[]),
        // Other words for «напомни», with a time on the clock.
        (
            "будьте добры, в девять утра подать мне сигнал, что пора звонить в налоговую",
            &["reminder_create"],
        ),
        (
            "пни меня в семь утра, на поезд не проспать",
            &["reminder_create"],
        ),
        ("дай знать, если что-то изменится", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A question about a day «по календарю» looks in the user's calendar; a calendar that is no
/// one's schedule (the Maya's, the lunar one) is a question of knowledge.
#[tokio::test]
async fn a_question_by_the_calendar_looks_but_other_calendars_do_not() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 4] = [
        ("среда по календарю: дежурю или нет?", &["calendar_search"]),
        ("что там по календарю на понедельник?", &["calendar_search"]),
        ("по лунному календарю когда огурцы сеять?", &[]),
        ("по календарю майя конец света когда был?", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Blind set 20 (a computer club, across writing styles): a mode switch with the assistant
/// named between the verb and the mode is the interface's business; a thing «уже никому не
/// нужна» is an opinion, not a delete; a club anthem is a song; «картину маслом» is an idiom.
#[tokio::test]
async fn set_twenty_families_are_read_for_what_they_ask() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 4] = [
        (
            "Прошу перевести ассистента в режим документов, нужно оформить акты.",
            &[],
        ),
        ("фильтр «офис» в метрике уже никому не нужен наверное", &[]),
        ("спонсор нарисовал нам картину маслом, денег не будет", &[]),
        (
            "замути гимн нашей школы, чтоб на линейке пели",
            &["music_generate"],
        ),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// English verbs inside Russian edit a named file: «в google doc «…» add пункт» is an edit of
/// that Google doc, not a new one (the Google-file-with-its-columns rule stays quiet).
#[tokio::test]
async fn an_english_edit_verb_edits_the_named_google_doc() {
    let (rs, model) = prepared();
    let req = request(json!({
        "integrations": ["google"],
        "messages": [{"role": "user",
            "content": "в google doc «Правила клуба» add пункт: не опаздывать больше чем на 10 минут"}]
    }));
    let d = decide(&rs, &model, &req).await;
    assert_eq!(tools(&d), ["gdocs_edit"], "{:#?}", d.trace);
}

/// Blind sets 23 and 24, read after the session's changes: a question about the service with
/// two words before it («Скажите, а почему …») or about its price («… платная?») and a
/// negated generation verb («песню не сочиняй») are answered in words.
#[tokio::test]
async fn questions_about_the_service_and_negated_generation_are_answered_in_words() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 4] = [
        (
            "Скажите, а почему ссылку на созвон надо искать в календаре, а не в почте?",
            &[],
        ),
        ("слежка за ценой у вас бесплатная?", &[]),
        ("картинку не рисуй, я сама сфоткаю", &[]),
        ("нарисуй картинку: кот на подоконнике", &["image_generate"]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A speaker's fillers are left out of what the router reads: dictated «это самое» no longer
/// pulls a request to a plain answer, the trace names the words left out, and the arguments
/// still come from the whole message.
#[tokio::test]
async fn fillers_are_left_out_of_what_the_router_reads() {
    let (rs, model) = prepared();
    let message =
        "в календарь запиши это самое техосмотр в среду в восемь утра на станции на кольцевой";
    let d = decide(&rs, &model, &say(message)).await;
    assert_eq!(tools(&d), ["calendar_create"], "{:#?}", d.trace);
    assert!(
        d.trace
            .iter()
            .any(|s| s.effect.contains("leaves out 'это самое'")),
        "{:#?}",
        d.trace
    );
    let cases: [(&str, &[&str]); 2] = [
        (
            "сочини песню это самое про дальнобой про дорогу про ночную трассу чтоб в кабине с напарником петь",
            &["music_generate"],
        ),
        ("короче спасибо, ты очень помог", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A generation verb asks for a generation even when a long description follows it in words
/// the examples never had; a question about how it is done is still answered in words.
#[tokio::test]
async fn a_generation_verb_outweighs_a_long_description() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 4] = [
        (
            "Будьте любезны, изобразите средневекового монаха-переписчика за работой в манере книжной миниатюры.",
            &["image_generate"],
        ),
        (
            "Будьте любезны, озвучьте вступительное слово к лекции: «Дорогие коллеги, сегодня мы поговорим о Никейском соборе».",
            &["speech_generate"],
        ),
        ("как нарисовать кота карандашом поэтапно?", &[]),
        ("включи песню про лето", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A request in the infinitive at the start («посмотреть календарь, я свободный в пятница?», as
/// a learner of the language or a note to self writes it) is a request; an infinitive that opens a
/// statement is not.
#[tokio::test]
async fn a_request_in_the_infinitive_is_a_request() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 4] = [
        (
            "посмотреть календарь, я свободный в пятница утро?",
            &["calendar_search"],
        ),
        (
            "написать статья короткий, как русский язык учить для иностранец",
            &["article_draft"],
        ),
        ("понять не могу, почему он так сказал", &[]),
        ("учить английский скучно", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Set 13's families, in new words: a daydream is left alone, a post's topic does not drown
/// the request to write it, a named chart shape is a chart (not a picture), and «а то забуду»
/// asks for a reminder.
#[tokio::test]
async fn daydreams_post_topics_chart_shapes_and_forgetting_are_read_for_what_they_ask() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 6] = [
        (
            "эх, вот бы отпуск на море в сентябре и никаких отчётов",
            &[],
        ),
        (
            "вот бы узнать, сколько человек было на сайте вчера",
            &["site_traffic"],
        ),
        (
            "напиши пост о том, почему мы закрываемся на ремонт, по-доброму",
            &["post_draft"],
        ),
        (
            "нарисуй столбиками продажи по месяцам: январь 10, февраль 14, март 9",
            &["chart_build"],
        ),
        (
            "что нагляднее для долей — круговая диаграмма или столбики?",
            &[],
        ),
        (
            "в восемь утра позвонить в банк, а то я забуду",
            &["reminder_create"],
        ),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `boost_skills` on a context rule: a complaint about the body with no question in it
/// switches the health interview on, and the trace names the rule; a message with no
/// complaint stays a plain answer.
#[tokio::test]
async fn a_complaint_without_a_question_opens_the_health_interview() {
    let (rs, model) = prepared();
    let d = decide(
        &rs,
        &model,
        &say("упал с велосипеда, лодыжка распухла, на ногу не наступить"),
    )
    .await;
    assert_eq!(d.skill.as_deref(), Some("health"), "{:#?}", d.trace);
    assert!(
        d.trace
            .iter()
            .any(|s| s.effect.contains("complaint-opens-the-health-interview")),
        "{:#?}",
        d.trace
    );
    let d = decide(
        &rs,
        &model,
        &say("упал с велосипеда, но всё обошлось, даже смешно"),
    )
    .await;
    assert_eq!(d.skill, None, "{:#?}", d.trace);
}

/// A number said in words with «тысяча» at its head: the singular counts once («тысяча двести»
/// is 1,200), the colloquial inverted order still scales («тысяч за пятнадцать» is 15,000), and
/// hundreds after any form add up («до тысячи пятисот» is 1,500).
#[tokio::test]
async fn a_thousand_at_the_head_of_a_number_counts_once() {
    let (rs, model) = prepared();
    for (text, tool, arg, want) in [
        (
            "продаю велосипед, тысяча двести рублей",
            "sell_listing",
            "price",
            1200,
        ),
        (
            "подбери робот-пылесос тысяч за пятнадцать",
            "product_search",
            "max_price",
            15000,
        ),
        (
            "подбери наушники до тысячи пятисот",
            "product_search",
            "max_price",
            1500,
        ),
    ] {
        assert_argument(&rs, &model, text, tool, arg, Some(want)).await;
    }
}

/// `text` calls `tool` first, with `arg` read as `want` (`None`: not filled).
async fn assert_argument(
    rs: &RuleSet,
    model: &EmbeddedModel,
    text: &str,
    tool: &str,
    arg: &str,
    want: Option<i32>,
) {
    let d = decide(rs, model, &say(text)).await;
    let call = d
        .calls
        .first()
        .unwrap_or_else(|| panic!("{text}: {:#?}", d.trace));
    assert_eq!(&*call.tool, tool, "{text}");
    assert_eq!(
        call.arguments.get(arg).and_then(Value::as_f64),
        want.map(f64::from),
        "{text}: {call:?}"
    );
}

/// Prices and durations as people say them: a price as its own part of a list («стрижка
/// шпица, две тысячи двести, мытьё входит»), thousands left unsaid before hundreds («три
/// пятьсот» is 3,500, not three times five hundred), a span ending at one o'clock («с
/// одиннадцати до часу») and the unit first («минут сорок»). Near misses: «2 комнаты, 2019
/// года» names no price, «часов в 7» is a time, not seven hours.
#[tokio::test]
async fn prices_and_durations_are_read_as_people_say_them() {
    let (rs, model) = prepared();
    for (text, tool, arg, want) in [
        (
            "оформи карточку: стрижка шпица под мишку, две тысячи двести, мытье входит",
            "sell_listing",
            "price",
            Some(2200),
        ),
        (
            "сделай карточку на продажу: сутки в квартире у подъемника, три пятьсот",
            "sell_listing",
            "price",
            Some(3500),
        ),
        (
            "выставь мою услугу: довезу до Мурманска на солярисе, четыре с половиной тыщи в одну сторону",
            "sell_listing",
            "price",
            Some(4500),
        ),
        (
            "выставь на продажу квартиру, 2 комнаты, 2019 года",
            "sell_listing",
            "price",
            None,
        ),
        // The price with the verb of selling comes before any «за»: what was paid is no price.
        (
            "выставь нашу зимнюю коляску, брали за полтинник, отдам за пятнашку",
            "sell_listing",
            "price",
            Some(15000),
        ),
        // Roubles named come before a «за» inside a title.
        (
            "Редакция проводит мастер-класс «Сюжет за один день»; прошу выставить его на продажу по 2500 рублей за участника",
            "sell_listing",
            "price",
            Some(2500),
        ),
        (
            "в календарь забей на четверг с одиннадцати до часу: хаски Гром, мытье и вычес",
            "calendar_create",
            "duration_minutes",
            Some(120),
        ),
        (
            "в календарь: массаж малому в среду в одиннадцать, минут сорок",
            "calendar_create",
            "duration_minutes",
            Some(40),
        ),
        (
            "запиши в календарь стоматолога в пятницу, часов в 7",
            "calendar_create",
            "duration_minutes",
            None,
        ),
    ] {
        assert_argument(&rs, &model, text, tool, arg, want).await;
    }
}

/// A context rule's `boost_skills` names a skill of the pack: a misspelt one is refused with
/// the line and column where it is written, and no ruleset is served.
#[test]
fn a_skill_boost_for_an_unknown_skill_is_refused_where_it_is_written() {
    let dir = rules_copy(15000);
    let router = dir.path().join("router.yaml");
    let text = std::fs::read_to_string(&router).expect("read");
    assert!(
        text.contains("boost_skills: {health: "),
        "the pack boosts a skill"
    );
    std::fs::write(
        &router,
        text.replace("boost_skills: {health: ", "boost_skills: {helth: "),
    )
    .expect("write");
    let loaded = turnout::compile::load_dir(dir.path());
    assert!(loaded.ruleset.is_none());
    let d = diagnostic(&loaded, "unknown-skill");
    let at = d.location.as_ref().expect("a location");
    let line = text
        .lines()
        .position(|l| l.contains("boost_skills: {health: "))
        .expect("the line")
        + 1;
    assert_eq!(at.line, line, "{d}");
    assert!(d.message.contains("helth"), "{d}");
}

/// Set 14's families, in new words: an opinion that something is no longer needed is no
/// request to delete it (B19), a parcel named with its number is tracked though no verb asks,
/// and a short request whose object is «тот / туда» asks back (B6).
#[tokio::test]
async fn opinions_parcels_with_numbers_and_bare_pronouns_are_read_for_what_they_ask() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 5] = [
        (
            "сегмент «старые клиенты» в метрике нам, похоже, больше не нужен",
            &[],
        ),
        (
            "удали сегмент «старые клиенты» в метрике, он больше не нужен",
            &["metrika_manage"],
        ),
        (
            "посылка с книгами третью неделю не приходит, номер 55120-18",
            &["order_track"],
        ),
        ("открой тот файл", &[]),
        ("отправь туда", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A message typed in Latin letters is read a little shorter («chto» is «что»); the argument
/// that takes the whole message still gets all of it, not the message cut to the reading's
/// length (which lost «chetverg»'s tail).
#[tokio::test]
async fn a_transliterated_message_gives_its_whole_text_to_a_free_text_argument() {
    let (rs, model) = prepared();
    let message = "otvet' Ole na pis'mo, chto vstrecha perenositsya na chetverg";
    let d = decide(&rs, &model, &say(message)).await;
    let call = d.calls.first().unwrap_or_else(|| panic!("{:#?}", d.trace));
    assert_eq!(&*call.tool, "mail_reply", "{:#?}", d.trace);
    assert_eq!(call.arguments["text"], message, "{call:?}");
}

/// The families of blind sets 16 and 17, each with a near miss: an e-mail address is no Google
/// named, a delete verb with a post deletes it (not under a negation), Metrika with a site's
/// figures is the traffic report, a sell verb with a price is a listing (a wanted ad is not),
/// a mode switch and an ability question that ends the message are plain answers, and a kind
/// of file with «сделай» is a new file.
#[tokio::test]
async fn the_blind_sixteenth_and_seventeenth_sets_families_decide_with_their_near_misses() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 10] = [
        (
            "напиши Оле на olga.k@gmail.com что я приеду в субботу",
            &["mail_send"],
        ),
        ("найди в gmail письмо от банка", &[]),
        (
            "удалите, пожалуйста, пост про летнюю акцию",
            &["post_delete"],
        ),
        ("не удаляй пост про акцию, пусть висит", &[]),
        ("глянь в метрике отказы за вчера", &["site_traffic"]),
        (
            "выставь кроссовки по три тысячи, почти новые",
            &["sell_listing"],
        ),
        ("выставь, что мне нужна няня на вечер", &[]),
        ("переключи меня на документы", &[]),
        ("а диаграммы строить умеешь?", &[]),
        ("сделай документ со списком гостей", &["doc_create"]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Skills opened by context rules (`boost_skills`) with their near misses: a workout plan
/// opens fitness but a diet plan for the workouts opens nutrition; «explain step by step» opens
/// the tutor, a step-by-step route does not; a sunburn with blisters is a complaint.
#[tokio::test]
async fn workout_plans_step_by_step_explanations_and_burns_open_their_skills() {
    let (rs, model) = prepared();
    assert_skills(
        &rs,
        &model,
        &[
            ("составь мне зарядку на десять минут", Some("fitness")),
            ("составь мне рацион под мои тренировки", Some("nutrition")),
            (
                "объясни по шагам, как решать квадратные уравнения",
                Some("tutor"),
            ),
            ("пошагово распиши маршрут до дачи", None),
            ("обгорела на пляже, плечи в волдырях", Some("health")),
        ],
    )
    .await;
}

/// A story with the request at its end, joined by a comma or a dictated «а ты пока», is read
/// again from the request when the whole reads as small talk; a message that starts with its
/// request is not cut, and a question about a topic is not re-read into a skill.
#[tokio::test]
async fn a_story_before_the_request_does_not_turn_it_into_small_talk() {
    let (rs, model) = prepared();
    assert_skills(
        &rs,
        &model,
        &[
            (
                "ладно к врачу схожу а ты пока составь мне ну зарядку для спины на каждое утро",
                Some("fitness"),
            ),
            (
                "у мамы диабет второго типа, не знаю чем ее кормить, распиши на неделю",
                Some("nutrition"),
            ),
            (
                "как самой создать цель в метрике? распиши по шагам, хочу научиться",
                None,
            ),
        ],
    )
    .await;
    let d = decide(
        &rs,
        &model,
        // A longer story: the shorter one above now reads as the trainer's whole (the word
        // pairs), so the frame has nothing to re-read there.
        &say(
            "ладно схожу я к врачу в четверг как договаривались а ты пока составь мне ну зарядку для спины на каждое утро",
        ),
    )
    .await;
    assert_eq!(d.skill.as_deref(), Some("fitness"), "{:#?}", d.trace);
    assert!(
        d.trace
            .iter()
            .any(|s| s.rule.as_deref() == Some("story-then-request")),
        "{:#?}",
        d.trace
    );
}

/// A school or university subject with a verb of explaining, or with «I don't get it», opens
/// the tutor without «step by step»; the same verbs about the service or a parcel do not.
#[tokio::test]
async fn a_subject_to_explain_opens_the_tutor_and_the_service_does_not() {
    let (rs, model) = prepared();
    assert_skills(
        &rs,
        &model,
        &[
            ("вообще не догоняю логарифмы, разжуй", Some("tutor")),
            (
                "теорему Пифагора растолкуй, завтра самостоялка",
                Some("tutor"),
            ),
            ("объясни, почему отказы в метрике выросли", None),
            ("не понимаю, почему посылка до сих пор не пришла", None),
        ],
    )
    .await;
}

/// Words inside an e-mail address are not words of the message: «drive» in
/// «buh@selenga-drive.ru» is no Google Drive, and the letter is written.
#[tokio::test]
async fn words_inside_an_address_name_no_service() {
    let (rs, model) = prepared();
    let text = "Просьба направить письмо в бухгалтерию (buh@selenga-drive.ru): пусть оформят акты";
    let d = decide(&rs, &model, &say(text)).await;
    assert_eq!(tools(&d), ["mail_send"], "{:#?}", d.trace);
    assert!(
        !d.trace
            .iter()
            .any(|s| s.rule.as_deref() == Some("google-named-not-connected")),
        "{:#?}",
        d.trace
    );
}

/// A context rule marked `per_part` holds for a part of a compound request only where its
/// words are: the lookup verb of the first part («найди») no longer leans the second part
/// («закинь её в календарь») to a calendar search.
#[tokio::test]
async fn a_per_part_rule_reads_only_the_words_of_its_part() {
    let (rs, model) = prepared();
    let d = decide(
        &rs,
        &model,
        &request(json!({
            "messages": [{"role": "user", "content":
                "в gmail где-то письмо от МРЭО, там дата экзамена — найди и закинь её в google календарь"}],
            "integrations": ["google"],
        })),
    )
    .await;
    assert_eq!(
        tools(&d),
        ["gmail_search", "gcalendar_create"],
        "{:#?}",
        d.trace
    );
}

/// A part reads its own words even when the whole message's first match of a list straddles
/// the cut: «…по неделям и линию…» matched the chart shapes across «и», and the second part
/// («линию мне по ним начерти») lost its chart until the part was read alone.
#[tokio::test]
async fn a_per_part_rule_reads_a_part_whose_words_matched_across_the_cut() {
    let (rs, model) = prepared();
    let d = decide(
        &rs,
        &model,
        &say("за месяц визиты на сайте сними по неделям и линию мне по ним начерти"),
    )
    .await;
    assert_eq!(tools(&d), ["site_traffic", "chart_build"], "{:#?}", d.trace);
}

/// A training goal with a wish or a request opens the trainer; «прокачаться» in a game does
/// not.
#[tokio::test]
async fn a_training_goal_opens_the_trainer_but_a_game_does_not() {
    let (rs, model) = prepared();
    assert_skills(
        &rs,
        &model,
        &[
            (
                "было бы круто к лету хоть раз подтянуться, сейчас вишу как сосиска",
                Some("fitness"),
            ),
            (
                "ладно понял. давай лучше про тренировки, мне к турниру прыжок надо прокачать",
                Some("fitness"),
            ),
            ("пацаны говорят я в катке как бот, прокачаться надо", None),
        ],
    )
    .await;
}

/// A question about how a Google service works is answered in words; a question to one's own
/// Google calendar still looks in it.
#[tokio::test]
async fn questions_about_google_services_are_answered_but_a_calendar_question_looks() {
    let (rs, model) = prepared();
    let google = |text: &str| {
        request(json!({
            "messages": [{"role": "user", "content": text}],
            "integrations": ["google"],
        }))
    };
    for text in [
        "а гугл таски с гугл календарем синхронизируются?",
        "гугл таблицы без инета пашут?",
        "озвучка у тебя только мужским голосом бывает?",
    ] {
        let d = decide(&rs, &model, &google(text)).await;
        assert!(d.calls.is_empty(), "{text}: {:#?}", d.trace);
    }
    let d = decide(&rs, &model, &google("что у меня завтра в гугл календаре?")).await;
    assert_eq!(tools(&d), ["gcalendar_search"], "{:#?}", d.trace);
}

/// The file a direct edit names fills `doc_edit.file` as the user wrote it: in quotes, with its
/// extension, or joined by «_»; not the whole message (stop 47 noticed it there).
#[tokio::test]
async fn a_file_named_in_the_message_fills_the_edits_file_argument() {
    let (rs, model) = prepared();
    for (text, file) in [
        ("в Бюджет.xlsx поправь сумму за май на 5000", "Бюджет.xlsx"),
        (
            "в файле «Смета ремонта» поправь цену плитки",
            "Смета ремонта",
        ),
    ] {
        let d = decide(&rs, &model, &say(text)).await;
        assert_eq!(tools(&d), ["doc_edit"], "{text}: {:#?}", d.trace);
        assert_eq!(d.calls[0].arguments["file"], file, "{text}: {:#?}", d.trace);
    }
}

/// A question about what a thing is for («поясните назначение …», «в чём прикол …», «— это не
/// те же …, что ли») is answered in words, though it names a tool's topic; a request with the
/// same words is still the tool's.
#[tokio::test]
async fn a_question_about_what_a_thing_is_for_gets_no_tool() {
    let (rs, model) = prepared();
    for text in [
        "Поясните назначение сегментов в Яндекс Метрике: для чего их создают?",
        "в чём прикол фильтров в метрике, если есть сегменты? не понимаю",
        "вечно путаюсь: визиты на сайте — это не те же посетители, что ли",
    ] {
        let d = decide(&rs, &model, &say(text)).await;
        assert!(d.calls.is_empty(), "{text}: {:#?}", d.trace);
        assert!(
            d.trace
                .iter()
                .any(|s| s.rule.as_deref() == Some("question-about")),
            "{text}: {:#?}",
            d.trace
        );
    }
    let d = decide(
        &rs,
        &model,
        &say("создай в метрике сегмент «Гости из Вологды»"),
    )
    .await;
    assert_eq!(tools(&d), ["metrika_manage"], "{:#?}", d.trace);
}

/// Asking to hold an action back («погоди с публикацией», «с рассылкой повремени») is no
/// request for it, with a draft on screen too; «публикуй, не жди» still publishes.
#[tokio::test]
async fn holding_an_action_back_is_no_request_for_it() {
    let (rs, model) = prepared();
    let with_draft = |text: &str| {
        request(json!({
            "messages": [{"role": "user", "content": text}],
            "draft_shown": true,
        }))
    };
    for text in [
        "погоди пока с публикацией, я цены перепроверю",
        "с рассылкой повремени до понедельника",
    ] {
        let d = decide(&rs, &model, &with_draft(text)).await;
        assert!(d.calls.is_empty(), "{text}: {:#?}", d.trace);
    }
    let d = decide(&rs, &model, &with_draft("публикуй, не жди")).await;
    assert_eq!(tools(&d), ["post_publish"], "{:#?}", d.trace);
}

/// Two steps in one clause: the photo (or the recording) is read first, then the table or the
/// document is made from it; without the attachment, or without a word about it, only the
/// document.
#[tokio::test]
async fn an_attachment_the_document_is_made_from_is_read_first() {
    let (rs, model) = prepared();
    let with = |text: &str, kind: &str| {
        request(json!({
            "messages": [{"role": "user", "content": text}],
            "attachments": [{"kind": kind}],
            "integrations": ["google"],
        }))
    };
    let d = decide(
        &rs,
        &model,
        &with(
            "с фотки квитанции вытащи сумму и вбей в гугл табличку «Коммуналка»",
            "photo",
        ),
    )
    .await;
    assert_eq!(
        tools(&d),
        ["photo_describe", "gsheets_edit"],
        "{:#?}",
        d.trace
    );
    assert!(
        d.trace
            .iter()
            .any(|s| s.rule.as_deref() == Some("read-the-photo-first")),
        "{:#?}",
        d.trace
    );
    let d = decide(
        &rs,
        &model,
        &say("вбей в гугл табличку «Коммуналка» сумму 4300 за ноябрь"),
    )
    .await;
    assert!(!tools(&d).contains(&"photo_describe"), "{:#?}", d.trace);
}

/// «Подбери» about a thing picks goods, whatever the order of the words; about a plan, a time
/// or words it does not.
#[tokio::test]
async fn a_pick_verb_about_a_thing_picks_goods() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 3] = [
        (
            "формы для выпечки силиконовые подбери, набор из шести",
            &["product_search"],
        ),
        (
            "подберите, пожалуйста, термос литровый для рыбалки",
            &["product_search"],
        ),
        ("подбери синоним к слову «красивый»", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The Documents skill is switched on by its button only (B9): asking for it in words is no
/// search for a document and no new one; a search in one's documents still is.
#[tokio::test]
async fn asking_for_the_documents_mode_in_words_is_no_document_tool() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 3] = [
        ("включи мне навык «Документы», буду договоры писать", &[]),
        ("переключи в режим документов пожалуйста", &[]),
        ("найди в документах договор аренды гаража", &["doc_search"]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A Metrika setting asked in the imperative is a Metrika change; a report of one done, or a
/// question how to do it, is not.
#[tokio::test]
async fn a_metrika_setting_in_the_imperative_changes_metrika() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 3] = [
        (
            "в метрике отсеки заходы с нашего офисного айпи 81.23.4.5, они всё портят",
            &["metrika_manage"],
        ),
        ("вчера сам в метрике цель завёл, несложно оказалось", &[]),
        ("как удалить цель в метрике?", &[]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A reload that changed no example (here a search phrase added to a word list) reuses the
/// classifier trained for the version before, and decides as a router trained afresh; a
/// changed example trains again.
#[tokio::test]
async fn a_reload_that_changed_no_example_trains_no_classifier() {
    let model = EmbeddedModel::new();
    let first = pack();
    model.prepare(&first);
    assert_eq!(model.classifiers_trained(), 1);

    let dir = rules_copy(15000);
    let words = dir.path().join("words.yaml");
    let text = std::fs::read_to_string(&words).expect("words");
    let anchor = "      - скольк … стоит\n";
    assert!(text.contains(anchor), "the anchor entry moved");
    std::fs::write(
        &words,
        text.replace(anchor, &format!("{anchor}      - проверка выкатки\n")),
    )
    .expect("write");
    let edited = turnout::compile::load_dir(dir.path())
        .ruleset
        .expect("loads");
    assert_ne!(first.version, edited.version);
    model.prepare(&edited);
    assert_eq!(
        model.classifiers_trained(),
        1,
        "the word-list edit trained again"
    );

    let fresh = EmbeddedModel::new();
    fresh.prepare(&edited);
    for text in [
        "напомни завтра в девять про стоматолога",
        "сколько стоит айфон 15 про",
        "покажи статистику в шаи за неделю",
        "ну и жара сегодня",
    ] {
        let (a, b) = (
            decide(&edited, &model, &say(text)).await,
            decide(&edited, &fresh, &say(text)).await,
        );
        assert_eq!(
            serde_json::to_value(&a).expect("json"),
            serde_json::to_value(&b).expect("json"),
            "{text}"
        );
    }

    let tools = dir.path().join("tools.yaml");
    let text = std::fs::read_to_string(&tools).expect("tools");
    let example = "      - вернись в обычный режим\n";
    assert!(text.contains(example), "the example moved");
    std::fs::write(
        &tools,
        text.replacen(
            example,
            &format!("{example}      - вертай обычный режим\n"),
            1,
        ),
    )
    .expect("write");
    let again = turnout::compile::load_dir(dir.path())
        .ruleset
        .expect("loads");
    model.prepare(&again);
    assert_eq!(model.classifiers_trained(), 2, "an example edit must train");

    // The word pairs are how the classifier reads every example: a reload that changes only
    // them trains again.
    let router = dir.path().join("router.yaml");
    let text = std::fs::read_to_string(&router).expect("router");
    assert!(text.contains("    word_pairs: 5\n"), "the setting moved");
    std::fs::write(
        &router,
        text.replace("    word_pairs: 5\n", "    word_pairs: 4\n"),
    )
    .expect("write");
    let pairs = turnout::compile::load_dir(dir.path())
        .ruleset
        .expect("loads");
    model.prepare(&pairs);
    assert_eq!(
        model.classifiers_trained(),
        3,
        "a word-pair change must train"
    );
}

/// The decisions of `cases`, each a request as JSON and the tools it must call, with what the
/// wrong ones called instead.
async fn wrong_tools_for(
    rs: &RuleSet,
    model: &EmbeddedModel,
    cases: &[(Value, &[&str])],
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (req, want) in cases {
        let d = decide(rs, model, &request(req.clone())).await;
        if tools(&d) != *want {
            // The user's message names the case; the whole request only when there is more.
            let text = req["messages"][0]["content"]
                .as_str()
                .filter(|_| req.as_object().is_some_and(|o| o.len() == 1));
            let case = text.map_or_else(|| req.to_string(), str::to_owned);
            wrong.push(format!("{case}: {:?}, expected {want:?}", tools(&d)));
        }
    }
    wrong
}

/// A post is published only from a draft on screen: without one, «в ленту его» asks back; a
/// draft held back («пусть полежит», «тормозни») is not published either.
#[tokio::test]
async fn publishing_needs_a_draft_on_screen_and_a_held_draft_stays() {
    let (rs, model) = prepared();
    let draft =
        |text: &str| json!({"messages": [{"role": "user", "content": text}], "draft_shown": true});
    let cases: [(Value, &[&str]); 5] = [
        (
            json!({"messages": [{"role": "user", "content": "в ленту его, для всех"}]}),
            &[],
        ),
        (draft("в ленту его, для всех"), &["post_publish"]),
        (draft("пусть пост пока полежит, утром решу"), &[]),
        (draft("тормозни, не надо в ленту"), &[]),
        (
            json!({"messages": [{"role": "user", "content": "перегони голосовое в текст"}],
                   "attachments": [{"kind": "audio"}]}),
            &["audio_transcribe"],
        ),
    ];
    let wrong = wrong_tools_for(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Annoyance at a thing, a wanted-to-buy ad and a voice message to turn into text with no
/// recording call no tool; a price watched «на примете» or a seller's cut is a price alert, a
/// budget alone a product search.
#[tokio::test]
async fn statements_wanted_ads_and_price_watches() {
    let (rs, model) = prepared();
    let cases: [(&str, &[&str]); 7] = [
        ("эта цель в метрике меня уже бесит", &[]),
        (
            "по-моему цель лишняя — удали её из метрики",
            &["metrika_manage"],
        ),
        (
            "размести объявление, что магазин купит старый холодильник",
            &[],
        ),
        ("перегони голосовое в текст", &[]),
        ("маякни, когда наушники скинут до 8 тысяч", &["price_alert"]),
        (
            "держи на примете этот пылесос, как подешевеет до 20к — скажи",
            &["price_alert"],
        ),
        ("подбери пылесос до 20к", &["product_search"]),
    ];
    let wrong = wrong_tools(&rs, &model, &cases).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A timetable asked without «расписание» switches web search on; the same words about the
/// past do not.
#[tokio::test]
async fn a_timetable_asked_in_other_words_is_looked_up() {
    let (rs, model) = prepared();
    for (text, search) in [
        (
            "когда последняя электричка из Твери уходит по субботам",
            true,
        ),
        ("во сколько первый паром на остров отходит", true),
        (
            "когда автобус ходил через наше село, я каждый день ездила к маме",
            false,
        ),
    ] {
        let d = decide(&rs, &model, &say(text)).await;
        assert_eq!(d.web_search, search, "{text}: {:#?}", d.trace);
    }
}

/// Leaving a skill in words nobody wrote before: «отбой» to the trainer, «надоело» about the
/// topic.
#[tokio::test]
async fn leaving_a_skill_by_calling_it_off() {
    let (rs, model) = prepared();
    for (skill, text) in [
        ("fitness", "тренер, отбой на сегодня"),
        ("nutrition", "всё, про диету надоело"),
        ("nutrition", "довольно диет, давай просто поболтаем"),
    ] {
        let req = request(json!({"messages": [{"role": "user", "content": text}], "skill": skill}));
        let d = decide(&rs, &model, &req).await;
        assert_eq!(d.skill, None, "{text}: {:#?}", d.trace);
    }
}

/// A long story of a hard shift read sentence by sentence opens no skill from one complaint
/// inside it (`sentence_skill_threshold`); a long story with a real request at its end still
/// opens the skill it asks for.
#[tokio::test]
async fn a_complaint_inside_a_long_story_opens_no_skill() {
    let (rs, model) = prepared();
    assert_skills(
        &rs,
        &model,
        &[
            (
                "Смена была адская, трое заболели, я одна на весь зал, гости ругались, повар опоздал. Домой пришла в два ночи. Ноги гудят, спина ноет, сил никаких. Ладно, просто поделилась",
                None,
            ),
            (
                "Сын весь вечер сидел над домашкой по математике, плакал, я сама уже ничего не помню из школы, а завтра контрольная. Объясни ему, пожалуйста, как складывать дроби с разными знаменателями",
                Some("tutor"),
            ),
        ],
    )
    .await;
}
