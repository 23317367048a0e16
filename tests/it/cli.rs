//! The `turnout` binary as a user runs it: the shipped rule pack, its test cases, and what a
//! product manager sees when a rule file is broken.

use crate::common::root;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// turnout with `args`, started in the repository, every stream piped.
fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_turnout"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("turnout starts")
}

/// turnout with `args` on `input` (none: stdin closed at once), written from another thread
/// since the output can be larger than a pipe holds, so writing all of it first could wait on
/// turnout forever; its output, and how writing stdin went.
fn run(args: &[&str], input: Option<String>) -> (Output, std::io::Result<()>) {
    let mut child = spawn(args);
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || match (input, stdin) {
        (Some(input), Some(mut stdin)) => stdin.write_all(input.as_bytes()),
        _ => Ok(()),
    });
    let out = child.wait_with_output().expect("turnout finishes");
    (out, writer.join().expect("writer"))
}

fn turnout(args: &[&str], stdin: Option<&str>) -> Output {
    let (out, written) = run(args, stdin.map(str::to_owned));
    written.expect("write stdin");
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_shipped_rule_tests_all_pass() {
    let out = turnout(&["test", "--rules", "rules"], None);
    let stdout = text(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        out.status.success(),
        "turnout test failed:\n{stdout}\n{}",
        text(&out.stderr)
    );
    let passed: usize = last
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("last line starts with a count");
    assert_eq!(last, format!("{passed} passed, 0 failed"));
    // Every case written in rules/tests ran.
    let written: usize = turnout::source::test_files(&root().join("rules"))
        .iter()
        .map(|p| {
            let doc: serde_json::Value =
                serde_yaml::from_str(&std::fs::read_to_string(p).expect("read")).expect("yaml");
            doc["cases"].as_array().map_or(0, Vec::len)
        })
        .sum();
    assert_eq!(passed, written);
}

#[test]
fn every_behaviour_has_a_positive_a_negative_and_a_near_miss() {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("rules/tests")).expect("rules/tests") {
        let path = entry.expect("entry").path();
        let doc: serde_json::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&path).expect("read")).expect("yaml");
        for case in doc["cases"].as_array().expect("cases") {
            for b in case["behaviours"].as_array().into_iter().flatten() {
                *count
                    .entry(b.as_str().unwrap_or_default().to_owned())
                    .or_default() += 1;
            }
        }
    }
    for n in 1..=21 {
        let id = format!("B{n}");
        let got = count.get(&id).copied().unwrap_or(0);
        assert!(got >= 3, "{id} has {got} cases; at least 3 are needed");
    }
}

#[test]
fn a_failing_case_shows_expected_actual_and_the_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let case = r#"
cases:
  - name: deliberately wrong expectation
    request:
      messages: [{role: user, content: "где купить запчасти на запорожец"}]
    model:
      calls: [{tool: product_search, arguments: {query: "запчасти на запорожец"}}]
    expect:
      outcome: tool
"#;
    let file = dir.path().join("wrong.yaml");
    std::fs::write(&file, case).expect("write");
    let out = turnout(
        &["test", "--rules", "rules", file.to_str().expect("utf-8")],
        None,
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("outcome: expected \"tool\", got \"chat\""),
        "{stdout}"
    );
    assert!(stdout.contains("dropped product_search"), "{stdout}");
    assert!(
        stdout.trim_end().ends_with("0 passed, 1 failed"),
        "{stdout}"
    );
}

#[test]
fn route_reads_a_request_and_prints_the_decision() {
    let request = std::fs::read_to_string(root().join("examples/request.json")).expect("example");
    let out = turnout(&["route"], Some(&request));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON decision");
    for key in [
        "outcome",
        "calls",
        "skill",
        "web_search",
        "model_called",
        "trace",
        "rules_version",
    ] {
        assert!(d.get(key).is_some(), "{key} missing from {d}");
    }
}

#[test]
fn route_jsonl_answers_line_by_line_and_flags_bad_lines() {
    let input = concat!(
        r#"{"messages":[{"role":"user","content":"сколько стоит айфон"}]}"#,
        "\n",
        r#"{"messages":"oops"}"#,
        "\n",
        r#"{"messages":[{"role":"user","content":"привет"}]}"#,
        "\n"
    );
    let out = turnout(&["route", "--jsonl", "--model", "none"], Some(input));
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["web_search"], true);
    assert!(
        lines[1]["error"]
            .as_str()
            .is_some_and(|e| e.contains("messages"))
    );
    assert_eq!(lines[2]["outcome"], "chat");
}

/// `route` holds a message to the same limit `serve` does (`--max-message-chars`, 16,000 by
/// default): before, only the service checked it, so a replay or a batch decided what the
/// service would refuse.
#[test]
fn route_refuses_a_message_over_the_limit_as_serve_does() {
    let long = "а".repeat(30);
    let input = format!(
        "{}\n{}\n",
        serde_json::json!({"messages": [{"role": "user", "content": long}]}),
        serde_json::json!({"messages": [{"role": "user", "content": "привет"}]}),
    );
    let args = [
        "route",
        "--jsonl",
        "--model",
        "none",
        "--max-message-chars",
        "20",
    ];
    let out = turnout(&args, Some(&input));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 2);
    let error = lines[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("messages[0].content") && error.contains("longer than 20 characters"),
        "{error}"
    );
    assert_eq!(lines[1]["outcome"], "chat");
    // Within the limit (the default), the same message is decided.
    let out = turnout(&["route", "--jsonl", "--model", "none"], Some(&input));
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// `route` with these arguments on `input`, which it may stop reading early (a request over
/// its limit): that is its answer, not the test's failure.
fn route_large(args: &[&str], input: String) -> Output {
    match run(args, Some(input)) {
        (_, Err(e)) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        (out, _) => out,
    }
}

/// `route --jsonl` of `input` with `model` on `jobs` threads.
fn route_jsonl(model: &str, jobs: &str, input: &str) -> Output {
    route_large(
        &["route", "--jsonl", "--model", model, "--jobs", jobs],
        input.to_owned(),
    )
}

#[test]
fn route_jsonl_on_several_threads_keeps_the_input_order() {
    // More lines than one batch of two threads (2 × 1024), with a blank line, a line that is
    // not JSON and one that is not a request in different batches: every thread count prints
    // the same lines, in input order, and reports the same bad lines by number.
    let requests = crate::common::corpus_requests();
    let mut lines: Vec<String> = (0..2600)
        .map(|i| requests[i % requests.len()].clone())
        .collect();
    lines[4] = String::new();
    lines[999] = "{".into();
    lines[2100] = r#"{"messages":"oops"}"#.into();
    let input = lines.join("\n") + "\n";
    let run = |jobs: &str| route_jsonl("none", jobs, &input);
    let one = run("1");
    assert_eq!(one.status.code(), Some(2));
    let out = text(&one.stdout);
    assert_eq!(
        out.lines().count(),
        2599,
        "the blank line gets no output line"
    );
    let decided: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(decided[998]["line"], 1000);
    assert_eq!(decided[2099]["line"], 2101);
    let errors = text(&one.stderr);
    assert!(
        errors.contains("line 1000:") && errors.contains("line 2101:"),
        "{errors}"
    );
    for jobs in ["2", "3"] {
        let many = run(jobs);
        assert_eq!(many.status.code(), Some(2));
        assert!(
            many.stdout == one.stdout,
            "--jobs {jobs} changed the output"
        );
        assert_eq!(text(&many.stderr), errors, "--jobs {jobs}");
    }
}

#[test]
fn route_jsonl_stops_when_its_reader_goes_away() {
    // `route --jsonl … | head -1`: once stdout is closed, the threads that read, decide and
    // write all stop and the run ends with exit 2; none of them waits on another forever.
    let line = r#"{"messages":[{"role":"user","content":"привет"}]}"#;
    let input = format!("{line}\n").repeat(20_000);
    let mut child = spawn(&["route", "--jsonl", "--model", "none", "--jobs", "2"]);
    let mut stdin = child.stdin.take().expect("stdin");
    // Writing may fail once turnout has gone: that is the point.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut first = String::new();
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    std::io::BufRead::read_line(&mut stdout, &mut first).expect("a first line");
    assert!(first.contains("outcome"), "{first}");
    drop(stdout);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "route went on after stdout closed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(2));
    writer.join().expect("writer");
}

#[test]
fn route_refuses_a_request_over_its_size_limit_and_goes_on() {
    // A line over --max-request-bytes is that line's error; the lines around it (the last one
    // without a newline) are decided.
    let short = |text: &str| json_line(text);
    let long = json_line(&"а".repeat(100_000));
    let input = format!("{}\n{long}\n{}", short("привет"), short("пока"));
    let out = route_large(
        &[
            "route",
            "--jsonl",
            "--model",
            "none",
            "--max-request-bytes",
            "300",
        ],
        input,
    );
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "chat");
    assert_eq!(lines[1]["line"], 2);
    assert!(
        lines[1]["error"].as_str().is_some_and(
            |e| e.contains("longer than 300 bytes") && e.contains("--max-request-bytes")
        ),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2]["outcome"], "chat");
    // One request on stdin: the same limit, and exit 2 with the reason.
    let one = route_large(
        &["route", "--model", "none", "--max-request-bytes", "300"],
        long,
    );
    assert_eq!(one.status.code(), Some(2));
    assert!(
        text(&one.stderr).contains("larger than 300 bytes"),
        "{}",
        text(&one.stderr)
    );
    assert!(one.stdout.is_empty());
}

#[test]
fn route_jsonl_batches_long_lines_by_size_in_input_order() {
    // Batches also end at 4 MiB of requests a thread: 24 lines of 400 KB are cut into several
    // batches, differently for one and two threads, and still come out in order (every third
    // line is a bad request, whose error names its line).
    let pad = " ".repeat(400_000);
    let input: String = (0..24)
        .map(|i| match i % 3 {
            0 => format!("{{\"messages\": \"oops\"{pad}}}\n"),
            _ => json_line(&format!("{pad} строка {i}")) + "\n",
        })
        .collect();
    // The messages are over the default 16,000 characters: the limit is raised, as batching,
    // not the limit, is what this tests.
    let run = |jobs: &str| {
        let args = ["route", "--jsonl", "--model", "none", "--jobs", jobs];
        route_large(
            &[&args[..], &["--max-message-chars", "1000000"]].concat(),
            input.clone(),
        )
    };
    let (one, two) = (run("1"), run("2"));
    for (jobs, out) in [("1", &one), ("2", &two)] {
        assert_eq!(out.status.code(), Some(2), "--jobs {jobs}");
        let lines: Vec<serde_json::Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 24, "--jobs {jobs}");
        for (k, line) in lines.iter().enumerate() {
            match k % 3 {
                0 => assert_eq!(line["line"], k + 1, "--jobs {jobs}"),
                _ => assert_eq!(line["outcome"], "chat", "--jobs {jobs}, line {}", k + 1),
            }
        }
    }
    assert!(two.stdout == one.stdout, "--jobs 2 changed the output");
}

/// A one-message request as a JSON line.
fn json_line(text: &str) -> String {
    serde_json::json!({"messages": [{"role": "user", "content": text}]}).to_string()
}

#[test]
fn route_jsonl_with_the_embedded_router_on_several_threads_decides_as_one() {
    let input: String = crate::common::corpus_requests()
        .iter()
        .take(60)
        .map(|r| r.clone() + "\n")
        .collect();
    let run = |jobs: &str| route_jsonl("embedded", jobs, &input);
    let (one, four) = (run("1"), run("4"));
    assert!(one.status.success(), "{}", text(&one.stderr));
    assert_eq!(text(&one.stdout).lines().count(), 60);
    assert!(text(&one.stdout).contains(r#""model_called":true"#));
    assert!(four.status.success(), "{}", text(&four.stderr));
    assert!(four.stdout == one.stdout, "--jobs 4 changed the decisions");
}

#[test]
fn route_refuses_bad_input_with_exit_2() {
    for bad in [
        "",
        "{",
        r#"{"messages": []}"#,
        r#"{"messages":[{"role":"user","content":"hi"}],"generation_mode":"smell"}"#,
    ] {
        let out = turnout(&["route"], Some(bad));
        assert_eq!(out.status.code(), Some(2), "input {bad:?}");
        assert!(
            !text(&out.stderr).contains("panicked"),
            "{}",
            text(&out.stderr)
        );
    }
}

fn broken_rules(dir: &Path, file: &str, content: &str) -> Output {
    std::fs::copy(root().join("rules/router.yaml"), dir.join("router.yaml")).expect("copy");
    std::fs::copy(root().join("rules/tools.yaml"), dir.join("tools.yaml")).expect("copy");
    std::fs::copy(root().join("rules/skills.yaml"), dir.join("skills.yaml")).expect("copy");
    std::fs::write(dir.join(file), content).expect("write");
    turnout(&["test", "--rules", dir.to_str().expect("utf-8")], None)
}

#[test]
fn a_broken_rule_file_is_refused_with_file_line_and_column() {
    let cases = [
        (
            "guards.yaml",
            "guards:\n  - id: g\n    description: d\n    tools: [product_serch]\n    drop_when: {longer_than: 3}\n",
            "guards.yaml:4:13: error[unknown-tool]: unknown tool 'product_serch'",
            Some("did you mean 'product_search'?"),
        ),
        (
            "words.yaml",
            "word_lists:\n  - id: w\n    description: d\n    patterns: ['(сколько']\nguards:\n  - id: g\n    description: d\n    drop_when: {mentions: w}\n",
            "words.yaml:4:16: error[bad-regex]",
            None,
        ),
        (
            "guards.yaml",
            "guards:\n  - id: g\n    description: d\n    drop_whn: {longer_than: 3}\n",
            "guards.yaml:4:5: error[unknown-key]",
            Some("drop_when"),
        ),
        (
            "guards.yaml",
            "guards:\n  - id: g\n    description: [unclosed\n",
            "guards.yaml:",
            None,
        ),
    ];
    for (file, content, expected, hint) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = broken_rules(dir.path(), file, content);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(expected),
            "expected {expected:?} in:\n{stderr}"
        );
        if let Some(h) = hint {
            assert!(stderr.contains(h), "expected hint {h:?} in:\n{stderr}");
        }
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn src_knows_no_domain() {
    let tools = std::fs::read_to_string(root().join("rules/tools.yaml")).expect("tools");
    let doc: serde_json::Value = serde_yaml::from_str(&tools).expect("yaml");
    let entries = doc["tools"].as_array().expect("tools");
    let all: Vec<&str> = entries.iter().filter_map(|t| t["id"].as_str()).collect();
    // Every entry of rules/tools.yaml has an id, and they are the tools the engine loads (the
    // ids looked for below are all of them but plain words, which could be any identifier).
    let loaded = turnout::compile::load_dir(&root().join("rules"))
        .ruleset
        .expect("the shipped rules");
    assert_eq!(all.len(), entries.len(), "a tool without an id");
    assert_eq!(
        all.len(),
        loaded.tools().len(),
        "tools.yaml against the ruleset"
    );
    let ids: Vec<String> = all
        .iter()
        .map(|id| (*id).to_owned())
        // `web_search` is also a field of the public contract (the decision's flag).
        .filter(|id| id.contains('_') && id != "web_search")
        .collect();

    let mut stack = vec![root().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let source = std::fs::read_to_string(&path).expect("source");
            assert!(
                !source
                    .chars()
                    .any(|c| ('\u{0400}'..='\u{04FF}').contains(&c)),
                "{} contains Cyrillic text",
                path.display()
            );
            for id in &ids {
                assert!(
                    !source.contains(id.as_str()),
                    "{} names tool {id}",
                    path.display()
                );
            }
        }
    }
}
