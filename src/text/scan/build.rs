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
    word_starts: word_starts::Builder,
    typos: typos::Builder,
    anywhere: anywhere::Builder,
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
            word_starts: word_starts::Builder::default(),
            typos: typos::Builder::default(),
            anywhere: anywhere::Builder::default(),
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
                let pid = index(self.entries.phrases.len());
                let first = &p.words[0];
                if first.stem.chars().next().is_some_and(is_word) {
                    self.word_starts.add(&first.stem, Target::Phrase(pid));
                    if first.fuzzy {
                        self.typos.add(&first.stem, first.typo_first, pid);
                    }
                } else {
                    self.anywhere
                        .add(first.stem.as_bytes(), Target::Phrase(pid));
                }
                self.entries.phrases.push(p);
                self.entries.owner.push((list, index(e)));
            }
        }
        for (e, re) in spec.patterns.iter().enumerate() {
            let Some(re) = re else { continue };
            let k = index(self.entries.patterns.len());
            match &re.start {
                PatternStart::AtWords(prefixes) => {
                    for prefix in shortest(prefixes) {
                        self.word_starts.add(prefix, Target::Pattern(k));
                    }
                }
                PatternStart::Prefixes(prefixes) => {
                    for prefix in shortest(prefixes) {
                        self.anywhere.add(prefix, Target::Pattern(k));
                    }
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
        // Each on its own core when there is one (the anywhere automaton takes longest).
        let phrases = &self.entries.phrases;
        let endings = self.norm.endings().cloned();
        let (anywhere, (word_starts, typos)) = rayon::join(
            || self.anywhere.build(),
            || {
                rayon::join(
                    || self.word_starts.build(phrases),
                    || self.typos.build(phrases, endings),
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
