//! Compiling one tool's `extract`: every problem reported where it is written.

use regex::Regex;
use serde_json::Value;

use super::{Compiler, did_you_mean};
use crate::diag::{Code, Diagnostic};
use crate::rules::Extraction;
use crate::ruleset::extract::{ArgExtract, ChoiceDef, NumberDef, NumberWord, TextDef};
use crate::source::SourceFile;
use crate::text::{Normalizer, WordMatcher};

impl Compiler<'_> {
    /// Compiles a tool's `extract`, reporting every problem where it is written.
    pub(in crate::compile) fn extract(
        &mut self,
        file: &SourceFile,
        i: usize,
        tool: &crate::rules::Tool,
        schema: &Value,
        norm: &Normalizer,
    ) -> Vec<ArgExtract> {
        let properties = schema.get("properties").and_then(Value::as_object);
        let mut out = Vec::new();
        for (name, x) in &tool.extract {
            let at = format!("/tools/{i}/extract/{name}");
            let Some(property) = properties.and_then(|p| p.get(name)) else {
                let known: Vec<String> = properties
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                let mut d = Diagnostic::error(
                    Code::ExtractUnknownArgument,
                    format!("tool '{}' has no argument '{name}' to extract", tool.id),
                )
                .at(Some(file.locate_key(&at)))
                .rule(tool.id.as_str());
                if let Some(h) = did_you_mean(name, known.iter()) {
                    d = d.hint(h);
                }
                self.diagnostics.push(d);
                continue;
            };
            if let Some(def) = self.one_extract(file, &at, name, x, property, norm) {
                out.push(def);
            }
        }
        out
    }

    fn one_extract(
        &mut self,
        file: &SourceFile,
        at: &str,
        name: &str,
        x: &Extraction,
        property: &Value,
        norm: &Normalizer,
    ) -> Option<ArgExtract> {
        let errors_before = self.diagnostics.len();
        let validator = jsonschema::validator_for(property).ok();
        let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
        if x.choose.is_empty()
            && x.number.is_none()
            && x.from_context.is_none()
            && x.text.is_none()
            && x.default.is_none()
        {
            self.error(
                Code::ExtractEmpty,
                format!(
                    "'{name}': say how it is filled: choose, number, from_context, text or default"
                ),
                file,
                at,
            );
        }
        let check_value = |c: &mut Self, v: &Value, p: &str| {
            let templated = v.as_str().is_some_and(|s| s.contains('$'));
            if templated && kind != "string" {
                c.error(
                    Code::ExtractBadValue,
                    format!("'{name}' is not a string: a value with $ groups cannot fill it"),
                    file,
                    p,
                );
            } else if !templated && validator.as_ref().is_some_and(|val| !val.is_valid(v)) {
                c.error(
                    Code::ExtractBadValue,
                    format!("{v} is not a valid value of '{name}' (its schema refuses it)"),
                    file,
                    p,
                );
            }
        };
        let mut choices = Vec::new();
        let mut all_words = Vec::new();
        let mut word_entries = Vec::new();
        for (k, c) in x.choose.iter().enumerate() {
            let p = format!("{at}/choose/{k}");
            check_value(self, &c.value, &format!("{p}/value"));
            if c.words.is_empty() && c.patterns.is_empty() {
                self.error(
                    Code::ExtractEmpty,
                    format!("'{name}': option {} has neither words nor patterns", k + 1),
                    file,
                    &p,
                );
            }
            self.check_words(file, &format!("{p}/words"), &c.words);
            all_words.extend(c.words.iter().cloned());
            word_entries.extend(c.words.iter().map(|w| (k, w.clone())));
            let patterns = self.patterns(file, &format!("{p}/patterns"), &c.patterns);
            choices.push(ChoiceDef {
                value: c.value.clone(),
                entries: c.patterns.clone(),
                patterns,
            });
        }
        if let Some(d) = &x.default {
            check_value(self, d, &format!("{at}/default"));
        }
        let number = x.number.as_ref().map(|n| {
            let p = format!("{at}/number");
            if !matches!(kind, "number" | "integer") {
                self.error(
                    Code::ExtractBadValue,
                    format!("'{name}' is a {kind:?}, not a number: use choose or text"),
                    file,
                    &p,
                );
            }
            let patterns = self.patterns(file, &format!("{p}/patterns"), &n.patterns);
            for (j, re) in patterns.iter().enumerate() {
                if !re.capture_names().any(|g| g == Some("number")) {
                    self.error(
                        Code::ExtractNumberGroup,
                        "a number pattern needs a group named 'number', e.g. (?P<number>\\d+)"
                            .into(),
                        file,
                        &format!("{p}/patterns/{j}"),
                    );
                }
            }
            let mut units: Vec<(String, f64)> = n
                .units
                .iter()
                .map(|(k, v)| (norm.normalize(k), *v))
                .collect();
            units.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
            let mut words = Vec::new();
            for (w, &value) in &n.words {
                let (stem, whole) = match w.strip_suffix('$') {
                    Some(stem) => (stem, true),
                    None => (w.as_str(), false),
                };
                let stem = norm.normalize(stem.trim());
                if stem.is_empty() || !stem.chars().all(char::is_alphanumeric) {
                    self.error(
                        Code::BadWord,
                        format!("'{w}': a number word is one word (letters and digits)"),
                        file,
                        &format!("{p}/words"),
                    );
                } else if !value.is_finite() || value < 0.0 {
                    self.error(
                        Code::ExtractBadValue,
                        format!("'{w}': a number word's value is a number of 0 or more"),
                        file,
                        &format!("{p}/words"),
                    );
                } else {
                    words.push(NumberWord { stem, whole, value });
                }
            }
            // The longest stem first: «fifteen» before «fif».
            words.sort_by_key(|w| std::cmp::Reverse(w.stem.len()));
            NumberDef {
                patterns,
                units,
                words,
                integer: kind == "integer",
            }
        });
        if x.from_context.is_some() && kind != "string" {
            self.error(
                Code::ExtractBadValue,
                format!("'{name}' is not a string: from_context gives a name"),
                file,
                &format!("{at}/from_context"),
            );
        }
        let text = x.text.as_ref().map(|t| {
            let p = format!("{at}/text");
            if kind != "string" {
                self.error(
                    Code::ExtractBadValue,
                    format!("'{name}' is not a string: text cannot fill it"),
                    file,
                    &p,
                );
            }
            self.check_words(file, &format!("{p}/drop"), &t.drop);
            TextDef {
                drop: WordMatcher::new(&t.drop, &[], norm),
                drop_patterns: self.patterns(file, &format!("{p}/drop_patterns"), &t.drop_patterns),
            }
        });
        if self.diagnostics[errors_before..]
            .iter()
            .any(Diagnostic::is_error)
        {
            return None;
        }
        Some(ArgExtract {
            name: name.to_owned(),
            choices,
            words: WordMatcher::new(&all_words, &[], norm),
            word_entries,
            number,
            from_context: x.from_context,
            text,
            default: x.default.clone(),
        })
    }

    fn check_words(&mut self, file: &SourceFile, at: &str, words: &[String]) {
        for (j, w) in words.iter().enumerate() {
            if let Err(e) = WordMatcher::check_word(w) {
                self.error(
                    Code::BadWord,
                    format!("'{w}': {e}"),
                    file,
                    &format!("{at}/{j}"),
                );
            }
        }
    }

    fn patterns(&mut self, file: &SourceFile, at: &str, patterns: &[String]) -> Vec<Regex> {
        let mut out = Vec::new();
        for (j, p) in patterns.iter().enumerate() {
            // Compiled before the tools' pass, each text once (a YAML anchor shares a pattern
            // among tools).
            let compiled = match self.extract_patterns.get(p.as_str()) {
                Some(compiled) => compiled.clone(),
                None => WordMatcher::compile_pattern(p),
            };
            match compiled {
                Ok(re) => out.push(re),
                Err(e) => self.error(
                    Code::BadRegex,
                    format!("'{p}': {e}"),
                    file,
                    &format!("{at}/{j}"),
                ),
            }
        }
        out
    }
}
