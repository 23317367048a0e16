//! Checking a parsed file against its JSON Schema (generated in [`crate::rules::schema`]) with
//! messages a product manager can act on.
//!
//! [`SchemaCheck::check`] turns `jsonschema` errors into [`Diagnostic`]s located with the
//! [`SpanMap`]. Externally tagged enums (a `Condition` is a one-key mapping such as
//! `mentions: greetings`) are explained as such — "unknown condition 'mention'" — rather than as
//! the nineteen ways the value failed the schema's `oneOf`.

use std::path::Path;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use super::yaml::{self, Limits, SpanMap, escape};
use crate::diag::{Code, Diagnostic, Location};
use crate::rules::schema;

/// A compiled schema, built once and used for every file of its kind.
pub struct SchemaCheck {
    schema: Value,
    validator: Result<Validator, String>,
    /// "rule file" or "test file", for messages.
    what: &'static str,
}

impl SchemaCheck {
    /// The checker for rule files, built on first use (every reload uses the same one).
    pub fn rules() -> &'static SchemaCheck {
        static CHECK: std::sync::OnceLock<SchemaCheck> = std::sync::OnceLock::new();
        CHECK.get_or_init(|| Self::new(schema::rules_schema(), "rule file"))
    }

    /// The checker for rule test files, built on first use.
    pub fn tests() -> &'static SchemaCheck {
        static CHECK: std::sync::OnceLock<SchemaCheck> = std::sync::OnceLock::new();
        CHECK.get_or_init(|| Self::new(schema::tests_schema(), "test file"))
    }

    /// The checker for router model scripts (`script:FILE`), built on first use.
    pub fn script() -> &'static SchemaCheck {
        static CHECK: std::sync::OnceLock<SchemaCheck> = std::sync::OnceLock::new();
        CHECK.get_or_init(|| Self::new(schema::script_schema(), "model script"))
    }

    fn new(schema: Value, what: &'static str) -> SchemaCheck {
        let validator = jsonschema::draft202012::new(&schema).map_err(|e| e.to_string());
        SchemaCheck {
            schema,
            validator,
            what,
        }
    }

    /// Validates a parsed file. Every problem becomes an error [`Diagnostic`] located with
    /// `spans`: code `unknown-key` (a key the schema does not allow, located at the key),
    /// `missing-key`, `wrong-type`, or `schema` for anything else. An empty file (`Value::Null`)
    /// gives one `empty-file` error at 1:1. Diagnostics come sorted by position.
    pub fn check(&self, path: &Path, value: &Value, spans: &SpanMap) -> Vec<Diagnostic> {
        let mut explain = Explain {
            schema: &self.schema,
            what: self.what,
            path,
            value,
            spans,
            out: Vec::new(),
            suggested: Vec::new(),
            missing: Vec::new(),
            folds_reported: false,
        };
        if value.is_null() {
            let keys = explain.allowed_keys("");
            let hint = match keys.as_slice() {
                [one] => format!("a {} needs '{one}'", self.what),
                _ => format!("a {} needs at least one of: {}", self.what, keys.join(", ")),
            };
            let at = Location::new(path.to_path_buf(), 1, 1);
            return vec![
                Diagnostic::error(Code::EmptyFile, "the file is empty")
                    .at(Some(at))
                    .hint(hint),
            ];
        }
        let validator = match &self.validator {
            Ok(v) => v,
            Err(e) => {
                return vec![Diagnostic::error(
                    Code::Schema,
                    format!("internal error: the built-in schema does not compile: {e}"),
                )];
            }
        };
        for error in validator.iter_errors(value) {
            explain.error(&error);
        }
        // A missing key that an unknown key next to it is a misspelling of (`drop_whn` for
        // `drop_when`) is one mistake, reported once: at the misspelt key.
        let Explain {
            mut out,
            suggested,
            missing,
            ..
        } = explain;
        out.extend(
            missing
                .into_iter()
                .filter(|(inst, key, _)| !suggested.iter().any(|(i, k)| i == inst && k == key))
                .map(|(_, _, d)| d),
        );
        out.sort_by(|a, b| {
            let pos = |d: &Diagnostic| d.location.as_ref().map(|l| (l.line, l.column));
            pos(a).cmp(&pos(b)).then_with(|| a.message.cmp(&b.message))
        });
        out.dedup();
        out
    }
}

/// Parses a YAML file and validates it against `check`'s schema: the value and its span map,
/// or every problem found. Rule files and test files both come in this way.
pub(crate) fn parse_checked(
    path: &Path,
    text: &str,
    check: &SchemaCheck,
    limits: &Limits,
) -> Result<(Value, SpanMap), Vec<Diagnostic>> {
    checked(path, yaml::parse_yaml_limited(path, text, limits), check)
}

/// [`parse_checked`] once the YAML is parsed.
pub(crate) fn checked(
    path: &Path,
    parsed: Result<(Value, SpanMap), Diagnostic>,
    check: &SchemaCheck,
) -> Result<(Value, SpanMap), Vec<Diagnostic>> {
    let (value, spans) = parsed.map_err(|d| vec![d])?;
    let found = check.check(path, &value, &spans);
    if found.is_empty() {
        Ok((value, spans))
    } else {
        Err(found)
    }
}

/// One `check` call's state: turns validation errors into diagnostics.
struct Explain<'a> {
    schema: &'a Value,
    what: &'static str,
    path: &'a Path,
    value: &'a Value,
    spans: &'a SpanMap,
    out: Vec<Diagnostic>,
    /// (object pointer, key) of every unknown key's "did you mean" suggestion.
    suggested: Vec<(String, String)>,
    /// (object pointer, key, finding) of every missing key, kept apart until the end.
    missing: Vec<(String, String, Diagnostic)>,
    /// Whether the folds were explained already (each bad fold fails several keywords).
    folds_reported: bool,
}

impl<'a> Explain<'a> {
    fn error(&mut self, error: &ValidationError<'_>) {
        let inst = error.instance_path().as_str().to_owned();
        let spath = error.schema_path().as_str().to_owned();
        if self.specific(error, &inst) {
            return;
        }
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    self.unknown_key(&inst, &spath, key);
                }
            }
            ValidationErrorKind::Required { property } => {
                let key = property.as_str().unwrap_or_default().to_owned();
                self.missing_key(&inst, &spath, &key);
            }
            ValidationErrorKind::Type { .. } => self.wrong_type(&inst, &spath),
            ValidationErrorKind::OneOfNotValid { context }
            | ValidationErrorKind::AnyOf { context } => {
                self.alternatives(&inst, &spath, context);
            }
            ValidationErrorKind::Enum { options } => {
                let names: Vec<String> = options
                    .as_array()
                    .map(|a| a.iter().map(scalar_text).collect())
                    .unwrap_or_default();
                self.unknown_value(&inst, &parent(&spath), &names);
            }
            ValidationErrorKind::Constant { expected_value } => {
                let found = self.found(&inst);
                let message = format!("expected {}, found {found}", scalar_text(expected_value));
                self.push(Code::Schema, message, self.value_at(&inst), None, &inst);
            }
            ValidationErrorKind::Pattern { pattern } => {
                let what = match last_key(&inst) {
                    Some(key) => format!("a valid '{key}'"),
                    None => "valid here".to_owned(),
                };
                let message = format!("{} is not {what}", self.found_value(&inst));
                let mut hint = self.description(&parent(&spath)).unwrap_or_default();
                if !hint.is_empty() && !hint.ends_with('.') {
                    hint.push('.');
                }
                if !hint.is_empty() {
                    hint.push(' ');
                }
                match pattern_in_words(pattern) {
                    Some(words) => hint.push_str(&format!("It must be {words}")),
                    None => hint.push_str(&format!("It must match the pattern {pattern}")),
                }
                if let Some(fixed) = self.fixed_to(&inst, pattern) {
                    hint.push_str(&format!("; did you mean '{fixed}'?"));
                }
                self.push(
                    Code::Schema,
                    message,
                    self.value_at(&inst),
                    Some(hint),
                    &inst,
                );
            }
            ValidationErrorKind::Minimum { limit } => {
                let message = format!("expected at least {limit}, found {}", self.found(&inst));
                self.push(Code::Schema, message, self.value_at(&inst), None, &inst);
            }
            ValidationErrorKind::Maximum { limit } => {
                let message = format!("expected at most {limit}, found {}", self.found(&inst));
                self.push(Code::Schema, message, self.value_at(&inst), None, &inst);
            }
            ValidationErrorKind::MinItems { limit } => {
                let message = format!("expected at least {limit} item(s) in this list");
                self.push(Code::Schema, message, self.value_at(&inst), None, &inst);
            }
            ValidationErrorKind::MinLength { limit } => {
                let empty = self.instance(&inst).as_str() == Some("");
                let (message, hint) = if empty {
                    (
                        "this text is empty".to_owned(),
                        Some("write the text between the quotes, or remove the entry".to_owned()),
                    )
                } else {
                    (format!("expected at least {limit} character(s)"), None)
                };
                self.push(Code::Schema, message, self.value_at(&inst), hint, &inst);
            }
            _ => {
                let message = error.to_string();
                self.push(Code::Schema, message, self.value_at(&inst), None, &inst);
            }
        }
    }

    /// Rules the schema states so that editors show them as you type, reported with the code
    /// and words of the check they stand for (the compiler's own checks of the same rules stay
    /// as a safety net). Returns whether `error` was one of them.
    fn specific(&mut self, error: &ValidationError<'_>, inst: &str) -> bool {
        let (key, parent_ptr) = match inst.rsplit_once('/') {
            Some((parent, key)) => (key, parent),
            None => ("", ""),
        };
        let in_list = |field: &str| {
            key == field
                && parent_ptr.starts_with("/word_lists/")
                && parent_ptr.matches('/').count() == 2
        };
        match error.kind() {
            ValidationErrorKind::MinItems { .. } if key == "all" || key == "any" => {
                let message = format!("'{key}' needs at least one condition");
                self.push(
                    Code::EmptyCondition,
                    message,
                    self.value_at(inst),
                    None,
                    inst,
                );
                true
            }
            ValidationErrorKind::MinItems { .. } if in_list("words") || in_list("patterns") => {
                let message = format!(
                    "word list '{}' has an empty '{key}' list",
                    self.list_id(parent_ptr)
                );
                let hint = "give it entries, or remove the key".to_owned();
                self.push(
                    Code::EmptyList,
                    message,
                    self.value_at(inst),
                    Some(hint),
                    inst,
                );
                true
            }
            ValidationErrorKind::AnyOf { .. }
                if inst.starts_with("/word_lists/") && inst.matches('/').count() == 2 =>
            {
                let message = format!(
                    "word list '{}' has no words and no patterns",
                    self.list_id(inst)
                );
                let at = self.value_at(&format!("{inst}/id"));
                self.push(Code::EmptyList, message, at, None, inst);
                true
            }
            _ if inst.starts_with("/matching/folds") => {
                self.bad_folds();
                true
            }
            ValidationErrorKind::Pattern { .. } if inst == "/router/model" => {
                let written = self.instance(inst).as_str().unwrap_or_default();
                let message = match written.parse::<crate::contract::ModelSpec>() {
                    Err(e) => e.to_string(),
                    Ok(_) => format!("'{written}' is not a router model"),
                };
                self.push(Code::BadModel, message, self.value_at(inst), None, inst);
                true
            }
            _ => false,
        }
    }

    /// The id of the word list at `pointer`, for messages.
    fn list_id(&self, pointer: &str) -> String {
        self.instance(pointer)
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    }

    /// Every fold that is not one non-ASCII character to one character, once per file.
    fn bad_folds(&mut self) {
        if self.folds_reported {
            return;
        }
        self.folds_reported = true;
        let Some(folds) = self
            .value
            .pointer("/matching/folds")
            .and_then(Value::as_object)
        else {
            return;
        };
        for (from, to) in folds {
            let one = |s: &str| s.chars().count() == 1;
            let to = to.as_str().unwrap_or_default();
            if one(from) && !from.is_ascii() && one(to) {
                continue;
            }
            let member = format!("/matching/folds/{}", escape(from));
            let message = format!(
                "fold '{from}' → '{to}': each side must be one character, and the first not ASCII (ASCII is only lower-cased)"
            );
            let at = self.key_at(&member, &member);
            self.push(Code::BadFold, message, at, None, &member);
        }
    }

    /// `key` is not allowed in the object at `inst`, whose `additionalProperties` is at `spath`.
    fn unknown_key(&mut self, inst: &str, spath: &str, key: &str) {
        let object = parent(spath);
        let allowed = self.allowed_keys(&object);
        let message = format!("unknown key '{key}' {}", self.where_(inst, &object));
        let mut hint = String::new();
        if let Some(close) = did_you_mean(key, allowed.iter().map(String::as_str)) {
            hint.push_str(&format!("did you mean '{close}'? "));
            self.suggested.push((inst.to_owned(), close.to_owned()));
        }
        if !allowed.is_empty() {
            hint.push_str(&format!("allowed keys: {}", allowed.join(", ")));
        }
        let member = format!("{inst}/{}", escape(key));
        let at = self.key_at(&member, inst);
        let hint = (!hint.is_empty()).then(|| hint.trim_end().to_owned());
        self.push(Code::UnknownKey, message, at, hint, inst);
    }

    /// `key` is required in the object at `inst`, whose `required` is at `spath`.
    fn missing_key(&mut self, inst: &str, spath: &str, key: &str) {
        let object = parent(spath);
        let message = format!("missing key '{key}' {}", self.where_(inst, &object));
        let hint = self
            .description(&format!("{object}/properties/{}", escape(key)))
            .map(|d| format!("'{key}': {d}"));
        self.push(Code::MissingKey, message, self.value_at(inst), hint, inst);
        if let Some(d) = self.out.pop() {
            self.missing.push((inst.to_owned(), key.to_owned(), d));
        }
    }

    /// The value at `inst` has the wrong JSON type; the `type` keyword is at `spath`.
    fn wrong_type(&mut self, inst: &str, spath: &str) {
        let node = parent(spath);
        let types = self.types(&node);
        let found = self.instance(inst);
        let message = format!(
            "expected {}, found {}",
            expected_types(&types, found),
            describe(found)
        );
        let hint = type_hint(&types, found).or_else(|| self.description(&node));
        self.push(Code::WrongType, message, self.value_at(inst), hint, inst);
    }

    fn push(
        &mut self,
        code: Code,
        message: String,
        at: Location,
        hint: Option<String>,
        inst: &str,
    ) {
        let mut d = Diagnostic::error(code, message).at(Some(at));
        if let Some(hint) = hint {
            d = d.hint(hint);
        }
        if let Some(rule) = self.rule_id(inst) {
            d = d.rule(rule);
        }
        self.out.push(d);
    }

    /// The `id` of the innermost list item (`/guards/3`, `/router/notes/0`) that `inst` is in
    /// and that has one.
    fn rule_id(&self, inst: &str) -> Option<String> {
        let mut prefix = inst;
        loop {
            let cut = prefix.rfind('/')?;
            if prefix[cut + 1..].parse::<usize>().is_ok()
                && let Some(id) = self
                    .value
                    .pointer(prefix)
                    .and_then(|item| item.get("id"))
                    .and_then(Value::as_str)
            {
                return Some(id.to_owned());
            }
            prefix = &prefix[..cut];
        }
    }

    /// The value at `inst` (or its nearest located ancestor), as a span.
    fn value_at(&self, inst: &str) -> Location {
        yaml::locate(self.path, self.spans, inst)
    }

    /// The key of `member`, else the value at `fallback`.
    fn key_at(&self, member: &str, fallback: &str) -> Location {
        if self.spans.key(member).is_some() {
            yaml::locate_key(self.path, self.spans, member)
        } else {
            self.value_at(fallback)
        }
    }

    fn instance(&self, inst: &str) -> &'a Value {
        self.value.pointer(inst).unwrap_or(&Value::Null)
    }

    /// The string at `inst` made to match `pattern` (lower case, other characters as `_`), when
    /// that is enough.
    fn fixed_to(&self, inst: &str, pattern: &str) -> Option<String> {
        let s = self.instance(inst).as_str()?;
        let fixed: String = s
            .to_lowercase()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let re = regex::Regex::new(pattern).ok()?;
        [fixed.clone(), fixed.replace('-', "_")]
            .into_iter()
            .find(|f| f != s && re.is_match(f))
    }

    fn found(&self, inst: &str) -> String {
        describe(self.instance(inst))
    }

    /// Like [`Self::found`] but without the type word for strings: `"Foo"`.
    fn found_value(&self, inst: &str) -> String {
        match self.instance(inst) {
            Value::String(s) => quote(s),
            other => describe(other),
        }
    }

    /// "in guard", "in 'attachment'", "at the top level of the rule file".
    fn where_(&self, inst: &str, object: &str) -> String {
        if inst.is_empty() {
            return format!("at the top level of the {}", self.what);
        }
        match (last_key(inst), def_name(object)) {
            (Some(key), _) => format!("in '{key}'"),
            (None, Some(name)) => format!("in {}", words(&name)),
            (None, None) => "here".to_owned(),
        }
    }

    /// The schema node at `pointer`, following `$ref`s.
    fn node(&self, pointer: &str) -> Option<&'a Value> {
        self.schema.pointer(pointer).map(|v| self.resolve(v))
    }

    fn resolve(&self, mut node: &'a Value) -> &'a Value {
        for _ in 0..16 {
            let target = node
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|p| self.schema.pointer(p));
            match target {
                Some(t) => node = t,
                None => break,
            }
        }
        node
    }

    /// The description of the schema node at `pointer` (its own, or its `$ref` target's), on
    /// one line.
    fn description(&self, pointer: &str) -> Option<String> {
        let raw = self.schema.pointer(pointer)?;
        let text = raw
            .get("description")
            .or_else(|| self.resolve(raw).get("description"))
            .and_then(Value::as_str)?;
        Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The description of the alternative named `tag` of the enum at `spath`.
    fn tag_description(&self, spath: &str, tag: &str) -> Option<String> {
        let alt = self
            .node(spath)?
            .as_array()?
            .iter()
            .find(|a| keyed_tag(self.resolve(a)).as_deref() == Some(tag))?;
        alt.get("description")
            .and_then(Value::as_str)
            .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The JSON types allowed by the node at `pointer`.
    fn types(&self, pointer: &str) -> Vec<String> {
        match self.node(pointer).and_then(|n| n.get("type")) {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The keys an object may have, in declaration order (the schema keeps it).
    fn allowed_keys(&self, object: &str) -> Vec<String> {
        self.node(object)
            .and_then(|n| n.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }
}

mod tagged;
mod words;

use words::{
    def_name, describe, did_you_mean, expected_types, keyed_tag, last_key, parent,
    pattern_in_words, quote, scalar_text, type_hint, words,
};

#[cfg(test)]
mod tests;
