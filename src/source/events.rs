//! The YAML event stream of a rule file, from `libyaml-rs`: the very parser that `serde_yaml`
//! (the maintained `yaml_serde`) runs underneath when it builds the values. Walking its events
//! here gives positions (start and end marks) and structure (depth, tags, documents) that cannot
//! disagree with the values, because one parser implementation produced both.
//!
//! This is the only module with `unsafe`: a small safe wrapper over libyaml's C-style API
//! (initialise a parser on a string, pull events, delete them). Nothing else in the crate
//! touches `libyaml_rs`.

use std::mem::MaybeUninit;

use libyaml_rs as sys;

/// A place in the text. `line` and `column` count from 0 (columns in characters), `index` is a
/// byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Mark {
    pub index: usize,
    pub line: usize,
    pub column: usize,
}

impl Mark {
    fn from_sys(m: sys::yaml_mark_t) -> Self {
        Self {
            index: usize::try_from(m.index).unwrap_or(usize::MAX),
            line: usize::try_from(m.line).unwrap_or(usize::MAX),
            column: usize::try_from(m.column).unwrap_or(usize::MAX),
        }
    }

    /// 1-based (line, column).
    pub fn position(self) -> (usize, usize) {
        (self.line.saturating_add(1), self.column.saturating_add(1))
    }
}

/// What an event is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    /// An alias (`*name`): the anchor it refers to.
    Alias(String),
    /// A scalar: its text, whether it was written plain (unquoted, not a block), and whether
    /// it is a block scalar (`|` or `>`).
    Scalar {
        value: String,
        plain: bool,
        block: bool,
    },
    SequenceStart,
    SequenceEnd,
    MappingStart,
    MappingEnd,
}

/// One event with where it starts and ends, its explicit tag and its anchor (`&name`), if it
/// has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub kind: Kind,
    pub start: Mark,
    pub end: Mark,
    pub tag: Option<String>,
    pub anchor: Option<String>,
}

/// The parser stopped: libyaml's own description of the problem, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// libyaml's problem text (a fixed string of the parser, e.g. `did not find expected key`).
    pub problem: String,
    /// What the parser was reading (e.g. `while parsing a block mapping`), if it says.
    pub context: Option<String>,
    pub mark: Mark,
}

/// The events of one text, in order; ends after the stream end or the first error.
pub(crate) struct Events<'a> {
    parser: Box<MaybeUninit<sys::yaml_parser_t>>,
    /// The text the parser reads; borrowed for as long as the parser lives.
    _input: &'a [u8],
    done: bool,
}

impl<'a> Events<'a> {
    pub fn new(input: &'a str) -> Self {
        let mut parser = Box::new(MaybeUninit::<sys::yaml_parser_t>::uninit());
        let bytes = input.as_bytes();
        // SAFETY: `yaml_parser_initialize` fully initialises the zeroed struct (it only fails
        // when allocation fails, which aborts in Rust anyway); the parser is boxed, so the
        // pointer the input handler keeps to it stays valid, and `bytes` outlives the parser
        // (the struct borrows it for 'a).
        unsafe {
            let p = parser.as_mut_ptr();
            let _ = sys::yaml_parser_initialize(p);
            sys::yaml_parser_set_encoding(p, sys::YAML_UTF8_ENCODING);
            sys::yaml_parser_set_input_string(p, bytes.as_ptr(), bytes.len() as u64);
        }
        Self {
            parser,
            _input: bytes,
            done: false,
        }
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, deleted once.
        unsafe { sys::yaml_parser_delete(self.parser.as_mut_ptr()) }
    }
}

/// Copies a NUL-terminated string that libyaml owns.
///
/// SAFETY: `ptr` is null or points at a NUL-terminated string that lives until the call returns.
unsafe fn owned(ptr: *const u8) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: see above.
    let c = unsafe { std::ffi::CStr::from_ptr(ptr.cast()) };
    Some(String::from_utf8_lossy(c.to_bytes()).into_owned())
}

impl Iterator for Events<'_> {
    type Item = Result<Event, SyntaxError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut raw = MaybeUninit::<sys::yaml_event_t>::uninit();
        // SAFETY: the parser was initialised in `new`; an event that `yaml_parser_parse` filled
        // is read once and deleted before returning; its strings are copied out first.
        unsafe {
            let p = self.parser.as_mut_ptr();
            if sys::yaml_parser_parse(p, raw.as_mut_ptr()).fail {
                self.done = true;
                let parser = &*p;
                return Some(Err(SyntaxError {
                    problem: owned(parser.problem.cast())
                        .unwrap_or_else(|| "the YAML could not be read".to_owned()),
                    context: owned(parser.context.cast()),
                    mark: Mark::from_sys(parser.problem_mark),
                }));
            }
            let e = &*raw.as_ptr();
            let (kind, tag, anchor) = match e.type_ {
                sys::YAML_STREAM_START_EVENT => (Kind::StreamStart, None, None),
                sys::YAML_STREAM_END_EVENT => {
                    self.done = true;
                    (Kind::StreamEnd, None, None)
                }
                sys::YAML_DOCUMENT_START_EVENT => (Kind::DocumentStart, None, None),
                sys::YAML_DOCUMENT_END_EVENT => (Kind::DocumentEnd, None, None),
                sys::YAML_ALIAS_EVENT => (
                    Kind::Alias(owned(e.data.alias.anchor).unwrap_or_default()),
                    None,
                    None,
                ),
                sys::YAML_SCALAR_EVENT => {
                    let s = e.data.scalar;
                    let len = usize::try_from(s.length).unwrap_or(0);
                    let value = if s.value.is_null() || len == 0 {
                        String::new()
                    } else {
                        String::from_utf8_lossy(std::slice::from_raw_parts(s.value, len))
                            .into_owned()
                    };
                    let plain = s.style == sys::YAML_PLAIN_SCALAR_STYLE;
                    let block = s.style == sys::YAML_LITERAL_SCALAR_STYLE
                        || s.style == sys::YAML_FOLDED_SCALAR_STYLE;
                    (
                        Kind::Scalar {
                            value,
                            plain,
                            block,
                        },
                        owned(s.tag),
                        owned(s.anchor),
                    )
                }
                sys::YAML_SEQUENCE_START_EVENT => (
                    Kind::SequenceStart,
                    owned(e.data.sequence_start.tag),
                    owned(e.data.sequence_start.anchor),
                ),
                sys::YAML_SEQUENCE_END_EVENT => (Kind::SequenceEnd, None, None),
                sys::YAML_MAPPING_START_EVENT => (
                    Kind::MappingStart,
                    owned(e.data.mapping_start.tag),
                    owned(e.data.mapping_start.anchor),
                ),
                sys::YAML_MAPPING_END_EVENT => (Kind::MappingEnd, None, None),
                _ => {
                    // YAML_NO_EVENT: the parser has nothing more.
                    self.done = true;
                    sys::yaml_event_delete(raw.as_mut_ptr());
                    return None;
                }
            };
            let event = Event {
                kind,
                start: Mark::from_sys(e.start_mark),
                end: Mark::from_sys(e.end_mark),
                tag,
                anchor,
            };
            sys::yaml_event_delete(raw.as_mut_ptr());
            Some(Ok(event))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Kind> {
        Events::new(text).map(|e| e.expect("valid").kind).collect()
    }

    #[test]
    fn events_of_a_small_document() {
        use Kind::*;
        let scalar = |v: &str| Scalar {
            value: v.into(),
            plain: true,
            block: false,
        };
        assert_eq!(
            kinds("a: [1, b]\n"),
            vec![
                StreamStart,
                DocumentStart,
                MappingStart,
                scalar("a"),
                SequenceStart,
                scalar("1"),
                scalar("b"),
                SequenceEnd,
                MappingEnd,
                DocumentEnd,
                StreamEnd
            ]
        );
    }

    #[test]
    fn marks_are_bytes_and_character_columns() {
        let events: Vec<Event> = Events::new("κλ: τι\n").map(|e| e.expect("ok")).collect();
        let value = &events[4];
        assert_eq!(
            value.kind,
            Kind::Scalar {
                value: "τι".into(),
                plain: true,
                block: false
            }
        );
        // Column in characters, index in bytes.
        assert_eq!((value.start.line, value.start.column), (0, 4));
        assert_eq!(value.start.index, "κλ: ".len());
        assert_eq!(value.end.index, "κλ: τι".len());
    }

    #[test]
    fn tags_and_errors_are_reported() {
        let tagged: Vec<Event> = Events::new("a: !!python/object {b: 1}\n")
            .map(|e| e.expect("ok"))
            .collect();
        assert!(
            tagged
                .iter()
                .any(|e| e.tag.as_deref() == Some("tag:yaml.org,2002:python/object"))
        );
        let err = Events::new("a: [1,\n")
            .find_map(Result::err)
            .expect("a syntax error");
        assert!(!err.problem.is_empty());
        assert_eq!(err.mark.line, 1);
    }
}
