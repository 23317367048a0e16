//! Text matching. The user's message is normalised once per request (lower case, then the
//! character folds the rules define, e.g. a letter written two ways; character for character,
//! so character offsets in the normalised text are offsets in the original), and all word
//! lists of a ruleset are matched in one pass by a [`Scanner`].
//!
//! Why not one regex with `\b`: Unicode `\b` makes `RegexSet` fall back to a slow engine on
//! Cyrillic text (hundreds of microseconds for sixty patterns); the scanner's automata cost
//! well under one, and run a pattern only where one of its literal prefixes occurs.

mod alphabet;
mod fuzzy;
mod gate;
mod normalize;
mod pattern;
mod phrase;
mod scan;
mod stems;
mod translit;
mod word_matcher;

pub(crate) use gate::gate;
pub use normalize::{Normalized, Normalizer, NormalizerOptions};
pub use pattern::{ListPattern, compile_list_pattern, compile_list_patterns};
pub use phrase::{GAP, find_phrase};
pub use scan::{Hits, ListHit, ListOptions, ListSpec, Negated, Scanner};
pub use translit::Transliteration;
pub use word_matcher::WordMatcher;

use regex::{Regex, RegexBuilder};
use regex_automata::meta::Regex as MetaRegex;

/// Characters below this are lower-cased and folded by one table lookup (Latin, Greek,
/// Cyrillic, Armenian, Hebrew, Arabic); above it, by the Unicode tables. The word table below
/// and the normalizer's share it.
const TABLE_LEN: usize = 0x800;

/// How many other words a `…` in a `words` entry allows when the list does not say.
pub const DEFAULT_GAP: usize = 2;

/// A word character for boundary checks.
fn is_word(c: char) -> bool {
    word_table()
        .get(c as usize)
        .copied()
        .unwrap_or_else(|| c.is_alphanumeric() || c == '_')
}

/// `char::is_alphanumeric` through the same table (whose only other word character is `_`):
/// the standard one searches the Unicode tables for every non-ASCII character.
pub(crate) fn is_alphanumeric(c: char) -> bool {
    c != '_' && is_word(c)
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

/// Whether the character at byte `i` of `text` (a char boundary) is a word character, and its
/// length; `None` at the end. Two-byte characters (Cyrillic) are decoded by hand.
#[inline]
fn char_at(table: &[bool; TABLE_LEN], text: &str, i: usize) -> Option<(bool, usize)> {
    let bytes = text.as_bytes();
    let b = *bytes.get(i)?;
    Some(if b < 0x80 {
        (table[usize::from(b)], 1)
    } else if let (0xC2..=0xDF, Some(&next)) = (b, bytes.get(i + 1)) {
        (
            table[(usize::from(b & 0x1F) << 6) | usize::from(next & 0x3F)],
            2,
        )
    } else {
        let c = text[i..].chars().next()?;
        (is_word(c), c.len_utf8())
    })
}

/// Calls `f` with the byte offset of every word start in `text` until it returns `true`.
fn each_word_start(text: &str, mut f: impl FnMut(usize) -> bool) -> bool {
    let table = word_table();
    let mut previous_is_word = false;
    let mut i = 0;
    while let Some((word, len)) = char_at(table, text, i) {
        if word && !previous_is_word && f(i) {
            return true;
        }
        previous_is_word = word;
        i += len;
    }
    false
}

/// The byte span (start, end) of every word of `text`, in order.
pub(crate) fn word_spans(text: &str) -> Vec<(u32, u32)> {
    let mut spans = Vec::new();
    each_word_start(text, |i| {
        let end = i + word_len(&text[i..]);
        let at = |k: usize| u32::try_from(k).unwrap_or(u32::MAX);
        spans.push((at(i), at(end)));
        false
    });
    spans
}

/// How many characters `s` has: the standard count's set-up costs more than the count for the
/// short strings (a word, a part of one) of the hot path.
#[inline]
fn char_len(s: &str) -> usize {
    // Every byte but a UTF-8 continuation byte (0b10xx_xxxx) starts a character.
    s.bytes().filter(|&b| (b as i8) >= -0x40).count()
}

/// Length in bytes of the run of word characters at the start of `text`.
fn word_len(text: &str) -> usize {
    let table = word_table();
    let mut i = 0;
    while let Some((true, len)) = char_at(table, text, i) {
        i += len;
    }
    i
}

/// Characters allowed between the words of a phrase entry.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '-' | '‐' | '‑' | '–' | '—' | '_')
}

/// The endings a language allows after a word's stem (`matching.word_endings`): with them, an
/// entry `book` matches "book", "books", "booked" — the word in its forms — and not
/// "bookkeeper". Normalised like the entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endings {
    set: rustc_hash::FxHashSet<String>,
    longest: usize,
}

impl Endings {
    /// The endings, each normalised by `norm` (an empty one is implied).
    pub fn new<'a>(endings: impl IntoIterator<Item = &'a str>, norm: &Normalizer) -> Self {
        let set: rustc_hash::FxHashSet<String> = endings
            .into_iter()
            .map(|e| norm.normalize(e.trim()))
            .filter(|e| !e.is_empty())
            .collect();
        let longest = set.iter().map(String::len).max().unwrap_or(0);
        Self { set, longest }
    }

    /// Whether `rest` (what follows a stem up to the end of its word) is an allowed ending.
    pub fn allows(&self, rest: &str) -> bool {
        rest.is_empty() || (rest.len() <= self.longest && self.set.contains(rest))
    }

    /// The length in bytes of the longest ending.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// How many endings there are.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether there are none (then a stem's word must be the stem itself).
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
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
    /// Whether it matched with one typo.
    pub typo: bool,
}

impl Hit {
    /// The span in characters of the normalised text: the original's too when normalisation
    /// kept characters one for one ([`Normalized::char_span`] maps it back otherwise).
    pub fn char_span(&self, normalized: &str) -> (usize, usize) {
        let start = normalized[..self.start].chars().count();
        let len = normalized[self.start..self.end].chars().count();
        (start, start + len)
    }
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
    /// An `&` that does not stand between every two words, or too many words for it.
    #[error("'&' stands between every two words of an entry, of two or three words")]
    MisplacedAnyOrder,
    /// A `*` that does not end a word.
    #[error("'*' may only end a word")]
    MisplacedStar,
    /// A `…` that does not stand between two words.
    #[error("'…' may only stand between two words")]
    MisplacedGap,
    /// A regex that does not compile or is too big.
    #[error("{0}")]
    Regex(String),
    /// A regex that matches everywhere.
    #[error("the pattern matches the empty string, so it would match every message")]
    MatchesEmpty,
}

/// A file name without its extension (a final `.` and one to five letters or digits).
pub fn base_name(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, ext))
            if !base.trim().is_empty()
                && (1..=5).contains(&ext.chars().count())
                && ext.chars().all(char::is_alphanumeric) =>
        {
            base
        }
        _ => name,
    }
}

/// A file's base name as the words a person would say: split at separators (`-`, `_`,
/// spaces), where letters meet digits (`Plan2025` → `Plan 2025`) and where a lower-case letter
/// meets a capital (`SalesPlan` → `Sales Plan`). Case is kept; normalise after.
pub fn name_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if is_separator(c) {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            previous = None;
            continue;
        }
        if let Some(p) = previous {
            let boundary = (p.is_alphabetic() && c.is_numeric())
                || (p.is_numeric() && c.is_alphabetic())
                || (p.is_lowercase() && c.is_uppercase());
            if boundary {
                out.push(' ');
            }
        }
        out.push(c);
        previous = Some(c);
    }
    out.trim_end().to_owned()
}

/// Finds an open file's name (its [`name_words`], normalised and cut to stems) in a message:
/// `_` in the message separates words as it does in names ("in plan_2025" names `Plan_2025`).
pub fn find_name(text: &str, stems: &str) -> Option<(usize, usize)> {
    if text.contains('_') {
        // One byte for one: offsets in the copy are offsets in `text`.
        find_phrase(&text.replace('_', " "), stems)
    } else {
        find_phrase(text, stems)
    }
}

/// Longest regex source accepted from a rule file.
pub const MAX_PATTERN_LEN: usize = 1_000;
/// Compiled size limit for one rule regex.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_splits_where_a_person_hears_words() {
        assert_eq!(name_words("Plan_2025"), "Plan 2025");
        assert_eq!(name_words("SalesPlan2025-v2"), "Sales Plan 2025 v 2");
        assert_eq!(name_words("budget  final"), "budget final");
        assert_eq!(name_words("CV"), "CV");
    }

    #[test]
    fn an_underscore_in_the_message_separates_words_of_a_name() {
        let n = Normalizer::with_options(
            [],
            NormalizerOptions {
                name_endings: 2,
                ..NormalizerOptions::default()
            },
        );
        let stems = n.name_stems(&n.normalize(&name_words("Plan_2025")));
        for message in ["in plan_2025 fix the total", "in plans 2025 fix the total"] {
            assert!(find_name(message, &stems).is_some(), "{message}");
        }
        assert_eq!(find_name("in plan_2025 fix", &stems), Some((3, 12)));
        assert!(find_name("in planets 2024", &stems).is_none());
    }

    #[test]
    fn the_tabled_alphanumeric_test_is_the_standard_one() {
        // Every code point below and well past the table's end, and the word character that is
        // not alphanumeric.
        for u in (0u32..0x3_0000).chain([0x1_F600, 0x10_FFFF]) {
            if let Some(c) = char::from_u32(u) {
                assert_eq!(super::is_alphanumeric(c), c.is_alphanumeric(), "U+{u:04X}");
            }
        }
        assert!(super::is_word('_') && !super::is_alphanumeric('_'));
    }
}
