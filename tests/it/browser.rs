//! The playground page in a real headless browser (Debian's `chromium` and `chromium-driver`,
//! driven over WebDriver with fantoccini), as a product manager uses it: type a message and see
//! the trace; save a rule file and see the version and the decision change without reloading
//! the page; save a broken one and see its diagnostic. `.ci/run` installs the browser; where
//! none can be installed the test says so loudly and does nothing else.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{ClientBuilder, Locator};

use super::common::{Kill, Served};

fn find(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn copy_rules(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    for f in turnout::compile::rule_files(&from).expect("rules") {
        std::fs::copy(&f, to.join(f.file_name().expect("name"))).expect("copy");
    }
}

/// Polls `check` every 50 ms until it gives a value or `limit` passes.
async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            started.elapsed() < limit,
            "{what}: not seen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_shows_decisions_live_edits_and_broken_edits() {
    let (Some(driver), Some(_browser)) = (
        find(&["chromedriver"]),
        find(&["chromium", "chromium-browser", "google-chrome"]),
    ) else {
        eprintln!(
            "\n*** SKIPPED the browser test: no chromium/chromedriver on PATH. \
             `.ci/run` installs them (apt-get install chromium chromium-driver). ***\n"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    copy_rules(dir.path());
    let served = Served::start(dir.path(), &["--model", "none"]);
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
        serde_json::json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"]}),
    );
    let webdriver = format!("http://127.0.0.1:{port}");
    let client = eventually("chromedriver", Duration::from_secs(20), || {
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

    // The serving version shows.
    let rules = turnout::compile::load_dir(dir.path())
        .ruleset
        .expect("rules");
    let first = rules.version.to_string();
    let text_of = |id: &'static str| {
        let client = client.clone();
        async move { client.find(Locator::Id(id)).await.ok()?.text().await.ok() }
    };
    eventually("the version", Duration::from_secs(5), || async {
        text_of("version").await.filter(|v| *v == first)
    })
    .await;

    // Type a message: the decision and its trace, the search rule highlighted.
    let message = client.find(Locator::Id("message")).await.expect("#message");
    message
        .send_keys("сколько стоит айфон 15")
        .await
        .expect("type");
    eventually(
        "the search rule in the trace",
        Duration::from_secs(5),
        || async {
            client
                .find(Locator::Css("#trace tr[data-rule='search-patterns']"))
                .await
                .ok()
        },
    )
    .await;
    let outcome = text_of("outcome").await.unwrap_or_default();
    assert!(outcome.contains("chat"), "{outcome}");
    let marks = client
        .find_all(Locator::Css("#highlighted mark"))
        .await
        .expect("marks");
    assert!(!marks.is_empty(), "the matched words are highlighted");

    // Save an edit: a pre-rule that sends this message to a tool. The page shows the new
    // version and the new decision without being reloaded.
    std::fs::write(
        dir.path().join("zz_playground.yaml"),
        "word_lists:\n  - {id: phones, description: test, words: [айфон]}\npre_rules:\n  - id: phones-to-shop\n    description: a test edit\n    when: {mentions: phones}\n    then: {calls: [{tool: product_search, arguments: {query: \"{message}\"}}]}\n",
    )
    .expect("save");
    let second = eventually("a new version", Duration::from_secs(5), || async {
        text_of("version")
            .await
            .filter(|v| !v.is_empty() && *v != first)
    })
    .await;
    eventually("the new decision", Duration::from_secs(5), || async {
        text_of("outcome").await.filter(|o| o.contains("tool"))
    })
    .await;
    if let Ok(png) = client.screenshot().await {
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/playground.png");
        let _ = std::fs::write(out, png);
    }

    // Save a broken file: its diagnostic shows, the last good version keeps serving.
    std::fs::write(dir.path().join("broken.yaml"), "guards: [\n").expect("save");
    let shown = eventually("the diagnostic", Duration::from_secs(5), || async {
        let panel = client.find(Locator::Id("reload-error")).await.ok()?;
        if panel.attr("hidden").await.ok()?.is_some() {
            return None;
        }
        panel
            .text()
            .await
            .ok()
            .filter(|t| t.contains("yaml-syntax"))
    })
    .await;
    assert!(shown.contains("broken.yaml:"), "{shown}");
    assert_eq!(text_of("version").await.as_deref(), Some(second.as_str()));
    let _ = client.close().await;
}
