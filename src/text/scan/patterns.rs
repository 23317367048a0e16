//! The lists' regular patterns: each is run only from where one of its literal prefixes was
//! found (by [`WordStartStems`](super::word_starts::WordStartStems) or
//! [`Anywhere`](super::anywhere::Anywhere)); a pattern anchored with `^` once at the start,
//! and one without a literal prefix on every message.

use super::super::pattern::Transcodings;
use super::{Entries, Found, Strategy, Target, Text};

/// The patterns that no automaton can point at.
#[derive(Debug, Clone, Default)]
pub(super) struct Patterns {
    /// Patterns that start with `^`: tried once, at the start.
    at_start: Vec<u32>,
    /// Patterns with no literal prefix: run on every message.
    unanchored: Vec<u32>,
}

impl Patterns {
    /// Pattern `k` starts with `^`.
    pub(super) fn add_at_start(&mut self, k: u32) {
        self.at_start.push(k);
    }

    /// Pattern `k` has no literal prefix to look for.
    pub(super) fn add_unanchored(&mut self, k: u32) {
        self.unanchored.push(k);
    }
}

impl Strategy for Patterns {
    fn find(&self, entries: &Entries, text: &Text<'_>, found: &mut Found) {
        let t = text.text;
        let mut tx = Transcodings::default();
        // Where a word starts with a prefix: tried there, word by word, until it matches (each
        // pattern is reported once, where it first matches).
        let mut matched: smallvec::SmallVec<[u32; 8]> = smallvec::SmallVec::new();
        for k in 0..found.pattern_at.len() {
            let (k, at) = found.pattern_at[k];
            if matched.contains(&k) {
                continue;
            }
            if let Some((s, e)) = entries.patterns[k as usize].re.find_at(t, at, &mut tx) {
                matched.push(k);
                found.emit(entries, Target::Pattern(k), s, e, false);
            }
        }
        for &k in &self.at_start {
            if let Some((s, e)) = entries.patterns[k as usize].re.find_at(t, 0, &mut tx) {
                found.emit(entries, Target::Pattern(k), s, e, false);
            }
        }
        let from_prefix = std::mem::take(&mut found.pattern_from);
        let unanchored = self.unanchored.iter().map(|&k| (k, 0));
        for (k, mut from) in from_prefix.into_iter().chain(unanchored) {
            while !t.is_char_boundary(from) {
                from -= 1;
            }
            if let Some((s, e)) = entries.patterns[k as usize].re.find_from(t, from, &mut tx) {
                found.emit(entries, Target::Pattern(k), s, e, false);
            }
        }
    }
}
