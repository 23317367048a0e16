//! `serve --decision-log`: what a real service writes for every decision, read back by
//! `turnout replay`; personal text kept out of it; a sink slower than the traffic drops lines
//! and counts them instead of slowing requests.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::{Kill, bin, corpus_requests, http};
use super::unattended::{Server, start};

fn shipped_rules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")
}

fn post(server: &Server, path: &str, body: &str, headers: &[(&str, &str)]) -> Value {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    let (status, text) = http(&server.addr, "POST", path, &all, body.as_bytes());
    assert_eq!(status, 200, "{text}");
    serde_json::from_str(&text).expect("JSON answer")
}

/// The log's lines once it holds `n` of them (the writer writes them out when its queue is
/// empty); the test fails after ten seconds.
fn wait_for_lines(path: &Path, n: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= n && text.ends_with('\n') {
            return text
                .lines()
                .map(|l| serde_json::from_str(l).expect("each line is JSON"))
                .collect();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{} of {n} lines after 10 s",
            text.lines().count()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn replay(args: &[&str]) -> (Option<i32>, Value, String) {
    let out = Command::new(bin())
        .arg("replay")
        .args(args)
        .output()
        .expect("turnout replay runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (out.status.code(), v, format!("{stdout}{stderr}"))
}

#[test]
fn a_decision_log_of_a_real_run_replays_to_the_same_decisions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("decisions.jsonl");
    let rules = shipped_rules();
    // The rules' own router model (embedded): real model answers, recorded as received.
    let server = start(&rules, &["--decision-log", log.to_str().expect("utf-8")]);
    let requests: Vec<String> = corpus_requests().into_iter().step_by(9).collect();
    let mut decisions = Vec::new();
    for (i, body) in requests.iter().enumerate() {
        let id = format!("client-{i}");
        decisions.push(post(&server, "/v1/route", body, &[("x-request-id", &id)]));
    }
    // The playground's endpoint decides through the same path, with its scripted answer.
    let tried = json!({
        "request": {"messages": [{"role": "user", "content": "hello"}]},
        "model": {"calls": [{"tool": "no_such_tool"}]}
    });
    post(&server, "/v1/try", &tried.to_string(), &[]);
    let lines = wait_for_lines(&log, requests.len() + 1);
    assert_eq!(lines.len(), requests.len() + 1);
    for (i, (line, decision)) in lines.iter().zip(&decisions).enumerate() {
        assert_eq!(line["id"], format!("client-{i}"));
        assert_eq!(line["endpoint"], "/v1/route");
        assert_eq!(line["rules_version"], decision["rules_version"]);
        assert_eq!(line["decision"], *decision, "the decision as answered");
        let sent: Value = serde_json::from_str(&requests[i]).expect("request");
        assert_eq!(line["request"]["messages"], sent["messages"]);
        assert!(line["time"].as_str().is_some_and(|t| t.ends_with('Z')));
        // The model's answer is there whenever the model was asked.
        assert_eq!(
            line["model"].is_object(),
            decision["model_called"] == true,
            "{line}"
        );
    }
    assert!(
        lines.iter().any(|l| l["model"]["calls"]
            .as_array()
            .is_some_and(|c| !c.is_empty())),
        "no line recorded a call of the model"
    );
    let last = &lines[requests.len()];
    assert_eq!(last["endpoint"], "/v1/try");
    assert_eq!(last["model"]["calls"][0]["tool"], "no_such_tool");
    assert!(last["id"].as_str().is_some_and(|id| !id.is_empty()));

    let (code, v, out) = replay(&[
        log.to_str().expect("utf-8"),
        "--rules",
        rules.to_str().expect("utf-8"),
        "--format",
        "json",
        "--fail-on-change",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["lines"], requests.len() + 1, "{out}");
    assert_eq!(v["compared_with"], "log", "{out}");
    assert_eq!(v["diff"]["total"], requests.len() + 1, "{out}");
    assert_eq!(v["changed"], 0, "{out}");
}

#[test]
fn a_replayed_log_shows_what_an_edit_changes_against_what_was_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("decisions.jsonl");
    let rules_dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(rules_dir.path().join("r.yaml"), PING_RULES).expect("write");
    let server = start(
        rules_dir.path(),
        &[
            "--model",
            "none",
            "--decision-log",
            log.to_str().expect("utf-8"),
        ],
    );
    server.route("ping");
    server.route("hello");
    wait_for_lines(&log, 2);
    // The edit: pings go to another tool.
    let edited = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        edited.path().join("r.yaml"),
        PING_RULES.replace("{tool: alpha}", "{tool: beta}"),
    )
    .expect("write");
    let (code, v, out) = replay(&[
        log.to_str().expect("utf-8"),
        "--rules",
        edited.path().to_str().expect("utf-8"),
        "--format",
        "json",
        "--fail-on-change",
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(v["changed"], 1, "{out}");
    let change = &v["diff"]["changes"][0];
    assert_eq!(
        (change["line"].as_u64(), change["message"].as_str()),
        (Some(1), Some("ping"))
    );
    assert_eq!(
        (change["from"].as_str(), change["to"].as_str()),
        (Some("tool alpha"), Some("tool beta"))
    );
}

const PING_RULES: &str = r#"
tools:
  - id: switch
    description: skills
    chip: switching
    arguments: {type: object, properties: {skill: {enum: [coach, none]}}}
  - {id: alpha, description: first, chip: alpha}
  - {id: beta, description: second, chip: beta}
word_lists:
  - {id: pings, description: test trigger, words: [ping]}
pre_rules:
  - id: ping-rule
    description: routes pings
    when: {mentions: pings}
    then: {calls: [{tool: alpha}]}
skills:
  - {id: coach, description: coaching, badge: Coach, auto: true}
router: {skill_tool: switch, skill_argument: skill, leave_skill_value: none}
"#;

#[test]
fn log_messages_none_and_hash_write_no_message_text() {
    let secret = "zebrafrog";
    let body = json!({
        "messages": [
            {"role": "assistant", "content": format!("what about the {secret}?")},
            {"role": "user", "content": format!("where to buy {secret} boots cheap")}
        ],
        "ui": {"open_file": {"name": format!("{secret} plans")}},
        "recent_calls": [{"tool": "product_search", "arguments": {"query": secret}, "ok": true}]
    })
    .to_string();
    for mode in ["none", "hash"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("decisions.jsonl");
        let server = start(
            &shipped_rules(),
            &[
                "--log-messages",
                mode,
                "--decision-log",
                log.to_str().expect("utf-8"),
            ],
        );
        post(&server, "/v1/route", &body, &[]);
        post(&server, "/v1/route", &body, &[]);
        let lines = wait_for_lines(&log, 2);
        let text = std::fs::read_to_string(&log).expect("log");
        assert!(
            !text.contains(secret),
            "--log-messages {mode} wrote the text: {text}"
        );
        assert!(
            !text.contains("boots"),
            "--log-messages {mode} wrote the text: {text}"
        );
        assert_eq!(lines[0]["log_messages"], mode);
        let content = &lines[0]["request"]["messages"][1]["content"];
        if mode == "hash" {
            assert!(
                content.as_str().is_some_and(|c| c.starts_with("sha256:")),
                "{content}"
            );
            assert_eq!(
                *content, lines[1]["request"]["messages"][1]["content"],
                "stable"
            );
        } else {
            assert_eq!(*content, Value::Null);
        }
        // What the rules did is still there to count.
        assert!(lines[0]["decision"]["outcome"].is_string());
        let (code, v, out) = replay(&[
            log.to_str().expect("utf-8"),
            "--rules",
            shipped_rules().to_str().expect("utf-8"),
            "--format",
            "json",
        ]);
        assert_eq!(code, Some(0), "{out}");
        assert_eq!(v["lines"], 0, "{out}");
        assert_eq!(
            v["without_texts"].as_array().map(Vec::len),
            Some(2),
            "{out}"
        );
        assert!(
            out.contains(&format!(":1: skipped: logged with --log-messages {mode}"))
                && out.contains("cannot be replayed"),
            "{out}"
        );
    }
}

#[test]
fn a_full_queue_drops_lines_and_counts_them_without_slowing_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let rules_dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(rules_dir.path().join("r.yaml"), PING_RULES).expect("write");
    // Nobody reads the FIFO: the writer waits for a reader forever, and the queue holds one.
    let server = start(
        rules_dir.path(),
        &[
            "--model",
            "none",
            "--decision-log",
            fifo.to_str().expect("utf-8"),
            "--decision-log-queue",
            "1",
        ],
    );
    let n = 20;
    for _ in 0..n {
        assert_eq!(server.route("ping")["calls"][0]["tool"], "alpha");
    }
    // One line may be in the writer's hands and one in the queue; every other one is dropped.
    let dropped = server.metric("turnout_decision_log_dropped_total");
    assert!(
        dropped >= f64::from(n - 2) && dropped <= f64::from(n),
        "{dropped} dropped"
    );
    // A reader arrives: what was kept is written.
    let reader = std::fs::File::open(&fifo).expect("open the FIFO");
    let mut line = String::new();
    BufReader::new(reader).read_line(&mut line).expect("a line");
    let v: Value = serde_json::from_str(&line).expect("a log line");
    assert_eq!(v["request"]["messages"][0]["content"], "ping");
}

#[test]
fn a_log_on_stdout_is_the_only_thing_on_stdout() {
    let rules_dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(rules_dir.path().join("r.yaml"), PING_RULES).expect("write");
    let mut child = Command::new(bin())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--model",
            "none",
            "--decision-log",
            "-",
            "--rules",
        ])
        .arg(rules_dir.path())
        .env_remove("TURNOUT_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("turnout serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let child = Kill(child);
    // The service's own lines, the bound address among them, are on stderr.
    let mut addr = None;
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        if let Some(a) = line.strip_prefix("turnout listening on http://") {
            addr = Some(a.trim().to_owned());
            break;
        }
    }
    let addr = addr.expect("the listening line on stderr");
    for text in ["ping", "hello"] {
        let body = json!({"messages": [{"role": "user", "content": text}]}).to_string();
        let (status, _) = http(
            &addr,
            "POST",
            "/v1/route",
            &[("content-type", "application/json")],
            body.as_bytes(),
        );
        assert_eq!(status, 200);
    }
    let mut out = BufReader::new(stdout);
    for text in ["ping", "hello"] {
        let mut line = String::new();
        out.read_line(&mut line).expect("a line");
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|_| panic!("not a log line: {line:?}"));
        assert_eq!(v["request"]["messages"][0]["content"], text);
    }
    drop(child);
}

/// The scheduling policy of each of `pid`'s threads called `name` (field 41 of
/// `/proc/PID/task/TID/stat`; 0 is SCHED_OTHER, 5 SCHED_IDLE).
#[cfg(target_os = "linux")]
fn policies_of(pid: u32, name: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("the server's threads") {
        let task = task.expect("a thread").path();
        let comm = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        let stat = std::fs::read_to_string(task.join("stat")).unwrap_or_default();
        // The command name is in parentheses and may hold spaces: count fields after it.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let policy = after
            .split_whitespace()
            .nth(41 - 3)
            .and_then(|f| f.parse().ok())
            .expect("a policy field");
        found.push(policy);
    }
    found
}

#[cfg(target_os = "linux")]
#[test]
fn the_log_writer_and_the_shadow_run_at_idle_priority_unless_told_otherwise() {
    let rules_dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(rules_dir.path().join("r.yaml"), PING_RULES).expect("write");
    let log_dir = tempfile::tempdir().expect("tempdir");
    let log = log_dir.path().join("decisions.jsonl");
    let rules = rules_dir.path().to_str().expect("utf-8");
    let log = log.to_str().expect("utf-8");
    let base = ["--model", "none", "--decision-log", log, "--shadow", rules];
    for (extra, policy) in [(None, 5), (Some("idle"), 5), (Some("normal"), 0)] {
        let mut args = base.to_vec();
        if let Some(p) = extra {
            args.extend(["--background-priority", p]);
        }
        let server = start(rules_dir.path(), &args);
        assert_eq!(server.route("ping")["calls"][0]["tool"], "alpha");
        let pid = server.child.id();
        for thread in ["decision-log", "shadow"] {
            assert_eq!(
                policies_of(pid, thread),
                vec![policy],
                "{thread} with {extra:?}"
            );
        }
        // The request threads keep the normal policy whatever the background's.
        let workers = policies_of(pid, "tokio-rt-worker");
        assert!(
            !workers.is_empty() && workers.iter().all(|&p| p == 0),
            "{workers:?}"
        );
    }
}
