//! The decision log's line: what `turnout serve --decision-log` writes for every decision, and
//! how `turnout replay` reads it back.
//!
//! One JSON object a line: `time` (RFC 3339, UTC), `id` (the request id), `endpoint`,
//! `rules_version`, `log_messages` (`full`, `hash` or `none`: how personal text was written),
//! `request`, `router` (the model's name; `none`: rules only), `model` (the router's answer as
//! received: `{"calls": [...], "latency_ms"}` or `{"error": KIND, "latency_ms"}`; `null` when
//! the model was not asked) and `decision`.
//!
//! With `hash`, every text a person wrote or that was taken from it — message contents, the open
//! file's name, the string values of call arguments (recent, proposed and decided) — is replaced
//! by `sha256:` and the first 128 bits of its SHA-256, so equal texts stay equal; with `none` it
//! is `null`. The trace then keeps each step's stage, rule and effect but not its `why` (which
//! quotes the words matched), nor the router's own notes. Such a line is counted, not replayed.

use std::time::SystemTime;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::contract::{Decision, Request, Stage};
use crate::rules::testcase::{ModelScript, ScriptedCall};

/// How message texts are written to the decision log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogMessages {
    /// As received.
    #[default]
    Full,
    /// Each replaced by a stable hash (`sha256:` and 32 hex digits).
    Hash,
    /// Left out (`null`).
    None,
}

impl LogMessages {
    /// The name on the command line and in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Hash => "hash",
            Self::None => "none",
        }
    }
}

impl std::str::FromStr for LogMessages {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "full" => Ok(Self::Full),
            "hash" => Ok(Self::Hash),
            "none" => Ok(Self::None),
            other => Err(format!("'{other}' is not full, hash or none")),
        }
    }
}

/// One decision, as the service saw it.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// When it was decided.
    pub time: SystemTime,
    /// The request id (the client's `X-Request-Id`, or one the service made).
    pub id: &'a str,
    /// The endpoint that decided it (`/v1/route`, `/v1/try`).
    pub endpoint: &'a str,
    /// The router model's name (`none`: rules only).
    pub router: &'a str,
    /// The request.
    pub request: &'a Request,
    /// Its decision (with how the model call went).
    pub decision: &'a Decision,
    /// The decision's JSON as the service answered it, when it has it: a `full` line then
    /// holds these bytes rather than serialising the decision a second time.
    pub decision_json: Option<&'a [u8]>,
}

/// The line for `record`, with personal text written as `mode` says, ending in a newline.
pub fn line(record: &Record<'_>, mode: LogMessages) -> String {
    if let (LogMessages::Full, Some(json)) = (mode, record.decision_json)
        && let Some(line) = spliced(record, json)
    {
        return line;
    }
    let model = model_section(record.decision);
    let mut out = if mode == LogMessages::Full {
        // Straight from the request and the decision: no JSON tree in between (this runs for
        // every decision the service makes).
        serde_json::to_string(&Line::new(
            record,
            mode,
            record.request,
            record.decision,
            model,
        ))
    } else {
        let mut request = serde_json::to_value(record.request).unwrap_or(Value::Null);
        let mut decision = serde_json::to_value(record.decision).unwrap_or(Value::Null);
        let mut model = model;
        scrub_request(&mut request, mode);
        scrub_decision(&mut decision, mode);
        if let Some(calls) = model.get_mut("calls").and_then(Value::as_array_mut) {
            for call in calls {
                scrub_strings(&mut call["arguments"], mode);
            }
        }
        serde_json::to_string(&Line::new(record, mode, &request, &decision, model))
    }
    .unwrap_or_default();
    out.push('\n');
    out
}

/// A `full` line around the decision's JSON as the service answered it (the same bytes
/// `Decision`'s serialisation writes): the line is serialised with `()` for its last field,
/// `"decision":null}`, and the answer goes where that `null` is. `None` when it does not fit.
fn spliced(record: &Record<'_>, json: &[u8]) -> Option<String> {
    let json = simdutf8::basic::from_utf8(json).ok()?;
    let model = model_section(record.decision);
    let mode = LogMessages::Full;
    let out = serde_json::to_string(&Line::new(record, mode, record.request, (), model)).ok()?;
    let head = out.strip_suffix("null}")?;
    let mut line = String::with_capacity(head.len() + json.len() + 2);
    line.push_str(head);
    line.push_str(json);
    line.push_str("}\n");
    Some(line)
}

/// A line as written, fields in this order.
#[derive(serde::Serialize)]
struct Line<'a, R, D> {
    time: String,
    id: &'a str,
    endpoint: &'a str,
    rules_version: &'a str,
    log_messages: &'static str,
    request: R,
    router: &'a str,
    model: Value,
    decision: D,
}

impl<'a, R, D> Line<'a, R, D> {
    fn new(record: &Record<'a>, mode: LogMessages, request: R, decision: D, model: Value) -> Self {
        Self {
            time: rfc3339(record.time),
            id: record.id,
            endpoint: record.endpoint,
            rules_version: &record.decision.rules_version,
            log_messages: mode.as_str(),
            request,
            router: record.router,
            model,
            decision,
        }
    }
}

/// `{"calls", "latency_ms"}`, `{"error", "latency_ms"}`, or `null` when the model was not asked.
fn model_section(d: &Decision) -> Value {
    let Some(call) = &d.model_call else {
        return Value::Null;
    };
    let latency_ms = (call.latency.as_secs_f64() * 1e6).round() / 1e3;
    match &call.received {
        Some(calls) => json!({"calls": calls, "latency_ms": latency_ms}),
        None => json!({"error": call.error.unwrap_or("unknown"), "latency_ms": latency_ms}),
    }
}

/// `sha256:` and the first 16 bytes of the text's SHA-256, in hex.
pub fn hash_text(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(7 + 32);
    out.push_str("sha256:");
    for b in &digest[..16] {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

fn scrub_text(v: &mut Value, mode: LogMessages) {
    if let Value::String(s) = v {
        *v = match mode {
            LogMessages::Full => return,
            LogMessages::Hash => Value::String(hash_text(s)),
            LogMessages::None => Value::Null,
        };
    }
}

/// Every string inside `v` (keys stay: they are the tool's argument names).
fn scrub_strings(v: &mut Value, mode: LogMessages) {
    match v {
        Value::String(_) => scrub_text(v, mode),
        Value::Array(items) => items.iter_mut().for_each(|i| scrub_strings(i, mode)),
        Value::Object(map) => map.values_mut().for_each(|i| scrub_strings(i, mode)),
        _ => {}
    }
}

fn scrub_request(request: &mut Value, mode: LogMessages) {
    if let Some(messages) = request.get_mut("messages").and_then(Value::as_array_mut) {
        for m in messages {
            scrub_text(&mut m["content"], mode);
        }
    }
    if let Some(name) = request.pointer_mut("/ui/open_file/name") {
        scrub_text(name, mode);
    }
    if let Some(calls) = request
        .get_mut("recent_calls")
        .and_then(Value::as_array_mut)
    {
        for c in calls {
            if let Some(args) = c.get_mut("arguments") {
                scrub_strings(args, mode);
            }
        }
    }
}

fn scrub_decision(decision: &mut Value, mode: LogMessages) {
    if let Some(calls) = decision.get_mut("calls").and_then(Value::as_array_mut) {
        for c in calls {
            if let Some(args) = c.get_mut("arguments") {
                scrub_strings(args, mode);
            }
        }
    }
    let router = serde_json::to_value(Stage::Router).unwrap_or(Value::Null);
    if let Some(trace) = decision.get_mut("trace").and_then(Value::as_array_mut) {
        for step in trace {
            let Some(step) = step.as_object_mut() else {
                continue;
            };
            // `why` quotes the words that matched; the router's steps (its proposal and its
            // notes) may name words of the message too.
            step.remove("why");
            if step.get("stage") == Some(&router) {
                step.remove("effect");
            }
            // The typed trace quotes the message too: what matched, and the facts that carry
            // a value of the request (an argument, a negated word, a file's name).
            if let Some(matches) = step.get_mut("matches").and_then(Value::as_array_mut) {
                for m in matches {
                    scrub_text(&mut m["text"], mode);
                }
            }
            if let Some(facts) = step.get_mut("facts").and_then(Value::as_array_mut) {
                for f in facts {
                    let kind = f.get("kind").and_then(Value::as_str).unwrap_or_default();
                    let field = match kind {
                        "negated" | "argument" | "argument_in_message" | "filled_value" => "value",
                        "file_open" | "file_named" => "name",
                        _ => continue,
                    };
                    if let Some(v) = f.get_mut(field) {
                        scrub_text(v, mode);
                    }
                }
            }
        }
    }
}

/// A decision log line read back.
#[derive(Debug, Clone)]
pub enum Read {
    /// A line that can be replayed: its request, the router's answer as recorded (none when
    /// the model was not asked), and the decision the service gave.
    Replayable {
        /// The request id.
        id: Option<String>,
        /// The request.
        request: Box<Request>,
        /// The recorded answer, as a test case's `model:` section.
        model: Option<ModelScript>,
        /// The service had no model (`--model none`): the line was decided by the rules alone.
        rules_only: bool,
        /// The decision the service gave.
        decision: Option<Box<Decision>>,
    },
    /// A line written without its message texts (`--log-messages hash|none`).
    WithoutTexts {
        /// How it was written (`hash` or `none`).
        mode: String,
    },
}

/// Whether a JSON line is a decision log line (rather than a corpus line).
pub fn is_log_line(v: &Value) -> bool {
    v.get("decision").is_some() && v.get("log_messages").is_some()
}

/// Reads one decision log line; the error says what is wrong with it.
pub fn read(v: &Value) -> Result<Read, String> {
    let mode = v["log_messages"].as_str().unwrap_or_default();
    match mode {
        "full" => {}
        "hash" | "none" => {
            return Ok(Read::WithoutTexts {
                mode: mode.to_owned(),
            });
        }
        other => return Err(format!("unknown log_messages {other:?}")),
    }
    let request =
        Request::from_json(&v["request"].to_string()).map_err(|e| format!("request: {e}"))?;
    let model = match &v["model"] {
        Value::Null => None,
        m => Some(recorded_answer(m)?),
    };
    let decision = serde_json::from_value::<Decision>(v["decision"].clone())
        .map_err(|e| format!("decision: {e}"))?;
    Ok(Read::Replayable {
        id: v["id"].as_str().map(str::to_owned),
        request: Box::new(request),
        model,
        rules_only: v["router"] == "none",
        decision: Some(Box::new(decision)),
    })
}

/// The router's answer of `d` as the log records it and a replay reads it back (`None`: the
/// model was not asked): what the shadow rules decide a live request with, so that they see
/// exactly what an offline replay of the log would.
pub fn recorded_script(d: &Decision) -> Option<ModelScript> {
    match model_section(d) {
        Value::Null => None,
        m => recorded_answer(&m).ok(),
    }
}

/// The logged answer as a scripted one: its calls, or an error of the same kind (any model
/// error ends in plain chat, so the kind only changes the trace's words).
fn recorded_answer(m: &Value) -> Result<ModelScript, String> {
    if let Some(kind) = m.get("error").and_then(Value::as_str) {
        return Ok(ModelScript {
            calls: Vec::new(),
            error: Some(script_error(kind).to_owned()),
        });
    }
    let calls = m
        .get("calls")
        .and_then(Value::as_array)
        .ok_or("model: neither calls nor error")?;
    let calls = calls
        .iter()
        .map(|c| {
            let tool = c["tool"].as_str().ok_or("model: a call without a tool")?;
            Ok(ScriptedCall {
                tool: tool.to_owned(),
                arguments: c
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
                unknown: false,
            })
        })
        .collect::<Result<Vec<_>, &str>>()?;
    Ok(ModelScript { calls, error: None })
}

/// The scripted error (`model::scripted::parse_error`) that fails as `kind` did.
pub(super) fn script_error(kind: &str) -> &'static str {
    match kind {
        "timeout" => "timeout",
        "connection" => "connection_refused",
        "rate_limited" => "rate_limited",
        "http_4xx" => "http_400",
        "http_5xx" => "http_500",
        "invalid_json" => "invalid_json",
        "bad_arguments_json" => "bad_arguments_json",
        // `answer_too_large` and anything newer: unreadable, a plain chat answer all the same.
        _ => "garbage",
    }
}

/// `t` as RFC 3339 in UTC with milliseconds: `2026-12-02T00:13:24.123Z`.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::sync::Arc;

    use super::*;
    use crate::contract::{Call, ModelCall, Outcome, ReceivedCall, TraceStep};
    use std::time::{Duration, UNIX_EPOCH};

    fn request() -> Request {
        Request::from_json(
            r#"{"messages":[{"role":"assistant","content":"which one?"},{"role":"user","content":"buy zebrafrog boots"}],
                "ui":{"open_file":{"name":"secret plans"}},
                "recent_calls":[{"tool":"find","arguments":{"query":"zebrafrog"},"ok":true}]}"#,
        )
        .expect("a request")
    }

    fn decision() -> Decision {
        Decision {
            outcome: Outcome::Tool,
            calls: vec![Call {
                tool: Arc::from("find"),
                arguments: json!({"query": "zebrafrog boots", "limit": 3}),
                confirm: false,
                chip: Arc::from("Looking"),
            }],
            skill: None,
            skill_badge: None,
            web_search: false,
            model_called: true,
            trace: vec![
                TraceStep::new(Stage::Router, None, "proposed find", "model 'x' saw boots"),
                TraceStep::new(
                    Stage::Search,
                    Some(Arc::from("shop-words")),
                    "web search off",
                    Cow::Borrowed("matched 'zebrafrog' at 4..13"),
                ),
            ],
            rules_version: Arc::from("v1"),
            model_call: Some(ModelCall {
                latency: Duration::from_micros(1500),
                error: None,
                received: Some(vec![ReceivedCall::new(
                    "find",
                    json!({"query": "zebrafrog boots"}),
                )]),
            }),
        }
    }

    fn written(mode: LogMessages) -> String {
        written_with(mode, None)
    }

    /// The test line, with the decision's JSON as answered when given.
    fn written_with(mode: LogMessages, decision_json: Option<&[u8]>) -> String {
        let (req, d) = (request(), decision());
        line(
            &Record {
                time: UNIX_EPOCH + Duration::from_millis(1_795_997_604_123),
                id: "r-1",
                endpoint: "/v1/route",
                router: "embedded",
                request: &req,
                decision: &d,
                decision_json,
            },
            mode,
        )
    }

    #[test]
    fn a_line_around_the_answered_json_is_the_line_written_from_the_decision() {
        let answered = serde_json::to_vec(&decision()).expect("JSON");
        let spliced = written_with(LogMessages::Full, Some(&answered));
        assert_eq!(spliced, written(LogMessages::Full));
        // Personal text is still scrubbed from the decision, not taken from the answer.
        let hashed = written_with(LogMessages::Hash, Some(&answered));
        assert_eq!(hashed, written(LogMessages::Hash));
        assert!(!hashed.contains("zebrafrog"), "{hashed}");
    }

    #[test]
    fn a_full_line_holds_everything_and_reads_back_as_it_was() {
        let text = written(LogMessages::Full);
        assert!(text.ends_with('\n') && !text.trim_end().contains('\n'));
        let v: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(v["time"], "2026-11-30T00:13:24.123Z");
        assert_eq!(v["id"], "r-1");
        assert_eq!(v["rules_version"], "v1");
        assert_eq!(v["model"]["latency_ms"], 1.5);
        assert!(is_log_line(&v));
        let Ok(Read::Replayable {
            id,
            request: req,
            model,
            rules_only,
            decision: Some(d),
        }) = read(&v)
        else {
            panic!("not replayable: {text}");
        };
        assert_eq!(id.as_deref(), Some("r-1"));
        assert!(!rules_only, "logged with the embedded router");
        assert_eq!(req.user_message(), Some("buy zebrafrog boots"));
        let model = model.expect("the recorded answer");
        assert_eq!(model.calls.len(), 1);
        assert_eq!(model.calls[0].tool, "find");
        assert_eq!(
            model.calls[0].arguments,
            json!({"query": "zebrafrog boots"})
        );
        let mut expected = decision();
        expected.model_call = None;
        assert_eq!(*d, expected);
    }

    #[test]
    fn a_failed_model_call_is_logged_as_its_kind_and_replays_as_a_failure() {
        let mut d = decision();
        d.model_call = Some(ModelCall {
            latency: Duration::from_secs(15),
            error: Some("timeout"),
            received: None,
        });
        let req = request();
        let rec = Record {
            time: SystemTime::now(),
            id: "r",
            endpoint: "/v1/route",
            router: "none",
            request: &req,
            decision: &d,
            decision_json: None,
        };
        let v: Value = serde_json::from_str(&line(&rec, LogMessages::Full)).expect("JSON");
        assert_eq!(
            v["model"],
            json!({"error": "timeout", "latency_ms": 15000.0})
        );
        let Ok(Read::Replayable { model, .. }) = read(&v) else {
            panic!("not replayable");
        };
        assert_eq!(model.and_then(|m| m.error).as_deref(), Some("timeout"));
    }

    #[test]
    fn hash_and_none_leave_no_text_of_the_person_in_the_line() {
        for mode in [LogMessages::Hash, LogMessages::None] {
            let text = written(mode);
            for secret in ["zebrafrog", "boots", "secret plans", "which one", "saw"] {
                assert!(!text.contains(secret), "{mode:?} left {secret:?}: {text}");
            }
            let v: Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(v["log_messages"], mode.as_str());
            // What the rules did stays: the tool, the rule and its effect.
            assert_eq!(v["decision"]["calls"][0]["tool"], "find");
            assert_eq!(v["decision"]["calls"][0]["arguments"]["limit"], 3);
            assert_eq!(v["decision"]["trace"][1]["rule"], "shop-words");
            assert_eq!(v["decision"]["trace"][1]["effect"], "web search off");
            assert!(matches!(read(&v), Ok(Read::WithoutTexts { .. })));
        }
        let v: Value = serde_json::from_str(&written(LogMessages::Hash)).expect("JSON");
        let content = &v["request"]["messages"][1]["content"];
        assert_eq!(*content, json!(hash_text("buy zebrafrog boots")));
        assert!(hash_text("a").starts_with("sha256:") && hash_text("a").len() == 39);
        assert_eq!(
            v["request"]["recent_calls"][0]["arguments"]["query"],
            json!(hash_text("zebrafrog")),
            "equal texts hash alike"
        );
        let v: Value = serde_json::from_str(&written(LogMessages::None)).expect("JSON");
        assert_eq!(v["request"]["messages"][1]["content"], Value::Null);
    }

    #[test]
    fn times_are_utc_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }
}
