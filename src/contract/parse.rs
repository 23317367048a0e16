//! Reading a JSON body into a contract type: on error, the field at fault as a path and, for a
//! value of the wrong type, what the type's schema expects there and what the body holds.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::request::Request;

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
