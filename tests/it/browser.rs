//! The playground page in a real headless browser (Debian's `chromium` and `chromium-driver`,
//! driven over WebDriver with fantoccini), as a product manager uses it: on the Russian page,
//! type messages and read their traces (no English prose, every match highlighted); save a rule
//! file and see the version and the decision change without reloading the page; save a broken
//! one and see the failing line with its caret; fix it and see the fix confirmed.
//!
//! `.ci/run` installs the browser. Where none is installed the test fails under CI (`CI` set),
//! and elsewhere says loudly that it skipped. Every wait polls; none sleeps a fixed time.
use crate::common::free_port;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use super::common::{Kill, Served, cannot_run, eventually_async, find, tool_or_skip};

/// How long a page step may take: every valid save retrains the embedded router for the live
/// rules and for the shadow's, which in a debug build of the test takes seconds (2.5 s for the
/// shipped pack's 3,000 examples on one core, more while other tests run). Each wait is a
/// poll that returns as soon as the page shows what it waits for.
const SLOW_PAGE: Duration = Duration::from_secs(30);

fn copy_rules(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    for f in turnout::source::rule_files(&from).expect("rules") {
        std::fs::copy(&f, to.join(f.file_name().expect("name"))).expect("copy");
    }
}

/// An edit: a pre-rule that sends messages about phones to the shop.
const PHONES: &str = "word_lists:\n  - {id: phones, description: test, words: [айфон]}\npre_rules:\n  - id: phones-to-shop\n    description: a test edit\n    when: {mentions: phones}\n    then: {calls: [{tool: product_search, arguments: {query: \"{message}\"}}]}\n";

/// English words the trace's prose is made of (`effect`, `why`) and the page must not show in
/// Russian. Ids (rules, tools, word lists) are not among them.
const ENGLISH: &[&str] = &[
    "matched",
    "applies",
    "condition",
    "proposed",
    "offered",
    "settled",
    "dropped",
    "runner-up",
    "best",
    "called",
    "holds",
    "attached",
    "shown",
    "the",
    "web search",
    "asked",
    "chose",
    "filled",
    "whole message",
];

fn english_in(text: &str) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    ENGLISH
        .iter()
        .copied()
        .filter(|w| {
            lower.match_indices(w).any(|(i, _)| {
                let before = lower[..i].chars().next_back();
                let after = lower[i + w.len()..].chars().next();
                let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_');
                edge(before) && edge(after)
            })
        })
        .collect()
}

async fn js(client: &Client, script: &str) -> Value {
    client.execute(script, vec![]).await.unwrap_or(Value::Null)
}

/// The text the element `id` shows (read in one step: the page redraws as it polls).
async fn text_of(client: &Client, id: &str) -> Option<String> {
    let script =
        format!("const e = document.getElementById({id:?}); return e ? e.innerText : null;");
    js(client, &script)
        .await
        .as_str()
        .map(|t| t.trim().to_owned())
}

/// The text of the element `id` when it is shown (not `hidden`).
async fn shown(client: &Client, id: &str) -> Option<String> {
    let script = format!(
        "const e = document.getElementById({id:?}); return e && !e.hidden ? e.innerText : null;"
    );
    js(client, &script)
        .await
        .as_str()
        .map(|t| t.trim().to_owned())
}

/// Types `message` into the page (replacing what was there) and waits for its decision: the
/// trace the service gives for it, as the page shows it.
async fn type_message(client: &Client, served: &Served, message: &str) -> Value {
    let (status, answer) = served.json(
        "POST",
        "/v1/try",
        &json!({"request": {"messages": [{"role": "user", "content": message}]}}),
    );
    assert_eq!(status, 200, "{answer}");
    let expected = answer["decision"]["trace"].clone();
    let field = client.find(Locator::Id("message")).await.expect("#message");
    field.clear().await.expect("clear");
    field.send_keys(message).await.expect("type");
    let steps = expected.as_array().map_or(0, Vec::len);
    eventually_async(&format!("the trace of «{message}»"), SLOW_PAGE, || async {
        let highlighted = text_of(client, "highlighted").await?;
        let rows = js(
            client,
            "return document.querySelectorAll('#trace tr[data-step]').length",
        )
        .await;
        (highlighted == message && rows.as_u64() == Some(steps as u64)).then_some(())
    })
    .await;
    expected
}

/// On the Russian page: no English prose in the visible trace, and every step that matched
/// something has a highlighted span in the message naming its rule.
async fn check_trace(client: &Client, message: &str, trace: &Value) {
    let visible = text_of(client, "trace").await.unwrap_or_default();
    assert!(!visible.is_empty(), "«{message}»: no trace shown");
    for step in trace.as_array().into_iter().flatten() {
        for prose in [&step["effect"], &step["why"]] {
            let prose = prose.as_str().unwrap_or_default();
            assert!(
                prose.len() < 4 || !visible.contains(prose),
                "«{message}»: English prose {prose:?} on the Russian page:\n{visible}"
            );
        }
    }
    let words = english_in(&visible);
    assert!(
        words.is_empty(),
        "«{message}»: English words {words:?} in the Russian trace:\n{visible}"
    );
    let marks = js(
        client,
        "return [...document.querySelectorAll('#highlighted mark')].map(m => ({steps: m.dataset.steps.split(' '), rules: m.dataset.rules.split(' '), text: m.textContent}))",
    )
    .await;
    let marks = marks.as_array().cloned().unwrap_or_default();
    let mut matched = 0;
    for (i, step) in trace.as_array().into_iter().flatten().enumerate() {
        let Some(matches) = step["matches"].as_array().filter(|m| !m.is_empty()) else {
            continue;
        };
        matched += 1;
        let rule = step["rule"]
            .as_str()
            .or(step["subject"].as_str())
            .unwrap_or_default();
        let hit = marks.iter().find(|m| {
            m["steps"]
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x.as_str() == Some(&i.to_string())))
        });
        let hit = hit.unwrap_or_else(|| {
            panic!("«{message}»: no highlighted span for step {i} ({rule}, {matches:?}); marks {marks:?}")
        });
        assert!(
            hit["rules"]
                .as_array()
                .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(rule))),
            "«{message}»: the span of step {i} does not name {rule}: {hit}"
        );
        let text: String = matches[0]["text"].as_str().unwrap_or_default().into();
        assert!(
            message.contains(text.trim()),
            "«{message}»: the match {text:?} is not the user's text"
        );
    }
    assert!(
        matched > 0,
        "«{message}»: no step matched anything: {trace}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_speaks_russian_highlights_every_match_and_shows_broken_and_fixed_saves() {
    let install = "apt-get install chromium chromium-driver; `.ci/run` does";
    let Some(driver) = tool_or_skip("chromedriver", "the browser test", install) else {
        return;
    };
    if !["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .any(|b| find(b).is_some())
    {
        cannot_run(
            "the browser test",
            &format!("no chromium on PATH ({install})"),
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    copy_rules(dir.path());
    // Shadow rules: the shipped pack and a pre-rule that sends phones to the shop.
    let shadow = tempfile::tempdir().expect("tempdir");
    copy_rules(shadow.path());
    std::fs::write(shadow.path().join("zz_shadow.yaml"), PHONES).expect("shadow edit");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/corpus/requests.jsonl");
    // The shipped pack with its own router (embedded): context rules, frames, and search the
    // model asks for, as a product manager sees them; the shipped corpus and the shadow rules
    // for the panels.
    let served = Served::start(
        dir.path(),
        &[
            "--model",
            "embedded",
            "--corpus",
            corpus.to_str().expect("utf-8"),
            "--shadow",
            shadow.path().to_str().expect("utf-8"),
        ],
    );
    let base = served.base();
    let port = free_port();
    let _driver = Kill(
        Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver"),
    );
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1800", "--lang=en-US"]}),
    );
    let webdriver = format!("http://127.0.0.1:{port}");
    let client = eventually_async("chromedriver", Duration::from_secs(20), || {
        let caps = caps.clone();
        let webdriver = webdriver.clone();
        async move {
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps)
                .connect(&webdriver)
                .await
                .ok()
        }
    })
    .await;
    client.goto(&base).await.expect("the page loads");

    // The page is Russian by default, whatever the browser's language; the version shows.
    let lang = js(&client, "return document.documentElement.lang").await;
    assert_eq!(lang, "ru");
    let rules = turnout::compile::load_dir(dir.path())
        .ruleset
        .expect("rules");
    let first = rules.version.to_string();
    eventually_async("the version", SLOW_PAGE, || async {
        text_of(&client, "version").await.filter(|v| *v == first)
    })
    .await;

    // Three messages: the search phrase the model also asked for, a guard's veto, a question
    // frame and a search rule. Each trace in Russian, each match highlighted. The veto needs a
    // message the router is sure is a purchase: «где купить робот-пылесос» (0.85); «где купить
    // увлажнитель воздуха» fell under the threshold with the word pairs, so no guard ran.
    for message in [
        "сколько стоит айфон 15",
        "где купить робот-пылесос",
        "а что такое инфляция",
    ] {
        let trace = type_message(&client, &served, message).await;
        check_trace(&client, message, &trace).await;
        if message.starts_with("сколько") {
            // The context rules are folded behind one toggle, and unfold on a click.
            let hidden = js(&client, "return [...document.querySelectorAll(\"#trace tr[data-kind='context_rule']\")].every(r => r.hidden)").await;
            assert_eq!(hidden, true, "context rules are folded by default");
            // Clicked by script: every new decision redraws the rows, the toggle with them.
            let toggle = js(&client, "const b = document.getElementById('fold-toggle'); if (!b) return null; const t = b.textContent; b.click(); return t;").await;
            assert!(
                toggle
                    .as_str()
                    .is_some_and(|t| t.contains("показать ещё 3")),
                "the toggle: {toggle}"
            );
            eventually_async("the context rules unfolded", Duration::from_secs(5), || async {
                let shown = js(&client, "return [...document.querySelectorAll(\"#trace tr[data-kind='context_rule']\")].some(r => !r.hidden)").await;
                (shown == true).then_some(())
            })
            .await;
            let visible = text_of(&client, "trace").await.unwrap_or_default();
            let words = english_in(&visible);
            assert!(words.is_empty(), "unfolded: {words:?} in {visible}");
            js(&client, "document.getElementById('fold-toggle').click()").await;
            eventually_async("the context rules folded again", Duration::from_secs(5), || async {
                let hidden = js(&client, "return [...document.querySelectorAll(\"#trace tr[data-kind='context_rule']\")].every(r => r.hidden)").await;
                (hidden == true).then_some(())
            })
            .await;
        }
    }

    // The shadow panel shows the request the shadow rules decided differently, both ways; a
    // click loads its whole request and the router's recorded answer.
    eventually_async(
        "the shadow's difference",
        Duration::from_secs(20),
        || async {
            let panel = text_of(&client, "shadow").await?;
            (panel.contains("сколько стоит айфон 15") && panel.contains("phones-to-shop"))
                .then_some(())
        },
    )
    .await;
    type_message(&client, &served, "где купить робот-пылесос").await;
    // Found and clicked in one step: the panels are redrawn as they are polled.
    let click = |css: &'static str, text: &'static str| {
        let client = client.clone();
        async move {
            let script = format!(
                "const b = [...document.querySelectorAll({css:?})].find(b => b.textContent.includes({text:?})); if (!b) return null; b.click(); return b.textContent;"
            );
            js(&client, &script).await.as_str().map(str::to_owned)
        }
    };
    eventually_async("a click on the shadow's example", SLOW_PAGE, || {
        click("#shadow .grp button.ex", "сколько стоит айфон 15")
    })
    .await;
    eventually_async("the shadow example loaded", SLOW_PAGE, || async {
        let form = js(&client, "return [document.getElementById('message').value, document.querySelector('input[name=\"model-mode\"]:checked').value, document.getElementById('script-tool-1').value]").await;
        (form == json!(["сколько стоит айфон 15", "scripted", "web_search"])).then_some(())
    })
    .await;

    // The disagreements panel (the shipped corpus, as `replay --disagreements` reports it):
    // a click loads the example's request.
    let said = eventually_async("the disagreements", Duration::from_secs(60), || {
        click("#disagreements .grp button.ex", "")
    })
    .await;
    let said = said.trim_matches(|c| c == '“' || c == '”').to_owned();
    eventually_async("the disagreement example loaded", SLOW_PAGE, || async {
        let value = js(&client, "return document.getElementById('message').value").await;
        (value.as_str() == Some(said.as_str())).then_some(())
    })
    .await;
    // A fresh page for what follows (the example filled the whole form). The screenshot of
    // the docs (docs/playground.png is a copy of target/playground.png): the shipped pack,
    // the message, the panels filled.
    client.goto(&base).await.expect("the page loads again");
    type_message(&client, &served, "сколько стоит айфон 15").await;
    if let Ok(png) = client.screenshot().await {
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/playground.png");
        let _ = std::fs::write(out, png);
    }

    // Save an edit: a pre-rule that sends this message to a tool. The page shows the new
    // version and the new decision without being reloaded.
    std::fs::write(dir.path().join("zz_playground.yaml"), PHONES).expect("save");
    let second = eventually_async("a new version", SLOW_PAGE, || async {
        text_of(&client, "version")
            .await
            .filter(|v| !v.is_empty() && *v != first)
    })
    .await;
    let trace = type_message(&client, &served, "сколько стоит айфон 15").await;
    eventually_async("the new decision", SLOW_PAGE, || async {
        let outcome = js(
            &client,
            "return document.getElementById('outcome').dataset.outcome",
        )
        .await;
        (outcome == "tool").then_some(())
    })
    .await;
    check_trace(&client, "сколько стоит айфон 15", &trace).await;

    // Save a broken file: the banner shows where, the source line and its caret, in Russian;
    // the last good version keeps serving.
    std::fs::write(dir.path().join("broken.yaml"), "guards: [\n").expect("save");
    let banner = eventually_async("the broken save's banner", SLOW_PAGE, || async {
        shown(&client, "reload-error")
            .await
            .filter(|t| t.contains("broken.yaml:1:10"))
    })
    .await;
    assert!(
        banner.contains("1 | guards: ["),
        "the source line: {banner}"
    );
    assert!(banner.contains('^'), "the caret: {banner}");
    assert!(banner.contains("YAML записан с ошибкой"), "{banner}");
    let words = english_in(&banner);
    assert!(
        words.is_empty(),
        "English words {words:?} in the banner: {banner}"
    );
    assert!(
        !banner.contains("skipped-checks") && !banner.contains("did you mean"),
        "{banner}"
    );
    assert_eq!(
        text_of(&client, "version").await.as_deref(),
        Some(second.as_str())
    );

    // Fix it: the banner goes, and a confirmation says the rules apply.
    std::fs::write(
        dir.path().join("broken.yaml"),
        "word_lists:\n  - {id: fixed_words, description: test, words: [проверка]}\n",
    )
    .expect("save");
    let confirmed = eventually_async("the fix confirmed", SLOW_PAGE, || async {
        shown(&client, "reload-ok").await
    })
    .await;
    assert!(
        confirmed.contains("исправлено — правила применены"),
        "{confirmed}"
    );
    assert!(
        shown(&client, "reload-error").await.is_none(),
        "the banner is gone"
    );
    eventually_async("a version after the fix", SLOW_PAGE, || async {
        text_of(&client, "version")
            .await
            .filter(|v| !v.is_empty() && *v != second)
    })
    .await;

    // The same trace in English, from the same typed fields.
    js(&client, "document.getElementById('lang').click()").await;
    eventually_async("the English page", Duration::from_secs(5), || async {
        let trace = text_of(&client, "trace").await?;
        let lang = js(&client, "return document.documentElement.lang").await;
        (lang == "en" && trace.contains("settled: call product_search")).then_some(())
    })
    .await;
    let _ = client.close().await;
}
