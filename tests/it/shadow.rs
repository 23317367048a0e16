//! `serve --shadow DIR`: candidate rules decide every live request on the side, with the router
//! answer the live decision got, and never change an answer; what they would change is what an
//! offline `turnout replay` of the same requests against the same two directories says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::common::{bin, corpus_requests, http};
use super::unattended::{Server, start};

fn shipped_rules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")
}

/// A copy of the shipped rules whose search phrases (the `search-patterns` rule) never match.
fn rules_without_search_phrases() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in turnout::source::rule_files(&shipped_rules()).expect("rules") {
        std::fs::copy(&f, dir.path().join(f.file_name().expect("name"))).expect("copy");
    }
    let search = dir.path().join("search.yaml");
    let text = std::fs::read_to_string(&search).expect("search");
    let edited = text.replacen(
        "      when:\n        any:\n          - mentions: search_patterns\n",
        "      when:\n        any:\n          - longer_than: 1000000\n",
        1,
    );
    assert_ne!(edited, text, "the search phrases were not found");
    std::fs::write(&search, edited).expect("write");
    dir
}

fn get_json(server: &Server, path: &str) -> Value {
    let (status, text) = server.get(path);
    assert_eq!(status, 200, "{path}: {text}");
    serde_json::from_str(&text).expect("JSON")
}

/// Waits until the decision log holds `n` whole lines; fails after 30 s.
fn wait_for_log_lines(log: &std::path::Path, n: usize) {
    let started = Instant::now();
    loop {
        let lines = std::fs::read_to_string(log)
            .map(|t| t.matches('\n').count())
            .unwrap_or(0);
        if lines >= n {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the decision log has {lines} of {n} lines"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `/v1/shadow` once the shadow has decided (or dropped) `n` requests; fails after 30 s.
fn wait_for_shadow(server: &Server, n: u64) -> Value {
    let started = Instant::now();
    loop {
        let v = get_json(server, "/v1/shadow");
        let c = &v["decisions"];
        let done: u64 = ["same", "different", "dropped", "unavailable"]
            .iter()
            .map(|k| c[k].as_u64().unwrap_or(0))
            .sum();
        if done >= n {
            return v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the shadow decided {done} of {n}: {v}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_shadows_differences_are_what_an_offline_replay_of_the_same_requests_says() {
    let shadow_dir = rules_without_search_phrases();
    let logs = tempfile::tempdir().expect("tempdir");
    let log = logs.path().join("decisions.jsonl");
    let live = shipped_rules();
    let server = start(
        &live,
        &[
            "--shadow",
            shadow_dir.path().to_str().expect("utf-8"),
            "--shadow-keep",
            "10000",
            "--decision-log",
            log.to_str().expect("utf-8"),
        ],
    );
    let requests: Vec<String> = corpus_requests().into_iter().step_by(3).collect();
    let mut answered = BTreeMap::new();
    for (i, body) in requests.iter().enumerate() {
        let id = format!("r{i}");
        let (status, text) = http(
            &server.addr,
            "POST",
            "/v1/route",
            &[("content-type", "application/json"), ("x-request-id", &id)],
            body.as_bytes(),
        );
        assert_eq!(status, 200, "{text}");
        answered.insert(id, serde_json::from_str::<Value>(&text).expect("JSON"));
    }
    let shadow = wait_for_shadow(&server, requests.len() as u64);
    let counts = &shadow["decisions"];
    assert_eq!(counts["dropped"], 0, "{counts}");
    assert_eq!(counts["unavailable"], 0, "{counts}");

    // Never an answer of the shadow's: every answer is the live rules'.
    let status = get_json(&server, "/v1/rules");
    let live_version = status["version"].as_str().expect("live version");
    let shadow_version = status["shadow"]["version"]
        .as_str()
        .expect("shadow version");
    assert_ne!(live_version, shadow_version);
    assert_eq!(status["shadow"]["last_reload"]["ok"], true, "{status}");
    assert!(
        answered
            .values()
            .all(|d| d["rules_version"] == live_version)
    );

    // The same requests replayed offline: the log against the same two directories, once its
    // writer (a thread of its own, which flushes when the queue is quiet) has written them all.
    wait_for_log_lines(&log, requests.len());
    let out = Command::new(bin())
        .args(["replay", log.to_str().expect("utf-8"), "--rules"])
        .arg(shadow_dir.path())
        .arg("--against")
        .arg(&live)
        .args(["--format", "json"])
        .output()
        .expect("turnout replay runs");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!("not JSON: {}", String::from_utf8_lossy(&out.stderr));
    });
    let ids: Vec<String> = std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("line")["id"].to_string())
        .collect();
    let offline: BTreeMap<String, (String, String)> = report["diff"]["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            let line = c["line"].as_u64().expect("line") as usize;
            let id = ids[line - 1].trim_matches('"').to_owned();
            (id, (c["from"].to_string(), c["to"].to_string()))
        })
        .collect();
    let differences = shadow["differences"].as_array().expect("differences");
    let shadowed: BTreeMap<String, (String, String)> = differences
        .iter()
        .map(|d| {
            assert_eq!(d["live"]["rules_version"], live_version, "{d}");
            assert_eq!(d["shadow"]["rules_version"], shadow_version, "{d}");
            assert_eq!(answered[d["id"].as_str().expect("id")], d["live"], "{d}");
            (
                d["id"].as_str().expect("id").to_owned(),
                (d["live_label"].to_string(), d["shadow_label"].to_string()),
            )
        })
        .collect();
    assert!(
        !offline.is_empty(),
        "taking the search phrases out changed nothing: {report}"
    );
    assert_eq!(shadowed, offline);
    assert_eq!(counts["different"], offline.len(), "{counts}");
    assert_eq!(
        counts["same"].as_u64(),
        Some((requests.len() - offline.len()) as u64)
    );
    let (_, metrics) = server.get("/metrics");
    assert!(
        metrics.contains(&format!(
            "turnout_shadow_decisions_total{{result=\"different\"}} {}",
            offline.len()
        )),
        "{metrics}"
    );
}

#[test]
fn a_broken_shadow_edit_is_refused_and_shown_while_the_live_rules_answer_as_before() {
    let shadow_dir = rules_without_search_phrases();
    let server = start(
        &shipped_rules(),
        &["--shadow", shadow_dir.path().to_str().expect("utf-8")],
    );
    let before = get_json(&server, "/v1/rules");
    let good = before["shadow"]["version"].clone();
    assert!(good.is_string(), "{before}");
    std::fs::write(shadow_dir.path().join("broken.yaml"), "lists: [oops\n").expect("write");
    let started = Instant::now();
    let status = loop {
        let status = get_json(&server, "/v1/rules");
        if status["shadow"]["last_reload"]["ok"] == false {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the broken shadow file was not seen: {status}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        status["shadow"]["version"], good,
        "the last good shadow rules stay"
    );
    assert_eq!(
        status["version"], before["version"],
        "the live rules are untouched"
    );
    assert_eq!(status["last_reload"]["ok"], true, "{status}");
    let d = server.route("hello");
    assert_eq!(d["rules_version"], before["version"]);
    // Without --shadow there is nothing at /v1/shadow.
    let plain = start(&shipped_rules(), &["--model", "none"]);
    assert_eq!(plain.get("/v1/shadow").0, 404);
    assert_eq!(get_json(&plain, "/v1/rules")["shadow"], Value::Null);
}

/// A shadow slower than the traffic drops and counts, and no request waits for it: four
/// clients send long messages (a decision of one costs far more than its HTTP exchange) to two
/// request workers, while the one shadow thread, with a queue of one, decides each again.
#[test]
fn a_shadow_slower_than_the_traffic_drops_and_counts_and_every_request_is_answered() {
    let shadow_dir = tempfile::tempdir().expect("tempdir");
    for f in turnout::source::rule_files(&shipped_rules()).expect("rules") {
        std::fs::copy(&f, shadow_dir.path().join(f.file_name().expect("name"))).expect("copy");
    }
    let server = start(
        &shipped_rules(),
        &[
            "--model",
            "none",
            "--shadow",
            shadow_dir.path().to_str().expect("utf-8"),
            "--shadow-queue",
            "1",
        ],
    );
    // The corpus's messages glued into ones of about 15,000 characters (the limit is 16,000).
    let texts: Vec<String> = corpus_requests()
        .iter()
        .filter_map(|r| {
            let v: Value = serde_json::from_str(r).ok()?;
            Some(
                v["messages"].as_array()?.last()?["content"]
                    .as_str()?
                    .to_owned(),
            )
        })
        .collect();
    let mut long = String::new();
    for t in texts.iter().cycle() {
        if long.chars().count() + t.chars().count() > 15_000 {
            break;
        }
        long.push_str(t);
        long.push_str(". ");
    }
    let (clients, each) = (4, 25);
    let mut sent = 0u64;
    let started = Instant::now();
    let counts = loop {
        std::thread::scope(|s| {
            for _ in 0..clients {
                s.spawn(|| {
                    for _ in 0..each {
                        server.route(&long);
                    }
                });
            }
        });
        sent += clients * each;
        let counts = wait_for_shadow(&server, sent)["decisions"].clone();
        if counts["dropped"].as_u64().unwrap_or(0) > 0 {
            break counts;
        }
        // A burst the shadow kept up with (a machine busy elsewhere): another, for a while.
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the shadow was never behind in {sent} requests: {counts}"
        );
    };
    let total: u64 = ["same", "different", "dropped", "unavailable"]
        .iter()
        .map(|k| counts[k].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        total, sent,
        "each request decided by the shadow or dropped, once: {counts}"
    );
    assert_eq!(counts["different"], 0, "the same rules: {counts}");
    let dropped = server.metric("turnout_shadow_decisions_total{result=\"dropped\"}");
    assert_eq!(Some(dropped as u64), counts["dropped"].as_u64(), "{counts}");
}
