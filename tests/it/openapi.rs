//! `/openapi.json`: a valid OpenAPI 3.1 document whose schemas the service's real answers meet.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

struct Kill(std::process::Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One POST on a fresh connection: (status, JSON body).
fn post(base: &str, path: &str, body: &Value) -> (u16, Value) {
    use std::io::Read;
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    let text = body.to_string();
    let req = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{text}",
        text.len()
    );
    s.write_all(req.as_bytes()).expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn get(base: &str, path: &str) -> String {
    use std::io::Read;
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes())
        .expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_owned()
}

/// A validator for `#/components/schemas/NAME` of `doc`.
fn schema_of(doc: &Value, name: &str) -> jsonschema::Validator {
    let mut schema = json!({"$ref": format!("#/components/schemas/{name}")});
    schema["components"] = doc["components"].clone();
    jsonschema::draft202012::new(&schema).expect("a schema")
}

#[test]
fn the_api_description_is_valid_openapi_and_the_answers_match_it() {
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut child = Command::new(env!("CARGO_BIN_EXE_turnout"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--model",
            "none",
            "--rules",
        ])
        .arg(&rules)
        .env_remove("TURNOUT_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("first line");
    let _serve = Kill(child);
    let base = line
        .trim()
        .strip_prefix("turnout listening on ")
        .expect("address")
        .to_owned();
    let doc: Value = serde_json::from_str(&get(&base, "/openapi.json")).expect("JSON");
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
    let (status, body) = post(&base, "/v1/route", &asked);
    assert_eq!(status, 200, "{body}");
    let problems: Vec<String> = decision.iter_errors(&body).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{problems:?}: {body}");
    let (status, body) = post(&base, "/v1/route", &json!({"messages": []}));
    assert_eq!(status, 400);
    assert!(error.is_valid(&body), "{body}");
    let (status, body) = post(
        &base,
        "/v1/try",
        &json!({"request": asked, "model": {"calls": [{"tool": "product_search", "arguments": {"query": "айфон"}}]}}),
    );
    assert_eq!(status, 200, "{body}");
    assert!(schema_of(&doc, "TryAnswer").is_valid(&body), "{body}");
}
