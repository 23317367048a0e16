//! `/openapi.json`: a valid OpenAPI 3.1 document whose schemas the service's real answers meet.

use std::io::Write;
use std::process::{Command, Stdio};

use super::common::{Served, cannot_run};

use serde_json::{Value, json};

/// A validator for `#/components/schemas/NAME` of `doc`.
fn schema_of(doc: &Value, name: &str) -> jsonschema::Validator {
    let mut schema = json!({"$ref": format!("#/components/schemas/{name}")});
    schema["components"] = doc["components"].clone();
    jsonschema::draft202012::new(&schema).expect("a schema")
}

#[test]
fn the_api_description_is_valid_openapi_and_the_answers_match_it() {
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let served = Served::start(&rules, &["--model", "none"]);
    let post = |path: &str, body: &Value| served.json("POST", path, body);
    let doc: Value =
        serde_json::from_str(&served.http("GET", "/openapi.json", "").1).expect("JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    for path in [
        "/v1/route",
        "/v1/try",
        "/v1/rules",
        "/v1/catalogue",
        "/v1/shadow",
        "/healthz",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} is not described");
    }

    // The official validator, which .ci/run installs: missing, the check cannot run, which
    // fails under CI and is said loudly elsewhere.
    let check = Command::new("python3")
        .args([
            "-c",
            "import json,sys\nfrom openapi_spec_validator import validate\nvalidate(json.load(sys.stdin))\nprint('valid')",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    const WHAT: &str = "the OpenAPI 3.1 meta-schema check";
    match check {
        Ok(mut p) => {
            p.stdin
                .take()
                .expect("stdin")
                .write_all(doc.to_string().as_bytes())
                .expect("write");
            let out = p.wait_with_output().expect("python");
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("No module named") {
                cannot_run(
                    WHAT,
                    "openapi-spec-validator is not installed (.ci/run installs it: \
                     pip install openapi-spec-validator)",
                );
            } else {
                assert!(out.status.success(), "not valid OpenAPI 3.1: {stderr}");
                assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "valid");
            }
        }
        Err(e) => cannot_run(WHAT, &format!("no python3 ({e})")),
    }

    // Real answers meet the schemas the document gives them.
    let decision = schema_of(&doc, "Decision");
    let error = schema_of(&doc, "ErrorBody");
    let request = schema_of(&doc, "Request");
    let asked = json!({"messages": [
        {"role": "assistant", "content": "Сколько лет ребёнку?"},
        {"role": "user", "content": "сколько стоит айфон 15"}
    ], "ui": {"open_file": {"name": "Расходы"}}, "integrations": ["google"]});
    assert!(request.is_valid(&asked));
    let (status, body) = post("/v1/route", &asked);
    assert_eq!(status, 200, "{body}");
    let problems: Vec<String> = decision.iter_errors(&body).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{problems:?}: {body}");
    let (status, body) = post("/v1/route", &json!({"messages": []}));
    assert_eq!(status, 400);
    assert!(error.is_valid(&body), "{body}");
    let (status, body) = post(
        "/v1/try",
        &json!({"request": asked, "model": {"calls": [{"tool": "product_search", "arguments": {"query": "айфон"}}]}}),
    );
    assert_eq!(status, 200, "{body}");
    assert!(schema_of(&doc, "TryAnswer").is_valid(&body), "{body}");
}

/// The installed schemathesis's version line, if there is one of the 4.x series (whose command
/// line this test speaks). In CI (`CI` set) a missing one fails the test; elsewhere it is
/// skipped, loudly.
fn schemathesis() -> Option<String> {
    let out = Command::new("schemathesis").arg("--version").output();
    let version = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        Ok(o) => format!("broken: {}", String::from_utf8_lossy(&o.stderr).trim()),
        Err(e) => format!("missing: {e}"),
    };
    // `Schemathesis 4.32.5`
    let major = version
        .rsplit(' ')
        .next()
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    if major == Some(4) {
        return Some(version);
    }
    let why = format!(
        "schemathesis 4.x is not installed ({version}); .ci/run installs it: \
         pip install 'schemathesis>=4,<5'"
    );
    cannot_run("the schemathesis fuzz run", &why);
    None
}

/// Runs schemathesis with all its checks (and those of `tests/data/schemathesis/hooks.py`)
/// against `served`, bounded in examples and time; fails on anything it finds, and unless both
/// POSTs answered 200 at least once.
fn fuzz(served: &Served, token: Option<&str>) {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/schemathesis");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let summary = dir.path().join("summary.json");
    let seed = std::env::var("TURNOUT_FUZZ_SEED").unwrap_or_else(|_| "20261201".to_owned());
    let mut args: Vec<String> = vec![
        "--config-file".into(),
        data.join("schemathesis.toml").display().to_string(),
        "run".into(),
        format!("{}/openapi.json", served.base()),
        "--checks".into(),
        "all".into(),
        "--phases".into(),
        "examples,coverage,fuzzing".into(),
        "--max-examples".into(),
        "50".into(),
        "--seed".into(),
        seed,
        "--workers".into(),
        "2".into(),
        "--request-timeout".into(),
        "20".into(),
        "--generation-database".into(),
        "none".into(),
        "--no-color".into(),
    ];
    match token {
        Some(token) => {
            args.push("-H".into());
            args.push(format!("Authorization: Bearer {token}"));
        }
        // A service without a token asks for none, on purpose: the missing-token checks
        // (`ignored_auth`, and a missing Authorization header as invalid data) are the token
        // run's.
        None => args.extend(
            [
                "--exclude-checks",
                "ignored_auth",
                "--generation-with-security-parameters",
                "false",
            ]
            .map(String::from),
        ),
    }
    let log = dir.path().join("schemathesis.log");
    let mut child = Command::new("schemathesis")
        .args(&args)
        .current_dir(dir.path())
        .env("SCHEMATHESIS_HOOKS", data.join("hooks.py"))
        .env("TURNOUT_FUZZ_SUMMARY", &summary)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).expect("log"))
        .stderr(std::fs::File::create(dir.path().join("stderr.log")).expect("log"))
        .spawn()
        .expect("schemathesis starts");
    // Bounded: 50 examples an operation (about 600 requests in all) take seconds; the deadline
    // is for a machine far slower than that.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(150);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let output = std::fs::read_to_string(&log).unwrap_or_default();
    let stderr = std::fs::read_to_string(dir.path().join("stderr.log")).unwrap_or_default();
    let answered = std::fs::read_to_string(&summary).unwrap_or_default();
    eprintln!(
        "schemathesis {}\n{output}\n{stderr}\nanswers per operation: {answered}",
        args.join(" ")
    );
    let status = status.unwrap_or_else(|| panic!("schemathesis ran for more than 150 s"));
    assert!(status.success(), "schemathesis found problems (see above)");
    let answered: Value = serde_json::from_str(&answered).expect("the hooks' summary");
    for op in ["POST /v1/route", "POST /v1/try"] {
        assert!(
            answered[op].get("200").is_some(),
            "{op} never answered 200: {}",
            answered[op]
        );
    }
}

/// The example corpus, so that `GET /v1/replay/last` has a replay to answer with.
fn corpus() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/corpus/requests.jsonl")
        .display()
        .to_string()
}

#[test]
fn schemathesis_finds_nothing_without_a_token() {
    if schemathesis().is_none() {
        return;
    }
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let served = Served::start(&rules, &["--model", "none", "--corpus", &corpus()]);
    fuzz(&served, None);
}

#[test]
fn schemathesis_finds_nothing_with_a_token() {
    if schemathesis().is_none() {
        return;
    }
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let token = "fuzz-token-0123456789abcdef";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).expect("token file");
    let token_file = token_file.display().to_string();
    let served = Served::start(
        &rules,
        &[
            "--model",
            "none",
            "--token-file",
            &token_file,
            "--corpus",
            &corpus(),
        ],
    );
    fuzz(&served, Some(token));
}
