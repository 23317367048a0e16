//! Router model backends as a user meets them: the HTTP backends against a real local server
//! (the exact request sent, every failure kind ending in a plain chat answer, the timeout), the
//! embedded router measured on a held-back evaluation set, and `--model` on the command line.
use crate::common::root;

use turnout::RuleSet;
use turnout::model::embedded::calibrate::{self, Settings};
use turnout::model::embedded::{Classifier, Target, Training};

fn pack() -> RuleSet {
    turnout::compile::load_dir(&root().join("rules"))
        .ruleset
        .expect("the shipped rules load")
}

/// The pack's examples as the router trains on them: the classes, and (class, text).
fn labelled(rs: &RuleSet) -> (Vec<Target>, Vec<(usize, String)>) {
    calibrate::labelled(rs)
}

/// k-fold cross-validation of the embedded router on the pack's own examples (the library's,
/// as `turnout calibrate` runs it): (share of tool/skill examples routed to their class, share
/// of chat examples left without a tool).
fn cross_validate(
    rs: &RuleSet,
    folds: usize,
    training: Training,
    th: f32,
    margin: f32,
) -> (f64, f64) {
    let settings = Settings {
        threshold: th,
        margin,
        ..Settings::of(rs)
    };
    let o = calibrate::cross_validate(rs, folds, training, settings).expect("enough examples");
    (
        o.overall.routed_share().unwrap_or(0.0),
        o.overall.left_alone_share().unwrap_or(0.0),
    )
}

#[test]
#[ignore = "a tuning aid: cargo test --release --test it models::tune -- --ignored --nocapture"]
fn tune_the_embedded_router_on_the_examples() {
    let rs = pack();
    let base = Training::default();
    for training in [
        base,
        Training { epochs: 20, ..base },
        Training { rate: 2.0, ..base },
        Training { rate: 8.0, ..base },
    ] {
        for (th, margin) in [
            (0.0, 0.0),
            (0.2, 0.05),
            (0.3, 0.0),
            (0.3, 0.05),
            (0.4, 0.05),
        ] {
            let started = std::time::Instant::now();
            let (tools, chat) = cross_validate(&rs, 5, training, th, margin);
            println!(
                "{training:?} th={th} margin={margin}: tools {:.1}%, chat {:.1}% ({:?})",
                tools * 100.0,
                chat * 100.0,
                started.elapsed()
            );
        }
    }
}

// ───────────────────────── the embedded router on the held-back set ─────────────────────────

use serde_json::{Value, json};
use turnout::contract::Request;
use turnout::model::embedded::EmbeddedModel;
use turnout::model::{Model, RouterInput};

/// The decision of `model` on `req` with the rules `rs` (the tests' requests are valid).
async fn decided(rs: &RuleSet, req: &Request, model: &dyn Model) -> turnout::contract::Decision {
    turnout::engine::decide(rs, req, turnout::engine::Options::model(Some(model)))
        .await
        .expect("decided")
}

fn eval_cases() -> Vec<Value> {
    eval_file("tests/data/router_eval.yaml")
}

fn eval_file(file: &str) -> Vec<Value> {
    let data: Value =
        serde_yaml::from_str(&std::fs::read_to_string(root().join(file)).expect("eval set"))
            .expect("yaml");
    data["cases"].as_array().expect("cases").clone()
}

fn eval_request(case: &Value) -> Request {
    let mut messages = Vec::new();
    if let Some(asked) = case.get("asked") {
        messages.push(json!({"role": "assistant", "content": asked}));
    }
    messages.push(json!({"role": "user", "content": case["text"]}));
    let mut req = json!({ "messages": messages });
    for key in [
        "integrations",
        "skill",
        "draft_shown",
        "attachments",
        "generation_mode",
    ] {
        if let Some(v) = case.get(key) {
            req[key] = v.clone();
        }
    }
    let mut ui = serde_json::Map::new();
    if let Some(file) = case.get("open_file") {
        ui.insert("open_file".into(), json!({ "name": file }));
    }
    if let Some(mode) = case.get("ui_mode") {
        ui.insert("mode".into(), mode.clone());
    }
    if !ui.is_empty() {
        req["ui"] = Value::Object(ui);
    }
    serde_json::from_value(req).expect("a valid request")
}

/// The expected outcome of a case in the decision's terms, and the decision's own, as text.
fn expected_and_got(case: &Value, d: &Decision) -> (String, String) {
    let expect = match &case["expect"] {
        Value::Array(tools) => tools
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("+"),
        v => v.as_str().unwrap_or_default().to_owned(),
    };
    let before = case.get("skill").and_then(Value::as_str);
    let tools: Vec<&str> = d.calls.iter().map(|c| &*c.tool).collect();
    let got = if !tools.is_empty() {
        // A search the model asks for is the decision's `web_search`, not a call (the
        // contract): a case expecting it beside a tool holds when the flag is on and the other
        // calls are the case's, in its order.
        let parts: Vec<&str> = expect.split('+').collect();
        let others: Vec<&str> = parts
            .iter()
            .copied()
            .filter(|t| *t != "web_search")
            .collect();
        if d.web_search && parts.len() > others.len() && others == tools {
            expect.clone()
        } else {
            tools.join("+")
        }
    } else if d.skill.as_deref() != before {
        format!("use_skill:{}", d.skill.as_deref().unwrap_or("none"))
    } else if d.web_search && expect == "web_search" {
        "web_search".into()
    } else {
        "chat".into()
    };
    (expect, got)
}

/// Whether the decision carries the argument values the case states.
fn arguments_match(case: &Value, d: &Decision) -> bool {
    let Some(want) = case.get("arguments").and_then(Value::as_object) else {
        return true;
    };
    d.calls.first().is_some_and(|c| {
        want.iter().all(|(k, v)| match (c.arguments.get(k), v) {
            (Some(Value::Number(a)), Value::Number(b)) => a.as_f64() == b.as_f64(),
            (Some(a), b) => a == b,
            (None, _) => false,
        })
    })
}

/// Shares of (tool, skill and search messages decided right; messages that need no tool left
/// alone) on one held-back set, printed by expected class, by style and by confusion pair.
/// Every set's floors are the figures measured on 2026-12-05 (14:50 UTC), cut to three
/// decimals: a change that decides one message of a set worse fails its test.
async fn evaluate(file: &str, max_shared: usize, min_cases: usize) -> (f64, f64) {
    let rs = pack();
    let cases = eval_file(file);
    assert!(cases.len() >= min_cases, "{} cases", cases.len());
    // Written without looking at the examples: no case is an example, word for word.
    let norm = |s: &str| {
        rs.normalizer
            .normalize(s)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (_, examples) = labelled(&rs);
    let known: std::collections::HashSet<String> = examples.iter().map(|(_, t)| norm(t)).collect();
    let shared: Vec<&str> = cases
        .iter()
        .filter_map(|c| c["text"].as_str())
        .filter(|t| known.contains(&norm(t)))
        .collect();
    // The fresh set was written without seeing the examples, and some of its messages (the
    // article's own, the shortest) came out word for word the same: they are not scored.
    println!(
        "{} cases equal to examples, not scored: {shared:?}",
        shared.len()
    );
    assert!(
        shared.len() <= max_shared,
        "cases equal to examples: {shared:?}"
    );
    let cases: Vec<Value> = cases
        .into_iter()
        .filter(|c| !known.contains(&norm(c["text"].as_str().unwrap_or_default())))
        .collect();

    let model = EmbeddedModel::new();
    model.prepare(&rs);
    let mut by_class: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut by_style: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut confusion: std::collections::BTreeMap<(String, String), usize> = Default::default();
    let (mut tools_ok, mut tools, mut chat_ok, mut chats) = (0, 0, 0, 0);
    for case in &cases {
        let d = decided(&rs, &eval_request(case), &model).await;
        let (expect, got) = expected_and_got(case, &d);
        let ok = got == expect && arguments_match(case, &d);
        let entry = by_class.entry(expect.clone()).or_default();
        entry.1 += 1;
        entry.0 += usize::from(ok);
        let style = case["style"].as_str().unwrap_or("plain").to_owned();
        let entry = by_style.entry(style).or_default();
        entry.1 += 1;
        entry.0 += usize::from(ok);
        if expect == "chat" {
            chats += 1;
            chat_ok += usize::from(ok);
        } else {
            tools += 1;
            tools_ok += usize::from(ok);
        }
        if std::env::var_os("TURNOUT_EVAL_ALL").is_some() {
            for step in d.trace.iter().filter(|s| s.effect.starts_with("embedded")) {
                println!("ALL\t{expect}\t{got}\t{ok}\t{}\t{}", step.effect, step.why);
            }
        }
        if !ok {
            let got = if got == expect {
                format!("{got} (arguments)")
            } else {
                got
            };
            *confusion.entry((expect, got)).or_default() += 1;
            if std::env::var_os("TURNOUT_EVAL_MISSES").is_some() {
                println!("  miss: {} -> {:?}", case["text"], d.calls);
                let all = std::env::var_os("TURNOUT_EVAL_TRACE").is_some();
                for step in d
                    .trace
                    .iter()
                    .filter(|s| all || s.effect.starts_with("embedded"))
                {
                    println!("      {}: {}", step.effect, step.why);
                }
            }
        }
    }
    let tool_share = tools_ok as f64 / tools as f64;
    let chat_share = chat_ok as f64 / chats as f64;
    println!(
        "embedded router, decisions on {} held-back messages of {file}:\n  right tool (or skill, or search) with valid arguments: {:.1}% ({tools_ok}/{tools})\n  chit-chat left alone: {:.1}% ({chat_ok}/{chats})\nby expected class:",
        cases.len(),
        tool_share * 100.0,
        chat_share * 100.0
    );
    for (class, (ok, n)) in &by_class {
        println!("  {class}: {ok}/{n}");
    }
    println!("by style:");
    for (style, (ok, n)) in &by_style {
        println!("  {style}: {ok}/{n}");
    }
    println!("confusion pairs (expected -> decided: count):");
    let mut pairs: Vec<_> = confusion.into_iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((e, g), n) in pairs {
        println!("  {e} -> {g}: {n}");
    }
    (tool_share, chat_share)
}

#[tokio::test]
async fn the_embedded_router_decides_held_back_messages_with_valid_arguments() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval.yaml", 0, 300).await;
    // The goals of issue 13, reached: 90.8 % (344/379) and 95.5 % (106/111). The floors are the
    // figures reached, so a change that makes decisions worse fails here.
    // Issue 26: 91.3 % (346/379), 96.4 % (107/111); 2026-12-04 evening: 91.6 % (347/379),
    // 98.2 % (109/111); at night (an address with a verb of writing is a letter): 92.1 %
    // (349/379); after twice the examples (2026-12-04, 22:00): 92.9 % (352/379), 98.2 %.
    // Then after the second round of examples and sentence by sentence (2026-12-04, late):
    // 93.9 % (356/379), 97.3 % (108/111).
    assert!(
        tool_share >= 0.965,
        "tool decisions {tool_share:.3} < 0.965"
    );
    assert!(
        chat_share >= 0.990,
        "chit-chat left alone {chat_share:.3} < 0.990"
    );
}

#[tokio::test]
async fn the_embedded_router_decides_the_fresh_set_of_issue_26() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_fresh.yaml", 30, 300).await;
    // Issue 26, before its changes: 88.3 % (197/223) and 76.0 % (57/75); after: 91.5 %
    // (204/223) and 90.7 % (68/75); 2026-12-04 evening: 93.3 % (208/223) and 92.0 % (69/75);
    // at night (bare commands ask back, reports of the past, a weaker lean to skills): 93.7 %
    // (209/223) and 96.0 % (72/75); after set 6's changes 94.6 % (211/223) and 97.3 % (73/75);
    // after twice the examples 96.9 % (216/223). The floors are the figures reached.
    // Then after the second round of examples: 98.2 % (219/223), 97.3 % (73/75).
    assert!(
        tool_share >= 0.995,
        "tool decisions {tool_share:.3} < 0.995"
    );
    assert!(chat_share >= 0.973, "left alone {chat_share:.3} < 0.973");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_third_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set3.yaml", 7, 250).await;
    // Written blind, then used in development (see the file's header). Seven short messages
    // came out word for word equal to an example and are not scored. On the other 251: 94.0 %
    // (173/184) and 91.0 % (61/67) after the day's changes, 95.1 % (175/184) and 92.5 % (62/67)
    // after the evening's; 95.1 % and 94.0 % (63/67) at night (bare commands ask back); after
    // twice the examples 98.4 % (181/184) and 92.5 % (62/67): one question more went to a
    // tool. The floors are the figures reached.
    // Then after twice the examples, then a second round: 97.3 % (179/184), 89.6 % (60/67).
    assert!(
        tool_share >= 1.000,
        "tool decisions {tool_share:.3} < 1.000"
    );
    assert!(chat_share >= 0.910, "left alone {chat_share:.3} < 0.910");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_fourth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set4.yaml", 7, 200).await;
    // Written blind for the hard styles (see the file's header); the goals (93 %, 95 %) are far.
    // Seven short messages equal an example and are not scored. On the other 213: 86.8 %
    // (131/151) and 72.6 % (45/62); at night 87.4 % (132/151) and 88.7 % (55/62): bare commands
    // ask back, English words of extraction choices, a weaker lean of questions to the skills
    // (one skill question lost, three messages more left alone); after sets 5 and 6's changes
    // 90.1 % (136/151) and 88.7 %; with «две с половиной» read as 2.5: 90.7 % (137/151); with
    // letters to an address and comments under a post: 92.1 % (139/151); after twice the
    // examples 92.1 % and 87.1 % (54/62; «поменяй цену» went to price_alert). The floors are
    // the figures reached, so a change that makes decisions worse fails here.
    // Then after twice the examples, then a second round: 94.0 % (142/151), 85.5 % (53/62).
    assert!(
        tool_share >= 0.980,
        "tool decisions {tool_share:.3} < 0.980"
    );
    assert!(chat_share >= 0.903, "left alone {chat_share:.3} < 0.903");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_fifth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set5.yaml", 10, 200).await;
    // Written blind (see the file's header), its first score 81.6 % and 63.7 %. After the bare
    // commands, the questions about a topic and the English words of extraction choices:
    // 82.9 % (131/158) and 81.2 % (65/80); then slang and English examples, polite wrappers,
    // reports of the past, negated reminders: 86.7 % (137/158) and 86.2 % (69/80); then idioms,
    // English extraction words, scheduling verbs: 91.8 % (145/158) and 91.2 % (73/80); after
    // twice the examples 91.8 % and 90.0 % (72/80). The floors are the figures reached.
    // Then after twice the examples, then a second round: 93.0 % (147/158), 88.8 % (71/80).
    assert!(
        tool_share >= 0.974,
        "tool decisions {tool_share:.3} < 0.974"
    );
    assert!(chat_share >= 0.912, "left alone {chat_share:.3} < 0.912");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_sixth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set6.yaml", 10, 240).await;
    // Written blind (see the file's header), its first score 75.0 % and 88.0 % on the pack
    // after set 5's changes. After its own (wishes, office questions, negated events, «с
    // половиной» in numbers, letters to an address, comments under a post): 83.3 % (140/168)
    // and 91.2 % (83/91); one message equals an example. After twice the examples and reading
    // slips of typing: 88.1 % (148/168) and 90.1 % (82/91; an idiom that had been an example
    // is scored now). The floors are the figures reached.
    // Then after the second round: 89.3 % (150/168), 90.1 % (82/91).
    assert!(
        tool_share >= 0.970,
        "tool decisions {tool_share:.3} < 0.970"
    );
    assert!(chat_share >= 0.945, "left alone {chat_share:.3} < 0.945");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_seventh_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set7.yaml", 10, 390).await;
    // Written blind (see the file's header): 402 messages, 150 need no tool. Its first score,
    // on the pack before the session of 2026-12-04 (21:37) changed anything: 73.4 % and
    // 87.3 %. Then twice the examples, written by helpers who never saw this set, and reading
    // slips of typing: 83.3 % and 92.0 %; after its own argument families (a price per unit,
    // «полтора часа», «10 slides», …): 88.1 % (222/252) and 92.0 % (138/150). The floors are
    // the figures reached.
    // Then after the second round of examples, not shown to its writers: 90.1 % (227/252),
    // 94.0 % (141/150); after sets 11–14's changes (2026-12-05): 93.3 % (235/252), 96.7 %
    // (145/150), the floors below.
    assert!(
        tool_share >= 0.980,
        "tool decisions {tool_share:.3} < 0.980"
    );
    assert!(chat_share >= 0.980, "left alone {chat_share:.3} < 0.980");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_eighth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set8.yaml", 10, 300).await;
    // Written blind (see the file's header) as two halves, everyday phrasing and across
    // styles: 322 messages, 135 need no tool. Its first score, on the pack after set 7's
    // changes and the second round of examples (whose writers never saw it): 77.5 % and
    // 85.9 %; on the pack as the session of 2026-12-04 (21:37) found it, 64.7 % and 81.5 %.
    // After reading a long message sentence by sentence: the floors below.
    // Then after reading a long message sentence by sentence: 79.7 % (149/187), 85.2 % (115/135).
    // After set 9's changes (2026-12-05; the Google and question-form rules, budgets): 80.2 %
    // (150/187), 90.4 % (122/135); with English words read as Russian ones: 81.8 % (153/187),
    // 89.6 % (121/135) — three English messages right, two others moved by the retraining;
    // after sets 13 and 14's changes (2026-12-05): 84.0 % (157/187), 91.1 % (123/135); with
    // the English words of set 14 read as Russian ones, one «мне бы гугл таблицу …» lost to the
    // retraining: 83.4 % (156/187) and 92.6 % (125/135).
    assert!(
        tool_share >= 0.909,
        "tool decisions {tool_share:.3} < 0.909"
    );
    assert!(chat_share >= 0.977, "left alone {chat_share:.3} < 0.977");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_ninth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set9.yaml", 10, 370).await;
    // Written blind (see the file's header) as people chat: half follow-ups, corrections and
    // answers to the assistant's question (the assistant's message is in the request), half
    // needs, wishes, questions about a tool's topic and small talk: 375 messages, 157 need no
    // tool. Its first score, on the pack as the session of 2026-12-05 found it: 57.8 % and
    // 88.5 %. After reading a short follow-up with the message before it (previous_message),
    // number spans and budgets, a named Google without the integration and the question
    // forms: 71.1 % (155/218), 90.4 % (142/157); after follow-up openers, the longer bare
    // pronoun and English words read as Russian ones: 74.3 % (162/218), 92.4 % (145/157); with
    // prices below 100 read in thousands: 75.7 % (165/218), 92.4 %; after set 10's changes
    // (a request kept when a question follows it): 76.1 % (166/218), 92.4 %. The lists of
    // sets 19–22 (the classifier reads every list as a feature) cost it one correction, «нет
    // не то, мне другой файл нужен был» after «Открыл «Смета кухня.xlsx»», now a new document:
    // 82.5 % (180/218), 93.0 % (146/157).
    assert!(
        tool_share >= 0.844,
        "tool decisions {tool_share:.3} < 0.844"
    );
    assert!(chat_share >= 0.955, "left alone {chat_share:.3} < 0.955");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_tenth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set10.yaml", 10, 390).await;
    // Written blind (see the file's header) as people write at work and study (office, an
    // accountant, a teenager, a student, a designer, dictation, emoji, one to three words, long
    // back-stories, English words inside Russian, Latin letters): 393 messages, 178 need no
    // tool («чекни почту» equals an example and is not scored). Its first score, on the pack as
    // the session of 2026-12-05 (03:53) found it: 85.6 % (184/215) and 91.5 % (162/177). After
    // dash ranges and same-place number words, loanwords spelt in Cyrillic, the question
    // forms and wanted ads: 88.8 % (191/215), 94.9 % (168/177); with a request kept when a
    // question follows it: 89.3 % (192/215), 94.9 %; after set 13's changes: the floors below
    // (91.6 %, 197/215; 94.9 %).
    assert!(
        tool_share >= 0.976,
        "tool decisions {tool_share:.3} < 0.976"
    );
    assert!(chat_share >= 0.977, "left alone {chat_share:.3} < 0.977");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_eleventh_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set11.yaml", 10, 400).await;
    // Written blind (see the file's header) by other people again: non-native speakers (broken
    // grammar, the infinitive for a request), chat abbreviations, an SMM manager with English
    // words, a driver dictating run-on sentences with fillers, a formal elderly professor, a
    // parent typing with one hand, Latin letters: 406 messages, 148 need no tool. Its first
    // score, on the pack as the session of 2026-12-05 (07:10) found it (after the quote frame):
    // 86.4 % (223/258) and 92.6 % (137/148). After fillers, budgets before «максимум» and
    // slang numbers, leaving a skill by name, «скажите, отчего …» and «вы способны …?» as
    // questions, and «позвольте напомнить, что» as a figure of speech: 88.8 % (229/258) and
    // 95.3 % (141/148); with the generation verbs, the infinitive request, attachments and the
    // calendar named with «когда» (set 12's changes): 93.0 % (240/258) and 95.3 %.
    assert!(
        tool_share >= 0.972,
        "tool decisions {tool_share:.3} < 0.972"
    );
    assert!(chat_share >= 0.986, "left alone {chat_share:.3} < 0.986");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twelfth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set12.yaml", 10, 390).await;
    // Written blind (see the file's header) as people write at home and about their hobbies in
    // a small town, most of it everyday indirect asks (a need with no request verb, a noun
    // alone, the infinitive, a story with the ask last) with near misses in the same forms:
    // 394 messages, 158 need no tool. Its first score, on the pack after set 11's changes:
    // 83.5 % (197/236) and 90.5 % (143/158). After a photo or a recording attached leaning
    // away from no tool, a calendar named with «когда», a budget without a buying verb and
    // the generation verbs: 87.3 % (206/236) and 90.5 % (143/158); after set 13's changes
    // (spare parts, wanted ads without «объявление», chart shapes, a post's topic, «а то
    // забуду», complaints): 89.0 % (210/236) and 91.8 % (145/158).
    assert!(
        tool_share >= 0.961,
        "tool decisions {tool_share:.3} < 0.961"
    );
    assert!(chat_share >= 0.968, "left alone {chat_share:.3} < 0.968");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirteenth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set13.yaml", 10, 460).await;
    // Written blind (see the file's header) as two held-out halves: everyday phrasing, and
    // across writing styles (dictated, office, slang, Latin letters, English words), by people
    // in a big city: 467 messages, 197 need no tool. Its first score, on the pack after set
    // 12's changes: 87.0 % (235/270) and 89.8 % (177/197). After a post's topic read as
    // dictated words, chart shapes, «а то забуду», Google Meet named, an edit verb with a
    // file, complaints opening the health interview, spare parts and wanted ads, and
    // daydreams: the floors below.
    assert!(
        tool_share >= 0.966,
        "tool decisions {tool_share:.3} < 0.966"
    );
    assert!(chat_share >= 0.939, "left alone {chat_share:.3} < 0.939");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_fourteenth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set14.yaml", 10, 470).await;
    // Written blind (see the file's header) as the two halves again, 60 % everyday phrasing
    // with a near miss in the same form for each positive form, by people of a mid-size city:
    // 480 messages, 219 need no tool. Its first score, on the pack after set 13's changes:
    // 82.8 % (216/261) and 93.2 % (204/219). After questions ending in «можно?» with up to
    // seven words before it, «я правильно понимаю?», request verbs that cancel a question
    // frame in the polite plural, budgets written «тыщи до четырех», a reminder named by a
    // noun and a time, a file named with «поставь / внеси», a price to wait for, a picture
    // named by what it is, and wanted ads: the floors below.
    assert!(
        tool_share >= 0.965,
        "tool decisions {tool_share:.3} < 0.965"
    );
    assert!(chat_share >= 0.990, "left alone {chat_share:.3} < 0.990");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_fifteenth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set15.yaml", 10, 480).await;
    // Written blind (see the file's header) with writing styles in front (60 %: dictated,
    // office, slang, Latin letters with 4/w/6/x, English verbs with Russian endings, CAPS,
    // one to three words), by people at a large company: 494 messages, 223 need no tool. Its
    // first score, on the pack after set 14's changes: 88.6 % (240/271) and 93.3 % (208/223).
    // After the whole message kept for a transliterated message's arguments, a post's topic
    // after a comma, video and music named by a need, a story then «короче, …», «туда»
    // asking back, and opinions that a thing is outdated: the floors below.
    assert!(
        tool_share >= 0.981,
        "tool decisions {tool_share:.3} < 0.981"
    );
    assert!(chat_share >= 0.964, "left alone {chat_share:.3} < 0.964");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_sixteenth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set16.yaml", 10, 320).await;
    // Written blind (see the file's header) as a real product's traffic: 78 % of the messages
    // need a tool or a skill. Two thirds across writing styles (Latin letters, some with Czech
    // and Serbian letters, English words inside Russian, dictated, office, CAPS, slang), by
    // Russians abroad and remote workers: 329 messages, 73 need no tool. Its first score, on
    // the pack after set 15's changes: 86.7 % (222/256) and 93.2 % (68/73). After «gmail» in
    // an address no longer counting as Google named, «explain step by step» asking the tutor,
    // wind, storms, roads and more currencies searched, Latin letters with diacritics read,
    // Metrika's figures leaning to traffic, a delete verb with a post, and a write request
    // weighing more: the floors below.
    assert!(
        tool_share >= 0.984,
        "tool decisions {tool_share:.3} < 0.984"
    );
    assert!(chat_share >= 0.972, "left alone {chat_share:.3} < 0.972");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_seventeenth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set17.yaml", 10, 300).await;
    // Written blind as a real product's traffic too (79 % need a tool or a skill), 70 % in
    // everyday phrasing (typos with a wrong first letter and glued words, numbers in words, a
    // noun alone, the infinitive, a story, the polite plural), by people of a seaside resort
    // town: 313 messages, 65 need no tool. Its first score, on the pack after set 15's
    // changes: 83.1 % (206/248) and 92.3 % (60/65). After the same changes as set 16's, a
    // post's topic after «для кого,», a noun before «бы написать», a sell verb with a price,
    // and a wanted ad written «выставь, что мне нужен…»: the floors below.
    assert!(
        tool_share >= 0.967,
        "tool decisions {tool_share:.3} < 0.967"
    );
    assert!(chat_share >= 0.953, "left alone {chat_share:.3} < 0.953");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_eighteenth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set18.yaml", 10, 300).await;
    // Written blind as traffic (79 % need a tool or a skill), half everyday phrasing and half
    // across styles, by people of a Siberian industrial city in winter: 311 messages, 65 need
    // no tool. Scored blind twice: on the pack of the session's start, 81.7 % (201/246) and
    // 89.2 % (58/65); on the pack after sets 16 and 17 and the session's other changes, still
    // blind to this set, 83.7 % (206/246) and 90.8 % (59/65). After complaints said as
    // symptoms (a cough, a burn with a blister, numb fingers), a workout or a diet plan asked
    // for, calories of a dish, «растолкуй по порядку» and indirect questions «узнай, когда …»:
    // the floors below.
    assert!(
        tool_share >= 0.951,
        "tool decisions {tool_share:.3} < 0.951"
    );
    assert!(chat_share >= 1.000, "left alone {chat_share:.3} < 1.000");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_nineteenth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set19.yaml", 10, 280).await;
    // Written blind as traffic in everyday phrasing only (82 % need a tool or a skill), by
    // people around a truck depot and a roadside café near Kazan: 297 messages, 53 need no
    // tool. Its first score, blind, on the pack of the session's start: 87.3 % (213/244) and
    // 94.3 % (50/53). After its families (leaving phrases, other words for «напомни», a pass
    // or a road in winter, argument words): the floors below.
    assert!(
        tool_share >= 0.971,
        "tool decisions {tool_share:.3} < 0.971"
    );
    assert!(chat_share >= 0.962, "left alone {chat_share:.3} < 0.962");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twentieth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set20.yaml", 10, 260).await;
    // Written blind as traffic across writing styles only (78 % need a tool or a skill), by
    // people of a computer club in Akademgorodok: 273 messages, 60 need no tool. Its first
    // score, blind, on the pack of the session's start: 93.4 % (199/213) and 88.3 % (53/60).
    // After a mode switch with the assistant named, «одно и то же?», «уже никому не нужна»,
    // English edit verbs and the rest of its families: the floors below.
    assert!(
        tool_share >= 0.995,
        "tool decisions {tool_share:.3} < 0.995"
    );
    assert!(chat_share >= 0.966, "left alone {chat_share:.3} < 0.966");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_first_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set21.yaml", 10, 280).await;
    // Written blind in everyday phrasing (82 % need a tool or a skill), by people of a ski
    // resort in the Khibiny: 290 messages, 51 need no tool. Scored blind after sets 19 and 20
    // had been used: 84.9 % (203/239) and 96.1 % (49/51); on the pack of the session's start
    // 84.1 % (201/239). After its families: the floors below. Sets 25 and 26 cost it one
    // plain answer: «допиши сюда еще заезд на субботу» (no file open) is a doc_edit at 0.38
    // against 0.33, once under the margin and now over it.
    assert!(
        tool_share >= 0.941,
        "tool decisions {tool_share:.3} < 0.941"
    );
    assert!(chat_share >= 0.980, "left alone {chat_share:.3} < 0.980");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_second_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set22.yaml", 10, 250).await;
    // Written blind across writing styles (77 % need a tool or a skill; 50 in Latin letters,
    // some with Polish habits), by people of a start-up and a coworking in Kaliningrad: 268
    // messages, 61 need no tool. Scored blind after sets 19 and 20 had been used: 91.8 %
    // (190/207) and 93.4 % (57/61); on the pack of the session's start 91.3 % (189/207).
    // After «x» read as «х» and «sz/cz» as «ш/ч», and its families: the floors below.
    assert!(
        tool_share >= 0.961,
        "tool decisions {tool_share:.3} < 0.961"
    );
    assert!(chat_share >= 0.967, "left alone {chat_share:.3} < 0.967");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_third_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set23.yaml", 10, 270).await;
    // Written blind in everyday phrasing (83 % need a tool or a skill), by people around a
    // river port and a fish market in Astrakhan: 284 messages, 48 need no tool. Written last
    // and scored blind on the final pack: 88.6 % (209/236) and 81.2 % (39/48); on the pack of
    // the session's start 86.4 % (204/236) and 81.2 %. Then its questions «Скажите, а почему
    // …», «за что платят», a negated «не сочиняй», «бесполезная» and «перекупить»: the floors
    // below.
    assert!(
        tool_share >= 0.940,
        "tool decisions {tool_share:.3} < 0.940"
    );
    assert!(chat_share >= 0.937, "left alone {chat_share:.3} < 0.937");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_fourth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set24.yaml", 10, 250).await;
    // Written blind across writing styles (79 % need a tool or a skill; 42 in Latin letters, 37
    // with English words, 54 in office register), by people of a TV newsroom and a radio
    // station in Voronezh: 265 messages, 56 need no tool. Written last and scored blind on the
    // final pack: 85.6 % (179/209) and 91.1 % (51/56); on the pack of the session's start
    // 83.7 % (175/209) and 91.1 %. Then «Разъясните, …», «платная?» and «выставь от меня
    // карточку: куплю …»: the floors below.
    assert!(
        tool_share >= 0.947,
        "tool decisions {tool_share:.3} < 0.947"
    );
    assert!(chat_share >= 0.964, "left alone {chat_share:.3} < 0.964");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_fifth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set25.yaml", 10, 280).await;
    // Written blind in everyday phrasing (79 % need a tool or a skill), by people of
    // Kandalaksha on the White Sea: 296 messages, 62 need no tool. Scored blind on the pack
    // of the session's start: 84.6 % (198/234) and 93.5 % (58/62). Then numbers said in words
    // as a price of their own and «три пятьсот», durations «с одиннадцати до часу» and «минут
    // сорок», forecasts with words between, prices per litre, pay, «чтобы вы написали статью»,
    // a shape of chart with a verb of showing, a search of the feed: the floors below.
    assert!(
        tool_share >= 0.944,
        "tool decisions {tool_share:.3} < 0.944"
    );
    assert!(chat_share >= 0.951, "left alone {chat_share:.3} < 0.951");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_sixth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set26.yaml", 10, 260).await;
    // Written blind across writing styles (78 % need a tool or a skill; 44 in Latin letters,
    // 36 with English words, 58 in office register), by the staff of a mountain-tourism
    // company in Dombai: 280 messages, 63 need no tool. Scored blind on the pack of the
    // session's start: 87.6 % (190/217) and 87.3 % (55/63). Then complaints said backwards,
    // leaving a skill in office register, «— это что?» at the end, «не размещайте» and «что мы
    // купим»: the floors below.
    assert!(
        tool_share >= 0.949,
        "tool decisions {tool_share:.3} < 0.949"
    );
    assert!(chat_share >= 0.984, "left alone {chat_share:.3} < 0.984");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_seventh_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set27.yaml", 10, 280).await;
    // Written blind in everyday phrasing (77 % need a tool or a skill), by a family cheese
    // dairy in Tobolsk: 290 messages, 67 need no tool. Scored blind on the pack of the
    // session's start: 82.1 % (183/223) and 91.0 % (61/67). Then leaving a skill «как обычно»,
    // «— это кто …?», publishing a shown draft, opening hours, car parts, access with an
    // address, site figures in own words: the floors below.
    assert!(
        tool_share >= 0.937,
        "tool decisions {tool_share:.3} < 0.937"
    );
    assert!(chat_share >= 0.970, "left alone {chat_share:.3} < 0.970");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_eighth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set28.yaml", 10, 280).await;
    // Written blind across writing styles (79 % need a tool or a skill; 53 in Latin letters,
    // 61 in office register), by a driving school and a café in Ulan-Ude: 290 messages, 62
    // need no tool. Scored blind on the pack of the session's start: 89.5 % (204/228) and
    // 90.3 % (56/62). Then «подешевле» as a real word, words inside addresses, strains and
    // swellings, calories in office register, context rules read part by part: the floors
    // below.
    assert!(
        tool_share >= 0.973,
        "tool decisions {tool_share:.3} < 0.973"
    );
    assert!(chat_share >= 0.951, "left alone {chat_share:.3} < 0.951");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_twenty_ninth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set29.yaml", 10, 190).await;
    // Written blind in both kinds at once (half everyday, half writing styles; 79 % need a tool
    // or a skill), by a reindeer-herding family and a tourist camp near Salekhard: 200
    // messages, 42 need no tool. Written while the session's changes were made and scored
    // blind on the session's final pack: 93.0 % (147/158) and 88.1 % (37/42); on the pack of
    // the session's start 92.4 % (146/158) and 88.1 %. Only the Documents mode switch was
    // changed after it: the floors below.
    assert!(
        tool_share >= 0.943,
        "tool decisions {tool_share:.3} < 0.943"
    );
    assert!(chat_share >= 0.904, "left alone {chat_share:.3} < 0.904");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirtieth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set30.yaml", 10, 290).await;
    // Written blind in everyday phrasing by a family bakery in Sarapul: 300 messages, 100 need
    // no tool (the side the hidden sets miss most). Scored blind on the pack of the session's
    // start: 88.5 % (177/200) and 95.0 % (95/100); then used for development: the floors below.
    assert!(
        tool_share >= 0.970,
        "tool decisions {tool_share:.3} < 0.970"
    );
    assert!(chat_share >= 0.960, "left alone {chat_share:.3} < 0.960");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_first_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set31.yaml", 10, 290).await;
    // Written blind across writing styles (40 in Latin letters, two of them with «4» for «ч»)
    // by a dance studio in Izhevsk: 300 messages, 100 need no tool. Scored blind on the pack of
    // the session's start: 84.0 % (168/200) and 89.0 % (89/100); then used for development.
    assert!(
        tool_share >= 0.935,
        "tool decisions {tool_share:.3} < 0.935"
    );
    assert!(chat_share >= 0.960, "left alone {chat_share:.3} < 0.960");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_second_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set32.yaml", 10, 290).await;
    // Written blind in the everyday phrasing of older and hurried people (run-on sentences,
    // diminutives, wrong word forms) by a village in the Pskov region: 300 messages, 100 need
    // no tool. Scored blind on the pack after sets 30 and 31: 88.0 % (176/200) and 94.0 %
    // (94/100); on the pack of the session's start 88.5 % and 94.0 %. Then used: the floors.
    assert!(
        tool_share >= 0.930,
        "tool decisions {tool_share:.3} < 0.930"
    );
    assert!(chat_share >= 0.950, "left alone {chat_share:.3} < 0.950");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_third_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set33.yaml", 10, 290).await;
    // Written blind across writing styles (40 in Latin letters with «4», «6» and «q» for
    // letters, code-switching, CAPS, voice) by a fishing cooperative on Sakhalin: 300 messages,
    // 100 need no tool. Scored blind on the pack after sets 30 and 31: 85.0 % (170/200) and
    // 90.0 % (90/100); on the pack of the session's start 85.0 % and 91.0 %. Then used.
    assert!(
        tool_share >= 0.940,
        "tool decisions {tool_share:.3} < 0.940"
    );
    assert!(chat_share >= 0.970, "left alone {chat_share:.3} < 0.970");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_fourth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set34.yaml", 10, 290).await;
    // Written blind in everyday phrasing by a small veterinary clinic in Kostroma (vets, the
    // administrator, pet owners): 300 messages, 100 need no tool. Scored blind on the pack of
    // the session's start: 88.5 % (177/200) and 93.0 % (93/100); on the pack when it arrived the
    // same. Then used.
    assert!(
        tool_share >= 0.940,
        "tool decisions {tool_share:.3} < 0.940"
    );
    assert!(chat_share >= 0.960, "left alone {chat_share:.3} < 0.960");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_fifth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set35.yaml", 10, 290).await;
    // Written blind across writing styles (voice, office, slang, three habits of Latin letters,
    // English words, CAPS, emoji, typos) by a taxi and courier service in Makhachkala: 300
    // messages, 100 need no tool. Scored blind on the pack of the session's start: 88.0 %
    // (176/200) and 88.0 % (88/100); on the pack when it arrived 88.5 % and 88.0 %. Then used.
    assert!(
        tool_share >= 0.925,
        "tool decisions {tool_share:.3} < 0.925"
    );
    assert!(chat_share >= 0.950, "left alone {chat_share:.3} < 0.950");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_sixth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set36.yaml", 10, 290).await;
    // Written blind in everyday phrasing by a family guesthouse and sauna on Lake Seliger: 300
    // messages, 100 need no tool. Scored blind on the pack of the session's start: 85.0 %
    // (170/200) and 91.0 % (91/100); on the pack when it arrived, after sets 34 and 35 were used,
    // 86.0 % and 91.0 %. Then used.
    assert!(
        tool_share >= 0.925,
        "tool decisions {tool_share:.3} < 0.925"
    );
    assert!(chat_share >= 0.940, "left alone {chat_share:.3} < 0.940");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_seventh_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set37.yaml", 10, 290).await;
    // Written blind across writing styles (IT jargon, Latin letters, English words, office
    // register, voice, CAPS, typos) by an IT team and their relatives in Tomsk: 300 messages, 100
    // need no tool. Scored blind on the pack of the session's start: 88.5 % (177/200) and 92.0 %
    // (92/100); on the pack when it arrived, after sets 34 to 36 were used, 89.0 % and 92.0 %.
    // Then used.
    assert!(
        tool_share >= 0.920,
        "tool decisions {tool_share:.3} < 0.920"
    );
    assert!(chat_share >= 0.960, "left alone {chat_share:.3} < 0.960");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_eighth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set38.yaml", 10, 290).await;
    // Written blind in everyday phrasing (colloquial, typos, polite, question form, the
    // infinitive, numbers in words, long stories, noun-only asks) by the people around a family
    // bakery in Vologda: 300 messages, 100 need no tool. Scored blind on the pack of the
    // session's start (417d55d): 88.0 % (176/200) and 84.0 % (84/100); on the pack when it
    // arrived, 89.0 % and 84.0 %. Then used.
    assert!(
        tool_share >= 0.920,
        "tool decisions {tool_share:.3} < 0.920"
    );
    assert!(chat_share >= 0.920, "left alone {chat_share:.3} < 0.920");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_thirty_ninth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set39.yaml", 10, 290).await;
    // Written blind across writing styles (voice, office register, slang, Latin letters,
    // English words, typos, CAPS, emoji, long, short) by a farm cooperative near Tambov: 300
    // messages, 100 need no tool. Scored blind on the pack of the session's start (417d55d):
    // 88.5 % (177/200) and 91.0 % (91/100); on the pack when it arrived, the same. Then used.
    assert!(
        tool_share >= 0.910,
        "tool decisions {tool_share:.3} < 0.910"
    );
    assert!(chat_share >= 0.960, "left alone {chat_share:.3} < 0.960");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_fortieth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set40.yaml", 10, 290).await;
    // Written blind in everyday phrasing (plain, polite question form, numbers in words, typos,
    // colloquial, indirect asks, the infinitive, noun-only, long, short) by people around the
    // Volga at Gorodets and Bor (a tackle shop, a vet, a tug captain's family, a school-bus
    // driver, a cargo berth): 300 messages, 100 need no tool. Scored blind on the pack of the
    // session's start (2f05465): 88.5 % (177/200) and 87.0 % (87/100). Then used.
    assert!(
        tool_share >= 0.915,
        "tool decisions {tool_share:.3} < 0.915"
    );
    assert!(chat_share >= 0.950, "left alone {chat_share:.3} < 0.950");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_forty_first_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set41.yaml", 10, 290).await;
    // Written blind across writing styles (voice, office register, slang, Latin letters,
    // English words, CAPS, emoji, long, short, polite questions) by people of Norilsk (a
    // pharmacy chain, a ballet school, a hackathon team, a mine): 300 messages, 100 need no
    // tool. Scored blind on the pack of the session's start (2f05465): 90.5 % (181/200) and
    // 91.0 % (91/100). Then used.
    assert!(
        tool_share >= 0.959,
        "tool decisions {tool_share:.3} < 0.959"
    );
    assert!(chat_share >= 0.960, "left alone {chat_share:.3} < 0.960");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_forty_second_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set42.yaml", 10, 290).await;
    // Written blind in everyday phrasing by people of Kaliningrad and the Curonian Spit (an
    // amber workshop, a guest house, a football academy, a night nurse, a customs broker, a
    // grandmother and her grandson): 300 messages, 100 need no tool. Scored blind on the pack
    // of the session's start (2f05465): 94.0 % (188/200) and 89.0 % (89/100); on the pack when
    // it arrived (5d8918b), 93.5 % and 89.0 %. Then used.
    assert!(
        tool_share >= 0.950,
        "tool decisions {tool_share:.3} < 0.950"
    );
    assert!(chat_share >= 0.940, "left alone {chat_share:.3} < 0.940");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_forty_third_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set43.yaml", 10, 290).await;
    // Written blind across writing styles (voice, office, slang, Latin letters, English words,
    // CAPS, emoji, long, short, polite questions) by people of the Volga delta (a watermelon
    // farm, a fish plant, a birdwatching guide, a piano teacher, a taxi dispatcher, a remote
    // developer): 300 messages, 100 need no tool. Scored blind on the pack of the session's
    // start (2f05465): 93.0 % (186/200) and 87.0 % (87/100); on the pack when it arrived
    // (5d8918b), 93.0 % and 88.0 %. Then used.
    assert!(
        tool_share >= 0.945,
        "tool decisions {tool_share:.3} < 0.945"
    );
    assert!(chat_share >= 0.940, "left alone {chat_share:.3} < 0.940");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_forty_fourth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set44.yaml", 10, 290).await;
    // Written blind in everyday phrasing by people of Petrozavodsk and Lake Onega (a stone
    // carver, a kayak rental, a village librarian, a school psychologist, a snowmobile mechanic,
    // a young mother, a retired engine driver): 300 messages, 100 need no tool. Scored blind on
    // the pack of the session's start (2f05465): 83.5 % (167/200) and 90.0 % (90/100); on the
    // pack when it arrived (93e88af), 84.0 % and 91.0 %. Then used.
    assert!(
        tool_share >= 0.880,
        "tool decisions {tool_share:.3} < 0.880"
    );
    assert!(chat_share >= 0.910, "left alone {chat_share:.3} < 0.910");
}

#[tokio::test]
async fn the_embedded_router_decides_the_blind_forty_fifth_set() {
    let (tool_share, chat_share) = evaluate("tests/data/router_eval_set45.yaml", 10, 290).await;
    // Written blind across writing styles by people of Vladimir and Suzdal (a meadery, a tour
    // bus company, an icon restorer, a cycling club, a vet pharmacy, an esports student, a
    // retired history teacher): 300 messages, 100 need no tool. Scored blind on the pack of the
    // session's start (2f05465): 91.5 % (183/200) and 88.0 % (88/100); on the pack when it
    // arrived (93e88af), 92.0 % and 91.0 %. Then used.
    assert!(
        tool_share >= 0.920,
        "tool decisions {tool_share:.3} < 0.920"
    );
    assert!(chat_share >= 0.960, "left alone {chat_share:.3} < 0.960");
}

// ───────────────────────── the HTTP backends against a local server ─────────────────────────

use std::path::PathBuf;
use std::time::{Duration, Instant};

use turnout::contract::{Decision, Outcome};
use turnout::model::anthropic::AnthropicModel;
use turnout::model::key::ApiKey;
use turnout::model::openai::OpenAiModel;
use turnout::model::spec::{KeySource, ModelSpec, SpecError};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A small ruleset: a skill tool, two tools, one tool behind an integration; history 2,
/// temperature 0.2, 123 tokens, the given timeout and retries.
fn http_rules(timeout_ms: u64, retries: u32) -> RuleSet {
    let yaml = format!(
        r#"
tools:
  - id: switch_mode
    description: Switch a conversation mode on or off.
    chip: Switching
    arguments:
      type: object
      properties: {{mode: {{type: string, enum: [coach, none]}}}}
      required: [mode]
      additionalProperties: false
  - id: find_web
    description: Search the web.
    chip: Searching
    arguments:
      type: object
      properties: {{query: {{type: string}}}}
      required: [query]
      additionalProperties: false
  - id: make_note
    description: Write a note.
    chip: Writing
    arguments:
      type: object
      properties: {{text: {{type: string}}}}
      required: [text]
      additionalProperties: false
  - id: cloud_files
    description: Files on the cloud drive.
    chip: Looking
    available_when: {{integration: cloud}}
skills:
  - {{id: coach, description: A coaching mode., badge: Coach, auto: true}}
router:
  history: 2
  temperature: 0.2
  max_tokens: 123
  timeout_ms: {timeout_ms}
  max_calls: 2
  retries: {retries}
  skill_tool: switch_mode
  skill_argument: mode
  leave_skill_value: none
  instructions: [{{id: ask-back, description: d, text: "When in doubt, call no tool."}}]
  notes: [{{id: web-vs-note, description: d, text: "find_web searches; make_note writes."}}]
"#
    );
    let loaded = turnout::compile::load_texts(&[(PathBuf::from("rules.yaml"), yaml)]);
    loaded
        .ruleset
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics))
}

fn rich_request() -> Request {
    serde_json::from_value(json!({
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "Which city?"},
            {"role": "user", "content": "Paris weather, and note it"}
        ],
        "skill": "coach",
        "draft_shown": true,
        "ui": {"mode": "documents", "open_file": {"name": "Plan"}, "tab": "mail"}
    }))
    .expect("request")
}

fn hello() -> Request {
    serde_json::from_value(json!({"messages": [{"role": "user", "content": "hello"}]}))
        .expect("request")
}

const SYSTEM_PROMPT: &str =
    "You route one message of a chat assistant. Decide how the user's last \
message is handled: call the tools that must run for it, in the order they must run, or call no \
tool when a plain answer is right. Call at most 2 tools. Do not answer the message yourself.

## Instructions
- When in doubt, call no tool.

## Which tool
- find_web searches; make_note writes.

## Context (hints, not commands)
- Active skill: coach (A coaching mode.). To leave it, call switch_mode with mode: \"none\".
- A draft is shown on screen.
- Interface: mode \"documents\"; open file \"Plan\"; tab \"mail\".
";

fn schema(property: &str) -> Value {
    json!({
        "type": "object",
        "properties": {property: {"type": "string"}},
        "required": [property],
        "additionalProperties": false
    })
}

fn mode_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"mode": {"type": "string", "enum": ["coach", "none"]}},
        "required": ["mode"],
        "additionalProperties": false
    })
}

fn tools(d: &Decision) -> Vec<&str> {
    d.calls.iter().map(|c| &*c.tool).collect()
}

#[derive(Clone, Copy, Debug)]
enum Api {
    OpenAi,
    Anthropic,
}

impl Api {
    fn path(self) -> &'static str {
        match self {
            Api::OpenAi => "/v1/chat/completions",
            Api::Anthropic => "/v1/messages",
        }
    }

    fn model(self, base: &str) -> Box<dyn Model> {
        let key = Some(ApiKey::new("sk-test-secret"));
        match self {
            Api::OpenAi => Box::new(
                OpenAiModel::new("test-model", Some(&format!("{base}/v1")), key).expect("model"),
            ),
            Api::Anthropic => {
                Box::new(AnthropicModel::new("test-model", Some(base), key).expect("model"))
            }
        }
    }

    /// An answer calling these tools with these arguments (given as raw JSON text).
    fn answer(self, calls: &[(&str, &str)]) -> Value {
        match self {
            Api::OpenAi => json!({"choices": [{"message": {
                "role": "assistant",
                "content": null,
                "tool_calls": calls.iter().enumerate().map(|(i, (name, args))| json!({
                    "id": format!("call_{i}"),
                    "type": "function",
                    "function": {"name": name, "arguments": args}
                })).collect::<Vec<_>>()
            }}]}),
            Api::Anthropic => {
                let mut content = vec![json!({"type": "text", "text": "Routing."})];
                content.extend(calls.iter().enumerate().map(|(i, (name, args))| {
                    let input = serde_json::from_str::<Value>(args)
                        .unwrap_or_else(|_| Value::String((*args).to_owned()));
                    json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": input})
                }));
                json!({"type": "message", "role": "assistant", "content": content, "stop_reason": "tool_use"})
            }
        }
    }
}

async fn serve(api: Api, response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(api.path()))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

async fn body_sent(server: &MockServer) -> Value {
    let requests = server.received_requests().await.expect("recorded");
    assert_eq!(requests.len(), 1, "one request, no retry");
    serde_json::from_slice(&requests[0].body).expect("a JSON body")
}

#[tokio::test]
async fn openai_gets_the_exact_request_and_its_calls_come_back_in_order() {
    let rs = http_rules(5_000, 0);
    let answer = Api::OpenAi.answer(&[
        ("find_web", r#"{"query": "Paris weather"}"#),
        ("make_note", r#"{"text": "Paris weather"}"#),
    ]);
    let server = serve(
        Api::OpenAi,
        ResponseTemplate::new(200).set_body_json(answer),
    )
    .await;
    let model = Api::OpenAi.model(&server.uri());
    let d = decided(&rs, &rich_request(), model.as_ref()).await;
    assert_eq!(tools(&d), ["find_web", "make_note"]);
    assert_eq!(d.outcome, Outcome::Tool);
    let expected = json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "assistant", "content": "Which city?"},
            {"role": "user", "content": "Paris weather, and note it"}
        ],
        "tools": [
            {"type": "function", "function": {"name": "switch_mode", "description": "Switch a conversation mode on or off.", "parameters": mode_schema()}},
            {"type": "function", "function": {"name": "find_web", "description": "Search the web.", "parameters": schema("query")}},
            {"type": "function", "function": {"name": "make_note", "description": "Write a note.", "parameters": schema("text")}}
        ],
        "tool_choice": "auto",
        "temperature": 0.2,
        "max_tokens": 123
    });
    assert_eq!(body_sent(&server).await, expected);
    let requests = server.received_requests().await.expect("recorded");
    assert_eq!(
        requests[0]
            .headers
            .get("authorization")
            .map(|v| v.to_str().unwrap()),
        Some("Bearer sk-test-secret")
    );
}

#[tokio::test]
async fn anthropic_gets_the_exact_request_and_its_calls_come_back_in_order() {
    let rs = http_rules(5_000, 0);
    let answer = Api::Anthropic.answer(&[
        ("find_web", r#"{"query": "Paris weather"}"#),
        ("make_note", r#"{"text": "Paris weather"}"#),
    ]);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-test-secret"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    let model = Api::Anthropic.model(&server.uri());
    let d = decided(&rs, &rich_request(), model.as_ref()).await;
    assert_eq!(tools(&d), ["find_web", "make_note"]);
    // The assistant's question opens the history, which the Messages API does not allow: it
    // goes to the system prompt as context.
    let system = format!(
        "{SYSTEM_PROMPT}\n## Conversation before the messages below\n- Assistant: Which city?\n"
    );
    let expected = json!({
        "model": "test-model",
        "max_tokens": 123,
        "temperature": 0.2,
        "system": system,
        "messages": [{"role": "user", "content": "Paris weather, and note it"}],
        "tools": [
            {"name": "switch_mode", "description": "Switch a conversation mode on or off.", "input_schema": mode_schema()},
            {"name": "find_web", "description": "Search the web.", "input_schema": schema("query")},
            {"name": "make_note", "description": "Write a note.", "input_schema": schema("text")}
        ],
        "tool_choice": {"type": "auto"}
    });
    assert_eq!(body_sent(&server).await, expected);
}

#[tokio::test]
async fn only_the_tools_available_in_context_are_offered() {
    let rs = http_rules(5_000, 0);
    let server = serve(
        Api::OpenAi,
        ResponseTemplate::new(200).set_body_json(Api::OpenAi.answer(&[])),
    )
    .await;
    let model = Api::OpenAi.model(&server.uri());
    let req: Request = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": "my files"}],
        "integrations": ["cloud"]
    }))
    .expect("request");
    let d = decided(&rs, &req, model.as_ref()).await;
    assert_eq!(d.outcome, Outcome::Chat);
    let body = body_sent(&server).await;
    let offered: Vec<&str> = body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        ["switch_mode", "find_web", "make_note", "cloud_files"]
    );
    // Without the integration it is neither offered (above, three tools) nor accepted.
    let server = serve(
        Api::OpenAi,
        ResponseTemplate::new(200).set_body_json(Api::OpenAi.answer(&[("cloud_files", "{}")])),
    )
    .await;
    let model = Api::OpenAi.model(&server.uri());
    let d = decided(&rs, &hello(), model.as_ref()).await;
    assert_eq!(d.outcome, Outcome::Chat);
    assert_eq!(d.model_call.and_then(|c| c.error), Some("unavailable_tool"));
}

/// Asserts a plain chat answer whose trace and metrics name `kind`.
fn assert_chat_because(d: &Decision, kind: &str, what: &str) {
    assert_eq!(d.outcome, Outcome::Chat, "{what}: {d:?}");
    assert!(d.calls.is_empty(), "{what}");
    assert!(d.model_called, "{what}");
    assert!(
        d.trace
            .iter()
            .any(|s| s.effect.ends_with(&format!(": {kind}"))),
        "{what}: no '{kind}' in the trace {:?}",
        d.trace
    );
    assert_eq!(
        d.model_call.as_ref().and_then(|c| c.error),
        Some(kind),
        "{what}: the metrics' kind"
    );
}

#[tokio::test]
async fn every_failure_is_a_plain_chat_answer_with_its_kind() {
    let rs = http_rules(5_000, 0);
    for api in [Api::OpenAi, Api::Anthropic] {
        let cases: Vec<(&str, ResponseTemplate)> = vec![
            (
                "http_5xx",
                ResponseTemplate::new(500).set_body_string("oops"),
            ),
            ("http_5xx", ResponseTemplate::new(503)),
            (
                "http_4xx",
                ResponseTemplate::new(401).set_body_string("bad key"),
            ),
            ("http_4xx", ResponseTemplate::new(400)),
            ("rate_limited", ResponseTemplate::new(429)),
            (
                "invalid_json",
                ResponseTemplate::new(200).set_body_string("{\"choices\": [ nope"),
            ),
            (
                "garbage",
                ResponseTemplate::new(200).set_body_json(json!({"unexpected": true})),
            ),
            (
                "bad_arguments_json",
                ResponseTemplate::new(200)
                    .set_body_json(api.answer(&[("find_web", "{\"query\": \"Paris")])),
            ),
            (
                "unknown_tool",
                ResponseTemplate::new(200).set_body_json(api.answer(&[("fly_away", "{}")])),
            ),
            (
                "invalid_arguments",
                ResponseTemplate::new(200)
                    .set_body_json(api.answer(&[("find_web", r#"{"query": 42}"#)])),
            ),
            (
                "too_many_calls",
                ResponseTemplate::new(200).set_body_json(api.answer(&[
                    ("find_web", r#"{"query": "a"}"#),
                    ("find_web", r#"{"query": "b"}"#),
                    ("make_note", r#"{"text": "c"}"#),
                ])),
            ),
        ];
        for (kind, response) in cases {
            let server = serve(api, response).await;
            let model = api.model(&server.uri());
            let d = decided(&rs, &hello(), model.as_ref()).await;
            assert_chat_because(&d, kind, &format!("{api:?} {kind}"));
            let sent = server.received_requests().await.expect("recorded").len();
            assert_eq!(sent, 1, "{api:?} {kind}: no retry by default");
        }
        // Nothing listens on the port.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let model = api.model(&format!("http://127.0.0.1:{port}"));
        let d = decided(&rs, &hello(), model.as_ref()).await;
        assert_chat_because(&d, "connection", &format!("{api:?} connection refused"));
        assert!(
            d.trace.iter().any(|s| s.why.contains("connection refused")),
            "{:?}",
            d.trace
        );
    }
}

// The engine's clock, paused: time only moves when every task waits, so the cut-off is checked
// exactly, not within a margin of a shared machine's scheduling.
#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_times_out_on_time() {
    let timeout = Duration::from_millis(1_000);
    let rs = http_rules(timeout.as_millis() as u64, 1);
    // A socket that accepts connections and never says a word.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let holder = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    // And a server that answers a minute late.
    let late = serve(
        Api::Anthropic,
        ResponseTemplate::new(200)
            .set_body_json(Api::Anthropic.answer(&[]))
            .set_delay(Duration::from_secs(60)),
    )
    .await;
    for (api, base) in [
        (Api::OpenAi, format!("http://127.0.0.1:{port}")),
        (Api::Anthropic, late.uri()),
    ] {
        let model = api.model(&base);
        let started = tokio::time::Instant::now();
        let d = decided(&rs, &hello(), model.as_ref()).await;
        let waited = started.elapsed();
        assert_chat_because(&d, "timeout", &format!("{api:?}"));
        assert_eq!(waited, timeout, "{api:?}: cut off after {waited:?}");
    }
    holder.abort();
}

#[tokio::test]
async fn one_retry_on_429_or_5xx_when_the_rules_allow_it() {
    for (status, kind) in [(429, "rate_limited"), (502, "http_5xx")] {
        for retries in [0, 1] {
            let rs = http_rules(5_000, retries);
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(status))
                .up_to_n_times(1)
                .with_priority(1)
                .mount(&server)
                .await;
            Mock::given(method("POST"))
                .respond_with(
                    ResponseTemplate::new(200)
                        .set_body_json(Api::OpenAi.answer(&[("find_web", r#"{"query": "x"}"#)])),
                )
                .with_priority(2)
                .mount(&server)
                .await;
            let model = Api::OpenAi.model(&server.uri());
            let d = decided(&rs, &hello(), model.as_ref()).await;
            let sent = server.received_requests().await.expect("recorded").len();
            if retries == 0 {
                assert_chat_because(&d, kind, "no retry");
                assert_eq!(sent, 1);
            } else {
                assert_eq!(tools(&d), ["find_web"], "{status}: retried once");
                assert_eq!(sent, 2);
            }
        }
    }
    // A Retry-After longer than the time left is not waited for.
    let rs = http_rules(1_000, 1);
    let server = serve(
        Api::OpenAi,
        ResponseTemplate::new(429).insert_header("retry-after", "30"),
    )
    .await;
    let model = Api::OpenAi.model(&server.uri());
    let started = Instant::now();
    let d = decided(&rs, &hello(), model.as_ref()).await;
    assert_chat_because(&d, "rate_limited", "retry-after beyond the budget");
    assert!(started.elapsed() < Duration::from_millis(900));
    assert_eq!(server.received_requests().await.expect("recorded").len(), 1);
}

#[test]
fn keys_are_never_printed() {
    let model = OpenAiModel::new("m", None, Some(ApiKey::new("sk-very-secret"))).expect("model");
    let anthropic =
        AnthropicModel::new("m", None, Some(ApiKey::new("sk-very-secret"))).expect("model");
    for shown in [
        format!("{model:?}"),
        format!("{anthropic:?}"),
        format!("{:?}", ApiKey::new("sk-very-secret")),
    ] {
        assert!(!shown.contains("very-secret"), "{shown}");
    }
}

#[test]
fn model_specs_parse_and_print_back() {
    for (text, spec) in [
        ("none", ModelSpec::None),
        ("embedded", ModelSpec::Embedded),
        (
            "openai:gpt-4o-mini",
            ModelSpec::OpenAi {
                model: "gpt-4o-mini".into(),
                base_url: None,
            },
        ),
        (
            "openai:llama3.1:8b@http://127.0.0.1:11434/v1",
            ModelSpec::OpenAi {
                model: "llama3.1:8b".into(),
                base_url: Some("http://127.0.0.1:11434/v1".into()),
            },
        ),
        (
            "anthropic:claude-x@2025@https://proxy.example/anthropic",
            ModelSpec::Anthropic {
                model: "claude-x@2025".into(),
                base_url: Some("https://proxy.example/anthropic".into()),
            },
        ),
        (
            "script:answers.yaml",
            ModelSpec::Script("answers.yaml".into()),
        ),
    ] {
        assert_eq!(text.parse::<ModelSpec>(), Ok(spec.clone()), "{text}");
        assert_eq!(spec.to_string(), text);
    }
    for bad in ["gpt", "openai:", "openai:@http://x", "llama:7b", "script:"] {
        assert!(bad.parse::<ModelSpec>().is_err(), "{bad}");
    }
}

#[test]
fn keys_come_from_the_key_file_or_the_environment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("key");
    std::fs::write(&file, "sk-from-file\n").expect("write");
    let spec: ModelSpec = "openai:gpt-4o-mini".parse().expect("spec");
    let model = spec
        .build_with(&KeySource::File(file))
        .expect("built")
        .expect("a model");
    assert_eq!(model.name(), "openai:gpt-4o-mini");
    let missing = spec.build_with(&KeySource::File(dir.path().join("nope")));
    assert!(matches!(missing, Err(SpecError::KeyFile { .. })));
    if std::env::var_os("ANTHROPIC_API_KEY").is_none() {
        let err = "anthropic:claude-x"
            .parse::<ModelSpec>()
            .expect("spec")
            .build_with(&KeySource::Env)
            .err()
            .expect("no key");
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    }
    // A server of one's own needs no key.
    let local: ModelSpec = "openai:llama@http://127.0.0.1:9/v1".parse().expect("spec");
    assert!(local.build_with(&KeySource::Env).is_ok());
}

#[test]
fn a_bad_model_in_the_rules_is_refused_where_it_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["tools.yaml", "skills.yaml"] {
        std::fs::copy(root().join("rules").join(file), dir.path().join(file)).expect("copy");
    }
    let router = std::fs::read_to_string(root().join("rules/router.yaml")).expect("router");
    let router = router.replace("  model: embedded\n", "  model: gpt-4\n");
    std::fs::write(dir.path().join("router.yaml"), router).expect("write");
    let loaded = turnout::compile::load_dir(dir.path());
    assert!(loaded.ruleset.is_none());
    let d = crate::common::diagnostic(&loaded, "bad-model");
    assert!(d.to_string().contains("router.yaml:"), "{d}");
    assert!(d.message.contains("unknown model 'gpt-4'"), "{d}");
}

// ───────────────────────── the embedded router's behaviour ─────────────────────────

/// A small pack whose router learns from `examples` (English, to keep the test readable).
fn embedded_rules(weather_examples: &str) -> RuleSet {
    let yaml = format!(
        r#"
tools:
  - id: switch_mode
    description: Switch a conversation mode on or off.
    chip: Switching
    arguments:
      type: object
      properties: {{mode: {{type: string, enum: [coach, none]}}}}
      required: [mode]
      additionalProperties: false
    examples: [leave this mode, stop the coaching, back to normal chat, enough coaching]
  - id: find_web
    description: Search the web.
    chip: Searching
    arguments:
      type: object
      properties: {{query: {{type: string}}}}
      required: [query]
      additionalProperties: false
    examples: {weather_examples}
  - id: set_alarm
    description: Set an alarm.
    chip: Setting
    arguments:
      type: object
      properties: {{when: {{type: string, enum: [morning, evening]}}}}
      required: [when]
      additionalProperties: false
    examples: [wake me up tomorrow, set an alarm, alarm for the morning, ring the alarm at seven]
  - id: make_note
    description: Write a note.
    chip: Writing
    arguments:
      type: object
      properties: {{text: {{type: string}}}}
      required: [text]
      additionalProperties: false
    examples: [write a note, note this down, make a note about the meeting, jot this down]
skills:
  - id: coach
    description: A coaching mode.
    badge: Coach
    auto: true
    examples: [coach me to run faster, I want a training plan, help me train for a marathon, plan my workouts]
router:
  skill_tool: switch_mode
  skill_argument: mode
  leave_skill_value: none
  embedded:
    threshold: 0.3
    margin: 0.05
    chat_examples: [hello, thanks a lot, how are you, good night, you are funny, ok]
"#
    );
    let loaded = turnout::compile::load_texts(&[(PathBuf::from("rules.yaml"), yaml)]);
    loaded
        .ruleset
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics))
}

const WEATHER: &str = "[weather in paris tomorrow, what is the weather today, will it rain in london, weather forecast for the weekend]";

fn say(text: &str) -> Request {
    serde_json::from_value(json!({"messages": [{"role": "user", "content": text}]})).expect("req")
}

#[tokio::test]
async fn the_embedded_router_calls_the_tool_its_examples_point_to_and_fills_free_text() {
    let rs = embedded_rules(WEATHER);
    let model = EmbeddedModel::new();
    let d = decided(&rs, &say("weather in berlin this weekend?"), &model).await;
    assert_eq!(tools(&d), ["find_web"]);
    assert_eq!(
        d.calls[0].arguments,
        json!({"query": "weather in berlin this weekend?"})
    );
    // Chit-chat: no tool.
    let d = turnout::engine::decide(
        &rs,
        &say("hello, how are you?"),
        turnout::engine::Options::model(Some(&model)),
    )
    .await
    .expect("decided");
    assert_eq!(d.outcome, Outcome::Chat);
    assert!(d.model_called);
    // A skill is switched on through the skill tool, and left only while it is active.
    let d = decided(&rs, &say("plan my training for a marathon"), &model).await;
    assert_eq!(d.skill.as_deref(), Some("coach"));
    let mut leave = say("enough coaching, back to normal");
    leave.skill = Some("coach".into());
    let d = decided(&rs, &leave, &model).await;
    assert_eq!(d.skill, None);
    assert!(
        d.trace.iter().any(|s| s.effect == "left skill coach"),
        "{:?}",
        d.trace
    );
}

#[tokio::test]
async fn an_argument_the_embedded_router_cannot_fill_is_left_to_validation() {
    let rs = embedded_rules(WEATHER);
    let d = decided(&rs, &say("set an alarm"), &EmbeddedModel::new()).await;
    assert_eq!(d.outcome, Outcome::Chat);
    assert!(
        d.trace
            .iter()
            .any(|s| s.effect.contains("proposed set_alarm")),
        "{:?}",
        d.trace
    );
    assert_eq!(
        d.model_call.and_then(|c| c.error),
        Some("invalid_arguments")
    );
}

#[tokio::test]
async fn two_classes_too_close_mean_no_tool() {
    // find_web and make_note learn from the same sentences: the router cannot tell them apart.
    let rs = embedded_rules(
        "[write a note, note this down, make a note about the meeting, jot this down]",
    );
    let model = EmbeddedModel::new();
    let d = decided(&rs, &say("note this down please"), &model).await;
    assert_eq!(d.outcome, Outcome::Chat, "{:?}", d.trace);
    assert!(
        d.trace.iter().any(|s| s.effect == "no call"),
        "{:?}",
        d.trace
    );
}

#[tokio::test]
async fn the_embedded_router_is_deterministic_and_retrains_when_the_rules_change() {
    let rs = embedded_rules(WEATHER);
    let message = "is it going to rain tomorrow";
    let mut seen = Vec::new();
    for _ in 0..2 {
        let model = EmbeddedModel::new();
        let d = decided(&rs, &say(message), &model).await;
        seen.push(serde_json::to_value(&d).expect("json"));
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0]["calls"][0]["tool"], "find_web");
    // One model, rules reloaded: the same message now goes where the new examples say.
    let model = EmbeddedModel::new();
    let before = decided(&rs, &say(message), &model).await;
    // The rules change: the search tool's examples no longer speak of rain.
    let rs2 = embedded_rules("[what is the stock price, latest football scores, news today]");
    assert_ne!(rs.version, rs2.version);
    let after = decided(&rs2, &say(message), &model).await;
    assert_eq!(tools(&before), ["find_web"]);
    assert_ne!(tools(&after), ["find_web"], "{:?}", after.trace);
}

// ───────────────────────── the command line ─────────────────────────

fn turnout_cmd(args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_turnout"))
        .args(args)
        .current_dir(root())
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("turnout starts");
    // A command refused before it reads stdin (no API key: exit 2) may already have closed
    // the pipe: the write then fails with a broken pipe, which is not the test's business.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("turnout finishes")
}

#[test]
fn route_uses_the_embedded_router_by_default_with_no_network() {
    let out = turnout_cmd(
        &["route", "--jsonl"],
        concat!(
            r#"{"messages":[{"role":"user","content":"подбери мне наушники до 5000"}]}"#,
            "\n",
            r#"{"messages":[{"role":"user","content":"привет!"}]}"#,
            "\n"
        ),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(
        lines[0]["calls"][0]["tool"], "product_search",
        "{}",
        lines[0]
    );
    assert_eq!(lines[1]["outcome"], "chat");
    for d in &lines {
        assert_eq!(d["model_called"], true);
        assert!(d.to_string().contains("model 'embedded'"), "{d}");
    }
}

#[test]
fn route_with_an_unreachable_model_answers_in_plain_chat() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let spec = format!("openai:some-model@http://127.0.0.1:{port}/v1");
    let out = turnout_cmd(
        &["route", "--model", &spec],
        r#"{"messages":[{"role":"user","content":"подбери мне наушники до 5000"}]}"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(d["outcome"], "chat");
    assert!(d.to_string().contains("model error: connection"), "{d}");
    // A hosted API without a key is refused before any request.
    let out = turnout_cmd(&["route", "--model", "anthropic:claude-x"], "{}");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ANTHROPIC_API_KEY"));
    let out = turnout_cmd(&["route", "--model", "gpt-4"], "{}");
    assert_eq!(out.status.code(), Some(2));
}

/// A server that answers 200 and then streams `x` without end (with or without announcing a
/// length), counting what it managed to send.
async fn endless_server(announce: bool) -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let sent = std::sync::Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let head = if announce {
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 104857600\r\n\r\n"
                } else {
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
                };
                if s.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 64 * 1024];
                loop {
                    let ok = if announce {
                        s.write_all(&chunk).await
                    } else {
                        let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
                        framed.extend_from_slice(&chunk);
                        framed.extend_from_slice(b"\r\n");
                        s.write_all(&framed).await
                    };
                    if ok.is_err() {
                        return;
                    }
                    counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
            });
        }
    });
    (base, sent)
}

#[tokio::test]
async fn a_huge_answer_is_cut_off_not_read_whole() {
    // Before: a 100 MB answer was read whole (eight at once reached 670 MB).
    let rs = http_rules(10_000, 0);
    for announce in [true, false] {
        let (base, sent) = endless_server(announce).await;
        let model = OpenAiModel::new("m", Some(&format!("{base}/v1")), None)
            .expect("model")
            .with_max_answer_bytes(256 * 1024);
        let started = std::time::Instant::now();
        let d = decided(&rs, &hello(), &model).await;
        assert_chat_because(&d, "answer_too_large", "an endless answer");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Reading stopped near the limit, not at the end of the stream.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let sent = sent.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            sent < 16 << 20,
            "{sent} bytes were sent before the client hung up"
        );
    }
}

#[test]
fn openai_itself_gets_max_completion_tokens_and_compatible_servers_max_tokens() {
    // OpenAI's current API refuses `max_tokens` for its reasoning models; servers that speak its
    // protocol at a base URL (vLLM, llama.cpp, Ollama) know `max_tokens`, some only that.
    let rs = http_rules(5_000, 0);
    let req = hello();
    let input = RouterInput::new(&rs, &req.messages);
    let key = Some(ApiKey::new("sk-test"));
    let hosted = OpenAiModel::new("gpt-test", None, key.clone()).expect("model");
    let body = hosted.body(&input);
    assert_eq!(body["max_completion_tokens"], 123);
    assert!(body.get("max_tokens").is_none(), "{body}");
    let local = OpenAiModel::new("llama", Some("http://127.0.0.1:9/v1"), key).expect("model");
    let body = local.body(&input);
    assert_eq!(body["max_tokens"], 123);
    assert!(body.get("max_completion_tokens").is_none(), "{body}");
}

/// The class the classifier alone picks for `text` (chat when not sure enough).
fn pick(classifier: &Classifier, rs: &RuleSet, chat: usize, text: &str) -> usize {
    let all = vec![true; classifier.classes()];
    let normalized = rs.normalizer.normalize(text);
    let Some(top) = classifier.top(&normalized, &all, &[]) else {
        return chat;
    };
    let e = &rs.router().embedded;
    let p2 = top.runner_up.map_or(0.0, |r| r.1);
    if top.best.1 < e.threshold || top.best.1 - p2 < e.margin {
        chat
    } else {
        top.best.0
    }
}

#[test]
#[ignore = "a measurement: cargo test --test it models::stability -- --ignored --nocapture"]
fn stability_and_cross_validation_of_the_embedded_router() {
    let rs = pack();
    let (names, examples) = labelled(&rs);
    let chat = (names.iter().position(|t| *t == Target::Chat)).expect("chat examples");
    let (tools, chats) = cross_validate(
        &rs,
        5,
        Training::default(),
        rs.router().embedded.threshold,
        rs.router().embedded.margin,
    );
    println!(
        "5-fold cross-validation on the examples: tools {:.1}%, chat {:.1}%",
        tools * 100.0,
        chats * 100.0
    );
    let texts: Vec<String> = eval_cases()
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect();
    let all: Vec<(usize, &str)> = examples.iter().map(|(c, t)| (*c, t.as_str())).collect();
    let full = Classifier::train(names.len(), &all, &rs.normalizer);
    let base: Vec<usize> = texts.iter().map(|t| pick(&full, &rs, chat, t)).collect();
    let step = std::env::var("TURNOUT_FLIP_STEP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let (mut flips, mut runs) = (0usize, 0usize);
    for left_out in (0..all.len()).step_by(step) {
        let mut fewer = all.clone();
        fewer.remove(left_out);
        let c = Classifier::train(names.len(), &fewer, &rs.normalizer);
        flips += texts
            .iter()
            .zip(&base)
            .filter(|(t, b)| pick(&c, &rs, chat, t) != **b)
            .count();
        runs += 1;
    }
    println!(
        "leave-one-out flip rate: {:.2}% of {} held-back decisions changed per example left out ({runs} examples left out, one in {step})",
        flips as f64 / (runs * texts.len()) as f64 * 100.0,
        texts.len()
    );
}
