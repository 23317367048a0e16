//! One word list matched alone (e.g. by argument extraction), with a [`Scanner`]'s semantics.

use super::phrase::{self, TypoLengths, parse_phrase};
use super::scan::{ListOptions, ListSpec, Scanner};
use super::{Hit, ListPattern, Normalizer};

/// One word list on its own: what a rule file's list compiles to when it is matched alone
/// (e.g. argument extraction), with the same semantics as in a [`Scanner`].
#[derive(Debug, Clone)]
pub struct WordMatcher {
    scanner: Scanner,
}

impl WordMatcher {
    /// Builds the matcher; bad entries are skipped.
    pub fn new(words: &[String], patterns: &[String], norm: &Normalizer) -> Self {
        Self::tolerant(words, patterns, norm, None)
    }

    /// [`Self::new`], its stems of `typos.from` letters and more also matching a word with one
    /// typo (the first letter too from `typos.first_letter_from`), as a rule file's word list
    /// does.
    pub(crate) fn tolerant(
        words: &[String],
        patterns: &[String],
        norm: &Normalizer,
        typos: Option<TypoLengths>,
    ) -> Self {
        let sources: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let compiled: Vec<Option<ListPattern>> = super::compile_list_patterns(&sources)
            .into_iter()
            .map(Result::ok)
            .collect();
        let options = ListOptions {
            gap: super::DEFAULT_GAP,
            typos_from: typos.map(|t| t.from),
            typo_first_letter_from: typos.map(|t| t.first_letter_from),
            ..ListOptions::default()
        };
        let spec = ListSpec {
            normalized: None,
            words,
            patterns: &compiled,
            options: &options,
        };
        Self {
            scanner: Scanner::new(&[spec], norm),
        }
    }

    /// Every word `known` knows is never read as a typo of an entry (the rule set's known
    /// words: real words no entry of this matcher has).
    pub(crate) fn share_known_words(&mut self, known: std::sync::Arc<super::fuzzy::KnownWords>) {
        self.scanner.share_known_words(known);
    }

    /// The first entry found in `text` (normalised by the same [`Normalizer`]).
    pub fn find(&self, text: &str) -> Option<Hit> {
        self.scanner.scan(text).get(0)
    }

    /// Every entry found in `text` (normalised), in no particular order: one pass, where
    /// calling [`find`](Self::find) again on what is left would scan once per hit.
    pub fn each_hit(&self, text: &str, f: impl FnMut(Hit)) {
        self.each_hit_in(text, &super::word_spans(text), f);
    }

    /// [`each_hit`](Self::each_hit) with `text`'s word spans ([`super::word_spans`]) already
    /// found: several matchers over one message share them.
    pub(crate) fn each_hit_in(&self, text: &str, spans: &[(u32, u32)], mut f: impl FnMut(Hit)) {
        for h in self.scanner.find_all(text, spans).hits {
            f(h.hit);
        }
    }

    /// Whether any entry occurs in `text` (normalised).
    pub fn is_match(&self, text: &str) -> bool {
        self.find(text).is_some()
    }

    /// Why the list could not be compiled, if it could not.
    pub fn error(&self) -> Option<&str> {
        self.scanner.error()
    }

    /// Parses one `words` entry; used by the compiler to report bad entries with their place.
    pub fn check_word(entry: &str) -> Result<(), super::EntryError> {
        phrase::parse_variants(entry, super::DEFAULT_GAP, None, false).map(|_| ())
    }

    /// Compiles one `patterns` entry with the size limits for untrusted regexes.
    pub fn compile_pattern(pattern: &str) -> Result<regex::Regex, super::EntryError> {
        super::compile_pattern(pattern)
    }

    /// Whether the `words` entry `general` matches wherever `specific` does (both normalised);
    /// `forms`: unmarked stems match their word in its forms (the language declares endings).
    pub fn covers(general: &str, specific: &str, forms: bool) -> bool {
        // An entry in any order is never called redundant, nor said to cover another.
        if [general, specific]
            .iter()
            .any(|e| e.split_whitespace().any(|w| w == phrase::ANY_ORDER))
        {
            return false;
        }
        match (
            parse_phrase(general, super::DEFAULT_GAP, None, forms),
            parse_phrase(specific, super::DEFAULT_GAP, None, forms),
        ) {
            (Ok(a), Ok(b)) => phrase::covers(&a, &b),
            _ => false,
        }
    }
}
