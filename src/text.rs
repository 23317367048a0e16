//! Text matching. The user's message is normalised once per request (lower case, then the
//! character folds the rules define, e.g. a letter written two ways; character for character,
//! so character offsets in the normalised text are offsets in the original), and every word list is one Aho-Corasick automaton over its first stems, with the
//! word boundaries and the remaining words of a phrase checked by hand around each hit.
//!
//! Why not one regex with `\b`: Unicode `\b` makes `RegexSet` fall back to a slow engine on
//! Cyrillic text (hundreds of microseconds for sixty patterns); this costs well under one.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::{Regex, RegexBuilder};

/// Lower-cases text and applies the rules' character folds, one character for one character.
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    /// (from, to) pairs, applied after lower-casing; `from` is never ASCII.
    folds: Vec<(char, char)>,
}

impl Normalizer {
    /// A normaliser with these folds (each applied after lower-casing).
    pub fn new(folds: impl IntoIterator<Item = (char, char)>) -> Self {
        Self {
            folds: folds.into_iter().collect(),
        }
    }

    /// The normalised text: same number of characters as `text`.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            out.push(self.fold(c));
        }
        out
    }

    fn fold(&self, c: char) -> char {
        if c.is_ascii() {
            return c.to_ascii_lowercase();
        }
        let mut lower = c.to_lowercase();
        let l = match (lower.next(), lower.next()) {
            (Some(l), None) => l,
            _ => c,
        };
        self.folds
            .iter()
            .find(|(from, _)| *from == l)
            .map_or(l, |&(_, to)| to)
    }
}

/// A word character for boundary checks.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Characters allowed between the words of a phrase entry.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '-' | '‐' | '‑' | '–' | '—' | '_')
}

/// A match in normalised text: which entry, and its byte span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Index of the entry in the list's `words` followed by its `patterns`.
    pub entry: usize,
    /// Byte offset of the start, in the normalised text.
    pub start: usize,
    /// Byte offset of the end, in the normalised text.
    pub end: usize,
}

impl Hit {
    /// The span in characters (the same in the original and the normalised text).
    pub fn char_span(&self, normalized: &str) -> (usize, usize) {
        let start = normalized[..self.start].chars().count();
        let len = normalized[self.start..self.end].chars().count();
        (start, start + len)
    }
}

#[derive(Debug, Clone)]
struct Word {
    stem: String,
    whole: bool,
}

#[derive(Debug, Clone)]
struct Phrase {
    words: Vec<Word>,
}

/// Why a word-list entry was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// Blank entry.
    #[error("the entry is empty")]
    Empty,
    /// A `$` that is not at the end of a word.
    #[error("'$' may only end a word")]
    MisplacedDollar,
    /// A regex that does not compile or is too big.
    #[error("{0}")]
    Regex(String),
    /// A regex that matches everywhere.
    #[error("the pattern matches the empty string, so it would match every message")]
    MatchesEmpty,
}

/// Longest regex source accepted from a rule file.
pub const MAX_PATTERN_LEN: usize = 1_000;
/// Compiled size limit for one rule regex.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// One word list, compiled: stems in one automaton, regexes apart.
#[derive(Debug, Clone)]
pub struct WordMatcher {
    automaton: Option<AhoCorasick>,
    /// For each automaton pattern (a distinct first stem), the phrases that start with it.
    heads: Vec<Vec<usize>>,
    phrases: Vec<Phrase>,
    regexes: Vec<Regex>,
}

impl WordMatcher {
    /// Parses one `words` entry; used by the compiler to report bad entries with their place.
    pub fn check_word(entry: &str) -> Result<(), EntryError> {
        parse_phrase(entry).map(|_| ())
    }

    /// Compiles one `patterns` entry with the size limits for untrusted regexes.
    pub fn compile_pattern(pattern: &str) -> Result<Regex, EntryError> {
        if pattern.len() > MAX_PATTERN_LEN {
            return Err(EntryError::Regex(format!(
                "the pattern is {} characters long; the limit is {MAX_PATTERN_LEN}",
                pattern.len()
            )));
        }
        let re = RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .nest_limit(64)
            .build()
            .map_err(|e| EntryError::Regex(regex_message(&e)))?;
        if re.is_match("") {
            return Err(EntryError::MatchesEmpty);
        }
        Ok(re)
    }

    /// Builds the matcher, normalising the entries as messages are. Entries must have passed
    /// [`check_word`](Self::check_word) and [`compile_pattern`](Self::compile_pattern); bad ones
    /// are skipped here, never half-used.
    pub fn new(words: &[String], patterns: &[String], norm: &Normalizer) -> Self {
        let mut firsts: Vec<String> = Vec::new();
        let mut heads: Vec<Vec<usize>> = Vec::new();
        let mut phrases = Vec::with_capacity(words.len());
        for entry in words {
            let Ok(phrase) = parse_phrase(&norm.normalize(entry)) else {
                // Keep indices aligned with the source list; an empty phrase never matches.
                phrases.push(Phrase { words: Vec::new() });
                continue;
            };
            let idx = phrases.len();
            let first = &phrase.words[0].stem;
            match firsts.iter().position(|f| f == first) {
                Some(p) => heads[p].push(idx),
                None => {
                    firsts.push(first.clone());
                    heads.push(vec![idx]);
                }
            }
            phrases.push(phrase);
        }
        let automaton = if firsts.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::DFA))
                .build(&firsts)
                .or_else(|_| AhoCorasick::new(&firsts))
                .ok()
        };
        let regexes = patterns
            .iter()
            .filter_map(|p| Self::compile_pattern(p).ok())
            .collect();
        Self {
            automaton,
            heads,
            phrases,
            regexes,
        }
    }

    /// The first entry found in `text` (which must be normalised by the same [`Normalizer`]).
    pub fn find(&self, text: &str) -> Option<Hit> {
        if let Some(ac) = &self.automaton {
            for m in ac.find_overlapping_iter(text) {
                if !starts_word(
                    text,
                    m.start(),
                    &self.phrases[self.heads[m.pattern().as_usize()][0]],
                ) {
                    continue;
                }
                for &idx in &self.heads[m.pattern().as_usize()] {
                    if let Some(end) = match_phrase(text, m.start(), &self.phrases[idx]) {
                        return Some(Hit {
                            entry: idx,
                            start: m.start(),
                            end,
                        });
                    }
                }
            }
        }
        for (i, re) in self.regexes.iter().enumerate() {
            if let Some(m) = re.find(text) {
                return Some(Hit {
                    entry: self.phrases.len() + i,
                    start: m.start(),
                    end: m.end(),
                });
            }
        }
        None
    }

    /// Whether any entry occurs in `text` (normalised).
    pub fn is_match(&self, text: &str) -> bool {
        self.find(text).is_some()
    }
}

/// Finds `needle` (a phrase of stems, e.g. a file name, normalised) in `text` (normalised).
/// Used for values that come with the request, so nothing is precompiled.
pub fn find_phrase(text: &str, needle: &str) -> Option<(usize, usize)> {
    let phrase = parse_phrase_literal(needle)?;
    let first = &phrase.words[0].stem;
    let mut from = 0;
    while let Some(pos) = text[from..].find(first.as_str()) {
        let start = from + pos;
        if starts_word(text, start, &phrase)
            && let Some(end) = match_phrase(text, start, &phrase)
        {
            return Some((start, end));
        }
        from = start + first.chars().next().map_or(1, char::len_utf8);
    }
    None
}

fn starts_word(text: &str, start: usize, phrase: &Phrase) -> bool {
    let first_is_word = phrase
        .words
        .first()
        .and_then(|w| w.stem.chars().next())
        .is_some_and(is_word);
    !first_is_word || !text[..start].chars().next_back().is_some_and(is_word)
}

/// Checks the phrase at `start` word by word; returns the end of the last matched word.
fn match_phrase(text: &str, start: usize, phrase: &Phrase) -> Option<usize> {
    let mut pos = start;
    for (i, word) in phrase.words.iter().enumerate() {
        if i > 0 {
            let rest = &text[pos..];
            let skipped: usize = rest
                .chars()
                .take_while(|&c| is_separator(c))
                .map(char::len_utf8)
                .sum();
            if skipped == 0 {
                return None;
            }
            pos += skipped;
        }
        if !text[pos..].starts_with(word.stem.as_str()) {
            return None;
        }
        pos += word.stem.len();
        let last_is_word = word.stem.chars().next_back().is_some_and(is_word);
        let rest_of_word: usize = text[pos..]
            .chars()
            .take_while(|&c| is_word(c))
            .map(char::len_utf8)
            .sum();
        if word.whole && last_is_word && rest_of_word > 0 {
            return None;
        }
        if last_is_word {
            pos += rest_of_word;
        }
    }
    Some(pos)
}

fn parse_phrase(entry: &str) -> Result<Phrase, EntryError> {
    let mut words = Vec::new();
    for raw in entry.split_whitespace() {
        let (stem, whole) = match raw.strip_suffix('$') {
            Some(s) => (s, true),
            None => (raw, false),
        };
        if stem.is_empty() || stem.contains('$') {
            return Err(EntryError::MisplacedDollar);
        }
        words.push(Word {
            stem: stem.to_owned(),
            whole,
        });
    }
    if words.is_empty() {
        return Err(EntryError::Empty);
    }
    Ok(Phrase { words })
}

/// A phrase from request data: `$` has no special meaning, and every word is a stem.
fn parse_phrase_literal(entry: &str) -> Option<Phrase> {
    let words: Vec<Word> = entry
        .split(is_separator)
        .filter(|w| !w.is_empty())
        .map(|w| Word {
            stem: w.to_owned(),
            whole: false,
        })
        .collect();
    (!words.is_empty()).then_some(Phrase { words })
}

fn regex_message(e: &regex::Error) -> String {
    match e {
        regex::Error::CompiledTooBig(limit) => {
            format!(
                "the pattern is too complex (compiled size over {limit} bytes); split or simplify it"
            )
        }
        other => {
            // The syntax error's own text already points at the offending part of the pattern.
            let text = other.to_string();
            format!("the pattern is not a valid regular expression:\n{text}")
        }
    }
}
