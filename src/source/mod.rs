//! The YAML front end: rule files read from a directory (confined, limited, hashed once), their
//! texts turned into values and positions with one YAML parser (`events`, `spans`, `values`,
//! `yaml`), checked against the JSON Schema with explanations a product manager can act on
//! (`check`), and read into the rule types. What it returns is parsed files, their texts and
//! diagnostics with file:line:column; the compiler (`compile/`) takes it from there.
//!
//! Nothing here knows the compiled form (`ruleset/`) or the compiler.

pub(crate) mod check;
pub(crate) mod events;
pub(crate) mod load;
mod spans;
mod values;
pub(crate) mod yaml;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::diag::{Code, Diagnostic, Location};
use crate::rules::RuleFile;
pub(crate) use check::parse_checked;
use check::{SchemaCheck, checked};
pub use load::{ReadDir, read_dir, rule_files, test_files};
pub use yaml::{Limits, SpanMap, escape, locate, locate_key};

/// One parsed rule file with what is needed to point back into it.
#[derive(Debug)]
pub(crate) struct SourceFile {
    pub path: PathBuf,
    pub spans: SpanMap,
}

impl SourceFile {
    pub fn locate(&self, pointer: &str) -> Location {
        yaml::locate(&self.path, &self.spans, pointer)
    }

    /// Where the key of the mapping member at `pointer` is (its value's place when it has no
    /// key): for findings about a key itself, such as a section written twice.
    pub fn locate_key(&self, pointer: &str) -> Location {
        yaml::locate_key(&self.path, &self.spans, pointer)
    }
}

/// The rule files of one directory as the front end read them: every file that parsed, was
/// valid against the schema and fit the rule types, with its places; the findings of those that
/// did not, and their paths.
#[derive(Debug)]
pub(crate) struct Parsed<'t> {
    pub files: Vec<(SourceFile, RuleFile)>,
    pub diagnostics: Vec<Diagnostic>,
    pub failed: Vec<&'t Path>,
}

/// Parses, checks and reads each of `texts` (path, content) into the rule types.
pub(crate) fn parse_rule_files<'t>(texts: &'t [(PathBuf, String)], limits: &Limits) -> Parsed<'t> {
    // The files are independent, and the schema's validator is built once per process: the
    // files are parsed on every core while it is built, then checked and read into rule types
    // on every core (a pack is a few large files).
    // The largest files first, each a task of its own: the phase lasts at least as long as the
    // largest file's parse, so it must not start last.
    let mut by_size: Vec<usize> = (0..texts.len()).collect();
    by_size.sort_by_key(|&i| std::cmp::Reverse(texts[i].1.len()));
    let (check, mut values) = rayon::join(SchemaCheck::rules, || {
        by_size
            .par_iter()
            .with_max_len(1)
            .map(|&i| {
                let (path, text) = &texts[i];
                (i, yaml::parse_yaml_limited(path, text, limits))
            })
            .collect::<Vec<_>>()
    });
    values.sort_unstable_by_key(|v| v.0);
    let files: Vec<Result<(SourceFile, RuleFile), Vec<Diagnostic>>> = texts
        .par_iter()
        .zip(values.into_par_iter().map(|(_, parsed)| parsed))
        .map(|((path, text), parsed)| {
            let (value, spans) = checked(path, parsed, check)?;
            match serde_path_to_error::deserialize::<_, RuleFile>(value) {
                Ok(file) => Ok((
                    SourceFile {
                        path: path.clone(),
                        spans,
                    },
                    file,
                )),
                // The schema is generated from the same types, so this is mostly a safety
                // net: what JSON Schema cannot say (`15.0` is an integer to it), at the value.
                Err(e) => Err(vec![not_the_format(path, text, &spans, &e)]),
            }
        })
        .collect();
    let mut diagnostics = Vec::new();
    let mut parsed = Vec::new();
    let mut failed: Vec<&Path> = Vec::new();
    for ((path, _), file) in texts.iter().zip(files) {
        match file {
            Ok(file) => parsed.push(file),
            Err(found) => {
                diagnostics.extend(found);
                failed.push(path);
            }
        }
    }
    Parsed {
        files: parsed,
        diagnostics,
        failed,
    }
}

/// A value the schema let through but the rule types refuse, located at the value (rule files
/// and test files alike).
pub(crate) fn not_the_format(
    path: &Path,
    text: &str,
    spans: &SpanMap,
    e: &serde_path_to_error::Error<serde_json::Error>,
) -> Diagnostic {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for s in e.path().iter() {
        match s {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                pointer.push('/');
                pointer.push_str(&yaml::escape(key));
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    let at = yaml::locate(path, spans, &pointer);
    let inner = e.inner().to_string();
    let whole = [
        "expected usize",
        "expected u64",
        "expected u32",
        "expected u16",
        "expected u8",
    ];
    match inner.split_once("floating point `") {
        Some((_, rest)) if whole.iter().any(|w| inner.contains(w)) => {
            let shown = rest.split('`').next().unwrap_or_default();
            // The path may stop at an enum (a condition); the number is written after it.
            let at = written_after(text, at.line, shown)
                .map_or(at, |(line, column)| Location::new(path, line, column));
            let hint = match shown.strip_suffix(".0") {
                Some(n) => format!("write it without the decimal point: {n}"),
                None => "write a whole number".to_owned(),
            };
            Diagnostic::error(
                Code::WrongType,
                format!("expected a whole number, found {shown}"),
            )
            .at(Some(at))
            .hint(hint)
        }
        _ => Diagnostic::error(
            Code::Invalid,
            format!("this value does not fit the file's format: {inner}"),
        )
        .at(Some(at)),
    }
}

/// Where `token` is first written as a whole word on line `from` or after: (line, column).
fn written_after(text: &str, from: usize, token: &str) -> Option<(usize, usize)> {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.');
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find_map(|(n, line)| {
            line.match_indices(token).find_map(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = line[at + token.len()..].chars().next();
                (!part(before) && !part(after)).then(|| (n + 1, line[..at].chars().count() + 1))
            })
        })
}
