//! Typo tolerance: a stem matches a word that differs from it by one letter (wrong, missing,
//! extra, or two neighbours swapped). The first letter must be right: people rarely get it
//! wrong, and it keeps the search short and unrelated words apart.
//!
//! For the first words of entries, every tolerant stem of every list is in one `fst` map (a
//! compact trie); at a word start the message is walked through it once, spending the single
//! edit where the trie and the text disagree. The cost depends on the word, not on how many
//! stems there are. Later words of a phrase are compared one to one, with [`prefix_lengths`].

use fst::raw::{Fst, Node, Output};

/// How many letters at the start of a word must be right: typos there are rare, and requiring
/// it keeps the walk short. (Not two: one vowel written for another in the second letter is
/// among the commonest typos in the pack's language.)
const EXACT_LETTERS: usize = 1;

/// The byte lengths of the prefixes of `text` (within its first word) that are one edit away
/// from `stem`, longest first.
pub(super) fn prefix_lengths(stem: &str, text: &str) -> impl Iterator<Item = usize> {
    let word = &text[..super::word_len(text)];
    let n = stem.chars().count();
    let mut ends: Vec<usize> = word
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .enumerate()
        .filter(|&(k, _)| (k + 2 >= n) && k < n + 1)
        .filter(|&(_, end)| one_edit(stem, &word[..end]))
        .map(|(_, end)| end)
        .collect();
    ends.reverse();
    ends.into_iter()
}

/// Whether `a` and `b` differ by exactly one edit (same first character required).
pub(super) fn one_edit(a: &str, b: &str) -> bool {
    if a == b {
        return false;
    }
    let (mut x, mut y) = (a.chars(), b.chars());
    for _ in 0..EXACT_LETTERS {
        if x.next() != y.next() {
            return false;
        }
    }
    let (x, y): (Vec<char>, Vec<char>) = (x.collect(), y.collect());
    let common = x.iter().zip(&y).take_while(|(p, q)| p == q).count();
    let (xs, ys) = (&x[common..], &y[common..]);
    match xs.len().abs_diff(ys.len()) {
        // Substitution, or two neighbours swapped.
        0 => {
            xs[1..] == ys[1..]
                || (xs.len() >= 2 && xs[0] == ys[1] && xs[1] == ys[0] && xs[2..] == ys[2..])
        }
        1 if xs.len() > ys.len() => xs[1..] == *ys,
        1 => ys[1..] == *xs,
        _ => false,
    }
}

/// The tolerant first stems of all lists, as an `fst` map from stem to an index.
#[derive(Clone)]
pub(super) struct FuzzyStems {
    fst: std::sync::Arc<Fst<Vec<u8>>>,
    /// The fewest letters of a stem: a shorter word, even with one letter missing, matches none.
    min_letters: usize,
    /// (first letter, second or third letter) of every stem, sorted: with one edit after the
    /// first letter, a word's second or third letter is one of its stem's second and third.
    /// Most words fail this test and cost no walk.
    pairs: Vec<(char, char)>,
}

impl std::fmt::Debug for FuzzyStems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FuzzyStems")
            .field("stems", &self.fst.len())
            .finish()
    }
}

/// A stem found with one edit: its index in the map, and the byte length of text it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FuzzyHit {
    pub stem: usize,
    pub len: usize,
}

impl FuzzyStems {
    /// Builds the map from `(stem, index)` pairs; stems must be distinct.
    pub fn new(mut stems: Vec<(String, usize)>) -> Result<Self, fst::Error> {
        stems.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let min_letters = stems
            .iter()
            .map(|(s, _)| s.chars().count())
            .min()
            .unwrap_or(0);
        let mut pairs: Vec<(char, char)> = stems
            .iter()
            .flat_map(|(s, _)| {
                let mut c = s.chars();
                let first = c.next();
                let rest: Vec<char> = c.take(2).collect();
                rest.into_iter().filter_map(move |r| Some((first?, r)))
            })
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut builder = fst::MapBuilder::memory();
        for (stem, idx) in &stems {
            builder.insert(stem, *idx as u64)?;
        }
        let fst = Fst::new(builder.into_inner()?)?;
        Ok(Self {
            fst: std::sync::Arc::new(fst),
            min_letters,
            pairs,
        })
    }

    /// The fewest letters a tolerant stem has.
    pub fn min_letters(&self) -> usize {
        self.min_letters
    }

    /// Calls `f` for each tolerant stem one edit away from a prefix of `word` (one word, from
    /// its start to its end).
    pub fn walk(&self, word: &str, mut f: impl FnMut(FuzzyHit)) {
        // One letter may be missing from the word, no more.
        if word.chars().count() + 1 < self.min_letters {
            return;
        }
        let mut letters = word.chars();
        let (Some(a), b, c) = (letters.next(), letters.next(), letters.next()) else {
            return;
        };
        let paired = |x: Option<char>| x.is_some_and(|x| self.pairs.binary_search(&(a, x)).is_ok());
        if !paired(b) && !paired(c) {
            return;
        }
        // The first letters are read exactly: a walk that leaves the trie there costs nothing.
        let exact: usize = word.chars().take(EXACT_LETTERS).map(char::len_utf8).sum();
        let fst = &self.fst;
        let mut node = fst.root();
        let mut out = Output::zero();
        for &b in &word.as_bytes()[..exact] {
            let Some(i) = node.find_input(b) else {
                return;
            };
            let t = node.transition(i);
            out = out.cat(t.out);
            node = fst.node(t.addr);
        }
        let mut walker = Walker {
            fst,
            text: word,
            f: &mut f,
        };
        walker.step(node, out, exact, false);
    }
}

struct Walker<'a, F> {
    fst: &'a Fst<Vec<u8>>,
    /// The word being matched.
    text: &'a str,
    f: &'a mut F,
}

impl<'a, F: FnMut(FuzzyHit)> Walker<'a, F> {
    /// At `node` having read `text[..pos]`; `edited`: the one edit is spent.
    fn step(&mut self, node: Node<'a>, out: Output, pos: usize, edited: bool) {
        if edited {
            self.exact_rest(node, out, pos);
            return;
        }
        let rest = &self.text[pos..];
        let next = rest.chars().next();
        if let Some(c) = next
            && let Some((n, o)) = self.follow(node, out, c)
        {
            self.step(n, o, pos + c.len_utf8(), false);
        }
        // An extra letter in the text: skip it.
        if let Some(c) = next {
            self.step(node, out, pos + c.len_utf8(), true);
        }
        // A letter missing from the text, or a wrong one: every letter the trie has here.
        let skip = next.map(char::len_utf8);
        self.each_letter(node, out, 0, &mut |w, n, o| {
            w.step(n, o, pos, true);
            if let Some(len) = skip {
                w.step(n, o, pos + len, true);
            }
        });
        // Two neighbours swapped.
        let mut chars = rest.chars();
        if let (Some(a), Some(b)) = (chars.next(), chars.next())
            && a != b
            && let Some((n, o)) = self.follow(node, out, b)
            && let Some((n, o)) = self.follow(n, o, a)
        {
            self.step(n, o, pos + a.len_utf8() + b.len_utf8(), true);
        }
    }

    /// The edit is spent: reads the rest of the word exactly, reporting every stem that ends.
    fn exact_rest(&mut self, mut node: Node<'a>, mut out: Output, mut pos: usize) {
        let bytes = self.text.as_bytes();
        loop {
            if node.is_final() {
                (self.f)(FuzzyHit {
                    stem: usize::try_from(out.cat(node.final_output()).value())
                        .unwrap_or(usize::MAX),
                    len: pos,
                });
            }
            let Some(&lead) = bytes.get(pos) else {
                return;
            };
            let end = pos + usize::from(utf8_len(lead));
            for &b in bytes.get(pos..end).unwrap_or_default() {
                let Some(i) = node.find_input(b) else {
                    return;
                };
                let t = node.transition(i);
                out = out.cat(t.out);
                node = self.fst.node(t.addr);
            }
            pos = end;
        }
    }

    fn follow(&self, mut node: Node<'a>, mut out: Output, c: char) -> Option<(Node<'a>, Output)> {
        let mut buf = [0u8; 4];
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            let t = node.transition(node.find_input(b)?);
            out = out.cat(t.out);
            node = self.fst.node(t.addr);
        }
        Some((node, out))
    }

    /// Calls `f` with each node one whole character below `node` (UTF-8 sequences are followed
    /// to their end).
    fn each_letter(
        &mut self,
        node: Node<'a>,
        out: Output,
        remaining: u8,
        f: &mut impl FnMut(&mut Self, Node<'a>, Output),
    ) {
        for t in node.transitions() {
            let next = self.fst.node(t.addr);
            let o = out.cat(t.out);
            let left = if remaining == 0 {
                utf8_len(t.inp) - 1
            } else {
                remaining - 1
            };
            if left == 0 {
                f(self, next, o);
            } else {
                self.each_letter(next, o, left, f);
            }
        }
    }
}

/// The length of the UTF-8 sequence a lead byte starts (1 for ASCII).
fn utf8_len(lead: u8) -> u8 {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}
