//! `turnout serve` as an operator runs it: the real binary on an ephemeral loopback port, a
//! real HTTP client, rule files edited on disk while it serves.

use crate::common::eventually_async;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A small rule set: a pre-rule sends messages with "ping" to tool `ACTION` (so a decision
/// shows which version made it), and a search rule fires on "price".
fn rules(action: &str) -> String {
    format!(
        r#"
tools:
  - id: switch
    description: skills
    chip: switching
    arguments: {{type: object, properties: {{skill: {{enum: [coach, none]}}}}}}
  - {{id: search, description: web search, chip: searching}}
  - {{id: alpha, description: first, chip: alpha}}
  - {{id: beta, description: second, chip: beta}}
skills:
  - {{id: coach, description: coaching, badge: Coach, auto: true}}
word_lists:
  - {{id: pings, description: test trigger, words: [ping]}}
  - {{id: prices, description: prices, words: [price]}}
pre_rules:
  - id: ping-rule
    description: routes pings
    when: {{mentions: pings}}
    then: {{calls: [{{tool: {action}}}]}}
router: {{skill_tool: switch, skill_argument: skill, leave_skill_value: none}}
search:
  tool: search
  rules: [{{id: price-rule, description: prices, when: {{mentions: prices}}}}]
"#
    )
}

struct Server {
    child: Child,
    base: String,
    client: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_turnout"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--model",
            "none",
            "--rules",
        ])
        .arg(dir)
        .args(extra)
        .env_remove("TURNOUT_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("turnout starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("first line");
    let base = line
        .trim()
        .strip_prefix("turnout listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    // reqwest is built with rustls and no default crypto provider (for the model backends);
    // these plain-HTTP tests still need one installed before building a client.
    let _ = rustls::crypto::ring::default_provider().install_default();
    Server {
        child,
        base,
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client"),
    }
}

impl Server {
    async fn get(&self, path: &str) -> (u16, String) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("get");
        (r.status().as_u16(), r.text().await.expect("body"))
    }

    async fn post(&self, path: &str, body: &str) -> (u16, Value) {
        let r = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .expect("post");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn route(&self, text: &str) -> Value {
        let body = json!({"messages": [{"role": "user", "content": text}]}).to_string();
        let (status, d) = self.post("/v1/route", &body).await;
        assert_eq!(status, 200, "{d}");
        d
    }

    async fn version(&self) -> String {
        let (_, body) = self.get("/v1/rules").await;
        let v: Value = serde_json::from_str(&body).expect("json");
        v["version"].as_str().unwrap_or_default().to_owned()
    }

    /// Polls until `ping` is routed to `tool`; returns how long it took.
    async fn wait_for_tool(&self, tool: &str, limit: Duration) -> Duration {
        let started = Instant::now();
        let body = json!({"messages": [{"role": "user", "content": "ping"}]}).to_string();
        loop {
            let (_, d) = self.post("/v1/route", &body).await;
            if d["calls"][0]["tool"] == tool {
                return started.elapsed();
            }
            assert!(started.elapsed() < limit, "still {d} after {limit:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

fn rules_dir(action: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("rules.yaml");
    std::fs::write(&file, rules(action)).expect("write");
    (dir, file)
}

#[tokio::test]
async fn every_endpoint_answers() {
    let (dir, _) = rules_dir("alpha");
    let s = start(dir.path(), &[]);
    assert_eq!(s.get("/healthz").await.0, 200);
    let (status, ready) = s.get("/readyz").await;
    assert_eq!(status, 200);
    let d = s.route("ping, what is the price").await;
    assert_eq!(d["outcome"], "tool");
    assert_eq!(d["calls"][0]["tool"], "alpha");
    assert_eq!(d["web_search"], true);
    assert!(ready.contains(d["rules_version"].as_str().expect("version")));

    let (status, body) = s.get("/v1/rules").await;
    assert_eq!(status, 200);
    let info: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(info["version"], d["rules_version"]);
    assert_eq!(info["files"].as_array().map(Vec::len), Some(1));
    assert_eq!(info["last_reload"]["ok"], true);
    assert!(info["loaded_at_unix"].as_f64().is_some());

    let (status, metrics) = s.get("/metrics").await;
    assert_eq!(status, 200);
    // What the encoder writes (OpenMetrics, ending in `# EOF`), and says so.
    assert!(metrics.trim_end().ends_with("# EOF"), "{metrics}");
    let content_type = s
        .client
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .expect("metrics")
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    assert_eq!(
        content_type.as_deref(),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    for needle in [
        r#"turnout_decisions_total{outcome="tool"} 1"#,
        r#"turnout_rule_fired_total{rule="ping-rule"} 1"#,
        r#"turnout_rule_fired_total{rule="price-rule"} 1"#,
        "turnout_decision_latency_seconds_count 1",
        "turnout_last_reload_successful 1",
        "turnout_model_calls_total 0",
        &format!(
            r#"turnout_ruleset_info{{version="{}"}} 1"#,
            info["version"].as_str().unwrap_or("")
        ),
    ] {
        assert!(metrics.contains(needle), "{needle} not in\n{metrics}");
    }
    let (status, report) = s.post("/v1/rules/reload", "").await;
    assert_eq!(
        (status, report["ok"].clone(), report["changed"].clone()),
        (200, json!(true), json!(false))
    );
}

#[tokio::test]
async fn one_request_thread_is_enough_and_zero_is_refused() {
    let (dir, _) = rules_dir("alpha");
    let s = start(dir.path(), &["--workers", "1"]);
    assert_eq!(
        s.route("ping, what is the price").await["calls"][0]["tool"],
        "alpha"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_turnout"))
        .args(["serve", "--workers", "0", "--rules"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--workers"));
}

#[tokio::test]
async fn client_mistakes_get_a_4xx_naming_the_field() {
    let (dir, _) = rules_dir("alpha");
    let s = start(
        dir.path(),
        &["--body-limit", "2000", "--max-message-chars", "50"],
    );
    let long = "x".repeat(60);
    let cases = [
        ("{", 400, "body"),
        (r#"{"messages": "hi"}"#, 400, "messages"),
        (r#"{"skill": "coach"}"#, 400, "messages"),
        (r#"{"messages": []}"#, 400, "messages"),
        (
            r#"{"messages": [{"role": "user", "content": "  "}]}"#,
            400,
            "messages",
        ),
        (
            r#"{"messages": [{"role": "user", "content": "hi"}], "generation_mode": "smell"}"#,
            400,
            "generation_mode",
        ),
        (
            r#"{"messages": [{"role": "usr", "content": "hi"}]}"#,
            400,
            "messages[0].role",
        ),
    ];
    for (body, status, field) in cases {
        let (got, err) = s.post("/v1/route", body).await;
        assert_eq!(got, status, "{body}: {err}");
        assert_eq!(err["error"]["field"], field, "{body}: {err}");
        assert!(
            err["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    let too_long = json!({"messages": [{"role": "user", "content": long}]}).to_string();
    let (got, err) = s.post("/v1/route", &too_long).await;
    assert_eq!(
        (got, err["error"]["code"].as_str()),
        (400, Some("message_too_long"))
    );
    let huge = json!({"messages": [{"role": "user", "content": "y".repeat(5000)}]}).to_string();
    let (got, err) = s.post("/v1/route", &huge).await;
    assert_eq!(
        (got, err["error"]["code"].as_str()),
        (413, Some("body_too_large"))
    );
    let (metrics_status, metrics) = s.get("/metrics").await;
    assert_eq!(metrics_status, 200);
    // Every refusal above counts, the oversized body too.
    assert!(
        metrics.contains("turnout_bad_requests_total 9"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_token_guards_the_api_but_not_the_probes() {
    let (dir, _) = rules_dir("alpha");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret\n").expect("token");
    let s = start(
        dir.path(),
        &["--token-file", token_file.to_str().expect("utf-8")],
    );
    assert_eq!(s.get("/healthz").await.0, 200);
    assert_eq!(s.get("/readyz").await.0, 200);
    assert_eq!(s.get("/v1/rules").await.0, 401);
    assert_eq!(s.get("/metrics").await.0, 401);
    let body = json!({"messages": [{"role": "user", "content": "ping"}]}).to_string();
    for (auth, status) in [
        ("Bearer wrong", 401),
        ("Bearer s3cret", 200),
        ("s3cret", 401),
    ] {
        let r = s
            .client
            .post(format!("{}/v1/route", s.base))
            .header("authorization", auth)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("post");
        assert_eq!(r.status().as_u16(), status, "{auth}");
    }
    let (_, rules) = {
        let r = s
            .client
            .get(format!("{}/v1/rules", s.base))
            .header("authorization", "Bearer s3cret")
            .send()
            .await
            .expect("get");
        (r.status(), r.text().await.expect("text"))
    };
    assert!(!rules.contains("s3cret"), "the token is echoed: {rules}");
}

#[test]
fn a_public_address_without_a_token_is_refused() {
    let (dir, _) = rules_dir("alpha");
    let out = Command::new(env!("CARGO_BIN_EXE_turnout"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--model",
            "none",
            "--rules",
        ])
        .arg(dir.path())
        .env_remove("TURNOUT_TOKEN")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-unauthenticated"));
}

#[tokio::test]
async fn a_saved_edit_applies_within_a_second() {
    let (dir, file) = rules_dir("alpha");
    let s = start(dir.path(), &[]);
    s.wait_for_tool("alpha", Duration::from_secs(5)).await;
    let mut took = Vec::new();
    for (i, tool) in ["beta", "alpha", "beta", "alpha", "beta"]
        .into_iter()
        .enumerate()
    {
        std::fs::write(&file, rules(tool)).expect("write");
        let t = s.wait_for_tool(tool, Duration::from_secs(5)).await;
        assert!(t < Duration::from_secs(1), "edit {i} took {t:?}");
        took.push(t);
    }
    took.sort();
    eprintln!("edit-to-decision median: {:?}", took[took.len() / 2]);
}

#[tokio::test]
async fn an_invalid_edit_keeps_the_old_rules_serving_and_says_why() {
    let (dir, file) = rules_dir("alpha");
    let s = start(dir.path(), &[]);
    let good = s.version().await;
    std::fs::write(&file, rules("alpha").replace("tool: alpha", "tool: alphaa")).expect("write");
    let started = Instant::now();
    let info = loop {
        let (_, body) = s.get("/v1/rules").await;
        let info: Value = serde_json::from_str(&body).expect("json");
        if info["last_reload"]["ok"] == false {
            break info;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no failed reload seen"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(info["version"], good.as_str());
    let diagnostics = info["last_reload"]["diagnostics"].to_string();
    assert!(
        diagnostics.contains("unknown-tool") && diagnostics.contains("alphaa"),
        "{diagnostics}"
    );
    let d = s.route("ping").await;
    assert_eq!(
        (d["calls"][0]["tool"].as_str(), d["rules_version"].as_str()),
        (Some("alpha"), Some(good.as_str()))
    );
    // The metrics are updated right after the status; allow them a moment.
    let started = Instant::now();
    let metrics = loop {
        let (_, metrics) = s.get("/metrics").await;
        if metrics.contains("turnout_last_reload_successful 0")
            || started.elapsed() > Duration::from_secs(2)
        {
            break metrics;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(
        metrics.contains("turnout_last_reload_successful 0"),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"turnout_reloads_total{result="failure"}"#),
        "{metrics}"
    );
    assert_eq!(
        s.get("/readyz").await.0,
        200,
        "still ready on the old rules"
    );

    std::fs::write(&file, rules("beta")).expect("fix");
    s.wait_for_tool("beta", Duration::from_secs(5)).await;
}

#[tokio::test]
async fn rename_saves_symlink_swaps_and_deletions_are_picked_up() {
    let (dir, file) = rules_dir("alpha");
    let s = start(dir.path(), &[]);
    s.wait_for_tool("alpha", Duration::from_secs(5)).await;

    // An editor's save: write a temp file, rename it over the original.
    let tmp = dir.path().join(".rules.yaml.tmp");
    std::fs::write(&tmp, rules("beta")).expect("tmp");
    std::fs::rename(&tmp, &file).expect("rename");
    s.wait_for_tool("beta", Duration::from_secs(2)).await;

    // Deleting the file leaves no valid rules (no router): the old ones keep serving...
    std::fs::remove_file(&file).expect("remove");
    let s = &s;
    eventually_async(
        "the deletion refused",
        Duration::from_secs(5),
        || async move {
            let (_, metrics) = s.get("/metrics").await;
            metrics
                .contains(r#"turnout_reloads_total{result="failure"} 1"#)
                .then_some(())
        },
    )
    .await;
    assert_eq!(s.route("ping").await["calls"][0]["tool"], "beta");
    // ...and putting it back is picked up.
    std::fs::write(&file, rules("alpha")).expect("restore");
    s.wait_for_tool("alpha", Duration::from_secs(2)).await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_configmap_data_swap_is_picked_up() {
    use std::os::unix::fs::symlink;
    // Kubernetes: rules.yaml -> ..data/rules.yaml, ..data -> ..2026_v1; an update writes a new
    // timestamped directory and swaps ..data by renaming a new symlink over it.
    let dir = tempfile::tempdir().expect("tempdir");
    let v1 = dir.path().join("..2026_v1");
    std::fs::create_dir(&v1).expect("v1");
    std::fs::write(v1.join("rules.yaml"), rules("alpha")).expect("write");
    symlink("..2026_v1", dir.path().join("..data")).expect("data link");
    symlink("..data/rules.yaml", dir.path().join("rules.yaml")).expect("file link");
    let s = start(dir.path(), &[]);
    s.wait_for_tool("alpha", Duration::from_secs(5)).await;

    let v2 = dir.path().join("..2026_v2");
    std::fs::create_dir(&v2).expect("v2");
    std::fs::write(v2.join("rules.yaml"), rules("beta")).expect("write");
    symlink("..2026_v2", dir.path().join("..data_tmp")).expect("tmp link");
    std::fs::rename(dir.path().join("..data_tmp"), dir.path().join("..data")).expect("swap");
    std::fs::remove_dir_all(&v1).expect("old data");
    s.wait_for_tool("beta", Duration::from_secs(2)).await;
}

#[cfg(unix)]
#[tokio::test]
async fn sighup_and_the_reload_endpoint_reload() {
    let (dir, file) = rules_dir("alpha");
    let s = start(dir.path(), &[]);
    let v1 = s.version().await;
    // The watcher would also see this; the endpoint answers with the swap it made (or saw).
    std::fs::write(&file, rules("beta")).expect("write");
    let (status, report) = s.post("/v1/rules/reload", "").await;
    assert_eq!(status, 200, "{report}");
    assert_ne!(report["version"].as_str(), Some(v1.as_str()));
    assert_eq!(s.route("ping").await["calls"][0]["tool"], "beta");

    std::fs::write(&file, rules("alpha")).expect("write");
    let pid = s.child.id().to_string();
    let killed = Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    s.wait_for_tool("alpha", Duration::from_secs(2)).await;
}

#[cfg(unix)]
#[test]
fn sigterm_stops_the_service_cleanly() {
    let (dir, _) = rules_dir("alpha");
    let mut s = start(dir.path(), &[]);
    let pid = s.child.id().to_string();
    Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = s.child.try_wait().expect("wait") {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "still running");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
}

#[test]
fn invalid_rules_at_start_mean_not_ready() {
    let (dir, file) = rules_dir("alpha");
    std::fs::write(&file, "router: [").expect("write");
    let s = start(dir.path(), &[]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(async {
        assert_eq!(s.get("/healthz").await.0, 200);
        assert_eq!(s.get("/readyz").await.0, 503);
        let body = json!({"messages": [{"role": "user", "content": "ping"}]}).to_string();
        assert_eq!(s.post("/v1/route", &body).await.0, 503);
        std::fs::write(&file, rules("alpha")).expect("fix");
        s.wait_for_tool("alpha", Duration::from_secs(3)).await;
        assert_eq!(s.get("/readyz").await.0, 200);
    });
}

/// The load test: 1,000 reloads while four clients keep routing. No request may fail, and
/// every decision must be entirely one version's (its tool matches its `rules_version`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_reloads_under_load_fail_no_request_and_mix_no_versions() {
    let (dir, file) = rules_dir("alpha");
    let s = std::sync::Arc::new(start(dir.path(), &[]));
    let alpha = s.version().await;
    std::fs::write(&file, rules("beta")).expect("write");
    let (_, report) = s.post("/v1/rules/reload", "").await;
    let beta = report["version"].as_str().expect("version").to_owned();
    assert_ne!(alpha, beta);
    let expected = std::collections::HashMap::from([(alpha, "alpha"), (beta, "beta")]);

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut clients = Vec::new();
    for _ in 0..4 {
        let (s, stop, expected) = (s.clone(), stop.clone(), expected.clone());
        clients.push(tokio::spawn(async move {
            let body = json!({"messages": [{"role": "user", "content": "ping"}]}).to_string();
            let mut latencies = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let started = Instant::now();
                let (status, d) = s.post("/v1/route", &body).await;
                latencies.push(started.elapsed());
                assert_eq!(status, 200, "{d}");
                let version = d["rules_version"].as_str().unwrap_or_default();
                let tool = d["calls"][0]["tool"].as_str().unwrap_or_default();
                assert_eq!(
                    expected.get(version).copied(),
                    Some(tool),
                    "mixed decision: {d}"
                );
            }
            latencies
        }));
    }
    let started = Instant::now();
    for i in 0..1000 {
        let tool = if i % 2 == 0 { "alpha" } else { "beta" };
        std::fs::write(&file, rules(tool)).expect("write");
        let (status, report) = s.post("/v1/rules/reload", "").await;
        assert_eq!(
            (status, report["ok"].as_bool()),
            (200, Some(true)),
            "{report}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "reloads too slow"
        );
    }
    let reloading = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut all = Vec::new();
    for c in clients {
        all.extend(c.await.expect("client ran without failures"));
    }
    all.sort();
    let p99 = all[all.len() * 99 / 100];
    eprintln!(
        "1000 reloads in {reloading:?}; {} requests, {:.0} req/s, p99 {p99:?}, 0 failed",
        all.len(),
        all.len() as f64 / reloading.as_secs_f64()
    );
    assert!(all.len() > 1000, "requests did flow during the reloads");
}
