//! The JSON Schemas of rule files and rule test files, and checking a parsed file against them
//! with messages a product manager can act on.
//!
//! The schemas are generated from the serde types in [`crate::rules`] (schemars, draft 2020-12)
//! and committed under `schemas/` so editors can offer completion and tooltips; the test
//! `committed_schemas_are_current` keeps the committed copies in step with the types.
//!
//! [`SchemaCheck::check`] turns `jsonschema` errors into [`Diagnostic`]s located with the
//! [`SpanMap`]. Externally tagged enums (a `Condition` is a one-key mapping such as
//! `mentions: greetings`) are explained as such — "unknown condition 'mention'" — rather than as
//! the nineteen ways the value failed the schema's `oneOf`.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde_json::Value;

use crate::compile::source::{SpanMap, escape};
use crate::diag::{Diagnostic, Location};

/// The committed rule file schema, under `schemas/`.
pub const RULES_SCHEMA_FILE: &str = "rules.schema.json";
/// The committed rule test file schema, under `schemas/`.
pub const TESTS_SCHEMA_FILE: &str = "tests.schema.json";

/// JSON Schema of rule files, generated from [`crate::rules::RuleFile`] (draft 2020-12).
pub fn rules_schema() -> Value {
    generate::<crate::rules::RuleFile>("urn:turnout:schema:rules")
}

/// JSON Schema of rule test files, generated from [`crate::rules::testcase::TestFile`].
pub fn tests_schema() -> Value {
    generate::<crate::rules::testcase::TestFile>("urn:turnout:schema:tests")
}

fn generate<T: JsonSchema>(id: &str) -> Value {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.insert("$id".into(), Value::String(id.into()));
    }
    value
}

/// A schema as committed: pretty-printed JSON with a trailing newline.
pub fn schema_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes both schemas into `dir` (normally the crate's `schemas/`); returns the files written.
pub fn write_schemas(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (file, schema) in [
        (RULES_SCHEMA_FILE, rules_schema()),
        (TESTS_SCHEMA_FILE, tests_schema()),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, schema_text(&schema))?;
        written.push(path);
    }
    Ok(written)
}

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
        CHECK.get_or_init(|| Self::new(rules_schema(), "rule file"))
    }

    /// The checker for rule test files, built on first use.
    pub fn tests() -> &'static SchemaCheck {
        static CHECK: std::sync::OnceLock<SchemaCheck> = std::sync::OnceLock::new();
        CHECK.get_or_init(|| Self::new(tests_schema(), "test file"))
    }

    /// The checker for router model scripts (`script:FILE`), built on first use.
    pub fn script() -> &'static SchemaCheck {
        static CHECK: std::sync::OnceLock<SchemaCheck> = std::sync::OnceLock::new();
        CHECK.get_or_init(|| {
            Self::new(
                generate::<crate::rules::testcase::ModelScript>("urn:turnout:schema:script"),
                "model script",
            )
        })
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
            let at = Location {
                file: path.to_path_buf(),
                line: 1,
                column: 1,
            };
            return vec![
                Diagnostic::error("empty-file", "the file is empty")
                    .at(Some(at))
                    .hint(hint),
            ];
        }
        let validator = match &self.validator {
            Ok(v) => v,
            Err(e) => {
                return vec![Diagnostic::error(
                    "schema",
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
                self.push("schema", message, self.value_at(&inst), None, &inst);
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
                hint.push_str(&format!("It must match the pattern {pattern}"));
                self.push("schema", message, self.value_at(&inst), Some(hint), &inst);
            }
            ValidationErrorKind::Minimum { limit } => {
                let message = format!("expected at least {limit}, found {}", self.found(&inst));
                self.push("schema", message, self.value_at(&inst), None, &inst);
            }
            ValidationErrorKind::Maximum { limit } => {
                let message = format!("expected at most {limit}, found {}", self.found(&inst));
                self.push("schema", message, self.value_at(&inst), None, &inst);
            }
            ValidationErrorKind::MinItems { limit } => {
                let message = format!("expected at least {limit} item(s) in this list");
                self.push("schema", message, self.value_at(&inst), None, &inst);
            }
            ValidationErrorKind::MinLength { limit } => {
                let message = format!("expected at least {limit} character(s)");
                self.push("schema", message, self.value_at(&inst), None, &inst);
            }
            _ => {
                let message = error.to_string();
                self.push("schema", message, self.value_at(&inst), None, &inst);
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
                self.push("empty-condition", message, self.value_at(inst), None, inst);
                true
            }
            ValidationErrorKind::MinItems { .. } if in_list("words") || in_list("patterns") => {
                let message = format!(
                    "word list '{}' has an empty '{key}' list",
                    self.list_id(parent_ptr)
                );
                let hint = "give it entries, or remove the key".to_owned();
                self.push("empty-list", message, self.value_at(inst), Some(hint), inst);
                true
            }
            ValidationErrorKind::AnyOf { .. }
                if inst.starts_with("/word_lists/") && inst.matches('/').count() == 2 =>
            {
                let message = format!(
                    "word list '{}' has no words and no patterns",
                    self.list_id(inst)
                );
                let at = self
                    .spans
                    .value(&format!("{inst}/id"))
                    .unwrap_or(self.value_at(inst));
                self.push("empty-list", message, at, None, inst);
                true
            }
            _ if inst.starts_with("/matching/folds") => {
                self.bad_folds();
                true
            }
            ValidationErrorKind::Pattern { .. } if inst == "/router/model" => {
                let written = self.instance(inst).as_str().unwrap_or_default();
                let message = match written.parse::<crate::model::ModelSpec>() {
                    Err(e) => e.to_string(),
                    Ok(_) => format!("'{written}' is not a router model"),
                };
                self.push("bad-model", message, self.value_at(inst), None, inst);
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
            let at = self
                .spans
                .key(&member)
                .unwrap_or_else(|| self.value_at(&member));
            self.push("bad-fold", message, at, None, &member);
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
        let at = self
            .spans
            .key(&member)
            .unwrap_or_else(|| self.spans.nearest(inst));
        let hint = (!hint.is_empty()).then(|| hint.trim_end().to_owned());
        self.push("unknown-key", message, at, hint, inst);
    }

    /// `key` is required in the object at `inst`, whose `required` is at `spath`.
    fn missing_key(&mut self, inst: &str, spath: &str, key: &str) {
        let object = parent(spath);
        let message = format!("missing key '{key}' {}", self.where_(inst, &object));
        let hint = self
            .description(&format!("{object}/properties/{}", escape(key)))
            .map(|d| format!("'{key}': {d}"));
        self.push("missing-key", message, self.value_at(inst), hint, inst);
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
        self.push("wrong-type", message, self.value_at(inst), hint, inst);
    }

    /// The value at `inst` fails a `oneOf`/`anyOf` at `spath`; `context` holds each
    /// alternative's errors, in order.
    fn alternatives(&mut self, inst: &str, spath: &str, context: &[Vec<ValidationError<'static>>]) {
        let found = self.instance(inst);
        let alts: Vec<&Value> = self
            .node(spath)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|alt| self.resolve(alt)).collect())
            .unwrap_or_default();
        // (alternative schema, its errors); a `null` alternative (an `Option`) says nothing
        // useful about a value that is not null.
        let branches: Vec<(&Value, &Vec<ValidationError<'static>>)> = alts
            .iter()
            .copied()
            .zip(context)
            .filter(|(alt, _)| found.is_null() || !is_null_schema(alt))
            .collect();
        if let [(_, errors)] = branches.as_slice() {
            for e in errors.iter() {
                self.error(e);
            }
            return;
        }
        if let Some(tags) = tagged(&branches) {
            self.tagged(inst, spath, &tags, &branches);
            return;
        }
        // Each alternative is just a different type: "expected a boolean or a string".
        let mut types: Vec<String> = Vec::new();
        let mut all_types = !branches.is_empty();
        for (_, errors) in &branches {
            match errors.as_slice() {
                [e] if matches!(e.kind(), ValidationErrorKind::Type { .. })
                    && e.instance_path().as_str() == inst =>
                {
                    for t in self.types(&parent(e.schema_path().as_str())) {
                        if !types.contains(&t) {
                            types.push(t);
                        }
                    }
                }
                _ => all_types = false,
            }
        }
        if all_types {
            let message = format!(
                "expected {}, found {}",
                expected_types(&types, found),
                describe(found)
            );
            let hint = self
                .description(&parent(spath))
                .or_else(|| type_hint(&types, found));
            self.push("wrong-type", message, self.value_at(inst), hint, inst);
            return;
        }
        // Otherwise explain the alternative that got furthest: the one whose errors are the
        // deepest in the document, then the one with the fewest errors.
        let best = branches.iter().max_by_key(|(_, errors)| {
            let depth = errors
                .iter()
                .map(|e| e.instance_path().as_str().matches('/').count())
                .max()
                .unwrap_or(0);
            (depth, std::cmp::Reverse(errors.len()))
        });
        match best {
            Some((_, errors)) if !errors.is_empty() => {
                for e in errors.iter() {
                    self.error(e);
                }
            }
            _ => {
                let message = format!("{} is not valid here", describe(found));
                self.push("schema", message, self.value_at(inst), None, inst);
            }
        }
    }

    /// An externally tagged enum: each alternative is a one-key mapping (`mentions: x`) or a
    /// bare name. `tags` lists every name, in schema order.
    fn tagged(
        &mut self,
        inst: &str,
        spath: &str,
        tags: &Tags,
        branches: &[(&Value, &Vec<ValidationError<'static>>)],
    ) {
        let noun = def_name(&parent(spath)).map_or_else(|| "value".to_owned(), |n| words(&n));
        let names = tags.all();
        let list = names.join(", ");
        let found = self.instance(inst);
        match found {
            Value::Object(map) => {
                let (known, unknown): (Vec<&String>, Vec<&String>) =
                    map.keys().partition(|k| tags.keyed.contains(k));
                for key in &unknown {
                    let message = format!("unknown {noun} '{key}'; expected one of: {list}");
                    let hint = did_you_mean(key, names.iter().map(String::as_str))
                        .map(|c| format!("did you mean '{c}'?"));
                    let member = format!("{inst}/{}", escape(key));
                    let at = self
                        .spans
                        .key(&member)
                        .unwrap_or_else(|| self.value_at(inst));
                    self.push("unknown-key", message, at, hint, inst);
                }
                match known.as_slice() {
                    [] if unknown.is_empty() => {
                        let message = format!("empty {noun}; write one of: {list}");
                        self.push("missing-key", message, self.value_at(inst), None, inst);
                    }
                    [] => {}
                    [key] => {
                        let errors = branches
                            .iter()
                            .find(|(alt, _)| keyed_tag(alt).as_deref() == Some(key.as_str()))
                            .map(|(_, e)| *e);
                        for e in errors.into_iter().flatten() {
                            // The unknown keys were reported above.
                            if matches!(e.kind(), ValidationErrorKind::AdditionalProperties { .. })
                                && e.instance_path().as_str() == inst
                            {
                                continue;
                            }
                            self.error(e);
                        }
                    }
                    several => {
                        let keys: Vec<&str> = several.iter().map(|k| k.as_str()).collect();
                        let message = format!(
                            "a {noun} takes exactly one key, found {}: {}",
                            keys.len(),
                            keys.join(", ")
                        );
                        let hint = (tags.keyed.iter().any(|t| t == "all")
                            && tags.keyed.iter().any(|t| t == "any"))
                        .then(|| {
                            format!(
                                "to combine several, list them under 'all:' (every one must \
                                 hold) or 'any:' (at least one must), e.g. all: [{{{}: ...}}, \
                                 {{{}: ...}}]",
                                keys[0], keys[1]
                            )
                        });
                        self.push("schema", message, self.value_at(inst), hint, inst);
                    }
                }
            }
            Value::String(s) if tags.keyed.contains(s) => {
                let message = format!("the {noun} '{s}' needs a value, written as '{s}: ...'");
                let hint = self.tag_description(spath, s);
                self.push("wrong-type", message, self.value_at(inst), hint, inst);
            }
            Value::String(s) if !tags.bare.is_empty() => {
                let message = format!("unknown {noun} '{s}'; expected one of: {list}");
                let hint = did_you_mean(s, names.iter().map(String::as_str))
                    .map(|c| format!("did you mean '{c}'?"));
                self.push("schema", message, self.value_at(inst), hint, inst);
            }
            other => {
                let message = format!("expected a {noun}, found {}", describe(other));
                let mut hint = format!("a {noun} is a mapping with one key, one of: {list}");
                if let Value::String(s) = other
                    && let Some(c) = did_you_mean(s, names.iter().map(String::as_str))
                {
                    hint = format!("did you mean '{c}: ...'? {hint}");
                }
                self.push("wrong-type", message, self.value_at(inst), Some(hint), inst);
            }
        }
    }

    /// A value not among `names` (an `enum` at `node`).
    fn unknown_value(&mut self, inst: &str, node: &str, names: &[String]) {
        let found = self.instance(inst);
        let shown = match found {
            Value::String(s) => format!("'{s}'"),
            other => describe(other),
        };
        let noun = def_name(node).map_or_else(|| "value".to_owned(), |n| words(&n));
        let message = format!(
            "unknown {noun} {shown}; expected one of: {}",
            names.join(", ")
        );
        let hint = found
            .as_str()
            .and_then(|s| did_you_mean(s, names.iter().map(String::as_str)))
            .map(|c| format!("did you mean '{c}'?"));
        self.push("schema", message, self.value_at(inst), hint, inst);
    }

    fn push(
        &mut self,
        code: &'static str,
        message: String,
        (line, column): (usize, usize),
        hint: Option<String>,
        inst: &str,
    ) {
        let mut d = Diagnostic::error(code, message).at(Some(Location {
            file: self.path.to_path_buf(),
            line,
            column,
        }));
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

    fn value_at(&self, inst: &str) -> (usize, usize) {
        self.spans
            .value(inst)
            .unwrap_or_else(|| self.spans.nearest(inst))
    }

    fn instance(&self, inst: &str) -> &'a Value {
        self.value.pointer(inst).unwrap_or(&Value::Null)
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

    /// The keys an object schema allows, in the order the Rust type declares them.
    fn allowed_keys(&self, object: &str) -> Vec<String> {
        let Some(properties) = self
            .node(object)
            .and_then(|n| n.get("properties"))
            .and_then(Value::as_object)
        else {
            return Vec::new();
        };
        let mut keys: Vec<String> = Vec::new();
        let order = def_name(object)
            .or_else(|| {
                // The root object: its title is not its type name, so use the root's order.
                object.is_empty().then(|| self.root_name())
            })
            .and_then(|name| field_orders().get(name.as_str()).copied());
        for field in order.unwrap_or_default() {
            if properties.contains_key(*field) {
                keys.push((*field).to_owned());
            }
        }
        for key in properties.keys() {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
        keys
    }

    fn root_name(&self) -> String {
        if self.what == "test file" {
            "TestFile".to_owned()
        } else {
            "RuleFile".to_owned()
        }
    }
}

/// The names of an externally tagged enum's variants.
struct Tags {
    /// Variants written as a one-key mapping (`mentions: x`), in schema order.
    keyed: Vec<String>,
    /// Variants written as a bare name.
    bare: Vec<String>,
}

impl Tags {
    fn all(&self) -> Vec<String> {
        self.keyed.iter().chain(&self.bare).cloned().collect()
    }
}

/// `Some` when every alternative is a one-key mapping or a bare name (serde's externally
/// tagged enum, or a plain enum of names).
fn tagged(branches: &[(&Value, &Vec<ValidationError<'static>>)]) -> Option<Tags> {
    let mut tags = Tags {
        keyed: Vec::new(),
        bare: Vec::new(),
    };
    for (alt, _) in branches {
        if let Some(tag) = keyed_tag(alt) {
            tags.keyed.push(tag);
        } else if let Some(Value::String(name)) = alt.get("const") {
            tags.bare.push(name.clone());
        } else if let Some(Value::Array(names)) = alt.get("enum") {
            for name in names {
                tags.bare.push(name.as_str()?.to_owned());
            }
        } else {
            return None;
        }
    }
    (!tags.keyed.is_empty() || !tags.bare.is_empty()).then_some(tags)
}

/// The tag of a `{type: object, required: [tag], properties: {tag: ..}}` alternative.
fn keyed_tag(alt: &Value) -> Option<String> {
    if alt.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    match alt.get("required").and_then(Value::as_array)?.as_slice() {
        [Value::String(tag)] => Some(tag.clone()),
        _ => None,
    }
}

fn is_null_schema(alt: &Value) -> bool {
    alt.get("type").and_then(Value::as_str) == Some("null")
}

/// The pointer without its last segment.
fn parent(pointer: &str) -> String {
    pointer
        .rfind('/')
        .map_or_else(String::new, |i| pointer[..i].to_owned())
}

/// The last segment of an instance pointer when it is a mapping key (not a list index).
fn last_key(inst: &str) -> Option<String> {
    let last = inst.rsplit('/').next()?;
    if inst.is_empty() || last.parse::<usize>().is_ok() {
        return None;
    }
    Some(last.replace("~1", "/").replace("~0", "~"))
}

/// The type name of a schema node that is a definition: `/$defs/Guard` → `Guard`.
fn def_name(pointer: &str) -> Option<String> {
    let name = pointer.strip_prefix("/$defs/")?;
    (!name.is_empty() && !name.contains('/')).then(|| name.replace("~1", "/").replace("~0", "~"))
}

/// `PreRule` → `pre-rule`, `GenerationMode` → `generation mode`.
fn words(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out.replacen("pre ", "pre-", 1)
}

/// A scalar for messages: strings bare, others as JSON.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A string in double quotes, shortened when long.
fn quote(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() > MAX {
        let cut: String = s.chars().take(MAX).collect();
        format!("{:?}", cut + "…")
    } else {
        format!("{s:?}")
    }
}

/// What a value is, for "found ...".
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "nothing (the value is empty)".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {}", quote(s)),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping (key: value pairs)".to_owned(),
    }
}

/// "a number", "a string or a list", from JSON Schema type names.
fn expected_types(types: &[String], found: &Value) -> String {
    let mut names: Vec<&str> = Vec::new();
    let only_null = types.iter().all(|t| t == "null");
    for t in types {
        let name = match t.as_str() {
            "null" if !only_null => continue,
            "null" => "nothing",
            // "a whole number" only helps when a number was given.
            "integer" if found.is_number() => "a whole number",
            "integer" | "number" => "a number",
            "string" => "a string",
            "boolean" => "true or false",
            "array" => "a list",
            "object" => "a mapping (key: value pairs)",
            _ => continue,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.len() > 1 {
        for name in &mut names {
            if *name == "true or false" {
                *name = "true/false";
            }
        }
    }
    match names.as_slice() {
        [] => "something else".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A concrete fix for common type mistakes.
fn type_hint(types: &[String], found: &Value) -> Option<String> {
    let wants = |t: &str| types.iter().any(|x| x == t);
    match found {
        Value::String(s)
            if (wants("integer") || wants("number")) && s.trim().parse::<f64>().is_ok() =>
        {
            Some(format!("remove the quotes: write {}", s.trim()))
        }
        Value::String(s)
            if wants("boolean")
                && matches!(s.to_lowercase().as_str(), "true" | "false" | "yes" | "no") =>
        {
            Some("write true or false, without quotes".to_owned())
        }
        Value::Number(_) | Value::Bool(_) if wants("string") => {
            Some(format!("put it in quotes to make it a string: \"{found}\""))
        }
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Object(_)
            if wants("array") =>
        {
            Some("write a list: [first, second], or one '- item' per line".to_owned())
        }
        Value::Null if wants("object") || wants("array") || wants("string") => {
            Some("nothing is written after the ':'; write the value, or remove the key".to_owned())
        }
        _ => None,
    }
}

/// The candidate closest to `word` when it is close enough to be a likely typo (edit distance
/// ≤ 2, and less than the candidate's length).
fn did_you_mean<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let word = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(&word, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= 2 && *d < c.chars().count())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The declared field order of the schema's object types, keyed by type name, so "allowed keys"
/// read in the order of the docs (the schema's `properties` come out alphabetical). Types not
/// listed here fall back to alphabetical order.
fn field_orders() -> &'static HashMap<&'static str, &'static [&'static str]> {
    static ORDERS: OnceLock<HashMap<&'static str, &'static [&'static str]>> = OnceLock::new();
    ORDERS.get_or_init(|| {
        use crate::engine::request as rq;
        use crate::rules as r;
        use crate::rules::testcase as t;
        [
            fields_of::<r::RuleFile>(),
            fields_of::<r::Matching>(),
            fields_of::<r::Integration>(),
            fields_of::<r::Tool>(),
            fields_of::<r::Skill>(),
            fields_of::<r::WordList>(),
            fields_of::<r::PreRule>(),
            fields_of::<r::CallTemplate>(),
            fields_of::<r::Router>(),
            fields_of::<r::Note>(),
            fields_of::<r::Search>(),
            fields_of::<r::SearchRule>(),
            fields_of::<r::Guard>(),
            fields_of::<r::AttachmentMatch>(),
            fields_of::<r::ArgumentMatch>(),
            fields_of::<t::TestFile>(),
            fields_of::<t::Case>(),
            fields_of::<t::ModelScript>(),
            fields_of::<t::ScriptedCall>(),
            fields_of::<t::Expect>(),
            fields_of::<rq::Request>(),
            fields_of::<rq::Message>(),
            fields_of::<rq::Ui>(),
            fields_of::<rq::OpenFile>(),
            fields_of::<rq::Attachment>(),
            fields_of::<rq::RecentCall>(),
        ]
        .into_iter()
        .flatten()
        .collect()
    })
}

type Fields = (&'static str, &'static [&'static str]);

/// A struct's serde name and field names in declaration order, read from what its derived
/// `Deserialize` passes to `deserialize_struct`.
fn fields_of<T: for<'de> Deserialize<'de>>() -> Option<Fields> {
    struct Probe<'a>(&'a Cell<Option<Fields>>);

    impl<'de> serde::Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;

        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("probe"))
        }

        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            name: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.set(Some((name, fields)));
            Err(serde::de::Error::custom("probe"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    let seen = Cell::new(None);
    let _ = T::deserialize(Probe(&seen));
    seen.get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::source::parse_yaml;
    use std::path::PathBuf;

    fn rules_check(text: &str) -> Vec<Diagnostic> {
        let path = PathBuf::from("rules/r.yaml");
        let (value, spans) = parse_yaml(&path, text).expect("well-formed YAML");
        SchemaCheck::rules().check(&path, &value, &spans)
    }

    fn tests_check(text: &str) -> Vec<Diagnostic> {
        let path = PathBuf::from("rules/tests/t.yaml");
        let (value, spans) = parse_yaml(&path, text).expect("well-formed YAML");
        SchemaCheck::tests().check(&path, &value, &spans)
    }

    fn only(diags: &[Diagnostic]) -> &Diagnostic {
        assert_eq!(diags.len(), 1, "expected one diagnostic, got: {diags:#?}");
        &diags[0]
    }

    fn at(d: &Diagnostic) -> (usize, usize) {
        let loc = d.location.as_ref().expect("located");
        (loc.line, loc.column)
    }

    const VALID_RULES: &str = "\
# yaml-language-server: $schema=../schemas/rules.schema.json
tools:
  - id: lookup
    description: Searches the web.
    chip: Searching…
  - id: send_mail
    description: Sends a letter.
    chip: Sending…
    confirm: true
    available_when: {integration: google}
    arguments:
      type: object
      properties: {to: {type: string}}
    examples: [write to Ann]
skills:
  - {id: interview, description: Asks questions., badge: Interview, auto: true}
word_lists:
  - id: greetings
    description: Hello words.
    words: [hello, good morning]
    patterns: ['\\bhi\\b']
pre_rules:
  - id: keep-skill
    description: Stay in the skill.
    when: {all: [{skill_active: true}, {not: {longer_than: 200}}, {skill_active: interview}]}
    then: {skill: active}
  - id: mail
    description: Mail.
    when:
      any:
        - attachment: {kind: photo, face: false}
        - generation_mode: any
        - ui_mode: mail
    then:
      calls:
        - tool: send_mail
          arguments: {to: '{message}'}
router:
  history: 6
  temperature: 0
  max_tokens: 500
  timeout_ms: 15000
  max_calls: 2
  skill_tool: mode_switch
  skill_argument: skill
  leave_skill_value: none
  instructions: [{id: ambiguity, description: d, text: t}]
  notes: [{id: n1, description: d, text: t}]
search:
  tool: lookup
  off_when: {generation_mode: image}
  rules: [{id: prices, description: d, when: {mentions: greetings}}]
guards:
  - id: no-repeat
    description: Do not send twice.
    tools: [send_mail]
    drop_when:
      any:
        - repeats_successful_call: true
        - argument: {name: to, one_of: [a, 1, null]}
        - argument_in_message: to
        - shorter_than: 3
        - {assistant_asked: false}
        - {draft_shown: true}
        - {file_open: true}
        - {open_file_named: false}
        - {search_toggle: true}
";

    #[test]
    fn committed_schemas_are_current() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        if std::env::var_os("TURNOUT_WRITE_SCHEMAS").is_some() {
            write_schemas(&dir).expect("write schemas");
        }
        for (file, generated) in [
            (RULES_SCHEMA_FILE, rules_schema()),
            (TESTS_SCHEMA_FILE, tests_schema()),
        ] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            let committed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            assert!(
                committed == generated,
                "schemas/{file} is out of date with the types in src/rules: regenerate it with \
                 `cargo run -- schema --write schemas` (or `TURNOUT_WRITE_SCHEMAS=1 cargo test \
                 --lib committed_schemas_are_current`) and commit the result"
            );
        }
    }

    #[test]
    fn schemas_are_identified_draft_2020_12() {
        for (schema, id, title) in [
            (
                rules_schema(),
                "urn:turnout:schema:rules",
                "turnout rule file",
            ),
            (
                tests_schema(),
                "urn:turnout:schema:tests",
                "turnout rule test file",
            ),
        ] {
            assert_eq!(
                schema["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
            assert_eq!(schema["$id"], id);
            assert_eq!(schema["title"], title);
            assert!(schema["$defs"].is_object());
            assert!(jsonschema::meta::is_valid(&schema));
            assert!(schema_text(&schema).ends_with("}\n"));
        }
    }

    #[test]
    fn a_complete_rule_file_passes_and_deserializes() {
        let diags = rules_check(VALID_RULES);
        assert!(diags.is_empty(), "{diags:#?}");
        let (value, _) = parse_yaml(Path::new("r.yaml"), VALID_RULES).expect("yaml");
        let file: crate::rules::RuleFile = serde_json::from_value(value).expect("serde agrees");
        assert_eq!(file.guards.len(), 1);
    }

    #[test]
    fn a_complete_test_file_passes_and_deserializes() {
        let text = "\
cases:
  - name: greets
    behaviours: [B1]
    request:
      messages:
        - {role: assistant, content: Hi?}
        - {role: user, content: hello}
      skill: null
      draft_shown: true
      ui: {mode: mail, open_file: {name: a.txt}, tab: inbox}
      generation_mode: image
      attachments: [{kind: photo, face: true}]
      integrations: [google]
      recent_calls: [{tool: send_mail, arguments: {to: a}, ok: true}]
    model: {calls: [{tool: lookup, arguments: {q: x}}]}
    expect:
      outcome: tool
      tools: [lookup]
      skill: null
      model_called: true
      confirm: []
      fired: [a]
      not_fired: [b]
      arguments: [{q: x}]
  - name: model fails
    request: {messages: [{role: user, content: x}]}
    model: {error: http_503}
    expect: {outcome: chat}
";
        let diags = tests_check(text);
        assert!(diags.is_empty(), "{diags:#?}");
        let (value, _) = parse_yaml(Path::new("t.yaml"), text).expect("yaml");
        let file: crate::rules::testcase::TestFile =
            serde_json::from_value(value).expect("serde agrees");
        assert_eq!(file.cases.len(), 2);
    }

    /// The YAML files in the repository that point editors at these schemas must pass them.
    #[test]
    fn repository_files_pass_their_schema() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (dir, check, marker) in [
            (
                "rules",
                SchemaCheck::rules(),
                "$schema=../schemas/rules.schema.json",
            ),
            (
                "rules/tests",
                SchemaCheck::tests(),
                "$schema=../../schemas/tests.schema.json",
            ),
        ] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                if !text.contains(marker) {
                    continue;
                }
                let (value, spans) = parse_yaml(&path, &text).expect("well-formed YAML");
                let diags = check.check(&path, &value, &spans);
                assert!(
                    diags.is_empty(),
                    "{}",
                    diags.iter().map(|d| format!("{d}\n")).collect::<String>()
                );
            }
        }
    }

    #[test]
    fn unknown_key_is_located_at_the_key_with_did_you_mean() {
        let text = "guards:\n  - id: g\n    description: d\n    drop_whn: {mentions: x}\n";
        let diags = rules_check(text);
        // One mistake, one finding: 'drop_when' is missing because it is misspelt.
        assert_eq!(diags.len(), 1, "{diags:#?}");
        let d = diags
            .iter()
            .find(|d| d.code == "unknown-key")
            .expect("unknown key");
        assert_eq!(d.message, "unknown key 'drop_whn' in guard");
        assert_eq!(
            d.hint.as_deref(),
            Some("did you mean 'drop_when'? allowed keys: id, description, tools, drop_when")
        );
        assert_eq!(d.rule.as_deref(), Some("g"));
        assert_eq!(at(d), (4, 5));
        // A misspelling of something else leaves the missing key reported.
        let text = "guards:\n  - id: g\n    description: d\n    tool: [x]\n";
        let codes: Vec<&str> = rules_check(text).iter().map(|d| d.code).collect();
        assert_eq!(codes, ["missing-key", "unknown-key"]);
        let text = "guards:\n  - id: g\n    description: d\n    whatever: 1\n";
        let codes: Vec<&str> = rules_check(text).iter().map(|d| d.code).collect();
        assert_eq!(codes, ["missing-key", "unknown-key"]);

        let d = only(&rules_check("guardz: []\n")).clone();
        assert_eq!(
            d.message,
            "unknown key 'guardz' at the top level of the rule file"
        );
        assert!(
            d.hint
                .as_deref()
                .unwrap_or("")
                .starts_with("did you mean 'guards'?")
        );

        // Nothing close: no did-you-mean, only the list.
        let d = only(&rules_check("zzzzzz: 1\n")).clone();
        assert!(
            d.hint
                .as_deref()
                .unwrap_or("")
                .starts_with("allowed keys: tools, skills")
        );
    }

    #[test]
    fn missing_key_is_located_at_the_mapping() {
        let text = "guards:\n  - id: g\n    drop_when: {file_open: true}\n";
        let d = only(&rules_check(text)).clone();
        assert_eq!(d.code, "missing-key");
        assert_eq!(d.message, "missing key 'description' in guard");
        assert_eq!(at(&d), (2, 5));
        assert!(d.hint.as_deref().unwrap_or("").contains("complaint"));
    }

    #[test]
    fn wrong_type_says_what_was_found() {
        let text = "router:\n  skill_tool: mode_switch\n  skill_argument: skill\n  leave_skill_value: none\n  timeout_ms: \"240\"\n";
        let d = only(&rules_check(text)).clone();
        assert_eq!(d.code, "wrong-type");
        assert_eq!(d.message, "expected a number, found the string \"240\"");
        assert_eq!(d.hint.as_deref(), Some("remove the quotes: write 240"));
        assert_eq!(at(&d), (5, 15));

        let text = "guards:\n  - id: g\n    description: d\n    tools: lookup\n    drop_when: {file_open: true}\n";
        let d = only(&rules_check(text)).clone();
        assert_eq!(d.message, "expected a list, found the string \"lookup\"");

        let text = "guards:\n  - id: g\n    description: d\n    drop_when: {longer_than: 2.5}\n";
        let d = only(&rules_check(text)).clone();
        assert_eq!(d.message, "expected a whole number, found the number 2.5");

        let d = only(&rules_check("- a\n")).clone();
        assert_eq!(
            d.message,
            "expected a mapping (key: value pairs), found a list"
        );
        assert_eq!(at(&d), (1, 1));
    }

    #[test]
    fn unknown_condition_lists_the_conditions() {
        let text = "guards:\n  - id: g\n    description: d\n    drop_when: {mention: x}\n";
        let d = only(&rules_check(text)).clone();
        assert_eq!(d.code, "unknown-key");
        assert!(
            d.message.starts_with(
                "unknown condition 'mention'; expected one of: all, any, not, longer_than, "
            ),
            "{d}"
        );
        assert!(d.message.ends_with("repeats_successful_call"), "{d}");
        assert_eq!(d.hint.as_deref(), Some("did you mean 'mentions'?"));
        assert_eq!(at(&d), (4, 17));

        // Deep inside all/any/not, in block style.
        let text = "guards:\n  - id: g\n    description: d\n    drop_when:\n      not:\n        any:\n          - mentions: x\n          - file_opn: true\n";
        let d = only(&rules_check(text)).clone();
        assert!(d.message.starts_with("unknown condition 'file_opn'"), "{d}");
        assert_eq!(d.hint.as_deref(), Some("did you mean 'file_open'?"));
        assert_eq!(at(&d), (8, 13));

        // A bare name where a mapping is needed.
        let text = "search:\n  tool: t\n  off_when: file_open\n";
        let d = only(&rules_check(text)).clone();
        assert_eq!(d.code, "wrong-type");
        assert_eq!(
            d.message,
            "the condition 'file_open' needs a value, written as 'file_open: ...'"
        );
    }

    #[test]
    fn wrong_nested_condition_value_reports_the_nested_error() {
        let text = "guards:\n  - id: g\n    description: d\n    drop_when:\n      all:\n        - longer_than: \"240\"\n        - attachment: {kind: photo, fase: true}\n        - skill_active: 3\n";
        let diags = rules_check(text);
        assert_eq!(diags.len(), 3, "{diags:#?}");
        assert_eq!(
            diags[0].message,
            "expected a number, found the string \"240\""
        );
        assert_eq!(at(&diags[0]), (6, 24));
        assert_eq!(diags[1].code, "unknown-key");
        assert_eq!(diags[1].message, "unknown key 'fase' in 'attachment'");
        assert_eq!(
            diags[1].hint.as_deref(),
            Some("did you mean 'face'? allowed keys: kind, face")
        );
        assert_eq!(at(&diags[1]), (7, 37));
        assert_eq!(
            diags[2].message,
            "expected true/false or a string, found the number 3"
        );
        // The tagged-enum reasoning also covers `then:` actions.
        let text = "pre_rules:\n  - id: p\n    description: d\n    when: {file_open: true}\n    then: {skil: active}\n";
        let d = only(&rules_check(text)).clone();
        assert!(
            d.message
                .starts_with("unknown action 'skil'; expected one of: skill, calls"),
            "{d}"
        );
    }

    #[test]
    fn several_keys_in_one_condition() {
        let text = "guards:\n  - id: g\n    description: d\n    drop_when: {mentions: x, file_open: true}\n";
        let d = only(&rules_check(text)).clone();
        assert_eq!(
            d.message,
            "a condition takes exactly one key, found 2: file_open, mentions"
        );
        assert!(d.hint.as_deref().unwrap_or("").contains("'all:'"));
        let text = "guards:\n  - id: g\n    description: d\n    drop_when: {}\n";
        let d = only(&rules_check(text)).clone();
        assert_eq!(d.code, "missing-key");
        assert!(
            d.message
                .starts_with("empty condition; write one of: all, any"),
            "{d}"
        );
    }

    #[test]
    fn names_and_patterns_in_test_files() {
        let text = "cases:\n  - name: n\n    request: {messages: [{role: usr, content: hi}]}\n    model: {error: boom}\n    expect: {outcome: tools}\n";
        let diags = tests_check(text);
        assert_eq!(diags.len(), 3, "{diags:#?}");
        assert_eq!(
            diags[0].message,
            "unknown role 'usr'; expected one of: user, assistant, system"
        );
        assert_eq!(diags[0].hint.as_deref(), Some("did you mean 'user'?"));
        assert_eq!(diags[1].message, "\"boom\" is not a valid 'error'");
        assert_eq!(
            diags[2].message,
            "unknown outcome 'tools'; expected one of: chat, skill, tool"
        );
        assert_eq!(diags[2].hint.as_deref(), Some("did you mean 'tool'?"));
    }

    #[test]
    fn empty_file_is_one_diagnostic() {
        for text in ["", "# only a comment\n", "---\n"] {
            let d = only(&rules_check(text)).clone();
            assert_eq!(d.code, "empty-file");
            assert_eq!(d.message, "the file is empty");
            assert_eq!(at(&d), (1, 1));
        }
        let d = only(&tests_check("")).clone();
        assert_eq!(d.hint.as_deref(), Some("a test file needs 'cases'"));
    }

    #[test]
    fn strange_values_do_not_panic() {
        for text in [
            "1\n",
            "\"text\"\n",
            "true\n",
            "[]\n",
            "{}\n",
            "guards: [1, null, [], {}]\n",
            "tools: [{id: 1, description: [], chip: {}}]\n",
            "router: null\nsearch:\n",
            "pre_rules: [{when: [], then: []}]\n",
            "guards: [{drop_when: {all: {any: {not: [1]}}}}]\n",
            "a/b~c: 1\n",
        ] {
            let _ = rules_check(text);
            let _ = tests_check(text);
        }
    }

    #[test]
    fn field_order_comes_from_the_types() {
        let (name, fields) = fields_of::<crate::rules::Guard>().expect("a struct");
        assert_eq!(name, "Guard");
        assert_eq!(fields, ["id", "description", "tools", "drop_when"]);
        assert!(fields_of::<crate::rules::Condition>().is_none());
    }

    #[test]
    fn did_you_mean_needs_a_close_name() {
        assert_eq!(did_you_mean("κλειδ", ["κλειδί"]), Some("κλειδί"));
        assert_eq!(
            did_you_mean("mention", ["mentions", "not"]),
            Some("mentions")
        );
        assert_eq!(did_you_mean("xyz", ["mentions", "not"]), None);
        assert_eq!(did_you_mean("no", ["id"]), None);
    }
}
