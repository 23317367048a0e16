//! Reading rule files: text within the limits, YAML values, and where every value sits.
//!
//! Values are parsed with `serde_yaml` (the maintained `yaml_serde`: scalar typing is the usual
//! serde one). Positions come from [`SpanMap`], a walk over the events of `libyaml-rs`, the very
//! parser `serde_yaml` runs underneath, so values and spans cannot disagree; the walk runs first
//! and refuses what a rule file may not be (see [`super::spans`]) before any value is built.
//!
//! Nothing here panics on bad input: binary files, truncated files, syntax errors and files
//! past a limit all become a [`Diagnostic`]. A syntax error is explained from the text around
//! it (a tab in the indentation, a second `: ` on the line, the file ending inside a value);
//! libyaml's own words go in the hint.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::spans::{Pos, Span, Stop};
pub use super::spans::{SpanMap, escape};
use crate::diag::{Code, Diagnostic, Location};

/// Limits on what a rule file may be, checked before its values are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest file, in bytes; larger files are refused without being read.
    pub max_file_bytes: u64,
    /// Deepest nesting of lists and mappings.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 8 << 20,
            max_depth: 64,
        }
    }
}

/// A file's bytes as text. Not UTF-8 or containing NUL bytes → `not-text` (located at the first
/// offending byte). A leading byte-order mark is dropped.
pub fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, Diagnostic> {
    let not_text = |valid: &[u8]| {
        // `valid` is the UTF-8 prefix before the first bad byte; point at that byte.
        let prefix = String::from_utf8_lossy(valid);
        let line = prefix.matches('\n').count() + 1;
        let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Diagnostic::error(
            Code::NotText,
            "file is not a text file (binary or not UTF-8)",
        )
        .at(Some(Location::new(path, line, column)))
        .hint("rule files must be UTF-8 text")
    };
    // The SIMD check passes a text file at a tenth of the standard check's cost (a copy is
    // cheaper still); the standard one locates a bad byte.
    let checked = simdutf8::basic::from_utf8(&bytes).map(str::to_owned);
    let text = match checked.or_else(|_| String::from_utf8(bytes)) {
        Ok(text) => text,
        Err(e) => {
            let bytes = e.as_bytes();
            let bad = e.utf8_error().valid_up_to();
            let cut = bytes[..bad].iter().position(|&b| b == 0).unwrap_or(bad);
            return Err(not_text(&bytes[..cut]));
        }
    };
    if let Some(nul) = text.find('\0') {
        return Err(not_text(&text.as_bytes()[..nul]));
    }
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// Parses YAML into a `serde_json::Value` (as `serde_yaml` reads it), plus the [`SpanMap`],
/// within the default [`Limits`]. An empty or comment-only file gives `Value::Null`.
#[cfg(test)]
pub fn parse_yaml(path: &Path, text: &str) -> Result<(Value, SpanMap), Diagnostic> {
    parse_yaml_limited(path, text, &Limits::default())
}

/// [`parse_yaml`] within `limits`.
///
/// Errors are one diagnostic located where the parser stopped: `yaml-syntax` (also for an alias
/// to nothing and a key written twice, which the parser would silently accept), `too-deep` past
/// `limits.max_depth`, `yaml-tag` for a tag outside YAML's core schema (`!!python/object`),
/// `multiple-documents` when a `---` starts a second document (everything after it would
/// otherwise be silently ignored).
pub fn parse_yaml_limited(
    path: &Path,
    text: &str,
    limits: &Limits,
) -> Result<(Value, SpanMap), Diagnostic> {
    let at = |pos: Pos| Some(Location::new(path, pos.0, pos.1));
    let (spans, value) = SpanMap::build_with_value(text, limits.max_depth)
        .map_err(|stop| refusal(path, text, stop, limits))?;
    if let Some(value) = value {
        return Ok((value, spans));
    }
    let parsed = match serde_yaml::Deserializer::from_str(text).next() {
        None => Ok(Value::Null),
        Some(document) => Value::deserialize(document),
    };
    match parsed {
        Ok(value) => Ok((value, spans)),
        // The walk above accepted the text, so the parser did too; what is left is rare (a
        // number too large for JSON, say): the loader's own words, located where it says.
        Err(err) => {
            let pos = err
                .location()
                .map_or((1, 1), |loc| (loc.line().max(1), loc.column().max(1)));
            let words = err.to_string();
            let words = words.split(" at line ").next().unwrap_or(&words);
            Err(Diagnostic::error(
                Code::YamlSyntax,
                format!("this YAML cannot be read: {words}"),
            )
            .at(at(pos)))
        }
    }
}

/// The finding for a walk that stopped.
fn refusal(path: &Path, text: &str, stop: Stop, limits: &Limits) -> Diagnostic {
    let at = |pos: Pos| Some(Location::new(path, pos.0, pos.1));
    match stop {
        Stop::Syntax {
            problem,
            context,
            at: pos,
        } => {
            // A position past the last line (the file ends inside a value) is shown at the end
            // of the last line, where the unfinished value is.
            let lines = text.lines().count();
            let pos = match text.lines().last() {
                Some(last) if pos.0 > lines => (lines, last.chars().count() + 1),
                _ => pos,
            };
            let said = match context {
                Some(c) => format!("{c}: {problem}"),
                None => problem,
            };
            Diagnostic::error(
                Code::YamlSyntax,
                format!("this YAML is not well-formed: {}", explain(text, pos)),
            )
            .at(at(pos))
            .hint(format!("the YAML parser said: {said}"))
        }
        Stop::TooDeep(pos) => Diagnostic::error(
            Code::TooDeep,
            format!(
                "lists and mappings are nested more than {} levels deep here",
                limits.max_depth
            ),
        )
        .at(at(pos))
        .hint(
            "rule files need far less nesting; check for unclosed brackets, or raise \
             --max-rule-depth if this is intended",
        ),
        Stop::Tag(tag, pos) => {
            let shown = tag
                .strip_prefix("tag:yaml.org,2002:")
                .map_or_else(|| tag.clone(), |rest| format!("!!{rest}"));
            Diagnostic::error(
                Code::YamlTag,
                format!("the tag '{shown}' is not allowed in a rule file"),
            )
            .at(at(pos))
            .hint("rule files are plain data: remove the tag (only YAML's core tags such as !!str are accepted)")
        }
        Stop::SecondDocument(pos) => Diagnostic::error(
            Code::MultipleDocuments,
            "a second YAML document starts here; a rule file holds one document",
        )
        .at(at(pos))
        .hint(
            "everything after '---' would be ignored: move it into a file of its own, or \
             remove the '---' line",
        ),
        Stop::UnknownAlias(name, pos) => Diagnostic::error(
            Code::YamlSyntax,
            format!(
                "this YAML is not well-formed: the alias '*{name}' refers to an anchor '&{name}' that is not defined before it"
            ),
        )
        .at(at(pos)),
        Stop::AliasLoop(name, pos) => Diagnostic::error(
            Code::YamlSyntax,
            format!(
                "this YAML is not well-formed: the alias '*{name}' is inside the value its anchor names, so the value would contain itself"
            ),
        )
        .at(at(pos)),
        Stop::DuplicateKey(key, pos, first) => Diagnostic::error(
            Code::YamlSyntax,
            format!(
                "this YAML is not well-formed: the key '{key}' is written twice in the same \
                 mapping (first on line {})",
                first.0
            ),
        )
        .at(at(pos))
        .hint("remove one of them, or merge them into one"),
        Stop::MergeKey(pos) => Diagnostic::error(
            Code::MergeKey,
            "YAML merge keys ('<<: *name') are not supported in rule files",
        )
        .at(at(pos))
        .hint(
            "write the keys out in this mapping; an anchor can still stand for a whole value \
             ('drop_when: *common', 'words: *shared')",
        ),
    }
}

/// What a person needs to know about a syntax error at `pos`, read from the text itself.
fn explain(text: &str, (line, column): Pos) -> String {
    let line_text = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let indent: String = line_text
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    if indent.contains('\t') {
        return "a tab is used for indentation; indent with spaces only".into();
    }
    let at_end = line >= text.lines().count() && column > line_text.chars().count();
    if at_end && unclosed(text) {
        return "the file ends in the middle of a value; a quote or bracket is not closed".into();
    }
    if second_colon(line_text) {
        return "a ':' followed by a space is not allowed here; check the indentation, or put \
                the value in quotes if it contains ': '"
            .into();
    }
    if at_end {
        return "the file ends in the middle of a value".into();
    }
    "this line does not fit the structure around it; check its indentation, and that every \
     bracket and quote is closed"
        .into()
}

/// Whether a quote or a bracket opened in `text` is never closed.
fn unclosed(text: &str) -> bool {
    let mut depth = 0i64;
    let mut quote: Option<char> = None;
    for line in text.lines() {
        let mut previous = ' ';
        for c in line.chars() {
            match (quote, c) {
                (Some('"'), '"') if previous != '\\' => quote = None,
                (Some('\''), '\'') => quote = None,
                (Some(_), _) => {}
                (None, '#') if previous == ' ' => break,
                (None, '"' | '\'') if matches!(previous, ' ' | '[' | '{' | ',' | ':') => {
                    quote = Some(c);
                }
                (None, '[' | '{') => depth += 1,
                (None, ']' | '}') => depth -= 1,
                _ => {}
            }
            previous = c;
        }
        if quote == Some('\'') {
            // Single-quoted scalars may span lines; keep the state.
        }
    }
    depth > 0 || quote.is_some()
}

/// Whether a plain value on this line holds a second `: ` (`description: price: how much`).
fn second_colon(line: &str) -> bool {
    let body = line.trim_start().trim_start_matches("- ");
    let Some((_, value)) = body.split_once(": ") else {
        return false;
    };
    let value = value.trim_start();
    !value.starts_with(['"', '\'', '[', '{', '|', '>']) && value.contains(": ")
}

/// Builds a [`Location`] for a pointer (the value's span, or the nearest located ancestor's)
/// in this file.
pub fn locate(path: &Path, spans: &SpanMap, pointer: &str) -> Location {
    let span = spans
        .value_span(pointer)
        .or_else(|| spans.nearest_span(pointer));
    span_location(path, span)
}

/// Builds a [`Location`] for the key of the member at `pointer` (its value's when it has none).
pub fn locate_key(path: &Path, spans: &SpanMap, pointer: &str) -> Location {
    match spans.key_span(pointer) {
        Some(span) => span_location(path, Some(span)),
        None => locate(path, spans, pointer),
    }
}

fn span_location(path: &Path, span: Option<Span>) -> Location {
    match span {
        Some(s) => Location::new(path, s.start.0, s.start.1).until(s.end_column),
        None => Location::new(path, 1, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::load::read_text;
    use std::path::PathBuf;

    fn spans(text: &str) -> SpanMap {
        SpanMap::build(text, 64).expect("well-formed YAML")
    }

    fn path() -> PathBuf {
        PathBuf::from("rules/r.yaml")
    }

    #[test]
    fn nested_maps_and_sequences() {
        let text = "\
# leading comment
guards:
  - id: a
    tools:
      - x
      - y
  - id: b
    drop_when:
      all:
        - mentions: w
";
        let s = spans(text);
        assert_eq!(s.value(""), Some((2, 1)));
        assert_eq!(s.key("/guards"), Some((2, 1)));
        assert_eq!(s.value("/guards"), Some((3, 3)));
        assert_eq!(s.value("/guards/0"), Some((3, 5)));
        assert_eq!(s.key("/guards/0/id"), Some((3, 5)));
        assert_eq!(s.value("/guards/0/id"), Some((3, 9)));
        assert_eq!(s.value("/guards/0/tools/0"), Some((5, 9)));
        assert_eq!(s.value("/guards/0/tools/1"), Some((6, 9)));
        // A sequence element has no key: `key` falls back to the value.
        assert_eq!(s.key("/guards/0/tools/1"), Some((6, 9)));
        assert_eq!(s.key("/guards/1/drop_when"), Some((8, 5)));
        assert_eq!(
            s.value("/guards/1/drop_when/all/0/mentions"),
            Some((10, 21))
        );
        assert_eq!(s.key("/guards/1/drop_when/all/0/mentions"), Some((10, 11)));
        assert_eq!(s.value("/guards/2"), None);
        // Missing things fall back to their nearest located ancestor.
        assert_eq!(s.nearest("/guards/1/description"), (7, 5));
        assert_eq!(s.nearest("/nothing/here"), (2, 1));
        assert_eq!(s.nearest(""), (2, 1));
    }

    #[test]
    fn flow_style() {
        let text = "a: {b: 1, c: [x, \"y\", {d: e}]}\nf: [1, 2]\n";
        let s = spans(text);
        assert_eq!(s.value("/a"), Some((1, 4)));
        assert_eq!(s.key("/a/b"), Some((1, 5)));
        assert_eq!(s.value("/a/b"), Some((1, 8)));
        assert_eq!(s.value("/a/c"), Some((1, 14)));
        assert_eq!(s.value("/a/c/0"), Some((1, 15)));
        assert_eq!(s.value("/a/c/1"), Some((1, 18)));
        assert_eq!(s.key("/a/c/2/d"), Some((1, 24)));
        assert_eq!(s.value("/f/1"), Some((2, 8)));
    }

    #[test]
    fn block_scalars_and_empty_values() {
        let text =
            "a:\n  text: |\n    hello\n    world\n  folded: >-\n    x\n  empty:\n  after: 1\n";
        let s = spans(text);
        // A block scalar's value starts at its first content line.
        assert_eq!(s.value("/a/text"), Some((3, 5)));
        assert_eq!(s.key("/a/text"), Some((2, 3)));
        assert_eq!(s.value("/a/folded"), Some((6, 5)));
        assert_eq!(s.key("/a/empty"), Some((7, 3)));
        assert_eq!(s.value("/a/after"), Some((8, 10)));
    }

    #[test]
    fn keys_with_slash_and_tilde_are_escaped() {
        let text = "a/b: 1\n\"c~d\": {e/f~g: 2}\n";
        let s = spans(text);
        assert_eq!(s.value("/a~1b"), Some((1, 6)));
        assert_eq!(s.key("/c~0d/e~1f~0g"), Some((2, 9)));
        let (v, _) = parse_yaml(&path(), text).expect("valid");
        assert_eq!(v.pointer("/c~0d/e~1f~0g"), Some(&Value::from(2)));
    }

    #[test]
    fn columns_count_characters() {
        let s = spans("κλεί: τιμή\nγειτον: [α, βγ]\n");
        assert_eq!(s.value("/κλεί"), Some((1, 7)));
        assert_eq!(s.value("/γειτον/1"), Some((2, 13)));
    }

    #[test]
    fn empty_and_comment_only_files_are_null() {
        for text in ["", "\n\n", "# only\n# comments\n", "---\n", "   \n"] {
            let (v, s) = parse_yaml(&path(), text).expect("empty is not an error");
            assert_eq!(v, Value::Null, "{text:?}");
            assert_eq!(s.nearest("/guards/0"), s.value("").unwrap_or((1, 1)));
        }
        assert_eq!(spans("").nearest("/a"), (1, 1));
    }

    #[test]
    fn truncated_mapping_is_a_located_syntax_error() {
        let text = "guards:\n  - id: x\n    drop_when: {all: [\n";
        let err = parse_yaml(&path(), text).expect_err("truncated");
        assert_eq!(err.code, Code::YamlSyntax);
        let loc = err.location.clone().expect("located");
        // Past the end of the file: shown at the end of the last line, after the open '['.
        assert_eq!((loc.line, loc.column), (3, 23));
        assert!(
            err.message.starts_with("this YAML is not well-formed: "),
            "{err}"
        );

        let err = parse_yaml(&path(), "a:\n  b: \"unterminated\n").expect_err("quote");
        assert!(err.message.contains("quote or bracket"), "{err}");
    }

    #[test]
    fn tab_indentation_is_reported_with_line_and_column() {
        let text = "guards:\n  - id: x\n\tdescription: y\n";
        let err = parse_yaml(&path(), text).expect_err("tab");
        assert_eq!(err.code, Code::YamlSyntax);
        let loc = err.location.clone().expect("located");
        assert_eq!((loc.line, loc.column), (3, 1));
        assert!(err.message.contains("tab"), "{err}");
        assert!(
            !err.message.contains("line 3"),
            "positions belong in the location: {err}"
        );
        let text = "a: 1\nb:\n\t- x\n";
        let err = parse_yaml(&path(), text).expect_err("tab");
        let loc = err.location.clone().expect("located");
        assert_eq!(loc.line, 3);
        assert!(err.message.contains("tab"), "{err}");
    }

    #[test]
    fn other_syntax_errors_read_plainly() {
        let err = parse_yaml(&path(), "a: b: c\n").expect_err("mapping in plain");
        assert!(err.message.contains("':'"), "{err}");
        assert!(
            err.hint
                .as_deref()
                .unwrap_or("")
                .contains("YAML parser said")
        );
        let err = parse_yaml(&path(), "a: *nope\n").expect_err("alias");
        assert!(err.message.contains("anchor"), "{err}");
        assert!(err.location.is_some());
        let err = parse_yaml(&path(), "a: &x\n  b: *x\n").expect_err("self alias");
        assert_eq!(err.code, Code::YamlSyntax);
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let err = parse_yaml(&path(), "a: 1\nb:\n  c: 1\n  c: 2\n").expect_err("dup");
        assert_eq!(err.code, Code::YamlSyntax);
        assert!(err.message.contains("'c' is written twice"), "{err}");
        assert!(err.message.contains("line 3"), "{err}");
        let loc = err.location.expect("located");
        assert_eq!((loc.line, loc.column), (4, 3));
    }

    #[test]
    fn garbage_is_parsed_or_refused_with_a_located_finding() {
        let garbage: Vec<&str> = vec![
            "\u{1}\u{2}\u{3}",
            "{",
            "[",
            "}",
            "a: [}",
            "- - - -",
            "? ? ?",
            ": : :",
            "&a &b c",
            "*a",
            "!!binary x",
            "!tag {a: 1}",
            "%YAML 1.2\n%YAML 1.2\n---\n",
            "'",
            "\"\\",
            "a:\n  - b\n c: d",
            "[a]: 1\nb: 2\n",
            "{[a]: 1}",
            "? [a, b]\n: c\n",
            "a: |\n",
            "a: >\n\tb",
            "...\n...\n",
            "---\na: 1\n---\nb: [\n",
            "\u{feff}a: 1",
            "a: 1\r\nb: [x,\r\n  y]\r\n",
        ];
        let codes = [
            Code::YamlSyntax,
            Code::YamlTag,
            Code::MultipleDocuments,
            Code::TooDeep,
        ];
        let mut refused = 0;
        for text in garbage {
            if let Err(d) = parse_yaml(&path(), text) {
                refused += 1;
                assert!(codes.contains(&d.code), "{text:?}: {d}");
                let loc = d.location.expect("located");
                assert!(loc.line >= 1 && loc.column >= 1, "{text:?}: {loc:?}");
            }
        }
        // Most of these are not YAML at all; a few are (`- - - -` is nested lists).
        assert!(refused >= 18, "only {refused} refused");
    }

    #[test]
    fn nesting_past_the_limit_is_refused_quickly_where_it_starts() {
        let limits = Limits {
            max_depth: 8,
            ..Limits::default()
        };
        let ok = "a: ".to_owned() + &"[".repeat(7) + &"]".repeat(7) + "\n";
        assert!(parse_yaml_limited(&path(), &ok, &limits).is_ok());
        for deep in [
            "[".repeat(100_000),
            "a: ".to_owned() + &"[".repeat(9) + &"]".repeat(9),
            "- ".repeat(20) + "x\n",
        ] {
            let started = std::time::Instant::now();
            let err = parse_yaml_limited(&path(), &deep, &limits).expect_err("too deep");
            assert_eq!(err.code, Code::TooDeep, "{err}");
            assert_eq!(err.location.expect("located").line, 1);
            assert!(started.elapsed() < std::time::Duration::from_secs(1));
        }
    }

    #[test]
    fn a_second_document_is_refused_not_ignored() {
        let err = parse_yaml(&path(), "---\na: 1\n---\nb: 2\n").expect_err("two documents");
        assert_eq!(err.code, Code::MultipleDocuments);
        let loc = err.location.expect("located");
        assert_eq!(loc.line, 3);
        // One document, with or without the marker, is fine.
        let (v, s) = parse_yaml(&path(), "---\na: 1\n").expect("one document");
        assert_eq!(v, serde_json::json!({"a": 1}));
        assert_eq!(s.value("/a"), Some((2, 4)));
    }

    #[test]
    fn tags_outside_the_core_schema_are_refused() {
        let err = parse_yaml(&path(), "a: !!python/object:os.system {b: 1}\n").expect_err("tag");
        assert_eq!(err.code, Code::YamlTag);
        assert!(err.message.contains("!!python/object"), "{err}");
        assert_eq!(err.location.expect("located").line, 1);
        let err = parse_yaml(&path(), "a: !custom x\n").expect_err("local tag");
        assert_eq!(err.code, Code::YamlTag);
        // Core tags change nothing and are accepted.
        let (v, _) = parse_yaml(&path(), "a: !!str 5\n").expect("core tag");
        assert_eq!(v, serde_json::json!({"a": "5"}));
    }

    #[test]
    fn aliases_are_best_effort() {
        let text = "base: &b {x: 1}\nuse: *b\nlist: [*b, 2]\n";
        let (v, s) = parse_yaml(&path(), text).expect("aliases");
        assert_eq!(v["use"], serde_json::json!({"x": 1}));
        assert_eq!(s.value("/use"), Some((2, 6)));
        assert_eq!(s.value("/list/1"), Some((3, 12)));
    }

    #[test]
    fn complex_keys_do_not_confuse_positions() {
        let s = spans("? [a, b]\n: {c: 1}\nd: 2\n");
        assert_eq!(s.value("/d"), Some((3, 4)));
        assert_eq!(s.value("/c"), None);
    }

    #[test]
    fn read_text_rejects_binary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin.yaml");
        std::fs::write(&bin, b"a: 1\nb: \x00\x01\x02").expect("write");
        let err = read_text(&bin).expect_err("binary");
        assert_eq!(err.code, Code::NotText);
        assert_eq!(err.message, "file is not a text file (binary or not UTF-8)");
        let loc = err.location.expect("located");
        assert_eq!((loc.line, loc.column), (2, 4));

        let latin1 = dir.path().join("latin1.yaml");
        std::fs::write(&latin1, b"name: caf\xe9\n").expect("write");
        assert_eq!(read_text(&latin1).expect_err("latin1").code, Code::NotText);

        let missing = dir.path().join("missing.yaml");
        assert_eq!(
            read_text(&missing).expect_err("missing").code,
            Code::Unreadable
        );
        assert_eq!(
            read_text(dir.path()).expect_err("a directory").code,
            Code::Unreadable
        );

        let bom = dir.path().join("bom.yaml");
        std::fs::write(&bom, "\u{feff}a: 1\n").expect("write");
        assert_eq!(read_text(&bom).expect("bom"), "a: 1\n");
    }

    #[test]
    fn locate_uses_value_or_nearest() {
        let text = "guards:\n  - id: a\n";
        let (_, s) = parse_yaml(&path(), text).expect("ok");
        let loc = locate(&path(), &s, "/guards/0/id");
        assert_eq!((loc.line, loc.column, loc.file), (2, 9, path()));
        let loc = locate(&path(), &s, "/guards/0/drop_when");
        assert_eq!((loc.line, loc.column), (2, 5));
    }
}
