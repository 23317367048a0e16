//! Explaining a value that fails a `oneOf`/`anyOf`: an externally tagged enum (a condition is a
//! one-key mapping such as `mentions: greetings`) is explained as such, "unknown condition
//! 'mention'", rather than as the nineteen ways the value failed each alternative.

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::Explain;
use super::words::{
    def_name, describe, did_you_mean, expected_types, keyed_tag, parent, type_hint, words,
};
use crate::diag::Code;
use crate::source::yaml::escape;

impl Explain<'_> {
    /// The value at `inst` fails a `oneOf`/`anyOf` at `spath`; `context` holds each
    /// alternative's errors, in order.
    pub(super) fn alternatives(
        &mut self,
        inst: &str,
        spath: &str,
        context: &[Vec<ValidationError<'static>>],
    ) {
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
            self.push(Code::WrongType, message, self.value_at(inst), hint, inst);
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
                self.push(Code::Schema, message, self.value_at(inst), None, inst);
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
                    let at = self.key_at(&member, inst);
                    self.push(Code::UnknownKey, message, at, hint, inst);
                }
                match known.as_slice() {
                    [] if unknown.is_empty() => {
                        let message = format!("empty {noun}; write one of: {list}");
                        self.push(Code::MissingKey, message, self.value_at(inst), None, inst);
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
                        self.push(Code::Schema, message, self.value_at(inst), hint, inst);
                    }
                }
            }
            Value::String(s) if tags.keyed.contains(s) => {
                let message = format!("the {noun} '{s}' needs a value, written as '{s}: ...'");
                let hint = self.tag_description(spath, s);
                self.push(Code::WrongType, message, self.value_at(inst), hint, inst);
            }
            Value::String(s) if !tags.bare.is_empty() => {
                let message = format!("unknown {noun} '{s}'; expected one of: {list}");
                let hint = did_you_mean(s, names.iter().map(String::as_str))
                    .map(|c| format!("did you mean '{c}'?"));
                self.push(Code::Schema, message, self.value_at(inst), hint, inst);
            }
            other => {
                let message = format!("expected a {noun}, found {}", describe(other));
                let mut hint = format!("a {noun} is a mapping with one key, one of: {list}");
                if let Value::String(s) = other
                    && let Some(c) = did_you_mean(s, names.iter().map(String::as_str))
                {
                    hint = format!("did you mean '{c}: ...'? {hint}");
                }
                self.push(
                    Code::WrongType,
                    message,
                    self.value_at(inst),
                    Some(hint),
                    inst,
                );
            }
        }
    }

    /// A value not among `names` (an `enum` at `node`).
    pub(super) fn unknown_value(&mut self, inst: &str, node: &str, names: &[String]) {
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
        self.push(Code::Schema, message, self.value_at(inst), hint, inst);
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

fn is_null_schema(alt: &Value) -> bool {
    alt.get("type").and_then(Value::as_str) == Some("null")
}
