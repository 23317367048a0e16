//! `/openapi.json`: a valid OpenAPI 3.1 document whose schemas the service's real answers meet.

use std::io::Write;
use std::process::{Command, Stdio};

use super::common::Served;

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
        "/healthz",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} is not described");
    }

    // The official validator, where it is installed (.ci/run installs it).
    let check = Command::new("python3")
        .args([
            "-c",
            "import json,sys\nfrom openapi_spec_validator import validate\nvalidate(json.load(sys.stdin))\nprint('valid')",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
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
                eprintln!(
                    "\n*** SKIPPED the OpenAPI 3.1 meta-schema check: openapi-spec-validator is \
                     not installed (.ci/run installs it: pip install openapi-spec-validator). ***\n"
                );
            } else {
                assert!(out.status.success(), "not valid OpenAPI 3.1: {stderr}");
            }
        }
        Err(e) => {
            eprintln!("\n*** SKIPPED the OpenAPI 3.1 meta-schema check: no python3 ({e}) ***\n")
        }
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
