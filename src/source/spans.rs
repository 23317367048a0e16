//! Where every value of a rule file sits: one walk over the events of `libyaml-rs` (the parser
//! under `serde_yaml`, see [`super::events`]) records, for every node, where its value and its
//! key start and end, keyed by JSON pointer (RFC 6901), so that a schema error at
//! `/guards/2/tools/0` becomes `file:line:column` with the exact span to underline. The same walk
//! enforces what a rule file may not be before any value is built: nested past the limit, a
//! second document, a tag, an alias to nothing or to the node it is in, a key written twice.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use serde_json::Value;

use super::events::{Event, Events, Kind, Mark};
use super::values::Builder;

/// A 1-based (line, column) position; columns count characters.
pub(crate) type Pos = (usize, usize);

/// A span: where it starts, and the column just past its end when it ends on the line it
/// starts on (a multi-line value is underlined to the end of its first line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: Pos,
    pub end_column: usize,
}

/// Where one node of the document sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    value: Span,
    /// The key, for mapping members.
    key: Option<Span>,
}

/// JSON pointer → positions of the document of a file.
#[derive(Debug, Clone, Default)]
pub struct SpanMap {
    entries: HashMap<String, Entry>,
}

/// Why a walk stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// libyaml's problem, its context, and where.
    Syntax {
        problem: String,
        context: Option<String>,
        at: Pos,
    },
    TooDeep(Pos),
    Tag(String, Pos),
    SecondDocument(Pos),
    /// An alias to an anchor never defined (`*name` without `&name`).
    UnknownAlias(String, Pos),
    /// An alias inside the node its anchor names: the value would contain itself.
    AliasLoop(String, Pos),
    /// A key written twice in one mapping: (key, the second, the first).
    DuplicateKey(String, Pos, Pos),
    /// A YAML merge key (`<<: *base`), which rule files do not support.
    MergeKey(Pos),
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

/// A collection being walked. `ptr` is `None` inside parts that have no JSON pointer
/// (complex keys, or values under them).
enum Frame {
    Seq {
        ptr: Option<String>,
        next: usize,
    },
    Map {
        ptr: Option<String>,
        /// The key read last, waiting for its value: (escaped key, its span). `None` while a key
        /// is expected.
        pending: Option<(Option<String>, Span)>,
        /// The keys seen, with where, to find one written twice.
        keys: HashMap<String, Pos>,
    },
}

/// The walk's state.
struct Walk<'t> {
    text: &'t str,
    /// Byte offset where each line starts, to find a line without scanning from the top.
    lines: Vec<usize>,
    map: SpanMap,
    stack: Vec<Frame>,
    /// For each open collection: the pointer it is recorded under (to set its end), and its
    /// anchor (an alias to it from inside is a loop).
    open: Vec<(Option<String>, Option<String>)>,
    anchors: HashSet<String>,
    root_seen: bool,
    /// The document's value, built from the same events.
    values: Builder,
}

impl SpanMap {
    /// Walks the parser's events once; stops at the first syntax error or limit.
    #[cfg(test)]
    pub(crate) fn build(text: &str, max_depth: usize) -> Result<SpanMap, Stop> {
        Self::build_with_value(text, max_depth).map(|(map, _)| map)
    }

    /// [`build`](Self::build), and the document's value from the same walk when it can be
    /// built with certainty (see [`super::values`]); `None` leaves it to `serde_yaml`.
    pub(crate) fn build_with_value(
        text: &str,
        max_depth: usize,
    ) -> Result<(SpanMap, Option<Value>), Stop> {
        let mut w = Walk {
            text,
            lines: std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
            map: SpanMap::default(),
            stack: Vec::new(),
            open: Vec::new(),
            anchors: HashSet::default(),
            root_seen: false,
            values: Builder::default(),
        };
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
                return Err(Stop::Tag(tag.clone(), event.start.position()));
            }
            if event.tag.is_some() {
                w.values.give_up();
            }
            match &event.kind {
                Kind::DocumentStart => {
                    documents += 1;
                    if documents > 1 {
                        return Err(Stop::SecondDocument(event.start.position()));
                    }
                }
                Kind::Scalar {
                    value,
                    block,
                    plain,
                } => {
                    w.values.scalar(value, *plain, event.anchor.as_deref());
                    // A block scalar is located at its first line of content.
                    let start = if *block {
                        first_content(text, event.start, event.end)
                    } else {
                        event.start
                    };
                    w.node((start, event.end), Some(value), false)?;
                    w.anchor(&event);
                }
                Kind::Alias(name) => {
                    let at = event.start.position();
                    if !w.anchors.contains(name) {
                        return Err(Stop::UnknownAlias(name.clone(), at));
                    }
                    if w.open.iter().any(|(_, a)| a.as_deref() == Some(name)) {
                        return Err(Stop::AliasLoop(name.clone(), at));
                    }
                    w.values.alias(name);
                    w.node((event.start, event.end), None, false)?;
                }
                Kind::SequenceStart | Kind::MappingStart => {
                    if w.stack.len() >= max_depth {
                        return Err(Stop::TooDeep(event.start.position()));
                    }
                    if event.kind == Kind::SequenceStart {
                        w.values.start_seq(event.anchor.as_deref());
                    } else {
                        w.values.start_map(event.anchor.as_deref());
                    }
                    let ptr = w.node((event.start, event.end), None, true)?;
                    w.anchor(&event);
                    w.open.push((ptr.clone(), event.anchor.clone()));
                    w.stack.push(if event.kind == Kind::SequenceStart {
                        Frame::Seq { ptr, next: 0 }
                    } else {
                        Frame::Map {
                            ptr,
                            pending: None,
                            keys: HashMap::default(),
                        }
                    });
                }
                Kind::SequenceEnd | Kind::MappingEnd => {
                    w.values.end();
                    w.stack.pop();
                    if let Some((Some(ptr), _)) = w.open.pop() {
                        let start = w.map.entries.get(&ptr).map(|e| e.value.start);
                        let end = w.span_end(start, event.end);
                        if let Some(entry) = w.map.entries.get_mut(&ptr) {
                            entry.value.end_column = end;
                        }
                    }
                }
                Kind::StreamStart | Kind::StreamEnd | Kind::DocumentEnd => {}
            }
        }
        Ok((w.map, w.values.finish()))
    }

    /// 1-based (line, column in characters) where the value at `pointer` starts. `""` is the
    /// document root.
    #[cfg(test)]
    pub fn value(&self, pointer: &str) -> Option<(usize, usize)> {
        self.entries.get(pointer).map(|e| e.value.start)
    }

    /// The span of the value at `pointer`.
    pub(crate) fn value_span(&self, pointer: &str) -> Option<Span> {
        self.entries.get(pointer).map(|e| e.value)
    }

    /// 1-based (line, column) of the key of the mapping member at `pointer` (falls back to
    /// [`SpanMap::value`]).
    pub fn key(&self, pointer: &str) -> Option<(usize, usize)> {
        self.key_span(pointer).map(|s| s.start)
    }

    /// The span of the key of the mapping member at `pointer` (its value's for a list item).
    pub(crate) fn key_span(&self, pointer: &str) -> Option<Span> {
        self.entries.get(pointer).map(|e| e.key.unwrap_or(e.value))
    }

    /// The position of `pointer`'s value, or of its nearest located ancestor (useful when a
    /// pointer names a missing key); `(1, 1)` when nothing is located.
    #[cfg(test)]
    pub fn nearest(&self, pointer: &str) -> (usize, usize) {
        self.nearest_span(pointer).map_or((1, 1), |s| s.start)
    }

    /// The span of `pointer`'s value, or of its nearest located ancestor.
    pub(crate) fn nearest_span(&self, pointer: &str) -> Option<Span> {
        let mut p = pointer;
        loop {
            if let Some(span) = self.value_span(p) {
                return Some(span);
            }
            match p.rfind('/') {
                Some(cut) => p = &p[..cut],
                None => return self.value_span(""),
            }
        }
    }
}

impl Walk<'_> {
    fn anchor(&mut self, event: &Event) {
        if let Some(a) = &event.anchor {
            self.anchors.insert(a.clone());
        }
    }

    /// Records a node that starts at `from` and ends at `to`, and returns its pointer when
    /// `keep` asks for it (a collection, whose members' pointers extend it); `None` when it has
    /// none: a key, or something under a complex key. `scalar` is the text of a scalar node.
    fn node(
        &mut self,
        (from, to): (Mark, Mark),
        scalar: Option<&str>,
        keep: bool,
    ) -> Result<Option<String>, Stop> {
        let start = from.position();
        let span = Span {
            start,
            end_column: self.span_end(Some(start), to),
        };
        let Some(top) = self.stack.last_mut() else {
            if self.root_seen {
                return Ok(None);
            }
            self.root_seen = true;
            self.map.record(
                String::new(),
                Entry {
                    value: span,
                    key: None,
                },
            );
            return Ok(Some(String::new()));
        };
        match top {
            Frame::Seq { ptr, next } => {
                let index = *next;
                *next += 1;
                let Some(child) = ptr.as_ref().map(|p| pointer(p, &index.to_string())) else {
                    return Ok(None);
                };
                let kept = keep.then(|| child.clone());
                self.map.record(
                    child,
                    Entry {
                        value: span,
                        key: None,
                    },
                );
                Ok(kept)
            }
            Frame::Map { ptr, pending, keys } => match pending.take() {
                None => {
                    // A key. Only scalar keys name a JSON member; anything under a complex key
                    // has no pointer.
                    if let Some(key) = scalar {
                        if key == "<<" {
                            return Err(Stop::MergeKey(start));
                        }
                        if let Some(&first) = keys.get(key) {
                            return Err(Stop::DuplicateKey(key.to_owned(), start, first));
                        }
                        keys.insert(key.to_owned(), start);
                    }
                    *pending = Some((scalar.map(escape), span));
                    Ok(None)
                }
                Some((key, key_span)) => {
                    let (Some(parent), Some(key)) = (ptr.as_ref(), key) else {
                        return Ok(None);
                    };
                    let child = pointer(parent, &key);
                    let kept = keep.then(|| child.clone());
                    self.map.record(
                        child,
                        Entry {
                            value: span,
                            key: Some(key_span),
                        },
                    );
                    Ok(kept)
                }
            },
        }
    }
}

/// The pointer of member `key` (escaped) or item `key` of `parent`.
fn pointer(parent: &str, key: &str) -> String {
    let mut child = String::with_capacity(parent.len() + 1 + key.len());
    child.push_str(parent);
    child.push('/');
    child.push_str(key);
    child
}

impl SpanMap {
    fn record(&mut self, pointer: String, entry: Entry) {
        self.entries.entry(pointer).or_insert(entry);
    }
}

impl Walk<'_> {
    /// The column just past `end` when it is on `start`'s line; otherwise the end of that line
    /// (a multi-line value is underlined to the end of its first line). Trailing spaces and a
    /// comment after the value are not part of it.
    fn span_end(&self, start: Option<Pos>, end: Mark) -> usize {
        let Some((line, column)) = start else {
            return end.column + 1;
        };
        if end.line + 1 == line && end.column + 1 > column {
            return end.column + 1;
        }
        let from = self.lines.get(line.saturating_sub(1)).copied().unwrap_or(0);
        let to = self.lines.get(line).copied().unwrap_or(self.text.len());
        let line_text = self.text.get(from..to).unwrap_or("");
        let line_text = line_text.trim_end_matches(['\n', '\r']);
        let content = match line_text.find(" #") {
            Some(comment) => &line_text[..comment],
            None => line_text,
        };
        (content.trim_end().chars().count() + 1).max(column + 1)
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
            Some(b'\r') if rest.get(indent + 1) == Some(&b'\n') => {
                index += indent + 2;
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

/// Escapes a mapping key as one JSON pointer segment (RFC 6901).
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns (start, past the end) of the value at `pointer`.
    fn cols(text: &str, pointer: &str) -> (usize, usize) {
        let s = SpanMap::build(text, 64).expect("well-formed YAML");
        let span = s.value_span(pointer).expect("located");
        (span.start.1, span.end_column)
    }

    #[test]
    fn spans_cover_the_value_as_written() {
        let width = |text: &str, pointer: &str| {
            let (a, b) = cols(text, pointer);
            b - a
        };
        assert_eq!(
            width("tools: [shop_serch]\n", "/tools/0"),
            "shop_serch".len()
        );
        assert_eq!(width("tools: [a, bb, ccc]\n", "/tools/2"), 3);
        assert_eq!(width("drop_when: {longer_than: 3}\n", "/drop_when"), 16);
        assert_eq!(width("patterns: ['(x', \"y\\\"z\"]\n", "/patterns/0"), 4);
        assert_eq!(width("patterns: ['(x', \"y\\\"z\"]\n", "/patterns/1"), 6);
        assert_eq!(
            width("- id: my-rule   # a comment\n", "/0/id"),
            "my-rule".len()
        );
        assert_eq!(width("- 'it''s'\n", "/0"), 7);
        // A block collection is underlined to the end of its first line.
        assert_eq!(cols("a:\n  b: 1\n  c: 2\n", "/a"), (3, 7));
        assert_eq!(cols("a: [1,\n  2]\n", "/a"), (4, 7));
    }

    #[test]
    fn keys_have_spans_of_their_own() {
        let s = SpanMap::build("guards:\n  - drop_whn: {x: 1}\n", 64).expect("valid");
        let key = s.key_span("/guards/0/drop_whn").expect("key");
        assert_eq!((key.start, key.end_column), ((2, 5), 13));
    }
}
