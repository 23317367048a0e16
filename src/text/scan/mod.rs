//! Every word list of a ruleset, matched in one pass over the message.
//!
//! The entries are split by how they can be found, one small type per way (a [`Strategy`]),
//! each built once from the entries that need it and asked the same question of a message:
//!
//! - [`WordStarts`](word_starts::WordStartStems): first stems that start with a word
//!   character, in one anchored automaton walked at each word start;
//! - [`Typos`](typos::Typos): the typo-tolerant first stems, for the words no list knows;
//! - [`Anywhere`](anywhere::Anywhere): the other first stems, in one unanchored Aho-Corasick
//!   automaton run once over the text;
//! - [`Patterns`](patterns::Patterns): the lists' regular patterns, each run only from where
//!   one of its literal prefixes occurs (found by the two automata above).
//!
//! An automaton hit points at the phrases that start with that stem (in any list), whose other
//! words are then checked by hand. The result is the set of lists that matched, each with its
//! first hit, so the cost of a message depends on what it contains, not on how many lists
//! there are.

mod anywhere;
mod build;
mod patterns;
mod typos;
mod word_starts;

use smallvec::SmallVec;

use super::pattern::ListPattern;
use super::phrase::{self, Phrase};
use super::words::each_word_start;
use super::{Hit, Normalizer};

/// How one list matches, beyond its entries.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// How many other words a `…` in an entry allows.
    pub gap: usize,
    /// Stems of at least this many letters also match with one typo.
    pub typos_from: Option<usize>,
    /// Stems of at least this many letters (and `typos_from`) also with a typo of their first
    /// letter (`None`: never).
    pub typo_first_letter_from: Option<usize>,
    /// A match is ignored when a match of list `.0` ends at most `.1` words before it.
    pub negated_by: Option<(usize, usize)>,
}

/// One list to compile: its `words` entries (as written), its compiled patterns (`None` for
/// one that failed to compile: it never matches, and indices stay aligned), and options.
#[derive(Debug, Clone, Copy)]
pub struct ListSpec<'a> {
    pub words: &'a [String],
    /// The same entries trimmed and normalised by the scanner's [`Normalizer`], when the
    /// caller has them already (`None`: the scanner normalises them).
    pub normalized: Option<&'a [String]>,
    pub patterns: &'a [Option<ListPattern>],
    pub options: &'a ListOptions,
}

/// What an automaton key leads to: a phrase, or a pattern to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Phrase(u32),
    Pattern(u32),
}

/// The entries every strategy points into: the phrases (each variant of each `words` entry)
/// and the patterns, with the (list, entry) each belongs to.
#[derive(Debug, Clone, Default)]
struct Entries {
    phrases: Vec<Phrase>,
    /// (list, entry) of each phrase.
    owner: Vec<(u32, u32)>,
    patterns: Vec<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    re: ListPattern,
    list: u32,
    entry: u32,
}

/// A message as the strategies read it: its normalised text and its words.
struct Text<'a> {
    text: &'a str,
    /// (start, end) in bytes of each word.
    words: &'a [(u32, u32)],
    /// The same words, with the language's endings, for the phrases' other words.
    spans: phrase::Words<'a>,
}

/// What the strategies found in one message, and what one tells the next.
#[derive(Default)]
pub(super) struct Found {
    /// Every hit, in no particular order.
    pub(super) hits: SmallVec<[ListHit; 16]>,
    /// For each word (by index): the byte length of the longest stem a list knows exactly at
    /// its start (a word a list knows is not read as a typo of another).
    known: SmallVec<[u32; 48]>,
    /// Patterns to try where a word starts with one of their prefixes, in the order of the
    /// words: (pattern, word start).
    pattern_at: SmallVec<[(u32, usize); 8]>,
    /// Patterns to run from the first place one of their prefixes occurs anywhere.
    pattern_from: SmallVec<[(u32, usize); 8]>,
}

impl Found {
    fn emit(&mut self, entries: &Entries, who: Target, start: usize, end: usize, typo: bool) {
        let (list, entry) = match who {
            Target::Phrase(pid) => entries.owner[pid as usize],
            Target::Pattern(k) => {
                let p = &entries.patterns[k as usize];
                (p.list, p.entry)
            }
        };
        self.hits.push(ListHit {
            list,
            hit: Hit {
                entry: entry as usize,
                start,
                end,
                typo,
            },
        });
    }

    /// Pattern `k` is to be run from `at` (or from an earlier place already asked for).
    fn try_pattern_from(&mut self, k: u32, at: usize) {
        match self.pattern_from.iter_mut().find(|c| c.0 == k) {
            Some(c) => c.1 = c.1.min(at),
            None => self.pattern_from.push((k, at)),
        }
    }
}

/// Automaton keys in the order they were first added, each with what it starts (once each).
/// The keys are borrowed from the entries being built (a grown pack has some 200,000: a copy
/// of each, twice, was a fifth of the word-start automaton's build).
#[derive(Debug)]
struct Keyed<'a, K: ?Sized, T> {
    index: rustc_hash::FxHashMap<&'a K, usize>,
    keys: Vec<&'a K>,
    heads: Vec<Vec<T>>,
}

impl<K: ?Sized, T> Default for Keyed<'_, K, T> {
    fn default() -> Self {
        Self {
            index: rustc_hash::FxHashMap::default(),
            keys: Vec::new(),
            heads: Vec::new(),
        }
    }
}

impl<'a, K: std::hash::Hash + Eq + ?Sized, T: PartialEq> Keyed<'a, K, T> {
    /// `key` starts `target`.
    fn add(&mut self, key: &'a K, target: T) {
        let k = *self.index.entry(key).or_insert_with(|| {
            self.keys.push(key);
            self.heads.push(Vec::new());
            self.keys.len() - 1
        });
        // Once: two prefixes of a pattern may be the same key.
        if !self.heads[k].contains(&target) {
            self.heads[k].push(target);
        }
    }
}

/// One way of finding entries in a message.
trait Strategy: std::fmt::Debug + Send + Sync {
    /// Reports into `found` every match of the entries this strategy holds.
    fn find(&self, entries: &Entries, text: &Text<'_>, found: &mut Found);
}

/// The compiled word lists of a ruleset.
#[derive(Debug, Clone)]
pub struct Scanner {
    entries: Entries,
    anywhere: Option<anywhere::Anywhere>,
    word_starts: Option<word_starts::WordStartStems>,
    typos: Option<typos::Typos>,
    patterns: patterns::Patterns,
    negations: Vec<Option<(u32, usize)>>,
    /// The language's endings, when it declares them.
    endings: Option<std::sync::Arc<super::Endings>>,
    lists: usize,
    error: Option<String>,
}

/// One match of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListHit {
    pub list: u32,
    pub hit: Hit,
}

/// A match ignored because a negation stands before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negated {
    pub list: u32,
    pub hit: Hit,
    /// The negation's list and its hit.
    pub by: ListHit,
}

/// What one message matched: the first hit of each list that matched (sorted by list), and the
/// first negated hit of lists that matched only negated.
#[derive(Debug, Clone, Default)]
pub struct Hits {
    /// Inline for the few lists a message usually matches.
    first: SmallVec<[ListHit; 8]>,
    negated: Vec<Negated>,
}

impl Hits {
    /// The first hit of list `list`, if it matched.
    pub fn get(&self, list: usize) -> Option<Hit> {
        let i = self
            .first
            .binary_search_by_key(&list, |h| h.list as usize)
            .ok()?;
        Some(self.first[i].hit)
    }

    /// Why list `list` did not match although one of its entries occurs.
    pub fn negated(&self, list: usize) -> Option<&Negated> {
        self.negated.iter().find(|n| n.list as usize == list)
    }

    /// Each list that matched only where a negation stood before it, with its first such hit.
    pub fn negations(&self) -> impl Iterator<Item = &Negated> {
        self.negated.iter()
    }

    /// The lists that matched, in list order.
    pub fn lists(&self) -> impl Iterator<Item = usize> + '_ {
        self.first.iter().map(|h| h.list as usize)
    }
}

impl Scanner {
    /// Compiles `lists` (entries normalised by `norm`, as messages are). Entries must have passed
    /// the compiler's checks; a bad one is skipped, never half-used.
    pub fn new(lists: &[ListSpec<'_>], norm: &Normalizer) -> Self {
        build::Builder::new(norm).lists(lists).build()
    }

    /// The same scanner, where `words` (normalised) are never read as a typo of a stem either.
    pub fn with_known_words<'a>(mut self, words: impl IntoIterator<Item = &'a str>) -> Self {
        if let Some(t) = &mut self.typos {
            t.know(words);
        }
        self
    }

    /// The same scanner, where every word `known` knows is never read as a typo either
    /// (shared, not copied: a list compiled alone knows the rule set's words).
    pub(crate) fn share_known_words(
        &mut self,
        known: std::sync::Arc<crate::text::fuzzy::KnownWords>,
    ) {
        if let Some(t) = &mut self.typos {
            t.share_known(known);
        }
    }

    /// The words the typo index never reads as a typo (every word of a typo-tolerant list's
    /// entries in its forms, and `matching.typos.known_words`); `None` without such a list.
    pub(crate) fn known_words(&self) -> Option<std::sync::Arc<crate::text::fuzzy::KnownWords>> {
        self.typos.as_ref().map(|t| t.known().clone())
    }

    /// Why the automata could not be built, if they could not (the lists then never match).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// How many lists were compiled.
    pub fn len(&self) -> usize {
        self.lists
    }

    /// Whether no list was compiled.
    pub fn is_empty(&self) -> bool {
        self.lists == 0
    }

    /// Every match of every entry in `text` (normalised by the same [`Normalizer`]), in no
    /// particular order; negation is not applied.
    pub(super) fn find_all(&self, text: &str, words: &[(u32, u32)]) -> Found {
        let text = Text {
            text,
            words,
            spans: phrase::Words::new(text, words).with_endings(self.endings.as_deref()),
        };
        let mut found = Found::default();
        // In this order: the automata find the patterns' prefixes, and the exact stems tell
        // the typo strategy which words are known.
        let strategies: [Option<&dyn Strategy>; 4] = [
            self.anywhere.as_ref().map(|s| s as &dyn Strategy),
            self.word_starts.as_ref().map(|s| s as &dyn Strategy),
            self.typos.as_ref().map(|s| s as &dyn Strategy),
            Some(&self.patterns),
        ];
        for s in strategies.into_iter().flatten() {
            s.find(&self.entries, &text, &mut found);
        }
        found
    }

    /// What `text` (normalised by the same [`Normalizer`]) matches: each list's first hit, a
    /// hit preceded by its list's negation left out.
    pub fn scan(&self, text: &str) -> Hits {
        self.scan_words(text, &super::word_spans(text))
    }

    /// [`scan`](Self::scan) of a normalised message, whose words were found as it was
    /// normalised.
    pub fn scan_normalized(&self, normalized: &super::Normalized) -> Hits {
        self.scan_words(&normalized.text, normalized.words())
    }

    fn scan_words(&self, text: &str, words: &[(u32, u32)]) -> Hits {
        let mut all = self.find_all(text, words).hits;
        if all.is_empty() {
            return Hits::default();
        }
        // Each list's hits in the order they occur (exact before typo at the same place).
        all.sort_unstable_by_key(|h| (h.list, h.hit.start, h.hit.typo, h.hit.entry, h.hit.end));
        let mut hits = Hits::default();
        let mut i = 0;
        while i < all.len() {
            let list = all[i].list;
            let end = i + all[i..].iter().take_while(|h| h.list == list).count();
            let negation = self.negations.get(list as usize).copied().flatten();
            let mut first_negated = None;
            let found = all[i..end].iter().find(|h| match negation {
                None => true,
                Some((by, within)) => match negating_hit(&all, by, within, text, h.hit.start) {
                    Some(n) => {
                        first_negated.get_or_insert(Negated {
                            list,
                            hit: h.hit,
                            by: n,
                        });
                        false
                    }
                    None => true,
                },
            });
            match found {
                Some(h) => hits.first.push(*h),
                None => hits.negated.extend(first_negated),
            }
            i = end;
        }
        hits
    }

    /// Calls `seen(list, entry)` for every entry that occurs anywhere in `text`, negated or
    /// not (test coverage; the decision path uses [`scan`](Self::scan)).
    pub fn each_entry_in(&self, text: &str, mut seen: impl FnMut(usize, usize)) {
        for h in self.find_all(text, &super::word_spans(text)).hits {
            seen(h.list as usize, h.hit.entry);
        }
    }
}

/// A hit of list `by` ending at most `within` words before `start`.
fn negating_hit(
    all: &[ListHit],
    by: u32,
    within: usize,
    text: &str,
    start: usize,
) -> Option<ListHit> {
    let from = all.partition_point(|h| h.list < by);
    all[from..]
        .iter()
        .take_while(|h| h.list == by)
        .filter(|h| h.hit.end <= start)
        .find(|h| words_between(&text[h.hit.end..start]) <= within)
        .copied()
}

/// How many words stand in `s`; a clause break (`,` `.` `;` `:` `!` `?`) ends a negation's
/// reach, so it counts as too many.
fn words_between(s: &str) -> usize {
    if s.contains([',', '.', ';', ':', '!', '?']) {
        return usize::MAX;
    }
    let mut n = 0;
    each_word_start(s, |_| {
        n += 1;
        false
    });
    n
}

#[cfg(test)]
mod tests;
