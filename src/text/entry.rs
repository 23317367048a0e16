//! A word-list entry's match and the ways an entry is refused, with the limits on a rule
//! file's regular expressions.

use regex::{Regex, RegexBuilder};

/// How many other words a `…` in a `words` entry allows when the list does not say.
pub const DEFAULT_GAP: usize = 2;

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
