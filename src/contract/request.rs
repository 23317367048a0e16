//! The request a chat backend sends for each user message (see the public contract).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// serde's derived code reads a struct from a JSON array of its fields in order as well as from
/// an object; the contract's objects are objects only, as their schemas (`type: object`) say.
/// A struct derives with `#[serde(remote = "Self")]` (and `#[schemars(rename = "…")]`, to keep
/// its schema's name), and this implements the serde traits over the derived functions, reading
/// through [`MapOnly`].
macro_rules! objects_only {
    ($($t:ty),* $(,)?) => {$(
        impl<'de> ::serde::Deserialize<'de> for $t {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$t>::deserialize($crate::contract::request::MapOnly(d))
            }
        }
        impl ::serde::Serialize for $t {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$t>::serialize(self, s)
            }
        }
    )*};
}
pub(crate) use objects_only;

/// A deserializer that reads a struct only from a map (see [`objects_only`]).
pub struct MapOnly<D>(pub D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(v)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(v)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

objects_only!(Request, Message, Ui, OpenFile, Attachment, RecentCall);

/// One chat message to route, with what the client knows about its context.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "Request")]
pub struct Request {
    /// The conversation so far; the last one is the user's new message: its role must be
    /// `user` and its text not blank.
    #[schemars(length(min = 1))]
    pub messages: Vec<Message>,
    /// The skill active in this chat (`null`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// Whether a draft is shown on screen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub draft_shown: bool,
    /// What the user is doing in the interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<Ui>,
    /// The generation mode switched on in the interface, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_mode: Option<GenerationMode>,
    /// Files attached to the message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// Connected integrations (e.g. `google`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrations: Vec<String>,
    /// Recent tool calls in this chat and whether they succeeded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent_calls: Vec<RecentCall>,
    /// The user's web search toggle.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub web_search_toggle: bool,
}

/// A chat message.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "Message")]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
}

/// The author of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person chatting.
    User,
    /// The assistant.
    Assistant,
    /// A system message.
    System,
}

/// The interface hint.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "Ui")]
pub struct Ui {
    /// The interface mode (e.g. documents, mail).
    #[serde(default)]
    pub mode: Option<String>,
    /// The file open on screen.
    #[serde(default)]
    pub open_file: Option<OpenFile>,
    /// The open tab.
    #[serde(default)]
    pub tab: Option<String>,
}

/// A file open in the interface.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "OpenFile")]
pub struct OpenFile {
    /// Its name as the user sees it.
    pub name: String,
}

/// A generation mode of the interface: while on, the text is the generator's prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GenerationMode {
    /// Pictures.
    Image,
    /// Video.
    Video,
    /// Music.
    Music,
    /// Voice-over.
    Voice,
}

impl GenerationMode {
    /// All modes, for checking names written in rules.
    pub const ALL: [GenerationMode; 4] = [Self::Image, Self::Video, Self::Music, Self::Voice];

    /// The name used in requests and rules.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Video => "video",
            Self::Music => "music",
            Self::Voice => "voice",
        }
    }
}

/// An attachment.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "Attachment")]
pub struct Attachment {
    /// Its kind (e.g. `photo`).
    pub kind: String,
    /// Whether a face was detected on it.
    #[serde(default)]
    pub face: bool,
}

/// A tool call made earlier in the chat.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "RecentCall")]
pub struct RecentCall {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: Value,
    /// Whether it succeeded.
    #[serde(default)]
    pub ok: bool,
}

impl Request {
    /// The user's new message (the last one), if the request has one.
    pub fn user_message(&self) -> Option<&str> {
        self.messages.last().map(|m| m.content.as_str())
    }

    /// The last assistant message before the user's new one.
    pub fn last_assistant(&self) -> Option<&str> {
        let before = self.messages.len().checked_sub(1)?;
        self.messages[..before]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.content.as_str())
    }

    /// Checks what serde cannot: a non-empty history ending with a non-empty user message.
    pub fn check(&self) -> Result<(), RequestError> {
        let last = self.messages.last().ok_or(RequestError::NoMessages)?;
        if last.role != Role::User {
            return Err(RequestError::LastNotUser);
        }
        if last.content.trim().is_empty() {
            return Err(RequestError::EmptyMessage);
        }
        Ok(())
    }

    /// Checks that no message is longer than `max_message_chars` characters.
    pub fn check_limits(&self, max_message_chars: usize) -> Result<(), RequestError> {
        match (self.messages.iter()).position(|m| m.content.chars().count() > max_message_chars) {
            Some(index) => Err(RequestError::TooLong {
                index,
                max: max_message_chars,
            }),
            None => Ok(()),
        }
    }
}

/// A request that cannot be routed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    /// `messages` is empty.
    #[error("at least one message is required")]
    NoMessages,
    /// The last message is not the user's.
    #[error("the last message must have role 'user'")]
    LastNotUser,
    /// The user's message is blank.
    #[error("the user's message is empty")]
    EmptyMessage,
    /// The message at `index` is longer than the caller allows ([`Request::check_limits`]).
    #[error("the message is longer than {max} characters")]
    TooLong {
        /// Which message, from the first.
        index: usize,
        /// The most characters allowed.
        max: usize,
    },
}

impl RequestError {
    /// The request field the error is about (`messages`, `messages[3].content`).
    pub fn field(&self) -> String {
        match self {
            Self::TooLong { index, .. } => format!("messages[{index}].content"),
            _ => "messages".to_owned(),
        }
    }

    /// The error code an HTTP answer gives it: `message_too_long` for a message over the
    /// limit, `invalid_request` for the rest.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooLong { .. } => "message_too_long",
            _ => "invalid_request",
        }
    }
}

/// A request body that is not valid JSON of the request's shape.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ParseError {
    /// The field at fault, as a path (`messages[0].role`), or `body` for the whole document.
    pub field: String,
    /// What is wrong, with line and column in the body. Values from the body are cut (see
    /// [`MAX_ECHO`]), so an answer never repeats a large input.
    pub message: String,
}

/// The most characters of an offending key or value that an error message repeats.
pub const MAX_ECHO: usize = 80;

impl Request {
    /// Parses a JSON request and checks it, naming the field at fault on error.
    pub fn from_json(body: &str) -> Result<Request, ParseError> {
        let req: Request = parse_json(body)?;
        req.check().map_err(|e| ParseError {
            field: e.field(),
            message: e.to_string(),
        })?;
        Ok(req)
    }
}

/// Parses one JSON document as a `T`; on error, names the field at fault (a path such as
/// `messages[0].role`) and, for a value of the wrong type, the type `T`'s schema expects there
/// and what the body holds instead. The same explanation serves every JSON body the service
/// reads, so the playground's wrapper around a request reports errors the same way.
pub fn parse_json<T: DeserializeOwned + JsonSchema>(body: &str) -> Result<T, ParseError> {
    // The usual case first, without tracking the path (a fifth of a request's cost); only a
    // body that fails is parsed again to name the field at fault.
    match serde_json::from_str::<T>(body) {
        Ok(v) => Ok(v),
        Err(_) => explain::<T>(body),
    }
}

/// Parses again, tracking where the parser is, to say which field is at fault and why.
fn explain<T: DeserializeOwned + JsonSchema>(body: &str) -> Result<T, ParseError> {
    let de = &mut serde_json::Deserializer::from_str(body);
    let parsed: T = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        // An unknown step (where serde_json fails before a key is read) names nothing.
        let path: Vec<Segment> = e.path().iter().filter_map(Segment::from_step).collect();
        describe_error::<T>(body, path, e.into_inner())
    })?;
    // One document per body: anything after it but whitespace (a second object, a NUL
    // byte, stray text) is refused, not silently dropped.
    de.end().map_err(|e| ParseError {
        field: "body".to_owned(),
        message: format!("{e}: the body must hold one JSON object and nothing after it"),
    })?;
    Ok(parsed)
}

/// One step of a field path.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

impl Segment {
    fn from_step(s: &serde_path_to_error::Segment) -> Option<Self> {
        match s {
            serde_path_to_error::Segment::Seq { index } => Some(Segment::Index(*index)),
            serde_path_to_error::Segment::Map { key } => Some(Segment::Key(key.clone())),
            serde_path_to_error::Segment::Enum { variant } => Some(Segment::Key(variant.clone())),
            serde_path_to_error::Segment::Unknown => None,
        }
    }
}

/// `messages[0].role`, or `body` for the document itself; keys are cut.
fn field_path(path: &[Segment]) -> String {
    if path.is_empty() {
        return "body".to_owned();
    }
    let mut out = String::new();
    for s in path {
        match s {
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&cut(k));
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// At most [`MAX_ECHO`] characters of `s`, with `…` when some were left off.
pub fn cut(s: &str) -> std::borrow::Cow<'_, str> {
    cut_to(s, MAX_ECHO)
}

/// At most `max` characters of `s`, with `…` when some were left off.
pub fn cut_to(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &s[..end]).into(),
        None => s.into(),
    }
}

/// `s` cut and quoted as a JSON string (control characters escaped).
fn quoted(s: &str) -> String {
    serde_json::to_string(&*cut(s)).unwrap_or_default()
}

/// The names serde puts between backticks in its messages (`unknown field `x`, expected …`).
fn backticked(message: &str) -> Vec<&str> {
    message.split('`').skip(1).step_by(2).collect()
}

fn describe_error<T: JsonSchema>(
    body: &str,
    mut path: Vec<Segment>,
    error: serde_json::Error,
) -> ParseError {
    let at = format!(" at line {} column {}", error.line(), error.column());
    // A body that is not JSON at all: serde's own words say what and where, and hold no value.
    let Ok(document) = serde_json::from_str::<Value>(body) else {
        return ParseError {
            field: field_path(&path),
            message: error.to_string(),
        };
    };
    // The message without serde's position (it is added back, once, below).
    let full = error.to_string();
    let message = full.strip_suffix(&at).unwrap_or(&full);
    if let Some(rest) = message.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or_default();
        path.push(Segment::Key(name.to_owned()));
        return ParseError {
            field: field_path(&path),
            message: format!("this field is required{at}"),
        };
    }
    if message.starts_with("unknown field `") {
        // The path may already end with the key being read: the field is its object.
        let names = backticked(message);
        let key = names.first().copied().unwrap_or_default();
        if path.last() == Some(&Segment::Key(key.to_owned())) {
            path.pop();
        }
        let expected: Vec<String> = names[1.min(names.len())..]
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        let expected = match expected.as_slice() {
            [] => "no fields".to_owned(),
            [one] => one.clone(),
            many => format!("one of {}", many.join(", ")),
        };
        return ParseError {
            field: field_path(&path),
            message: format!("unknown field {}, expected {expected}{at}", quoted(key)),
        };
    }
    if message.starts_with("duplicate field `") {
        return ParseError {
            field: field_path(&path),
            message: format!("the field is given twice{at}"),
        };
    }
    // Anything else is a value of the wrong type or out of its set (serde's words for that
    // echo the value whole, or for an enum say only "expected value"): say what the schema
    // expects there and what the body holds.
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let expected = schema_at(&schema, &path).map(|s| expected_of(&schema, s));
    let got = value_at(&document, &path).map(describe_value);
    let message = match (expected, got) {
        (Some(expected), Some(got)) => format!("expected {expected}, got {got}{at}"),
        // Not a type error the schema can explain: serde's words, cut.
        _ => format!("{}{at}", cut(message)),
    };
    ParseError {
        field: field_path(&path),
        message,
    }
}

/// The value at `path` in `document`.
fn value_at<'v>(document: &'v Value, path: &[Segment]) -> Option<&'v Value> {
    path.iter().try_fold(document, |v, s| match s {
        Segment::Key(k) => v.get(k),
        Segment::Index(i) => v.get(i),
    })
}

/// `s` with its `$ref` followed (within `root`).
fn resolve<'s>(root: &'s Value, s: &'s Value) -> &'s Value {
    let mut s = s;
    // A reference chain is short; the bound keeps a cyclic one from looping.
    for _ in 0..16 {
        let Some(name) = s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        else {
            break;
        };
        match root.get("$defs").and_then(|d| d.get(name)) {
            Some(next) => s = next,
            None => break,
        }
    }
    s
}

/// The alternatives of `s` that are not `null` (an `Option<Struct>` is `anyOf [struct, null]`).
fn non_null_branches<'s>(root: &'s Value, s: &'s Value) -> Vec<&'s Value> {
    let s = resolve(root, s);
    match s
        .get("anyOf")
        .or_else(|| s.get("oneOf"))
        .and_then(Value::as_array)
    {
        Some(branches) => branches
            .iter()
            .map(|b| resolve(root, b))
            .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
            .collect(),
        None => vec![s],
    }
}

/// The schema of the value at `path`, walking `properties` and `items` from the root.
fn schema_at<'s>(root: &'s Value, path: &[Segment]) -> Option<&'s Value> {
    path.iter().try_fold(root, |s, step| {
        non_null_branches(root, s)
            .into_iter()
            .find_map(|b| match step {
                Segment::Key(k) => b.get("properties").and_then(|p| p.get(k)),
                Segment::Index(_) => b.get("items"),
            })
    })
}

/// What a schema asks for, in words: `a string, one of "image", "video", or null`.
fn expected_of(root: &Value, s: &Value) -> String {
    let mut wanted = Wanted::default();
    wanted.collect(root, s, 0);
    let mut out = wanted.words.join(" or ");
    if !wanted.consts.is_empty() {
        out.push_str(if out.is_empty() {
            "one of "
        } else {
            ", one of "
        });
        out.push_str(&wanted.consts.join(", "));
    }
    if wanted.null {
        out.push_str(if out.is_empty() { "null" } else { ", or null" });
    }
    out
}

/// The types, constants and nullability a schema allows, gathered through `anyOf`/`oneOf`.
#[derive(Default)]
struct Wanted {
    words: Vec<&'static str>,
    consts: Vec<String>,
    null: bool,
}

impl Wanted {
    fn word(&mut self, w: &'static str) {
        if !self.words.contains(&w) {
            self.words.push(w);
        }
    }

    fn collect(&mut self, root: &Value, s: &Value, depth: usize) {
        let s = resolve(root, s);
        if let Some(Value::Array(branches)) = s.get("anyOf").or_else(|| s.get("oneOf")) {
            // Schemas nest a few levels at most (an Option of an enum of constants).
            if depth < 8 {
                for b in branches {
                    self.collect(root, b, depth + 1);
                }
            }
            return;
        }
        let types: Vec<&str> = match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for t in &types {
            match *t {
                "null" => self.null = true,
                "string" => self.word("a string"),
                "boolean" => self.word("true or false"),
                "integer" => self.word("an integer"),
                "number" => self.word("a number"),
                "array" => self.word("an array"),
                "object" => self.word("an object"),
                _ => {}
            }
        }
        if let Some(c) = s.get("const") {
            self.consts.push(c.to_string());
        }
        if let Some(Value::Array(e)) = s.get("enum") {
            for v in e {
                if v.is_null() {
                    self.null = true;
                } else {
                    self.consts.push(v.to_string());
                }
            }
        }
        if types.is_empty() && s.get("const").is_none() && s.get("enum").is_none() {
            self.word("any JSON value");
        }
    }
}

/// What a value is, in words, cut: `the number 5`, `the string "…"`, `an array of 3 items`.
fn describe_value(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {}", cut(&n.to_string())),
        Value::String(s) => format!("the string {}", quoted(s)),
        Value::Array(a) if a.len() == 1 => "an array of 1 item".to_owned(),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(body: &str) -> ParseError {
        match Request::from_json(body) {
            Ok(r) => panic!("accepted {body}: {r:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_valid_request_parses() {
        let r = Request::from_json(r#"{"messages":[{"role":"user","content":"hi"}]}"#);
        assert_eq!(r.map(|r| r.messages.len()).ok(), Some(1));
    }

    #[test]
    fn a_number_for_the_generation_mode_names_the_field_and_the_modes() {
        let e = error_of(r#"{"messages":[{"role":"user","content":"hi"}],"generation_mode":5}"#);
        assert_eq!(e.field, "generation_mode");
        assert_eq!(
            e.message,
            r#"expected a string, one of "image", "video", "music", "voice", or null, got the number 5 at line 1 column 64"#
        );
    }

    #[test]
    fn an_unknown_role_is_cut_and_the_roles_listed() {
        let long = "x".repeat(1000);
        let e = error_of(&format!(
            r#"{{"messages":[{{"role":"{long}","content":"hi"}}]}}"#
        ));
        assert_eq!(e.field, "messages[0].role");
        assert!(
            e.message.starts_with(
                r#"expected a string, one of "user", "assistant", "system", got the string "xxx"#
            ),
            "{}",
            e.message
        );
        assert!(e.message.contains("x…\""), "{}", e.message);
        assert!(e.message.len() < 250, "{}", e.message);
    }

    #[test]
    fn a_wrong_type_in_a_nested_object_names_its_path() {
        for (body, field, start) in [
            (
                r#"{"messages":[{"role":"user","content":"hi"}],"ui":{"open_file":{"name":7}}}"#,
                "ui.open_file.name",
                "expected a string, got the number 7",
            ),
            (
                r#"{"messages":[{"role":"user","content":"hi"}],"draft_shown":"yes"}"#,
                "draft_shown",
                r#"expected true or false, got the string "yes""#,
            ),
            (
                r#"{"messages":[["user", "hi"]]}"#,
                "messages[0]",
                "expected an object, got an array",
            ),
            (
                r#"{"messages":{"role":"user"}}"#,
                "messages",
                "expected an array, got an object",
            ),
            // serde's derived code would take an array of the fields in order.
            (
                r#"[[{"role": "user", "content": "hi"}]]"#,
                "body",
                "expected an object, got an array of 1 item",
            ),
        ] {
            let e = error_of(body);
            assert_eq!(e.field, field, "{body}");
            assert!(e.message.starts_with(start), "{body}: {}", e.message);
        }
    }

    #[test]
    fn a_huge_unknown_key_is_echoed_once_and_cut() {
        let key = "k".repeat(900_000);
        let e = error_of(&format!(
            r#"{{"messages":[{{"role":"user","content":"hi","{key}":1}}]}}"#
        ));
        assert_eq!(e.field, "messages[0]");
        assert!(e.message.len() < 300, "{} bytes", e.message.len());
        assert_eq!(e.message.matches("\"kkk").count(), 1, "{}", e.message);
        assert!(
            e.message.contains("expected `role` or `content`")
                || e.message.contains("one of `role`, `content`"),
            "{}",
            e.message
        );
        let e = error_of(&format!(
            r#"{{"messages":[{{"role":"user","content":"hi"}}],"{key}":1}}"#
        ));
        assert_eq!(e.field, "body");
        assert!(e.message.len() < 600, "{} bytes", e.message.len());
    }

    #[test]
    fn a_missing_field_is_named_with_its_path() {
        let e = error_of(r#"{"messages":[{"role":"user"}]}"#);
        assert_eq!(e.field, "messages[0].content");
        assert!(
            e.message.starts_with("this field is required"),
            "{}",
            e.message
        );
        let e = error_of("{}");
        assert_eq!(e.field, "messages");
    }

    #[test]
    fn a_huge_string_of_the_wrong_type_is_cut() {
        let long = "y".repeat(500_000);
        let e = error_of(&format!(
            r#"{{"messages":[{{"role":"user","content":"hi"}}],"web_search_toggle":"{long}"}}"#
        ));
        assert_eq!(e.field, "web_search_toggle");
        assert!(e.message.len() < 250, "{} bytes", e.message.len());
    }

    #[test]
    fn broken_json_keeps_the_parsers_position() {
        let e = error_of("{");
        assert_eq!(e.field, "body");
        let e = error_of(r#"{"messages": [}"#);
        assert!(e.message.contains("line 1 column"), "{}", e.message);
        let e = error_of(r#"{"messages":[{"role":"user","content":"hi"}]} {}"#);
        assert_eq!(e.field, "body");
    }

    #[test]
    fn what_serde_cannot_check_is_refused_too() {
        assert_eq!(error_of(r#"{"messages":[]}"#).field, "messages");
        let e = error_of(r#"{"messages":[{"role":"assistant","content":"hi"}]}"#);
        assert!(e.message.contains("role 'user'"), "{}", e.message);
        assert!(
            error_of(r#"{"messages":[{"role":"user","content":" \n"}]}"#)
                .message
                .contains("empty")
        );
    }

    #[test]
    fn cut_keeps_short_text_and_marks_long_text() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(100);
        let c = cut(&long);
        assert_eq!(c.chars().count(), MAX_ECHO + 1);
        assert!(c.ends_with('…'));
    }
}
