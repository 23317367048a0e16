//! Rendering [`Diagnostic`]s for people and for machines, the same way wherever they come from
//! (`lint`, `test`, reload logs, the service's status):
//!
//! - [`Format::Human`]: `file:line:column: severity[code]: message`, then the offending line
//!   with a caret under the span and the hint, as rustc does;
//! - [`Format::Json`]: one JSON object per finding, on one line;
//! - [`Format::Github`]: GitHub Actions workflow commands (`::error file=…,line=…,col=…::…`),
//!   which the pull request shows as annotations on the line.
//!
//! Diagnostics carry where a span *starts*; how far it goes is read from the source line (the
//! YAML token there: a quoted string, a bracketed collection, a plain word up to `:`, `,` or a
//! comment), so nothing upstream has to track ends.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::diag::{Diagnostic, Severity};

/// How findings are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    /// For people: the finding, the source line with a caret, the hint.
    #[default]
    Human,
    /// One JSON object per finding, one per line.
    Json,
    /// GitHub Actions annotations (`::error file=…,line=…,col=…::message`).
    Github,
}

/// The texts of the files findings point into, borrowed from what the loader read
/// (`compile::Loaded`'s and `testing::Cases`'s `texts`): a finding's source line is printed
/// from what was checked, never from a second read of the file, which may have changed since
/// (or be a pipe, a link out of the folder, or too big), and never from a copy. A finding about
/// a file not given prints without a source line.
#[derive(Debug, Default)]
pub struct Sources<'a> {
    files: HashMap<&'a Path, &'a str>,
}

impl<'a> Sources<'a> {
    /// No texts: findings print without source lines.
    pub fn new() -> Self {
        Self::default()
    }

    /// The texts of these (path, text) pairs.
    pub fn of(texts: impl IntoIterator<Item = &'a (PathBuf, String)>) -> Self {
        let mut sources = Self::new();
        for (path, text) in texts {
            sources.insert(path, text);
        }
        sources
    }

    /// Supplies a file's text.
    pub fn insert(&mut self, path: &'a (impl AsRef<Path> + ?Sized), text: &'a str) {
        self.files.insert(path.as_ref(), text);
    }

    /// Line `line` (from 1) of `path`, without its line break.
    pub fn line(&self, path: &Path, line: usize) -> Option<&'a str> {
        let text = *self.files.get(path)?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if line == 0 {
            return None;
        }
        // A position just past the last line (the end of a truncated file) shows as empty.
        match text.split('\n').nth(line - 1) {
            Some(l) => Some(l.strip_suffix('\r').unwrap_or(l)),
            None => None,
        }
    }
}

/// Renders one finding in `format`. Human output may span several lines; JSON and GitHub
/// output is one line. No trailing newline.
pub fn render(d: &Diagnostic, format: Format, sources: &Sources<'_>) -> String {
    match format {
        Format::Human => human(d, sources),
        Format::Json => json_line(d),
        Format::Github => github(d),
    }
}

/// `file:line:column: severity[code]: message (rule 'id')`: the first line of every format
/// for people, and what editors and CI logs jump from.
pub fn headline(d: &Diagnostic) -> String {
    let mut out = String::new();
    if let Some(loc) = &d.location {
        let _ = write!(out, "{}:{}:{}: ", loc.file.display(), loc.line, loc.column);
    }
    let _ = write!(out, "{}[{}]: {}", d.severity, d.code, d.message);
    if let Some(rule) = &d.rule
        && !d.message.contains(&format!("'{rule}'"))
    {
        let _ = write!(out, " (rule '{rule}')");
    }
    out
}

/// The rustc-like form:
///
/// ```text
/// rules/guards.yaml:4:13: error[unknown-tool]: unknown tool 'shop_serch'
///   |
/// 4 |     tools: [shop_serch]
///   |             ^^^^^^^^^^^^^
///   = hint: did you mean 'shop_search'?
/// ```
pub fn human(d: &Diagnostic, sources: &Sources<'_>) -> String {
    let mut out = headline(d);
    let snippet = d.location.as_ref().and_then(|loc| {
        let line = sources.line(&loc.file, loc.line)?;
        Some((loc.line, loc.column, loc.end_column, line.to_owned()))
    });
    let gutter = snippet.as_ref().map_or(1, |(n, ..)| n.to_string().len());
    let pad = " ".repeat(gutter);
    if let Some((n, column, end, line)) = &snippet {
        let (shown, caret_at, width) = caret(line, *column, *end);
        let _ = write!(
            out,
            "\n{pad} |\n{n} | {shown}\n{pad} | {}{}",
            " ".repeat(caret_at),
            "^".repeat(width)
        );
    }
    if let Some(hint) = &d.hint {
        let mut lines = hint.lines();
        let _ = write!(out, "\n{pad} = hint: {}", lines.next().unwrap_or_default());
        for l in lines {
            let _ = write!(out, "\n{pad}         {l}");
        }
    }
    out
}

/// One JSON object: `file`, `line`, `column`, `end_column` (null when unknown), `severity`,
/// `code`, `message`, `rule`, `hint`.
pub fn json_line(d: &Diagnostic) -> String {
    let loc = d.location.as_ref();
    json!({
        "file": loc.map(|l| l.file.display().to_string()),
        "line": loc.map(|l| l.line),
        "column": loc.map(|l| l.column),
        "end_column": loc.and_then(|l| l.end_column),
        "severity": d.severity,
        "code": d.code,
        "message": d.message,
        "rule": d.rule,
        "hint": d.hint,
    })
    .to_string()
}

/// A GitHub Actions workflow command: `::error file=F,line=L,col=C,endColumn=E,title=T::message`.
pub fn github(d: &Diagnostic) -> String {
    let kind = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
    };
    let mut props = Vec::new();
    if let Some(l) = &d.location {
        props.push(format!(
            "file={}",
            escape_property(&l.file.display().to_string())
        ));
        props.push(format!("line={}", l.line));
        props.push(format!("col={}", l.column));
        if let Some(end) = l.end_column {
            props.push(format!("endColumn={end}"));
        }
    }
    props.push(format!(
        "title={}",
        escape_property(&format!("turnout {}", d.code))
    ));
    let mut message = d.message.clone();
    if let Some(rule) = &d.rule
        && !message.contains(&format!("'{rule}'"))
    {
        let _ = write!(message, " (rule '{rule}')");
    }
    if let Some(hint) = &d.hint {
        let _ = write!(message, "\nhint: {hint}");
    }
    format!("::{kind} {}::{}", props.join(","), escape_data(&message))
}

/// A line of plain text among workflow commands: printed as it is (GitHub only parses lines
/// that start with `::`, so escaping `%` would show as `%25`), with a leading `::` defused.
pub fn plain_line(text: &str) -> String {
    match text.strip_prefix("::") {
        Some(rest) => format!(": :{rest}"),
        None => text.to_owned(),
    }
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The line as shown (tabs as four spaces), where the caret starts in it, and how wide the
/// caret is: the span the finding's location gives (its end column), else one character.
fn caret(line: &str, column: usize, end_column: Option<usize>) -> (String, usize, usize) {
    let chars: Vec<char> = line.chars().collect();
    let start = column.saturating_sub(1).min(chars.len());
    let shown: String = line.replace('\t', "    ");
    let width = |from: usize, to: usize| -> usize {
        chars[from.min(chars.len())..to.min(chars.len())]
            .iter()
            .map(|&c| if c == '\t' { 4 } else { 1 })
            .sum()
    };
    let caret_at = width(0, start);
    let wide = end_column.map_or(1, |end| width(start, end.saturating_sub(1)));
    (shown, caret_at, wide.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Code, Location};

    #[test]
    fn human_form_shows_line_caret_and_hint() {
        let mut sources = Sources::new();
        sources.insert(
            "r/guards.yaml",
            "guards:\n  - id: g\n    description: d\n    tools: [shop_serch]\n",
        );
        let d = Diagnostic::error(Code::UnknownTool, "unknown tool 'shop_serch'")
            .at(Some(Location::new("r/guards.yaml", 4, 13).until(23)))
            .hint("did you mean 'shop_search'?\nsecond line");
        assert_eq!(
            human(&d, &sources),
            "r/guards.yaml:4:13: error[unknown-tool]: unknown tool 'shop_serch'\n  |\n4 |     tools: [shop_serch]\n  |             ^^^^^^^^^^\n  = hint: did you mean 'shop_search'?\n          second line"
        );
    }

    #[test]
    fn tabs_are_shown_as_spaces_and_the_caret_follows() {
        let (shown, at, w) = caret("\tkey: value", 2, Some(5));
        assert_eq!(shown, "    key: value");
        assert_eq!((at, w), (4, 3));
    }

    #[test]
    fn without_a_readable_source_only_the_headline_and_hint() {
        let sources = Sources::new();
        let d = Diagnostic::warning(Code::UnusedList, "m")
            .at(Some(Location::new("/no/such/file.yaml", 3, 1)))
            .rule("r");
        assert_eq!(
            human(&d, &sources),
            "/no/such/file.yaml:3:1: warning[unused-list]: m (rule 'r')"
        );
        let d = Diagnostic::error(Code::MissingRouter, "no router");
        assert_eq!(human(&d, &sources), "error[missing-router]: no router");
    }

    #[test]
    fn github_commands_escape_what_they_must() {
        let d = Diagnostic::warning(Code::UnusedList, "100% unused\nreally")
            .at(Some(Location::new("a,b:c.yaml", 1, 1).until(2)))
            .hint("remove it");
        assert_eq!(
            github(&d),
            "::warning file=a%2Cb%3Ac.yaml,line=1,col=1,endColumn=2,title=turnout unused-list::100%25 unused%0Areally%0Ahint: remove it"
        );
        let d = Diagnostic::error(Code::MissingRouter, "no router");
        assert_eq!(
            github(&d),
            "::error title=turnout missing-router::no router"
        );
    }

    #[test]
    fn json_is_one_object_per_line() {
        let d = Diagnostic::error(Code::Schema, "multi\nline")
            .at(Some(Location::new("f.yaml", 1, 4).until(13)));
        let line = json_line(&d);
        assert!(!line.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&line).expect("json");
        assert_eq!(v["end_column"], 13);
        assert_eq!(v["severity"], "error");
        assert_eq!(v["hint"], serde_json::Value::Null);
    }
}
