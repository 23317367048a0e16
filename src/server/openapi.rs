//! The OpenAPI 3.1 description of the HTTP API, served at `/openapi.json`. OpenAPI 3.1 schemas
//! are JSON Schema 2020-12, so the request and decision schemas are generated from the same Rust
//! types the service parses and writes (schemars), placed under `components/schemas`; the paths
//! are written here, beside the routes they describe.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::contract::{Decision, Request};

/// The error body every 4xx and 5xx answer carries.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct ErrorDetail {
    /// A stable code: `invalid_request`, `message_too_long`, `body_too_large`, `body_timeout`,
    /// `unsupported_media_type`, `unauthorized`, `not_ready`, `not_found`, `no_corpus`.
    code: String,
    /// The request field at fault, as a path (`messages[0].role`), when there is one.
    field: Option<String>,
    /// What is wrong, for a person.
    message: String,
}

/// A playground request: a request and, optionally, a scripted router answer.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct TryRequest {
    request: Request,
    /// The router's answer to use instead of the service's model (a test case's `model:`).
    model: Option<crate::rules::testcase::ModelScript>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct TryAnswer {
    decision: Decision,
}

/// The document.
pub fn document() -> Value {
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
    let error = |what: &str| json!({"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}});
    let errors = |list: &[(&str, &str)]| -> Map<String, Value> {
        list.iter()
            .map(|(code, what)| ((*code).to_owned(), error(what)))
            .collect()
    };
    let json_body = |reference: &str| json!({"required": true, "content": {"application/json": {"schema": {"$ref": reference}}}});
    let ok_json = |what: &str, reference: Option<&str>| {
        let schema = reference.map_or_else(|| json!({"type": "object"}), |r| json!({"$ref": r}));
        json!({"description": what, "content": {"application/json": {"schema": schema}}})
    };
    let mut route_answers: Map<String, Value> = Map::new();
    route_answers.insert(
        "200".into(),
        ok_json("the decision", Some("#/components/schemas/Decision")),
    );
    route_answers.extend(errors(&[
        ("400", "a malformed request, with the field at fault"),
        (
            "401",
            "a token is set and the request has none, or a wrong one",
        ),
        ("408", "the body did not arrive within --body-timeout"),
        ("413", "the body is larger than --body-limit"),
        ("415", "the body is not application/json"),
        ("503", "no valid ruleset is loaded yet"),
    ]));
    let mut try_answers: Map<String, Value> = Map::new();
    try_answers.insert(
        "200".into(),
        ok_json("the decision", Some("#/components/schemas/TryAnswer")),
    );
    try_answers.extend(errors(&[
        ("400", "a malformed request or model script"),
        ("401", "a token is required"),
        ("503", "no valid ruleset is loaded yet"),
    ]));
    let text = |what: &str| json!({"description": what, "content": {"text/plain": {"schema": {"type": "string"}}}});
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "turnout",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Decides, for each chat message, whether it gets a plain answer, a skill or tool calls, and says why.",
        },
        "paths": {
            "/v1/route": {"post": {
                "summary": "Decide one message",
                "operationId": "route",
                "requestBody": json_body("#/components/schemas/Request"),
                "responses": route_answers,
                "security": [{"bearer": []}],
            }},
            "/v1/try": {"post": {
                "summary": "Decide one message with an optional scripted router answer (the playground)",
                "operationId": "try",
                "requestBody": json_body("#/components/schemas/TryRequest"),
                "responses": try_answers,
                "security": [{"bearer": []}],
            }},
            "/v1/rules": {"get": {
                "summary": "The ruleset serving, its files, the last reload and the watcher",
                "operationId": "rulesStatus",
                "responses": {"200": ok_json("the status", None), "401": error("a token is required")},
                "security": [{"bearer": []}],
            }},
            "/v1/rules/reload": {"post": {
                "summary": "Reload the rules now",
                "operationId": "reload",
                "responses": {
                    "200": ok_json("the reload report", None),
                    "401": error("a token is required"),
                    "422": ok_json("the files were refused; the report says why", None),
                },
                "security": [{"bearer": []}],
            }},
            "/v1/catalogue": {"get": {
                "summary": "Skills, tools, generation modes and integrations of the serving rules",
                "operationId": "catalogue",
                "responses": {"200": ok_json("the catalogue", None), "401": error("a token is required"), "503": error("no valid ruleset is loaded yet")},
                "security": [{"bearer": []}],
            }},
            "/v1/replay/last": {"get": {
                "summary": "What the last save changed on the corpus (serve --corpus)",
                "operationId": "replayLast",
                "responses": {"200": ok_json("the replay", None), "401": error("a token is required"), "404": error("the service has no corpus"), "503": error("not replayed yet")},
                "security": [{"bearer": []}],
            }},
            "/metrics": {"get": {
                "summary": "Prometheus metrics (OpenMetrics text)",
                "operationId": "metrics",
                "responses": {"200": {"description": "the metrics", "content": {"application/openmetrics-text": {"schema": {"type": "string"}}}}, "401": error("a token is required")},
                "security": [{"bearer": []}],
            }},
            "/healthz": {"get": {"summary": "Alive", "operationId": "healthz", "responses": {"200": text("ok")}}},
            "/readyz": {"get": {"summary": "Ready: a valid ruleset is loaded", "operationId": "readyz", "responses": {"200": text("ready VERSION"), "503": text("no valid ruleset loaded")}}},
            "/openapi.json": {"get": {"summary": "This document", "operationId": "openapi", "responses": {"200": ok_json("the OpenAPI document", None)}}},
        },
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    })
}
