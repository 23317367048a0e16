//! Reading rule files: text, YAML, and where every value sits in the file.
//!
//! Values are parsed with `serde_yaml` (the maintained `yaml_serde`, so scalar typing is the
//! usual serde one). Positions come from the events of the same parser, `libyaml-rs`, walked once
//! by [`SpanMap::build`] (see [`super::events`]): every node's start and end, keyed by JSON
//! pointer (RFC 6901), so that a schema error at `/guards/2/tools/0` is reported as
//! `file:line:column`. The same walk enforces the limits of [`Limits`] before any value is
//! built: nesting depth, one document per file, no tags.
//!
//! Nothing here panics on bad input: binary files, truncated files, syntax errors and files
//! past a limit all become a [`Diagnostic`].

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::events::{Event, Events, Kind, Mark};
use crate::diag::{Diagnostic, Location};

/// A 1-based (line, column) position; columns count characters.
type Pos = (usize, usize);

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
            max_file_bytes: 2 << 20,
            max_depth: 64,
        }
    }
}

/// Where one node of the document sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// Where the value starts.
    value: Pos,
    /// Where the value ends (just past its last character).
    end: Pos,
    /// Where the key starts, for mapping members.
    key: Option<Pos>,
}

/// JSON pointer → positions of the document of a file.
#[derive(Debug, Clone, Default)]
pub struct SpanMap {
    entries: HashMap<String, Entry>,
    /// Keys written twice in the same mapping: (pointer, position of the second key,
    /// position of the first key).
    duplicates: Vec<(String, Pos, Pos)>,
}

/// A collection being walked. `ptr` is `None` inside parts that have no JSON pointer
/// (complex keys, or values under them).
enum Frame {
    Seq {
        ptr: Option<String>,
        next: usize,
    },
    Map {
        ptr: Option<String>,
        /// The key read last, waiting for its value: (escaped key, key position). `None` while a
        /// key is expected.
        pending: Option<(Option<String>, Pos)>,
    },
}

/// Why a walk stopped.
#[derive(Debug)]
enum Stop {
    Syntax {
        problem: String,
        context: Option<String>,
        at: Pos,
    },
    TooDeep {
        at: Pos,
    },
    Tag {
        tag: String,
        at: Pos,
    },
    SecondDocument {
        at: Pos,
    },
}

/// The tags of YAML's core schema: writing one explicitly changes nothing. Any other tag asks
/// a loader to build something (`!!python/object`); rule files are plain data.
const CORE_TAGS: &[&str] = &[
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
];

impl SpanMap {
    /// Walks the parser's events once and records, for every node, where its value starts and
    /// ends and (for mapping members) where its key starts; stops at the first syntax error or
    /// limit.
    fn build(text: &str, limits: &Limits) -> Result<SpanMap, Stop> {
        let mut map = SpanMap::default();
        let mut stack: Vec<Frame> = Vec::new();
        // For each open collection: the pointer it was recorded under, to set its end.
        let mut open: Vec<Option<String>> = Vec::new();
        let mut root_seen = false;
        let mut documents = 0usize;
        for item in Events::new(text) {
            let event = item.map_err(|e| Stop::Syntax {
                problem: e.problem,
                context: e.context,
                at: e.mark.position(),
            })?;
            if let Some(tag) = &event.tag
                && !CORE_TAGS.contains(&tag.as_str())
            {
                return Err(Stop::Tag {
                    tag: tag.clone(),
                    at: event.start.position(),
                });
            }
            match &event.kind {
                Kind::DocumentStart => {
                    documents += 1;
                    if documents > 1 {
                        return Err(Stop::SecondDocument {
                            at: event.start.position(),
                        });
                    }
                }
                Kind::Scalar { value, block, .. } => {
                    let mut event = event.clone();
                    if *block {
                        event.start = first_content(text, event.start, event.end);
                    }
                    map.node(&mut stack, &mut root_seen, &event, Some(value));
                }
                Kind::Alias => {
                    map.node(&mut stack, &mut root_seen, &event, None);
                }
                Kind::SequenceStart | Kind::MappingStart => {
                    if stack.len() >= limits.max_depth {
                        return Err(Stop::TooDeep {
                            at: event.start.position(),
                        });
                    }
                    let ptr = map.node(&mut stack, &mut root_seen, &event, None);
                    open.push(ptr.clone());
                    stack.push(if event.kind == Kind::SequenceStart {
                        Frame::Seq { ptr, next: 0 }
                    } else {
                        Frame::Map { ptr, pending: None }
                    });
                }
                Kind::SequenceEnd | Kind::MappingEnd => {
                    stack.pop();
                    if let Some(Some(ptr)) = open.pop()
                        && let Some(entry) = map.entries.get_mut(&ptr)
                    {
                        entry.end = event.end.position();
                    }
                }
                Kind::StreamStart | Kind::StreamEnd | Kind::DocumentEnd => {}
            }
        }
        Ok(map)
    }

    /// Records a node and returns its pointer (`None` when it has none: a key, or something
    /// under a complex key). `scalar` is the text of a scalar node.
    fn node(
        &mut self,
        stack: &mut [Frame],
        root_seen: &mut bool,
        event: &Event,
        scalar: Option<&str>,
    ) -> Option<String> {
        let pos = event.start.position();
        let end = end_position(event.end);
        let Some(top) = stack.last_mut() else {
            if *root_seen {
                return None;
            }
            *root_seen = true;
            self.record(
                String::new(),
                Entry {
                    value: pos,
                    end,
                    key: None,
                },
            );
            return Some(String::new());
        };
        match top {
            Frame::Seq { ptr, next } => {
                let index = *next;
                *next += 1;
                let child = ptr.as_ref().map(|p| format!("{p}/{index}"))?;
                self.record(
                    child.clone(),
                    Entry {
                        value: pos,
                        end,
                        key: None,
                    },
                );
                Some(child)
            }
            Frame::Map { ptr, pending } => match pending.take() {
                None => {
                    // A key. Only scalar keys name a JSON member; anything under a complex key
                    // has no pointer.
                    let escaped = scalar.map(escape);
                    *pending = Some((escaped, pos));
                    None
                }
                Some((key, key_pos)) => {
                    let (Some(parent), Some(key)) = (ptr.as_ref(), key) else {
                        return None;
                    };
                    let child = format!("{parent}/{key}");
                    let entry = Entry {
                        value: pos,
                        end,
                        key: Some(key_pos),
                    };
                    if let Some(first) = self.entries.get(&child) {
                        let first = first.key.unwrap_or(first.value);
                        self.duplicates.push((child.clone(), key_pos, first));
                    }
                    self.record(child.clone(), entry);
                    Some(child)
                }
            },
        }
    }

    fn record(&mut self, pointer: String, entry: Entry) {
        self.entries.entry(pointer).or_insert(entry);
    }

    /// 1-based (line, column in characters) where the value at `pointer` starts. `""` is the
    /// document root.
    pub fn value(&self, pointer: &str) -> Option<(usize, usize)> {
        self.entries.get(pointer).map(|e| e.value)
    }

    /// 1-based (line, column) just past the end of the value at `pointer`.
    pub fn end(&self, pointer: &str) -> Option<(usize, usize)> {
        self.entries.get(pointer).map(|e| e.end)
    }

    /// 1-based (line, column) of the key of the mapping member at `pointer` (falls back to
    /// [`SpanMap::value`]).
    pub fn key(&self, pointer: &str) -> Option<(usize, usize)> {
        self.entries.get(pointer).map(|e| e.key.unwrap_or(e.value))
    }

    /// The position of `pointer`'s value, or of its nearest located ancestor (useful when a
    /// pointer names a missing key); `(1, 1)` when nothing is located.
    pub fn nearest(&self, pointer: &str) -> (usize, usize) {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.value(p) {
                return pos;
            }
            match p.rfind('/') {
                Some(cut) => p = &p[..cut],
                None => return self.value("").unwrap_or((1, 1)),
            }
        }
    }
}

/// Where a block scalar's content starts (its first non-blank line after the `|` or `>`
/// indicator), which is what a person means by "the value"; the indicator itself when the
/// scalar is empty.
fn first_content(text: &str, indicator: Mark, end: Mark) -> Mark {
    let bytes = text.as_bytes();
    let Some(newline) = bytes
        .get(indicator.index..end.index.min(bytes.len()))
        .and_then(|b| b.iter().position(|&c| c == b'\n'))
    else {
        return indicator;
    };
    let mut index = indicator.index + newline + 1;
    let mut line = indicator.line + 1;
    loop {
        let rest = &bytes[index.min(bytes.len())..end.index.min(bytes.len())];
        let indent = rest.iter().take_while(|&&c| c == b' ').count();
        match rest.get(indent) {
            Some(b'\n') => {
                index += indent + 1;
                line += 1;
            }
            Some(_) => {
                return Mark {
                    index: index + indent,
                    line,
                    column: indent,
                };
            }
            None => return indicator,
        }
    }
}

/// libyaml ends a block collection at the start of the line after it; the span a person means
/// ends on its last line, so such an end is kept as it is (line+1, column 1) — callers that
/// underline stop at the end of the start line anyway.
fn end_position(m: Mark) -> Pos {
    m.position()
}

/// Escapes a mapping key as one JSON pointer segment (RFC 6901).
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Reads a file as text within the default [`Limits`] (see [`text_of`]).
pub fn read_text(path: &Path) -> Result<String, Diagnostic> {
    super::load::read_file(path, &Limits::default()).0
}

/// A file's bytes as text. Not UTF-8 or containing NUL bytes → `not-text` (located at the first
/// offending byte). A leading byte-order mark is dropped.
pub fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, Diagnostic> {
    let not_text = |valid: &[u8]| {
        // `valid` is the UTF-8 prefix before the first bad byte; point at that byte.
        let prefix = String::from_utf8_lossy(valid);
        let line = prefix.matches('\n').count() + 1;
        let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Diagnostic::error("not-text", "file is not a text file (binary or not UTF-8)")
            .at(Some(Location {
                file: path.to_path_buf(),
                line,
                column,
            }))
            .hint("rule files must be UTF-8 text")
    };
    let text = match String::from_utf8(bytes) {
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

/// Parses YAML into a `serde_json::Value` using `serde_yaml` (so scalar typing is
/// `serde_yaml`'s), plus the [`SpanMap`], within the default [`Limits`]. An empty or
/// comment-only file gives `Value::Null`.
pub fn parse_yaml(path: &Path, text: &str) -> Result<(Value, SpanMap), Diagnostic> {
    parse_yaml_limited(path, text, &Limits::default())
}

/// [`parse_yaml`] within `limits`.
///
/// Errors are one diagnostic located where the parser stopped: `yaml-syntax`, with a message
/// written for people who do not read parser output (the parser's own words go in the hint);
/// `too-deep` past `limits.max_depth`; `yaml-tag` for a tag outside YAML's core schema
/// (`!!python/object`); `multiple-documents` when a `---` starts a second document (everything
/// after it would otherwise be silently ignored). A key written twice in one mapping is a
/// `yaml-syntax` error too (YAML forbids it, and the parser would silently keep the last value).
pub fn parse_yaml_limited(
    path: &Path,
    text: &str,
    limits: &Limits,
) -> Result<(Value, SpanMap), Diagnostic> {
    let at = |(line, column): Pos| {
        Some(Location {
            file: path.to_path_buf(),
            line,
            column,
        })
    };
    let spans = match SpanMap::build(text, limits) {
        Ok(spans) => spans,
        Err(Stop::Syntax {
            problem,
            context,
            at: pos,
        }) => {
            // "The file ends here" errors point past the last line; the end of the last line,
            // where the unfinished value is, is what a person needs to see.
            let (line, column) = match text.lines().last() {
                Some(last) if pos.0 > text.lines().count() => {
                    (text.lines().count(), last.chars().count() + 1)
                }
                _ => pos,
            };
            let raw = match context {
                Some(c) => format!("{c}: {problem}"),
                None => problem.clone(),
            };
            let line_text = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
            let (friendly, explained) = explain_yaml_error(&problem, line_text);
            let mut diag = Diagnostic::error(
                "yaml-syntax",
                format!("this YAML is not well-formed: {friendly}"),
            )
            .at(at((line, column)));
            if explained {
                diag = diag.hint(format!("the YAML parser said: {raw}"));
            }
            return Err(diag);
        }
        Err(Stop::TooDeep { at: pos }) => {
            return Err(Diagnostic::error(
                "too-deep",
                format!(
                    "lists and mappings are nested more than {} levels deep here",
                    limits.max_depth
                ),
            )
            .at(at(pos))
            .hint(
                "rule files need far less nesting; check for unclosed brackets, or raise \
                 --max-rule-depth if this is intended",
            ));
        }
        Err(Stop::Tag { tag, at: pos }) => {
            let shown = tag
                .strip_prefix("tag:yaml.org,2002:")
                .map_or_else(|| tag.clone(), |rest| format!("!!{rest}"));
            return Err(Diagnostic::error(
                "yaml-tag",
                format!("the tag '{shown}' is not allowed in a rule file"),
            )
            .at(at(pos))
            .hint("rule files are plain data: remove the tag (only YAML's core tags such as !!str are accepted)"));
        }
        Err(Stop::SecondDocument { at: pos }) => {
            return Err(Diagnostic::error(
                "multiple-documents",
                "a second YAML document starts here; a rule file holds one document",
            )
            .at(at(pos))
            .hint(
                "everything after '---' would be ignored: move it into a file of its own, or \
                 remove the '---' line",
            ));
        }
    };
    let parsed = match serde_yaml::Deserializer::from_str(text).next() {
        None => Ok(Value::Null),
        Some(document) => Value::deserialize(document),
    };
    let value = match parsed {
        Ok(value) => value,
        Err(err) => {
            // The parser accepted the text (the walk above saw no syntax error): what is left
            // is what the loader checks, such as an alias to an anchor that is not defined.
            let pos = err
                .location()
                .map_or((1, 1), |loc| (loc.line().max(1), loc.column().max(1)));
            let raw = strip_positions(&err.to_string());
            let line_text = text.lines().nth(pos.0.saturating_sub(1)).unwrap_or("");
            let (friendly, explained) = explain_yaml_error(&raw, line_text);
            let mut diag = Diagnostic::error(
                "yaml-syntax",
                format!("this YAML is not well-formed: {friendly}"),
            )
            .at(at(pos));
            if explained {
                diag = diag.hint(format!("the YAML parser said: {raw}"));
            }
            return Err(diag);
        }
    };
    if let Some((pointer, pos, (first_line, _))) = spans.duplicates.first() {
        let key = pointer
            .rsplit('/')
            .next()
            .map(|k| k.replace("~1", "/").replace("~0", "~"))
            .unwrap_or_default();
        return Err(Diagnostic::error(
            "yaml-syntax",
            format!(
                "this YAML is not well-formed: the key '{key}' is written twice in the same \
                 mapping (first on line {first_line})"
            ),
        )
        .at(at(*pos))
        .hint("remove one of them, or merge them into one"));
    }
    Ok((value, spans))
}

/// Builds a [`Location`] for a pointer (the value's position, or the nearest located ancestor's)
/// in this file.
pub fn locate(path: &Path, spans: &SpanMap, pointer: &str) -> Location {
    let (line, column) = spans
        .value(pointer)
        .unwrap_or_else(|| spans.nearest(pointer));
    Location {
        file: path.to_path_buf(),
        line,
        column,
    }
}

/// Removes `" at line N column M"` and `" at position N"` from a parser message (the diagnostic
/// carries the position already).
fn strip_positions(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" at ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 4..];
        let skip = position_len(after);
        if skip == 0 {
            out.push_str(" at ");
        }
        rest = &after[skip..];
    }
    out.push_str(rest);
    out
}

/// The length of a leading `line N column M` or `position N`, or 0.
fn position_len(s: &str) -> usize {
    fn digits(s: &str) -> usize {
        s.bytes().take_while(u8::is_ascii_digit).count()
    }
    if let Some(r) = s.strip_prefix("line ") {
        let n = digits(r);
        if n > 0
            && let Some(r2) = r[n..].strip_prefix(" column ")
        {
            let m = digits(r2);
            if m > 0 {
                return "line ".len() + n + " column ".len() + m;
            }
        }
    } else if let Some(r) = s.strip_prefix("position ") {
        let n = digits(r);
        if n > 0 {
            return "position ".len() + n;
        }
    }
    0
}

/// A plain-words version of a YAML parser message, and whether it differs from the original.
/// `line_text` is the line the error points at.
fn explain_yaml_error(raw: &str, line_text: &str) -> (String, bool) {
    let indent: String = line_text
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    if indent.contains('\t') || raw.contains("tab character") {
        return (
            "a tab is used for indentation; indent with spaces only".into(),
            true,
        );
    }
    const PLAIN: &[(&str, &str)] = &[
        (
            "found character that cannot start any token",
            "a value cannot start with this character; put the value in quotes",
        ),
        (
            "did not find expected key",
            "this line does not line up with the keys around it; check its indentation",
        ),
        (
            "mapping values are not allowed in this context",
            "a ':' followed by a space is not allowed here; check the indentation, or put the \
             value in quotes if it contains ': '",
        ),
        (
            "did not find expected '-' indicator",
            "a list item ('- ...') was expected at this indentation; check the indentation",
        ),
        (
            "block sequence entries are not allowed in this context",
            "a list item ('- ...') is not allowed here; check the indentation",
        ),
        (
            "did not find expected ',' or ']'",
            "a list in [brackets] is not closed with ']' (or an item is missing a comma)",
        ),
        (
            "did not find expected ',' or '}'",
            "a mapping in {braces} is not closed with '}' (or an item is missing a comma)",
        ),
        (
            "found unexpected end of stream",
            "the file ends in the middle of a value; a quote or bracket is not closed",
        ),
        (
            "did not find expected node content",
            "a value is missing here; the file may be cut off, or a bracket is not closed",
        ),
        (
            "could not find expected ':'",
            "a key is not followed by ':'",
        ),
        (
            "found undefined alias",
            "an alias (*name) refers to an anchor (&name) that is not defined",
        ),
        (
            "unknown anchor",
            "an alias (*name) refers to an anchor (&name) that is not defined",
        ),
        (
            "recursion limit exceeded",
            "values are nested too deeply (or an alias refers to itself)",
        ),
        (
            "found unknown escape character",
            "a \"double-quoted\" text contains an unknown escape (\\); use 'single quotes' instead",
        ),
        (
            "expected a string key",
            "a key must be plain text, not a list or a mapping",
        ),
        (
            "found unexpected document indicator",
            "a line starting with '---' or '...' ends the document here; quote it or indent it",
        ),
    ];
    for (needle, plain) in PLAIN {
        if raw.contains(needle) {
            return ((*plain).to_owned(), true);
        }
    }
    (raw.to_owned(), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn spans(text: &str) -> SpanMap {
        SpanMap::build(text, &Limits::default()).expect("well-formed YAML")
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
        assert_eq!(err.code, "yaml-syntax");
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
        assert_eq!(err.code, "yaml-syntax");
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
        assert_eq!(err.code, "yaml-syntax");
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let err = parse_yaml(&path(), "a: 1\nb:\n  c: 1\n  c: 2\n").expect_err("dup");
        assert_eq!(err.code, "yaml-syntax");
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
        let codes = ["yaml-syntax", "yaml-tag", "multiple-documents", "too-deep"];
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
            assert_eq!(err.code, "too-deep", "{err}");
            assert_eq!(err.location.expect("located").line, 1);
            assert!(started.elapsed() < std::time::Duration::from_secs(1));
        }
    }

    #[test]
    fn a_second_document_is_refused_not_ignored() {
        let err = parse_yaml(&path(), "---\na: 1\n---\nb: 2\n").expect_err("two documents");
        assert_eq!(err.code, "multiple-documents");
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
        assert_eq!(err.code, "yaml-tag");
        assert!(err.message.contains("!!python/object"), "{err}");
        assert_eq!(err.location.expect("located").line, 1);
        let err = parse_yaml(&path(), "a: !custom x\n").expect_err("local tag");
        assert_eq!(err.code, "yaml-tag");
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
        assert_eq!(err.code, "not-text");
        assert_eq!(err.message, "file is not a text file (binary or not UTF-8)");
        let loc = err.location.expect("located");
        assert_eq!((loc.line, loc.column), (2, 4));

        let latin1 = dir.path().join("latin1.yaml");
        std::fs::write(&latin1, b"name: caf\xe9\n").expect("write");
        assert_eq!(read_text(&latin1).expect_err("latin1").code, "not-text");

        let missing = dir.path().join("missing.yaml");
        assert_eq!(read_text(&missing).expect_err("missing").code, "unreadable");
        assert_eq!(
            read_text(dir.path()).expect_err("a directory").code,
            "unreadable"
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
