//! Building a [`Scanner`]: each entry goes to the strategy that can find it.

use rayon::prelude::*;

use super::{
    Entries, ListSpec, Pattern, Scanner, Target, anywhere, patterns::Patterns, typos, word_starts,
};
use crate::text::Normalizer;
use crate::text::is_word;
use crate::text::pattern::PatternStart;
use crate::text::phrase::{self, Phrase};

/// A [`Scanner`] being built.
pub(super) struct Builder<'n> {
    norm: &'n Normalizer,
    entries: Entries,
    negations: Vec<Option<(u32, usize)>>,
    /// Every phrase and pattern, in the order their keys go into the automata.
    added: Vec<Target>,
    patterns: Patterns,
    lists: usize,
}

fn index(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl<'n> Builder<'n> {
    /// Entries are normalised by `norm`, as messages are.
    pub(super) fn new(norm: &'n Normalizer) -> Self {
        Self {
            norm,
            entries: Entries::default(),
            negations: Vec::new(),
            added: Vec::new(),
            patterns: Patterns::default(),
            lists: 0,
        }
    }

    /// Adds `lists`, after those already added.
    pub(super) fn lists(mut self, lists: &[ListSpec<'_>]) -> Self {
        let forms = self.norm.endings().is_some();
        let norm = self.norm;
        // Normalising and parsing the entries is most of the work, and each is on its own.
        // Each entry, with the variants it stands for: the orders of an `&` entry, and the
        // glued and wrongly split readings of a two-word phrase in a typo-tolerant list.
        let parsed: Vec<Vec<Vec<Phrase>>> = lists
            .par_iter()
            .map(|spec| {
                let options = spec.options;
                let typos = options.typos_from.map(|from| phrase::TypoLengths {
                    from,
                    first_letter_from: options.typo_first_letter_from.unwrap_or(usize::MAX),
                });
                let parse = |entry: &str| {
                    phrase::parse_variants(entry, options.gap, typos, forms).unwrap_or_default()
                };
                match spec.normalized {
                    Some(keys) => keys.iter().map(|k| parse(k)).collect(),
                    None => (spec.words.iter())
                        .map(|entry| parse(&norm.normalize(entry.trim())))
                        .collect(),
                }
            })
            .collect();
        for (spec, phrases) in lists.iter().zip(parsed) {
            self.list(spec, phrases);
        }
        self
    }

    fn list(&mut self, spec: &ListSpec<'_>, phrases: Vec<Vec<Phrase>>) {
        let list = index(self.lists);
        self.lists += 1;
        self.negations.push(
            spec.options
                .negated_by
                .map(|(n, within)| (index(n), within)),
        );
        for (e, variants) in phrases.into_iter().enumerate() {
            for p in variants {
                self.added
                    .push(Target::Phrase(index(self.entries.phrases.len())));
                self.entries.phrases.push(p);
                self.entries.owner.push((list, index(e)));
            }
        }
        for (e, re) in spec.patterns.iter().enumerate() {
            let Some(re) = re else { continue };
            let k = index(self.entries.patterns.len());
            match &re.start {
                PatternStart::AtWords(_) | PatternStart::Prefixes(_) => {
                    self.added.push(Target::Pattern(k));
                }
                PatternStart::AtStart => self.patterns.add_at_start(k),
                PatternStart::Anywhere => self.patterns.add_unanchored(k),
            }
            self.entries.patterns.push(Pattern {
                re: re.clone(),
                list,
                entry: index(spec.words.len() + e),
            });
        }
    }

    /// The scanner; an automaton that cannot be built leaves its entries unmatched and says
    /// why in [`Scanner::error`].
    pub(super) fn build(self) -> Scanner {
        let mut error = None;
        // Each strategy gathers its keys and builds its automaton on its own core when there
        // is one: a grown pack has some 200,000 phrases, and adding them one strategy after
        // the other was the longest part of its load. Each takes the keys in the order they
        // were added, so the automata are the same as if built one after the other.
        let entries = &self.entries;
        let added = &self.added;
        let endings = self.norm.endings().cloned();
        let (word_starts, (typos, anywhere)) = rayon::join(
            || word_start_keys(entries, added).build(&entries.phrases),
            || {
                rayon::join(
                    || typo_keys(entries, added).build(&entries.phrases, endings),
                    || anywhere_keys(entries, added).build(),
                )
            },
        );
        // Kept in the order they were built in when one followed the other.
        let word_starts = keep(word_starts, &mut error);
        let typos = keep(typos, &mut error);
        let anywhere = keep(anywhere, &mut error);
        Scanner {
            entries: self.entries,
            anywhere,
            word_starts,
            typos,
            patterns: self.patterns,
            negations: self.negations,
            endings: self.norm.endings().cloned(),
            lists: self.lists,
            error,
        }
    }
}

/// The first stem of `phrase`, when it starts with a word character (found where a word
/// starts; any other is found anywhere).
fn word_stem(phrase: &Phrase) -> Option<&str> {
    let stem = &phrase.words[0].stem;
    stem.chars().next().is_some_and(is_word).then_some(stem)
}

/// The word-start automaton's keys: phrases' first stems that start with a word character and
/// the prefixes of patterns that start a word.
fn word_start_keys<'e>(entries: &'e Entries, added: &[Target]) -> word_starts::Builder<'e> {
    let mut b = word_starts::Builder::default();
    for &target in added {
        match target {
            Target::Phrase(pid) => {
                if let Some(stem) = word_stem(&entries.phrases[pid as usize]) {
                    b.add(stem, target);
                }
            }
            Target::Pattern(k) => {
                if let PatternStart::AtWords(prefixes) = &entries.patterns[k as usize].re.start {
                    for prefix in shortest(prefixes) {
                        b.add(prefix.as_str(), target);
                    }
                }
            }
        }
    }
    b
}

/// The typo-tolerant first stems: those of [`word_start_keys`] whose word may have a typo.
fn typo_keys(entries: &Entries, added: &[Target]) -> typos::Builder {
    let mut b = typos::Builder::default();
    for &target in added {
        let Target::Phrase(pid) = target else {
            continue;
        };
        let p = &entries.phrases[pid as usize];
        let first = &p.words[0];
        if first.fuzzy && word_stem(p).is_some() {
            b.add(&first.stem, first.typo_first, pid);
        }
    }
    b
}

/// The keys found anywhere: first stems that start with no word character and the literal
/// prefixes of patterns that need not start a word.
fn anywhere_keys<'e>(entries: &'e Entries, added: &[Target]) -> anywhere::Builder<'e> {
    let mut b = anywhere::Builder::default();
    for &target in added {
        match target {
            Target::Phrase(pid) => {
                let p = &entries.phrases[pid as usize];
                if word_stem(p).is_none() {
                    b.add(p.words[0].stem.as_bytes(), target);
                }
            }
            Target::Pattern(k) => {
                if let PatternStart::Prefixes(prefixes) = &entries.patterns[k as usize].re.start {
                    for prefix in shortest(prefixes) {
                        b.add(prefix.as_slice(), target);
                    }
                }
            }
        }
    }
    b
}

/// The prefixes of one pattern that no other of its prefixes starts, sorted. A pattern is
/// tried from the first place one of its prefixes occurs, and wherever a longer one occurs
/// the shorter one it extends occurs too, at the same place: the longer keys find nothing
/// new. (`x\s*-?\s*\d+` has some forty prefixes, `x` and `x` followed by each space and
/// digit; the automaton needs only `x`.)
fn shortest<P: AsRef<[u8]>>(prefixes: &[P]) -> Vec<&P> {
    let mut sorted: Vec<&P> = prefixes.iter().collect();
    sorted.sort_unstable_by(|a, b| a.as_ref().cmp(b.as_ref()));
    let mut kept: Vec<&P> = Vec::with_capacity(sorted.len());
    for p in sorted {
        // Sorted, every key that extends a kept one follows it before any other key does.
        if kept
            .last()
            .is_none_or(|k| !p.as_ref().starts_with(k.as_ref()))
        {
            kept.push(p);
        }
    }
    kept
}

/// A strategy that was built, or none (and why, in `error`).
fn keep<T>(built: Result<Option<T>, String>, error: &mut Option<String>) -> Option<T> {
    built.unwrap_or_else(|e| {
        *error = Some(e);
        None
    })
}

#[cfg(test)]
mod tests {
    use super::shortest;

    #[test]
    fn only_prefixes_no_other_prefix_starts_are_kept() {
        let prefixes = ["ab\t", "ab", "b1", "ab ", "abc", "b", "c2", "c", "ca"];
        assert_eq!(shortest(&prefixes), [&"ab", &"b", &"c"]);
        let bytes: Vec<Vec<u8>> = vec![b"x1".to_vec(), b"y".to_vec(), b"x2".to_vec()];
        let kept: Vec<&[u8]> = shortest(&bytes).into_iter().map(Vec::as_slice).collect();
        assert_eq!(
            kept,
            [b"x1".as_slice(), b"x2", b"y"],
            "none extends another"
        );
        assert!(shortest::<&str>(&[]).is_empty());
    }
}
