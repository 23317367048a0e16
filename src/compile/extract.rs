//! Compiling one tool's `extract`: every problem reported where it is written.

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

use super::findings::{Findings, did_you_mean};
use crate::diag::{Code, Diagnostic};
use crate::rules::Extraction;
use crate::ruleset::extract::{ArgExtract, ChoiceDef, NumberDef, NumberWord, TextDef};
use crate::source::SourceFile;
use crate::text::{EntryError, Normalizer, TypoLengths, WordMatcher};

/// Every `extract` pattern of the rule files compiled, by its text (compiled before the tools'
/// pass, on every core: `tools::extraction_patterns`).
pub(super) type ExtractPatterns<'a> = HashMap<&'a str, Result<Regex, EntryError>>;

/// Compiles tool `i`'s `extract`, reporting every problem where it is written; `schema` is the
/// tool's arguments schema, `patterns` every extraction pattern compiled, `typos` the lengths
/// (`matching.typos`) from which `choose` words forgive a typo.
#[allow(clippy::too_many_arguments)]
pub(super) fn compile(
    file: &SourceFile,
    i: usize,
    tool: &crate::rules::Tool,
    schema: &Value,
    norm: &Normalizer,
    patterns: &ExtractPatterns<'_>,
    typos: Option<TypoLengths>,
    findings: &mut Findings,
) -> Vec<ArgExtract> {
    let mut cx = Cx {
        file,
        norm,
        compiled: patterns,
        typos,
        findings,
    };
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
            cx.findings.push(d);
            continue;
        };
        if let Some(def) = cx.one_extract(&at, name, x, property) {
            out.push(def);
        }
    }
    out
}

/// What compiling one tool's extractions reads, and where it reports.
struct Cx<'c, 'p> {
    file: &'c SourceFile,
    norm: &'c Normalizer,
    compiled: &'c ExtractPatterns<'p>,
    /// From how many letters `choose` words forgive a typo (and one of the first letter).
    typos: Option<TypoLengths>,
    findings: &'c mut Findings,
}

impl Cx<'_, '_> {
    fn error(&mut self, code: Code, message: String, pointer: &str) {
        self.findings.error(code, message, self.file, pointer);
    }

    fn one_extract(
        &mut self,
        at: &str,
        name: &str,
        x: &Extraction,
        property: &Value,
    ) -> Option<ArgExtract> {
        let norm = self.norm;
        let errors_before = self.findings.mark();
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
                at,
            );
        }
        let check_value = |c: &mut Self, v: &Value, p: &str| {
            let templated = v.as_str().is_some_and(|s| s.contains('$'));
            if templated && kind != "string" {
                c.error(
                    Code::ExtractBadValue,
                    format!("'{name}' is not a string: a value with $ groups cannot fill it"),
                    p,
                );
            } else if !templated && validator.as_ref().is_some_and(|val| !val.is_valid(v)) {
                c.error(
                    Code::ExtractBadValue,
                    format!("{v} is not a valid value of '{name}' (its schema refuses it)"),
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
                    &p,
                );
            }
            self.check_words(&format!("{p}/words"), &c.words);
            all_words.extend(c.words.iter().cloned());
            word_entries.extend(c.words.iter().map(|w| (k, w.clone())));
            let patterns = self.patterns(&format!("{p}/patterns"), &c.patterns);
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
                    &p,
                );
            }
            let patterns = self.patterns(&format!("{p}/patterns"), &n.patterns);
            for (j, re) in patterns.iter().enumerate() {
                let has = |name: &str| re.capture_names().any(|g| g == Some(name));
                if !(has("number") || has("from") && has("to")) {
                    self.error(
                        Code::ExtractNumberGroup,
                        "a number pattern needs a group named 'number', e.g. (?P<number>\\d+), \
                         or two named 'from' and 'to' (a span, see number.range)"
                            .into(),
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
            let singular = n.singular.iter().map(|(w, v)| (w, v, true, "singular"));
            for (w, &value, one, key) in n
                .words
                .iter()
                .map(|(w, v)| (w, v, false, "words"))
                .chain(singular)
            {
                let (stem, whole) = match w.strip_suffix('$') {
                    Some(stem) => (stem, true),
                    None => (w.as_str(), false),
                };
                let stem = norm.normalize(stem.trim());
                if stem.is_empty() || !stem.chars().all(char::is_alphanumeric) {
                    self.error(
                        Code::BadWord,
                        format!("'{w}': a number word is one word (letters and digits)"),
                        &format!("{p}/{key}"),
                    );
                } else if !value.is_finite() || value < 0.0 {
                    self.error(
                        Code::ExtractBadValue,
                        format!("'{w}': a number word's value is a number of 0 or more"),
                        &format!("{p}/{key}"),
                    );
                } else {
                    words.push(NumberWord {
                        stem,
                        whole,
                        value,
                        one,
                    });
                }
            }
            // The longest stem first («fifteen» before «fif»), a whole word before a stem of
            // the same letters («thousand$» before «thousand»).
            words.sort_by_key(|w| (std::cmp::Reverse(w.stem.len()), !w.whole));
            let joiners = (n.joiners.iter())
                .map(|j| {
                    norm.normalize(j)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .filter(|j| !j.is_empty())
                .collect();
            NumberDef {
                patterns,
                units,
                words,
                joiners,
                integer: kind == "integer",
                range: n.range.as_ref().map_or((1.0, None), |r| (r.scale, r.cycle)),
                without_unit: n.without_unit.as_ref().map(|w| (w.below, w.times)),
                before_hundreds: n.before_hundreds,
            }
        });
        if x.from_context.is_some() && kind != "string" {
            self.error(
                Code::ExtractBadValue,
                format!("'{name}' is not a string: from_context gives a name"),
                &format!("{at}/from_context"),
            );
        }
        let text = x.text.as_ref().map(|t| {
            let p = format!("{at}/text");
            if kind != "string" {
                self.error(
                    Code::ExtractBadValue,
                    format!("'{name}' is not a string: text cannot fill it"),
                    &p,
                );
            }
            self.check_words(&format!("{p}/drop"), &t.drop);
            TextDef {
                drop: WordMatcher::new(&t.drop, &[], norm),
                drop_patterns: self.patterns(&format!("{p}/drop_patterns"), &t.drop_patterns),
            }
        });
        if self.findings.error_since(errors_before) {
            return None;
        }
        Some(ArgExtract {
            name: name.to_owned(),
            choices,
            words: WordMatcher::tolerant(
                &all_words,
                &[],
                norm,
                self.typos.filter(|_| x.typos != Some(false)),
            ),
            word_entries,
            number,
            from_context: x.from_context,
            text,
            default: x.default.clone(),
        })
    }

    fn check_words(&mut self, at: &str, words: &[String]) {
        for (j, w) in words.iter().enumerate() {
            if let Err(e) = WordMatcher::check_word(w) {
                self.error(Code::BadWord, format!("'{w}': {e}"), &format!("{at}/{j}"));
            }
        }
    }

    fn patterns(&mut self, at: &str, patterns: &[String]) -> Vec<Regex> {
        let mut out = Vec::new();
        for (j, p) in patterns.iter().enumerate() {
            // Compiled before the tools' pass, each text once (a YAML anchor shares a pattern
            // among tools).
            let compiled = match self.compiled.get(p.as_str()) {
                Some(compiled) => compiled.clone(),
                None => WordMatcher::compile_pattern(p),
            };
            match compiled {
                Ok(re) => out.push(re),
                Err(e) => self.error(
                    Code::BadRegex,
                    super::findings::pattern_error(p, e),
                    &format!("{at}/{j}"),
                ),
            }
        }
        out
    }
}
