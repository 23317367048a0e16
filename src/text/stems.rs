//! The stems that can start a word, in automata walked from each word start.
//!
//! Up to a few thousand stems, one DFA holds them all. Past that, one automaton of them all is
//! slow to build (on one core) and its walk is mostly cache misses; they are then split by
//! their first character: a word start looks up the stems of its first character and walks
//! only those, in a [`Trie`] of their bytes (a word whose first character starts no stem costs
//! that one lookup). The tries are built on every core.
//!
//! A trie, not an Aho-Corasick automaton: the walk is anchored, so it needs no failure
//! transitions, and the crate's builder is slow on many stems: its start state holds all 256
//! bytes in a list walked for every stem's first byte (208 links for a Cyrillic letter), and
//! each state's transitions in a list walked for each byte added. The trie is built from the
//! stems sorted, each node's children side by side, in time linear in the stems' bytes.

use std::collections::HashMap;

use aho_corasick::automaton::Automaton;
use aho_corasick::{Anchored, BuildError, MatchKind, StartKind, dfa};
use rayon::prelude::*;

/// Up to this many stems, one automaton holds them all (each automaton has a fixed cost, and a
/// pack's tools each have a few stems of their own); above, one per first character.
const SPLIT_FROM: usize = 3_000;

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
    /// The tries of the other first characters, sorted by character.
    others: Vec<(char, u16)>,
    groups: Vec<Trie>,
}

/// A trie of byte strings, walked from a place in a text: every string that starts exactly
/// there. Its nodes are numbered breadth first, each node's children side by side in byte
/// order, so that a node is found among its siblings by a scan of a few bytes.
#[derive(Debug, Clone)]
struct Trie {
    nodes: Vec<Node>,
    /// The byte that leads to each node (the root's is 0, unused).
    bytes: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    /// The first child's index; the children follow it.
    first: u32,
    /// How many children.
    children: u16,
    /// The stem that ends here (the caller's index), or [`NO_STEM`].
    stem: u32,
}

/// No stem ends at a node.
const NO_STEM: u32 = u32::MAX;

/// Past this many children, a node's child is looked up by a binary search.
const SCANNED: usize = 8;

impl Trie {
    /// The trie of `stems`, distinct and not empty, each with its caller's index.
    fn new(stems: &[(&[u8], u32)]) -> Self {
        let mut sorted: Vec<(&[u8], u32)> = stems.to_vec();
        sorted.sort_unstable();
        let leaf = Node {
            first: 0,
            children: 0,
            stem: NO_STEM,
        };
        let mut nodes = vec![leaf];
        let mut bytes = vec![0];
        // Breadth first: (node, the stems under it, its depth). Every stem under a node starts
        // with the node's bytes, and sorted, those that go on with the same byte stand together.
        let mut pending = std::collections::VecDeque::from([(0, 0, sorted.len(), 0)]);
        while let Some((node, mut from, to, depth)) = pending.pop_front() {
            if let Some(&(stem, index)) = sorted.get(from).filter(|s| s.0.len() == depth) {
                debug_assert!(from + 1 == to || sorted[from + 1].0 != stem, "distinct");
                nodes[node].stem = index;
                from += 1;
            }
            let first = nodes.len();
            while from < to {
                let byte = sorted[from].0[depth];
                let end = from + sorted[from..to].partition_point(|s| s.0[depth] == byte);
                pending.push_back((nodes.len(), from, end, depth + 1));
                nodes.push(leaf);
                bytes.push(byte);
                from = end;
            }
            nodes[node].first = u32::try_from(first).unwrap_or(u32::MAX);
            nodes[node].children = u16::try_from(nodes.len() - first).unwrap_or(u16::MAX);
        }
        Self { nodes, bytes }
    }

    /// Calls `f(end, stem)` for every stem that starts exactly at byte `start` of `text`,
    /// shortest first.
    #[inline(always)]
    fn walk(&self, text: &[u8], start: usize, f: &mut impl FnMut(usize, usize)) {
        let mut node = self.nodes[0];
        for (offset, &byte) in text.get(start..).unwrap_or(&[]).iter().enumerate() {
            let first = node.first as usize;
            let Some(siblings) = self.bytes.get(first..first + usize::from(node.children)) else {
                return;
            };
            let found = if siblings.len() <= SCANNED {
                siblings.iter().position(|&b| b == byte)
            } else {
                siblings.binary_search(&byte).ok()
            };
            let Some(k) = found else {
                return;
            };
            node = self.nodes[first + k];
            if node.stem != NO_STEM {
                f(start + offset + 1, node.stem as usize);
            }
        }
    }
}

impl WordStarts {
    /// The automata of `stems` (distinct and not empty; an empty one is skipped; the index of
    /// each fits in a `u32`).
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
                let own: Vec<(&[u8], u32)> = (ids.iter())
                    .map(|&i| (stems[i as usize].as_bytes(), i))
                    .collect();
                Trie::new(&own)
            })
            .collect();
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
        if let Some(trie) = self.groups.get(usize::from(g)) {
            trie.walk(text.as_bytes(), start, f);
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
        assert_eq!(split.groups.len(), 6, "one trie per first character");
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

    #[test]
    fn a_trie_finds_what_a_plain_search_finds() {
        // Chains of prefixes, siblings past the scanned few (a binary search), several bytes a
        // letter, and a stem that is one byte of a longer letter's two.
        let mut owned: Vec<String> = [
            "a",
            "ab",
            "abc",
            "abd",
            "b",
            "\u{431}\u{430}",
            "\u{431}\u{430}\u{431}",
            "\u{431}",
            "\u{3b1}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        owned.extend((0..40u8).map(|i| format!("x{}", char::from(b'0' + i))));
        owned.extend(["中文", "中", "\u{436}"].map(str::to_owned));
        let stems: Vec<&str> = owned.iter().map(String::as_str).collect();
        let with_index: Vec<(&[u8], u32)> = (stems.iter().zip(0..))
            .map(|(s, i)| (s.as_bytes(), i))
            .collect();
        let trie = Trie::new(&with_index);
        let texts = [
            "abcd",
            "abd",
            "x",
            "x7 x9",
            "\u{431}\u{430}\u{431}\u{443}\u{448}\u{43a}\u{430}",
            "\u{436}\u{431}\u{430}\u{43d}",
            "中文字",
            "α",
            "",
            "q",
        ];
        for text in texts {
            for start in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                let mut out = Vec::new();
                trie.walk(text.as_bytes(), start, &mut |end, stem| {
                    out.push((end, stem))
                });
                assert_eq!(out, plainly(&stems, text, start), "{text} at {start}");
            }
        }
        // Past the text's end: nothing.
        let mut none = true;
        trie.walk(b"ab", 5, &mut |_, _| none = false);
        assert!(none);
        let empty = Trie::new(&[]);
        empty.walk(b"ab", 0, &mut |_, _| panic!("no stem"));
    }
}
