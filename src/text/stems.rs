//! The stems that can start a word, in automata walked from each word start.
//!
//! Up to a few thousand stems, one DFA holds them all. Past that, one automaton of them all is
//! slow to build (on one core) and its walk is mostly cache misses; they are then split by
//! their first character: a word start looks up the automaton of its first character and walks
//! only that one, which holds the stems that share it, over an alphabet of only their own
//! letters (a word whose first character starts no stem costs that one lookup). The automata
//! are built on every core.

use std::collections::HashMap;

use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::contiguous;
use aho_corasick::{Anchored, BuildError, MatchKind, StartKind, dfa};
use rayon::prelude::*;

/// Up to this many stems, one automaton holds them all (each automaton has a fixed cost, and a
/// pack's tools each have a few stems of their own); above, one per first character.
const SPLIT_FROM: usize = 3_000;

/// Up to this many stems, an automaton is a DFA (fastest); above it a contiguous NFA (the DFA's
/// memory and build time grow with stems × alphabet: in a pack grown 100 times, about 5,000
/// stems a letter, NFAs load in 0.55 s against 0.62 s, and decide no slower).
const DFA_MAX_STEMS: usize = 300;

/// First characters below this (Latin, Greek, Cyrillic) find their automaton in a table; the
/// others by a binary search.
const TABLED: usize = 0x500;

/// No automaton: no stem starts with this character.
const NONE: u16 = u16::MAX;

/// Stems matched where a word starts (see the module's notes).
#[derive(Debug, Clone)]
// One per scanner, never moved on the hot path; the usual DFA is read in place, without a
// pointer to follow at every word.
#[allow(clippy::large_enum_variant)]
pub(super) enum WordStarts {
    /// Up to [`SPLIT_FROM`] stems: one DFA of them all, whose stem ids are the caller's.
    One(dfa::DFA),
    /// More: one automaton per first character.
    Split(Box<Split>),
}

/// The automata of stems split by first character.
#[derive(Debug, Clone)]
pub(super) struct Split {
    /// The automaton of each first character below [`TABLED`], or [`NONE`].
    tabled: Box<[u16]>,
    /// The automata of the other first characters, sorted by character.
    others: Vec<(char, u16)>,
    groups: Vec<Group>,
}

/// The stems of some first characters.
#[derive(Debug, Clone)]
struct Group {
    automaton: Anchor,
    /// The index (in the list given to [`WordStarts::new`]) of each of the automaton's stems.
    stems: Vec<u32>,
}

#[derive(Debug, Clone)]
enum Anchor {
    Dfa(dfa::DFA),
    Nfa(contiguous::NFA),
}

impl WordStarts {
    /// The automata of `stems` (distinct and not empty; an empty one is skipped).
    pub(super) fn new(stems: &[&str]) -> Result<Self, BuildError> {
        if stems.len() <= SPLIT_FROM {
            return Ok(Self::One(dfa(stems)?));
        }
        let mut group_of: HashMap<char, u16> = HashMap::new();
        let mut members: Vec<Vec<u32>> = Vec::new();
        for (i, stem) in stems.iter().enumerate() {
            let Some(c) = stem.chars().next() else {
                continue;
            };
            let g = *group_of.entry(c).or_insert_with(|| {
                members.push(Vec::new());
                u16::try_from(members.len() - 1).unwrap_or(NONE)
            });
            members[usize::from(g)].push(u32::try_from(i).unwrap_or(u32::MAX));
        }
        let groups = members
            .into_par_iter()
            .map(|ids| {
                let own: Vec<&str> = ids.iter().map(|&i| stems[i as usize]).collect();
                let automaton = if own.len() <= DFA_MAX_STEMS {
                    Anchor::Dfa(dfa(&own)?)
                } else {
                    Anchor::Nfa(
                        contiguous::NFA::builder()
                            .match_kind(MatchKind::Standard)
                            .build(&own)?,
                    )
                };
                Ok(Group {
                    automaton,
                    stems: ids,
                })
            })
            .collect::<Result<Vec<_>, BuildError>>()?;
        let mut tabled = vec![NONE; TABLED].into_boxed_slice();
        let mut others = Vec::new();
        for (c, g) in group_of {
            match tabled.get_mut(c as usize) {
                Some(slot) => *slot = g,
                None => others.push((c, g)),
            }
        }
        others.sort_unstable();
        Ok(Self::Split(Box::new(Split {
            tabled,
            others,
            groups,
        })))
    }

    /// Calls `f(end, stem)` for every stem that starts exactly at byte `start` of `text` (a
    /// char boundary), shortest first.
    #[inline(always)]
    pub(super) fn walk(&self, text: &str, start: usize, f: &mut impl FnMut(usize, usize)) {
        match self {
            Self::One(d) => walk(d, text, start, f),
            Self::Split(split) => split.walk(text, start, f),
        }
    }
}

impl Split {
    /// [`WordStarts::walk`] in the automaton of the first character at `start`.
    fn walk(&self, text: &str, start: usize, f: &mut impl FnMut(usize, usize)) {
        let Some(c) = text.get(start..).and_then(|t| t.chars().next()) else {
            return;
        };
        let g = match self.tabled.get(c as usize) {
            Some(&g) => g,
            None => match self.others.binary_search_by_key(&c, |o| o.0) {
                Ok(i) => self.others[i].1,
                Err(_) => NONE,
            },
        };
        let Some(group) = self.groups.get(usize::from(g)) else {
            return;
        };
        let mut found = |end: usize, k: usize| f(end, group.stems[k] as usize);
        match &group.automaton {
            Anchor::Dfa(d) => walk(d, text, start, &mut found),
            Anchor::Nfa(n) => walk(n, text, start, &mut found),
        }
    }
}

/// An anchored DFA of `stems`.
fn dfa(stems: &[&str]) -> Result<dfa::DFA, BuildError> {
    dfa::DFA::builder()
        .match_kind(MatchKind::Standard)
        .start_kind(StartKind::Anchored)
        .build(stems)
}

/// Anchored walk from `start`: calls `f(end, stem)` for every stem that starts exactly there.
/// Stops as soon as no stem can continue.
#[inline(always)]
fn walk<A: Automaton>(a: &A, text: &str, start: usize, f: &mut impl FnMut(usize, usize)) {
    let Ok(mut sid) = a.start_state(Anchored::Yes) else {
        return;
    };
    for (offset, &byte) in text.as_bytes()[start..].iter().enumerate() {
        sid = a.next_state(Anchored::Yes, sid, byte);
        if a.is_dead(sid) {
            break;
        }
        if a.is_match(sid) {
            for k in 0..a.match_len(sid) {
                // A match state also holds the stems that end here but start later (a suffix
                // of what was read, as an unanchored search needs them): not ours.
                let stem = a.match_pattern(sid, k);
                if a.pattern_len(stem) == offset + 1 {
                    f(start + offset + 1, stem.as_usize());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(w: &WordStarts, text: &str, start: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        w.walk(text, start, &mut |end, stem| out.push((end, stem)));
        out
    }

    #[test]
    fn every_stem_that_starts_here_shortest_first() {
        let stems = ["ab", "b", "abc", "bc", "αβ", "α", "中文", "中"];
        let w = WordStarts::new(&stems).expect("built");
        assert!(
            matches!(w, WordStarts::One(_)),
            "a few stems: one automaton"
        );
        assert_eq!(found(&w, "abcd", 0), vec![(2, 0), (3, 2)]);
        assert_eq!(found(&w, "abcd", 1), vec![(2, 1), (3, 3)]);
        assert_eq!(found(&w, "b", 0), vec![(1, 1)], "a stem of one letter");
        assert_eq!(found(&w, "xαβγ", 1), vec![(3, 5), (5, 4)]);
        // Past the table: found by the binary search.
        assert_eq!(found(&w, "中文字", 0), vec![(3, 7), (6, 6)]);
        assert!(found(&w, "cab", 0).is_empty(), "no stem starts with 'c'");
        assert!(found(&w, "ab", 2).is_empty(), "at the end");
        assert_eq!(found(&w, "abc", 0), plainly(&stems, "abc", 0));
    }

    /// Every stem that `text` has at `start`, by a plain search.
    fn plainly(stems: &[&str], text: &str, start: usize) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = (stems.iter().enumerate())
            .filter(|(_, s)| text[start..].starts_with(**s))
            .map(|(i, s)| (start + s.len(), i))
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn many_stems_are_split_by_first_character_and_find_the_same() {
        let many: Vec<String> = ["a", "b", "q", "α", "中"]
            .iter()
            .flat_map(|l| (0..700).map(move |i| format!("{l}{i}")))
            .chain(["r1".to_owned(), "r12".to_owned()])
            .collect();
        let stems: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(stems.len() > SPLIT_FROM);
        let w = WordStarts::new(&stems).expect("built");
        let WordStarts::Split(split) = &w else {
            panic!("{} stems are split", stems.len());
        };
        assert_eq!(split.groups.len(), 6, "one automaton per first character");
        let kinds: Vec<bool> = (split.groups.iter())
            .map(|g| matches!(g.automaton, Anchor::Nfa(_)))
            .collect();
        assert_eq!(
            kinds,
            [true, true, true, true, true, false],
            "past {DFA_MAX_STEMS}: NFA"
        );
        for text in ["a123x", "b7", "α70 ", "x中699", "r12", "r2", "zz", "q"] {
            for start in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
                assert_eq!(
                    found(&w, text, start),
                    plainly(&stems, text, start),
                    "{text} at {start}"
                );
            }
        }
    }
}
