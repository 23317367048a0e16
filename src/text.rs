//! Text matching. The user's message is normalised once per request (lower case, then the
//! character folds the rules define, e.g. a letter written two ways; character for character,
//! so character offsets in the normalised text are offsets in the original), and every word list is one Aho-Corasick automaton over its first stems, with the
//! word boundaries and the remaining words of a phrase checked by hand around each hit.
//!
//! Why not one regex with `\b`: Unicode `\b` makes `RegexSet` fall back to a slow engine on
//! Cyrillic text (hundreds of microseconds for sixty patterns); this costs well under one.

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{AhoCorasick, Anchored, MatchKind, StartKind};
use regex::{Regex, RegexBuilder};

/// Characters below this are lower-cased and folded by one table lookup (Latin, Greek,
/// Cyrillic, Armenian, Hebrew, Arabic); above it, by the Unicode tables.
const TABLE_LEN: usize = 0x800;

/// Lower-cases text and applies the rules' character folds, one character for one character.
///
/// The mapping of the first `TABLE_LEN` code points is computed once, when the rules are
/// compiled: on the hot path a character costs one array read instead of a search through the
/// Unicode case tables (which was most of a decision's time).
#[derive(Debug, Clone)]
pub struct Normalizer {
    /// (from, to) pairs, applied after lower-casing.
    folds: Vec<(char, char)>,
    /// The normalised form of every code point below `TABLE_LEN`.
    table: Box<[char; TABLE_LEN]>,
}

impl Default for Normalizer {
    fn default() -> Self {
        Self::new([])
    }
}

impl Normalizer {
    /// A normaliser with these folds (each applied after lower-casing).
    pub fn new(folds: impl IntoIterator<Item = (char, char)>) -> Self {
        let folds: Vec<(char, char)> = folds.into_iter().collect();
        let mut table = Box::new(['\0'; TABLE_LEN]);
        for (u, slot) in (0u32..).zip(table.iter_mut()) {
            *slot = char::from_u32(u).map_or('\u{FFFD}', |c| slow_fold(&folds, c));
        }
        Self { folds, table }
    }

    /// The normalised text: same number of characters as `text`.
    pub fn normalize(&self, text: &str) -> String {
        if text.is_ascii() {
            return text.to_ascii_lowercase();
        }
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len() + 8);
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if b < 0x80 {
                out.push(char::from(b.to_ascii_lowercase()));
                i += 1;
            } else if let (0xC2..=0xDF, Some(&next)) = (b, bytes.get(i + 1)) {
                // A two-byte sequence (valid, since `text` is a str): a code point below
                // 0x800, so always inside the table.
                let code = (usize::from(b & 0x1F) << 6) | usize::from(next & 0x3F);
                out.push(self.table[code]);
                i += 2;
            } else {
                let Some(c) = text[i..].chars().next() else {
                    break;
                };
                out.push(self.fold(c));
                i += c.len_utf8();
            }
        }
        out
    }

    fn fold(&self, c: char) -> char {
        match self.table.get(c as usize) {
            Some(&f) => f,
            None => slow_fold(&self.folds, c),
        }
    }
}

/// Lower-cases one character (keeping it when its lower case is several characters) and
/// applies the folds.
fn slow_fold(folds: &[(char, char)], c: char) -> char {
    let mut lower = c.to_lowercase();
    let l = match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    };
    folds
        .iter()
        .find(|(from, _)| *from == l)
        .map_or(l, |&(_, to)| to)
}

/// A word character for boundary checks.
fn is_word(c: char) -> bool {
    word_table()
        .get(c as usize)
        .copied()
        .unwrap_or_else(|| c.is_alphanumeric() || c == '_')
}

/// Whether each of the first code points is a word character, computed once: `is_alphanumeric`
/// searches the Unicode tables for every non-ASCII character, and boundaries are checked often.
fn word_table() -> &'static [bool; TABLE_LEN] {
    static TABLE: std::sync::OnceLock<Box<[bool; TABLE_LEN]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Box::new([false; TABLE_LEN]);
        for (u, slot) in (0u32..).zip(table.iter_mut()) {
            *slot = char::from_u32(u).is_some_and(|c| c.is_alphanumeric() || c == '_');
        }
        table
    })
}

/// Calls `f` with the byte offset of every word start in `text` until it returns `true`.
fn each_word_start(text: &str, mut f: impl FnMut(usize) -> bool) -> bool {
    let table = word_table();
    let bytes = text.as_bytes();
    let mut previous_is_word = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let (word, len) = if b < 0x80 {
            (table[usize::from(b)], 1)
        } else if let (0xC2..=0xDF, Some(&next)) = (b, bytes.get(i + 1)) {
            (
                table[(usize::from(b & 0x1F) << 6) | usize::from(next & 0x3F)],
                2,
            )
        } else {
            match text[i..].chars().next() {
                Some(c) => (is_word(c), c.len_utf8()),
                None => break,
            }
        };
        if word && !previous_is_word && f(i) {
            return true;
        }
        previous_is_word = word;
        i += len;
    }
    false
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

/// Distinct first stems in one automaton, and for each the phrases that start with it.
#[derive(Debug, Clone)]
struct Heads<A> {
    automaton: A,
    phrases: Vec<Vec<usize>>,
}

impl<A> Heads<A> {
    /// Builds the automaton over `firsts` (none when there are none); a build failure is
    /// recorded in `error` for the compiler to report.
    fn build<E: std::fmt::Display>(
        firsts: Vec<String>,
        phrases: Vec<Vec<usize>>,
        error: &mut Option<String>,
        make: impl FnOnce(&[String]) -> Result<A, E>,
    ) -> Option<Self> {
        if firsts.is_empty() {
            return None;
        }
        match make(&firsts) {
            Ok(automaton) => Some(Self { automaton, phrases }),
            Err(e) => {
                *error = Some(e.to_string());
                None
            }
        }
    }
}

impl Heads<DFA> {
    /// Anchored walk from `start`: calls `f(end, phrases)` for every first stem that starts
    /// exactly there, until `f` returns `true`. Stops as soon as no stem can continue.
    fn walk(&self, text: &str, start: usize, mut f: impl FnMut(usize, &[usize]) -> bool) -> bool {
        let dfa = &self.automaton;
        let Ok(mut sid) = dfa.start_state(Anchored::Yes) else {
            return false;
        };
        for (offset, &byte) in text.as_bytes()[start..].iter().enumerate() {
            sid = dfa.next_state(Anchored::Yes, sid, byte);
            if dfa.is_dead(sid) {
                break;
            }
            if dfa.is_match(sid) {
                for k in 0..dfa.match_len(sid) {
                    let pattern = dfa.match_pattern(sid, k).as_usize();
                    if f(start + offset + 1, &self.phrases[pattern]) {
                        return true;
                    }
                }
            }
        }
        false
    }
}

/// One word list, compiled: first stems in automata, the rest of each phrase checked by hand
/// around a hit, regexes apart.
///
/// A stem that starts with a letter or digit can only match at the start of a word, so its
/// automaton is run anchored at each word start instead of over the whole message: a message
/// of 200 characters has some 30 word starts, and each anchored walk stops after a few bytes.
#[derive(Debug, Clone)]
pub struct WordMatcher {
    /// First stems starting with a word character: walked anchored at word starts only.
    at_word_starts: Option<Heads<DFA>>,
    /// First stems starting with anything else (`?`, `#`): searched everywhere.
    anywhere: Option<Heads<AhoCorasick>>,
    phrases: Vec<Phrase>,
    regexes: Vec<Regex>,
    /// Why an automaton could not be built (the compiler reports it; the list never matches).
    error: Option<String>,
}

impl WordMatcher {
    /// Parses one `words` entry; used by the compiler to report bad entries with their place.
    pub fn check_word(entry: &str) -> Result<(), EntryError> {
        parse_phrase(entry).map(|_| ())
    }

    /// Whether the `words` entry `general` matches wherever `specific` does (both normalised),
    /// so that `specific` adds nothing to a list holding both: `mail` covers `mailbox` and
    /// `mail$`, `reply to` covers `reply to mail`. Decided word by word from how phrases match.
    pub fn covers(general: &str, specific: &str) -> bool {
        let (Ok(a), Ok(b)) = (parse_phrase(general), parse_phrase(specific)) else {
            return false;
        };
        if a.words.len() > b.words.len() {
            return false;
        }
        let last = a.words.len() - 1;
        a.words.iter().zip(&b.words).enumerate().all(|(i, (x, y))| {
            let Some(rest) = y.stem.strip_prefix(x.stem.as_str()) else {
                return false;
            };
            if x.whole {
                return rest.is_empty() && y.whole;
            }
            // Past a word that is not the phrase's last, the matcher only skips the rest of a
            // word (letters, digits), then a separator.
            let ends_in_word = x.stem.chars().next_back().is_some_and(is_word);
            i == last || rest.is_empty() || (ends_in_word && rest.chars().all(is_word))
        })
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
        // (first stem, phrases) for word-start stems [0] and the others [1].
        let mut groups: [(Vec<String>, Vec<Vec<usize>>); 2] = Default::default();
        let mut phrases = Vec::with_capacity(words.len());
        for entry in words {
            let Ok(phrase) = parse_phrase(&norm.normalize(entry)) else {
                // Keep indices aligned with the source list; an empty phrase never matches.
                phrases.push(Phrase { words: Vec::new() });
                continue;
            };
            let idx = phrases.len();
            let first = &phrase.words[0].stem;
            let word_start = first.chars().next().is_some_and(is_word);
            let (firsts, heads) = &mut groups[usize::from(!word_start)];
            match firsts.iter().position(|f| f == first) {
                Some(p) => heads[p].push(idx),
                None => {
                    firsts.push(first.clone());
                    heads.push(vec![idx]);
                }
            }
            phrases.push(phrase);
        }
        let [(word_firsts, word_heads), (other_firsts, other_heads)] = groups;
        let regexes = patterns
            .iter()
            .filter_map(|p| Self::compile_pattern(p).ok())
            .collect();
        let mut error = None;
        let at_word_starts = Heads::build(word_firsts, word_heads, &mut error, |firsts| {
            DFA::builder()
                .match_kind(MatchKind::Standard)
                .start_kind(StartKind::Anchored)
                .build(firsts)
        });
        let anywhere = Heads::build(other_firsts, other_heads, &mut error, |firsts| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(firsts)
        });
        Self {
            at_word_starts,
            anywhere,
            phrases,
            regexes,
            error,
        }
    }

    /// Why the list's automaton could not be built, if it could not (it then never matches).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Calls `f(start, end, entry)` for each phrase entry found in `text`, word starts first,
    /// until `f` returns `true`.
    fn each_phrase(&self, text: &str, mut f: impl FnMut(usize, usize, usize) -> bool) -> bool {
        // No boundary check is needed here: stems starting with a word character are only
        // tried at word starts, and the others match anywhere.
        let mut check = |start: usize, heads: &[usize]| {
            heads.iter().any(|&idx| {
                match_phrase(text, start, &self.phrases[idx]).is_some_and(|end| f(start, end, idx))
            })
        };
        if let Some(heads) = &self.anywhere {
            for m in heads.automaton.find_overlapping_iter(text) {
                if check(m.start(), &heads.phrases[m.pattern().as_usize()]) {
                    return true;
                }
            }
        }
        if let Some(heads) = &self.at_word_starts {
            return each_word_start(text, |i| heads.walk(text, i, |_, h| check(i, h)));
        }
        false
    }

    /// The first entry found in `text` (which must be normalised by the same [`Normalizer`]).
    pub fn find(&self, text: &str) -> Option<Hit> {
        let mut hit = None;
        self.each_phrase(text, |start, end, entry| {
            hit = Some(Hit { entry, start, end });
            true
        });
        if hit.is_some() {
            return hit;
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

    /// Calls `seen` with the index of every entry that occurs anywhere in `text` (normalised),
    /// not only the first; an entry may be reported more than once. Used by test coverage, never
    /// by the decision path, which stops at the first hit.
    pub fn each_entry_in(&self, text: &str, mut seen: impl FnMut(usize)) {
        self.each_phrase(text, |_, _, entry| {
            seen(entry);
            false
        });
        for (i, re) in self.regexes.iter().enumerate() {
            if re.is_match(text) {
                seen(self.phrases.len() + i);
            }
        }
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
