//! The OpenAPI 3.1 description of the HTTP API, served at `/openapi.json`. OpenAPI 3.1 schemas
//! are JSON Schema 2020-12, so the request and decision schemas are generated from the same Rust
//! types the service parses and writes (schemars), placed under `components/schemas`; the paths
//! are written here, beside the routes they describe.
//!
//! The document says what the service accepts and answers, no more and no less: an outside
//! fuzzer (schemathesis, `tests/it/openapi.rs`) sends what it allows and what it refuses, and
//! fails on an answer it does not list. The one rule JSON Schema cannot say, that the *last*
//! message is the user's and not blank ([`Request::check`]), is in the descriptions.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Config;
use crate::contract::{Decision, ParseError, Request, parse_json};
use crate::rules::testcase::ModelScript;

/// The error body every 4xx and 5xx answer carries.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ErrorDetail {
    /// A stable code: `invalid_request`, `message_too_long`, `body_too_large`, `body_timeout`,
    /// `unsupported_media_type`, `unauthorized`, `method_not_allowed`, `headers_too_large`,
    /// `not_ready`, `busy`, `not_found`, `no_corpus`.
    code: String,
    /// The request field at fault, as a path (`messages[0].role`), when there is one.
    field: Option<String>,
    /// What is wrong, for a person. Values from the request are cut to a few dozen characters.
    message: String,
}

/// A playground request (`POST /v1/try`): a request and, optionally, a scripted router answer.
/// The service parses the body as this type, so the document cannot drift from the parser.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "TryRequest")]
pub struct TryRequest {
    /// The request to decide, as `POST /v1/route` takes it.
    pub request: Request,
    /// The router's answer to use instead of the service's model (a test case's `model:`).
    #[serde(default)]
    pub model: Option<ModelScript>,
}

crate::contract::request::objects_only!(TryRequest);

impl TryRequest {
    /// Parses and checks a playground body with the request's own checks; a field at fault in
    /// the request is named `request.…`.
    pub fn from_json(body: &str) -> Result<TryRequest, ParseError> {
        let parsed: TryRequest = parse_json(body)?;
        parsed.request.check().map_err(|e| ParseError {
            field: format!("request.{}", e.field()),
            message: e.to_string(),
        })?;
        Ok(parsed)
    }
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct TryAnswer {
    decision: Decision,
    /// The router's answer the decision was made with, as a test case's `model:` (the scripted
    /// one, or what the service's model answered); null when the model was not asked.
    model: Option<ModelScript>,
}

/// The document for the default limits, with the bearer scheme on the protected endpoints as
/// when a token is configured (see [`document_with`] for one service's exact document).
pub fn document() -> Value {
    build(Config::default().max_message_chars, true)
}

/// The document of a service with this configuration: the longest message it takes is part of
/// the request's schema, and only a service with a token asks for one (and answers 401).
pub fn document_with(config: &Config) -> Value {
    build(config.max_message_chars, config.token.is_some())
}

fn build(max_message_chars: usize, token: bool) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas/".into();
    let mut generator = settings.into_generator();
    let schema = |name: &str, s: schemars::Schema| (name.to_owned(), s.to_value());
    let roots = [
        schema("Request", generator.subschema_for::<Request>()),
        schema("Decision", generator.subschema_for::<Decision>()),
        schema("Error", generator.subschema_for::<ErrorBody>()),
        schema("TryRequest", generator.subschema_for::<TryRequest>()),
        schema("TryAnswer", generator.subschema_for::<TryAnswer>()),
    ];
    let mut components: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    for (name, s) in roots {
        // A root that is a plain reference is already a component.
        if s.get("$ref").is_none() {
            components.insert(name, s);
        }
    }
    // The service refuses a longer message (400 `message_too_long`); the limit is the
    // service's, not the contract's, so it is set here and not on the type.
    if let Some(content) = components
        .get_mut("Message")
        .and_then(|m| m.pointer_mut("/properties/content"))
    {
        content["maxLength"] = json!(max_message_chars);
    }
    // Every error body has all three keys (`field` is null when no field is at fault).
    if let Some(detail) = components.get_mut("ErrorDetail") {
        detail["required"] = json!(["code", "field", "message"]);
    }
    if let Some(messages) = components
        .get_mut("Request")
        .and_then(|m| m.pointer_mut("/properties/messages"))
    {
        messages["description"] = json!(
            "The conversation so far; the last one is the user's new message: its role must be \
             `user` and its content not blank, or the answer is 400 with field `messages`."
        );
    }

    let error_body =
        json!({"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}});
    let error = |what: &str| json!({"description": what, "content": error_body.clone()});
    let unauthorized = json!({
        "description": "a token is configured and the request has none, or a wrong one",
        "headers": {"WWW-Authenticate": {"required": true, "schema": {"type": "string", "const": "Bearer"}}},
        "content": error_body.clone(),
    });
    let busy = |what: &str| {
        json!({
            "description": what,
            "headers": {"Retry-After": {
                "description": "with code `busy`: seconds to wait before trying again",
                "schema": {"type": "integer", "minimum": 0},
            }},
            "content": error_body.clone(),
        })
    };
    let ok_json = |what: &str, reference: Option<&str>| {
        let schema = reference.map_or_else(|| json!({"type": "object"}), |r| json!({"$ref": r}));
        json!({"description": what, "content": {"application/json": {"schema": schema}}})
    };
    let text = |what: &str| json!({"description": what, "content": {"text/plain": {"schema": {"type": "string"}}}});
    // What any endpoint may answer before its handler runs.
    let common = |answers: &mut Map<String, Value>| {
        answers.insert("405".into(), error("the path does not take this method"));
        answers.insert(
            "431".into(),
            error("the request's headers are too large or too many"),
        );
    };
    let protected = |answers: &mut Map<String, Value>| {
        if token {
            answers.insert("401".into(), unauthorized.clone());
        }
    };
    // What an endpoint that reads a body may answer about it.
    let body_answers = |answers: &mut Map<String, Value>| {
        answers.insert(
            "408".into(),
            error("the body did not arrive within --body-timeout"),
        );
        answers.insert(
            "413".into(),
            error("the body is larger than --body-limit (said from Content-Length, unread)"),
        );
    };
    let answers = |ok: (&str, Value), more: &[(&str, Value)], public: bool| -> Value {
        let mut a = Map::new();
        a.insert(ok.0.to_owned(), ok.1);
        for (code, v) in more {
            a.insert((*code).to_owned(), v.clone());
        }
        if !public {
            protected(&mut a);
        }
        common(&mut a);
        Value::Object(a)
    };
    let decide_answers = |ok: Value, bad: &str| -> Value {
        let mut a = Map::new();
        a.insert("200".into(), ok);
        a.insert("400".into(), error(bad));
        body_answers(&mut a);
        a.insert(
            "415".into(),
            error("the body is not application/json (no Content-Type is taken as JSON)"),
        );
        a.insert(
            "503".into(),
            busy("no valid ruleset is loaded yet (`not_ready`), or the service is reading as many bodies as its memory budget allows (`busy`, with Retry-After)"),
        );
        protected(&mut a);
        common(&mut a);
        Value::Object(a)
    };
    // No security requirement at all without a token: the service asks for none.
    let security = if token {
        json!([{"bearer": []}])
    } else {
        json!([])
    };
    // Examples a fuzzer sends first, so that both POSTs are seen deciding (no domain words: the
    // rule pack's ids are its own).
    let example_request = json!({"messages": [
        {"role": "assistant", "content": "How can I help?"},
        {"role": "user", "content": "hello"}
    ]});
    let json_body = |reference: &str, example: Value| {
        json!({"required": true, "content": {"application/json": {
            "schema": {"$ref": reference},
            "example": example,
        }}})
    };
    // The reload takes no body, but every body is read (within the limits) before the routes.
    let mut reload_answers = answers(
        ("200", ok_json("the reload report", None)),
        &[(
            "422",
            ok_json(
                "the files were refused; the report says why and the last good ruleset keeps serving",
                None,
            ),
        )],
        false,
    );
    if let Value::Object(m) = &mut reload_answers {
        body_answers(m);
    }
    // Only what the decision log (`--decision-log`) records; an id that is not printable ASCII
    // of at most 128 characters is replaced by one the service makes.
    let request_id = json!([{
        "name": "X-Request-Id",
        "in": "header",
        "required": false,
        "description": "the request's id in the decision log (serve --decision-log); printable ASCII, at most 128 characters, else the service makes one",
        // Any value is accepted: one that is not an id is replaced, never refused.
        "schema": {"type": "string"},
    }]);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "turnout",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Decides, for each chat message, whether it gets a plain answer, a skill or tool calls, and says why. Every error body is `{\"error\": {\"code\", \"field\", \"message\"}}`. The bearer token is checked only when the service has one (--token-file or TURNOUT_TOKEN).",
        },
        "paths": {
            "/v1/route": {"post": {
                "summary": "Decide one message",
                "operationId": "route",
                "parameters": request_id.clone(),
                "requestBody": json_body("#/components/schemas/Request", example_request.clone()),
                "responses": decide_answers(
                    ok_json("the decision", Some("#/components/schemas/Decision")),
                    "a malformed request, with the field at fault (`invalid_request`), a message longer than --max-message-chars (`message_too_long`), or a body that is not UTF-8",
                ),
                "security": security,
            }},
            "/v1/try": {"post": {
                "summary": "Decide one message with an optional scripted router answer (the playground)",
                "operationId": "try",
                "parameters": request_id,
                "requestBody": json_body("#/components/schemas/TryRequest", json!({
                    "request": {"messages": [{"role": "user", "content": "hello"}]},
                    "model": {"calls": []},
                })),
                "responses": decide_answers(
                    ok_json("the decision", Some("#/components/schemas/TryAnswer")),
                    "a malformed request or model script, with the field at fault (`request.…`, `model.…`), or a message longer than --max-message-chars",
                ),
                "security": security,
            }},
            "/v1/rules": {"get": {
                "summary": "The ruleset serving, its files, the last reload (its `status`: applied, current, unchanged, refused, pending_removal or failed; each located diagnostic quotes its source line) and the watcher",
                "operationId": "rulesStatus",
                "responses": answers(("200", ok_json("the status", None)), &[], false),
                "security": security,
            }},
            "/v1/rules/reload": {"post": {
                "summary": "Reload the rules now",
                "operationId": "reload",
                "responses": reload_answers,
                "security": security,
            }},
            "/v1/catalogue": {"get": {
                "summary": "Skills, tools, generation modes and integrations of the serving rules",
                "operationId": "catalogue",
                "responses": answers(("200", ok_json("the catalogue", None)), &[("503", error("no valid ruleset is loaded yet"))], false),
                "security": security,
            }},
            "/v1/replay/last": {"get": {
                "summary": "What the last save changed on the corpus (serve --corpus): the diff, the rule counts before and after, and where the rules and the model disagree",
                "operationId": "replayLast",
                "responses": answers(
                    ("200", ok_json("the replay", None)),
                    &[("404", error("the service has no corpus")), ("503", error("not replayed yet"))],
                    false,
                ),
                "security": security,
            }},
            "/v1/shadow": {"get": {
                "summary": "What the shadow rules (serve --shadow) did: counts, and the last requests they decided differently, with both decisions",
                "operationId": "shadow",
                "responses": answers(
                    ("200", ok_json("the shadow's counts and differences", None)),
                    &[("404", error("the service runs without shadow rules"))],
                    false,
                ),
                "security": security,
            }},
            "/metrics": {"get": {
                "summary": "Prometheus metrics (OpenMetrics text)",
                "operationId": "metrics",
                "responses": answers(
                    ("200", json!({"description": "the metrics", "content": {"application/openmetrics-text": {"schema": {"type": "string"}}}})),
                    &[],
                    false,
                ),
                "security": security,
            }},
            "/healthz": {"get": {"summary": "Alive", "operationId": "healthz", "responses": answers(("200", text("ok")), &[], true)}},
            "/readyz": {"get": {
                "summary": "Ready: a valid ruleset is loaded",
                "operationId": "readyz",
                "responses": answers(("200", text("ready VERSION")), &[("503", text("no valid ruleset loaded"))], true),
            }},
            "/openapi.json": {"get": {"summary": "This document", "operationId": "openapi", "responses": answers(("200", ok_json("the OpenAPI document", None)), &[], true)}},
            "/": {"get": {
                "summary": "The playground page (it asks for the token when the API wants one)",
                "operationId": "playground",
                "responses": answers(("200", json!({"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}})), &[], true),
            }},
        },
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "required only when the service has a token"}},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_schema_says_what_the_parser_refuses() {
        let doc = document();
        let s = &doc["components"]["schemas"];
        assert_eq!(s["Request"]["properties"]["messages"]["minItems"], 1);
        assert_eq!(s["Request"]["additionalProperties"], false);
        assert_eq!(s["Message"]["additionalProperties"], false);
        assert_eq!(s["Message"]["properties"]["content"]["maxLength"], 16_000);
        assert_eq!(s["TryRequest"]["additionalProperties"], false);
        assert_eq!(
            s["ErrorDetail"]["required"],
            json!(["code", "field", "message"])
        );
        assert_eq!(
            doc["paths"]["/v1/route"]["post"]["security"],
            json!([{"bearer": []}])
        );
        let open = document_with(&Config::default());
        assert_eq!(open["paths"]["/v1/route"]["post"]["security"], json!([]));
        assert!(
            open["paths"]["/v1/route"]["post"]["responses"]
                .get("401")
                .is_none()
        );
        for code in [
            "200", "400", "401", "405", "408", "413", "415", "431", "503",
        ] {
            for path in ["/v1/route", "/v1/try"] {
                assert!(
                    doc["paths"][path]["post"]["responses"].get(code).is_some(),
                    "{path} does not list {code}"
                );
            }
        }
    }

    #[test]
    fn a_playground_body_is_checked_like_a_request() {
        let e = TryRequest::from_json(r#"{"request": {"messages": []}}"#).err();
        assert_eq!(e.map(|e| e.field), Some("request.messages".to_owned()));
        let e = TryRequest::from_json(
            r#"{"request": {"messages": [{"role": "user", "content": "x"}]}, "model": {"error": 5}}"#,
        )
        .err();
        assert_eq!(e.map(|e| e.field), Some("model.error".to_owned()));
        let ok = TryRequest::from_json(
            r#"{"request": {"messages": [{"role": "user", "content": "x"}]}, "model": null}"#,
        );
        assert!(ok.is_ok(), "{ok:?}");
    }
}
