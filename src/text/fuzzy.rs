//! Typo tolerance: a stem matches a word that differs from it by one letter (wrong, missing,
//! extra, or two neighbours swapped). The first letter must be right: people rarely get it
//! wrong, and it keeps unrelated words apart.
//!
//! For the first words of entries, every tolerant stem of every list is written out as the
//! regular expression of its one-edit variants, and all of them are searched together by one
//! lazily built DFA (`regex-automata`'s hybrid engine): at a word start the word is read once,
//! one transition a byte, whatever the number of stems. Later words of a phrase are compared
//! one to one, with [`prefix_lengths`].

use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson;
use regex_automata::util::pool::{Pool, PoolGuard};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
/// How many letters at the start of a word must be right: typos there are rare, and requiring
/// it keeps the walk short. (Not two: one vowel written for another in the second letter is
/// among the commonest typos in the pack's language.)
const EXACT_LETTERS: usize = 1;

/// The byte lengths of the prefixes of `text` (within its first word) that are one edit away
/// from `stem`, longest first. Only prefixes of one letter fewer to one letter more than the
/// stem can be, so there are at most three.
pub(super) fn prefix_lengths(stem: &str, text: &str) -> impl Iterator<Item = usize> {
    let word = &text[..super::word_len(text)];
    let n = stem.chars().count();
    let mut ends = [0usize; 3];
    let mut found = 0;
    for (k, (i, c)) in word.char_indices().enumerate() {
        // `k + 1` letters end here.
        if k + 2 < n {
            continue;
        }
        if k > n {
            break;
        }
        let end = i + c.len_utf8();
        if one_edit(stem, &word[..end]) {
            ends[found] = end;
            found += 1;
        }
    }
    ends.into_iter().take(found).rev()
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
    // Past the common start, compare what is left.
    let (mut xs, mut ys) = (x.as_str(), y.as_str());
    loop {
        let (mut p, mut q) = (xs.chars(), ys.chars());
        match (p.next(), q.next()) {
            (Some(c), Some(d)) if c == d => (xs, ys) = (p.as_str(), q.as_str()),
            _ => break,
        }
    }
    let (nx, ny) = (xs.chars().count(), ys.chars().count());
    match nx.abs_diff(ny) {
        // Substitution, or two neighbours swapped.
        0 => {
            after_first(xs) == after_first(ys) || {
                let (mut p, mut q) = (xs.chars(), ys.chars());
                let (c0, c1, d0, d1) = (p.next(), p.next(), q.next(), q.next());
                c1.is_some() && c0 == d1 && c1 == d0 && p.as_str() == q.as_str()
            }
        }
        1 if nx > ny => after_first(xs) == ys,
        1 => after_first(ys) == xs,
        _ => false,
    }
}

/// `s` without its first character.
fn after_first(s: &str) -> &str {
    let mut c = s.chars();
    c.next();
    c.as_str()
}

/// How much memory the lazy DFA may keep per thread before it starts again; a pack's stems
/// need a fraction of it. If the variants need more, the next size is tried.
const CACHE_BYTES: [usize; 3] = [2 << 20, 16 << 20, 64 << 20];

type CacheFn = Box<dyn Fn() -> Cache + Send + Sync + UnwindSafe + RefUnwindSafe>;

/// A search cache of the typo DFA, held while one message is read.
pub(super) type FuzzyCache<'a> = PoolGuard<'a, Cache, CacheFn>;

/// The tolerant first stems of all lists, searched together.
#[derive(Clone)]
pub(super) struct FuzzyStems {
    dfa: Arc<DFA>,
    /// One search cache per thread (the lazy DFA fills it as it meets new states).
    caches: Arc<Pool<Cache, CacheFn>>,
    /// The stems, by pattern, and the index each was given.
    stems: Vec<(String, usize)>,
    /// The fewest letters of a stem: a shorter word, even with one letter missing, matches none.
    min_letters: usize,
    /// (first letter, second or third letter) of every stem, as bits of a hashed set: with one
    /// edit after the first letter, a word's second or third letter is one of its stem's
    /// second and third. Most words fail this test and cost no search (a hash collision only
    /// costs one).
    pairs: Box<[u64; PAIR_WORDS]>,
    /// The first four letters of every word a stem matches with its typo (when every stem
    /// has five letters or more): the finer test, for the words the pairs let through.
    starts: Option<Starts>,
}

/// Size of the pair set, in 64-bit words.
const PAIR_WORDS: usize = 64;

/// The bit of the pair set for (first, other).
fn pair_bit(first: char, other: char) -> (usize, u64) {
    let h = (first as u32).wrapping_mul(0x9E37_79B1) ^ (other as u32).wrapping_mul(0x85EB_CA77);
    let bit = (h >> 16) as usize % (PAIR_WORDS * 64);
    (bit / 64, 1 << (bit % 64))
}

impl std::fmt::Debug for FuzzyStems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FuzzyStems")
            .field("stems", &self.stems.len())
            .finish()
    }
}

/// A stem found with one edit: its index in the map, and the byte length of text it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FuzzyHit {
    pub stem: usize,
    pub len: usize,
}

/// Why the typo automaton could not be built.
#[derive(Debug, thiserror::Error)]
#[error("the typo-tolerant stems could not be compiled: {0}")]
pub(super) struct FuzzyError(String);

impl FuzzyStems {
    /// Builds the automaton from `(stem, index)` pairs; stems must be distinct.
    pub fn new(stems: Vec<(String, usize)>) -> Result<Self, FuzzyError> {
        let min_letters = stems
            .iter()
            .map(|(s, _)| s.chars().count())
            .min()
            .unwrap_or(0);
        let mut pairs = Box::new([0u64; PAIR_WORDS]);
        for (stem, _) in &stems {
            let mut c = stem.chars();
            let Some(first) = c.next() else { continue };
            for other in c.take(2) {
                let (word, bit) = pair_bit(first, other);
                pairs[word] |= bit;
            }
        }
        // A wrong or extra letter is any character of the 128-code-point blocks the stems are
        // written in (a word of the message only has word characters to offer).
        let mut blocks: Vec<u32> = stems
            .iter()
            .flat_map(|(s, _)| s.chars())
            .map(|c| c as u32 >> 7)
            .collect();
        blocks.sort_unstable();
        blocks.dedup();
        let class: String = blocks
            .iter()
            .map(|b| format!("\\x{{{:X}}}-\\x{{{:X}}}", b << 7, (b << 7) | 0x7F))
            .collect();
        let class = format!("[{class}]");
        let alphabet: Vec<char> = blocks
            .iter()
            .flat_map(|b| (b << 7..=(b << 7) | 0x7F).filter_map(char::from_u32))
            .collect();
        let starts = Starts::new(&stems, &alphabet);
        let patterns: Vec<String> = stems.iter().map(|(s, _)| variants(s, &class)).collect();
        let mut last = None;
        for bytes in CACHE_BYTES {
            let built = DFA::builder()
                .configure(
                    DFA::config()
                        .match_kind(MatchKind::All)
                        .cache_capacity(bytes),
                )
                .syntax(syntax::Config::new().unicode(true).utf8(true))
                .thompson(thompson::Config::new().shrink(false))
                .build_many(&patterns);
            match built {
                Ok(dfa) => {
                    let dfa = Arc::new(dfa);
                    let for_pool = Arc::clone(&dfa);
                    let create: CacheFn = Box::new(move || for_pool.create_cache());
                    return Ok(Self {
                        dfa,
                        caches: Arc::new(Pool::new(create)),
                        stems,
                        min_letters,
                        pairs,
                        starts,
                    });
                }
                Err(e) => last = Some(e.to_string()),
            }
        }
        Err(FuzzyError(last.unwrap_or_default()))
    }

    /// The fewest letters a tolerant stem has.
    pub fn min_letters(&self) -> usize {
        self.min_letters
    }

    /// Calls `f` for each tolerant stem one edit away from a prefix of `word` (one word, from
    /// its start to its end).
    ///
    /// `cache` is this thread's search cache, taken from the pool by the first word that needs
    /// it and kept for the rest of the message.
    #[inline]
    pub fn walk<'a>(
        &'a self,
        cache: &mut Option<FuzzyCache<'a>>,
        word: &str,
        mut f: impl FnMut(FuzzyHit),
    ) {
        // One letter may be missing from the word, no more (a letter has at least one byte).
        if word.len() + 1 < self.min_letters {
            return;
        }
        let mut letters = word.chars();
        let (Some(a), b, c) = (letters.next(), letters.next(), letters.next()) else {
            return;
        };
        let paired = |x: Option<char>| {
            x.is_some_and(|x| {
                let (word, bit) = pair_bit(a, x);
                self.pairs[word] & bit != 0
            })
        };
        if !paired(b) && !paired(c)
            || super::char_len(word) + 1 < self.min_letters
            || self.starts.as_ref().is_some_and(|s| !s.contains(word))
        {
            return;
        }
        let cache = cache.get_or_insert_with(|| self.caches.get());
        let input = Input::new(word).anchored(Anchored::Yes);
        // The DFA is walked by hand, one transition a byte, until no variant can go on. A
        // match state reached on the byte at `at` means variants that end at `at` (the DFA
        // reports matches one byte late), and the end of the word is one more transition. The
        // walk cannot give up: no clear count is set, so the cache starts again instead.
        let Ok(mut sid) = self.dfa.start_state_forward(cache, &input) else {
            return;
        };
        let mut report = |cache: &Cache, sid, end: usize| {
            for k in 0..self.dfa.match_len(cache, sid) {
                let pattern = self.dfa.match_pattern(cache, sid, k).as_usize();
                let Some((stem, index)) = self.stems.get(pattern) else {
                    continue;
                };
                // A variant may spell the stem itself (a letter "replaced" by itself): not a
                // typo.
                if word.get(..end).is_some_and(|p| one_edit(stem, p)) {
                    f(FuzzyHit {
                        stem: *index,
                        len: end,
                    });
                }
            }
        };
        for (at, &byte) in word.as_bytes().iter().enumerate() {
            let Ok(next) = self.dfa.next_state(cache, sid, byte) else {
                return;
            };
            sid = next;
            if sid.is_tagged() {
                if sid.is_match() {
                    report(cache, sid, at);
                }
                if sid.is_dead() || sid.is_quit() {
                    return;
                }
            }
        }
        if let Ok(last) = self.dfa.next_eoi_state(cache, sid)
            && last.is_match()
        {
            report(cache, last, word.len());
        }
    }
}

/// A hashed set of four-letter word starts.
#[derive(Clone)]
struct Starts {
    bits: Vec<u64>,
    mask: u64,
}

impl Starts {
    /// The first four letters of every one-edit variant of every stem, a wrong or extra letter
    /// being any of `alphabet`; `None` when a stem has four letters or fewer (a variant could
    /// then be shorter than four letters).
    fn new(stems: &[(String, usize)], alphabet: &[char]) -> Option<Self> {
        let keys = stems.len() * (6 * alphabet.len() + 8);
        // About sixteen bits a key: one word in sixteen that no stem starts gets through.
        let len = (keys * 16).next_power_of_two().clamp(1 << 12, 1 << 24);
        let mut set = Starts {
            bits: vec![0; len / 64],
            mask: len as u64 - 1,
        };
        for (stem, _) in stems {
            // Edits after the fifth letter leave the first four alone; only the first four
            // letters of a variant are kept, so each is built in a small array.
            let mut c = ['\0'; 6];
            let mut n = 0;
            for (slot, ch) in c.iter_mut().zip(stem.chars()) {
                *slot = ch;
                n += 1;
            }
            if n < 5 {
                return None;
            }
            set.insert(c);
            for e in EXACT_LETTERS..4 {
                // Letter `e` dropped, swapped with the next, replaced, or a letter put before it.
                let mut dropped = c;
                dropped.copy_within(e + 1.., e);
                set.insert(dropped);
                let mut swapped = c;
                swapped.swap(e, e + 1);
                set.insert(swapped);
                for &x in alphabet {
                    let mut replaced = c;
                    replaced[e] = x;
                    set.insert(replaced);
                    let mut added = c;
                    added.copy_within(e..5, e + 1);
                    added[e] = x;
                    set.insert(added);
                }
            }
        }
        Some(set)
    }

    fn bit(&self, [a, b, c, d]: [char; 4]) -> (usize, u64) {
        // Three letters fill 63 bits; the fourth is mixed in; the high bits of a multiplicative
        // hash are taken.
        let packed = u64::from(a) | u64::from(b) << 21 | u64::from(c) << 42;
        let h = (packed ^ u64::from(d).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let at = (h >> (64 - self.mask.count_ones())) & self.mask;
        ((at / 64) as usize, 1 << (at % 64))
    }

    fn insert(&mut self, [a, b, c, d, ..]: [char; 6]) {
        let (word, bit) = self.bit([a, b, c, d]);
        self.bits[word] |= bit;
    }

    /// Whether a word that starts like `word` may be in the set (false for fewer than four
    /// letters).
    fn contains(&self, word: &str) -> bool {
        let mut l = word.chars();
        let (Some(a), Some(b), Some(c), Some(d)) = (l.next(), l.next(), l.next(), l.next()) else {
            return false;
        };
        let (word, bit) = self.bit([a, b, c, d]);
        self.bits[word] & bit != 0
    }
}

/// The regular expression of every prefix one edit away from `stem` (first letter kept):
/// a letter replaced, added or dropped, or two neighbours swapped. `letter` is the class a
/// replaced or added letter belongs to.
fn variants(stem: &str, letter: &str) -> String {
    let c: Vec<char> = stem.chars().collect();
    let lit = |part: &[char]| regex_syntax::escape(&part.iter().collect::<String>());
    let n = c.len();
    let mut alternatives = Vec::with_capacity(4 * n);
    for i in EXACT_LETTERS..n {
        let (before, at, after) = (lit(&c[..i]), lit(&c[i..]), lit(&c[i + 1..]));
        alternatives.push(format!("{before}{letter}{after}"));
        alternatives.push(format!("{before}{letter}{at}"));
        alternatives.push(format!("{before}{after}"));
        if i + 1 < n {
            let swapped = lit(&[c[i + 1], c[i]]);
            alternatives.push(format!("{before}{swapped}{}", lit(&c[i + 2..])));
        }
    }
    format!("(?:{})", alternatives.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(stems: &FuzzyStems, word: &str) -> Vec<(usize, usize)> {
        let mut hits = Vec::new();
        stems.walk(&mut None, word, |h| hits.push((h.stem, h.len)));
        hits
    }

    #[test]
    fn one_edit_after_the_first_letter_matches_and_the_stem_itself_does_not() {
        let stems =
            FuzzyStems::new(vec![("calendar".into(), 7), ("price".into(), 9)]).expect("builds");
        assert_eq!(found(&stems, "calender"), [(7, 8)]);
        assert_eq!(found(&stems, "calndars"), [(7, 7)]);
        assert_eq!(found(&stems, "caelndar"), [(7, 8)]);
        assert_eq!(found(&stems, "callendar"), [(7, 9)]);
        assert_eq!(found(&stems, "prise"), [(9, 5)]);
        // The first letter is not forgiven, two edits are too many.
        assert!(found(&stems, "kalendar").is_empty());
        assert!(found(&stems, "calnder").is_empty());
        // The stem itself is not a typo; its prefix one letter short is (the scanner reads a
        // word a list knows exactly before it looks for typos).
        assert_eq!(found(&stems, "calendars"), [(7, 7)]);
    }

    /// Every one-edit variant, whatever letter and wherever, passes the quick tests before the
    /// walk: they only spare words that cannot match.
    #[test]
    fn the_quick_tests_let_every_variant_through() {
        let stems =
            FuzzyStems::new(vec![("calendar".into(), 0), ("price".into(), 1)]).expect("builds");
        assert!(stems.starts.is_some());
        for (stem, index) in [("calendar", 0), ("price", 1)] {
            let c: Vec<char> = stem.chars().collect();
            let mut variants = Vec::new();
            for e in 1..c.len() {
                let mut v = c.clone();
                v.remove(e);
                variants.push(v);
                if e + 1 < c.len() {
                    let mut v = c.clone();
                    v.swap(e, e + 1);
                    variants.push(v);
                }
                for x in ['a', 'q', 'z', '0', '_'] {
                    let mut v = c.clone();
                    v[e] = x;
                    variants.push(v);
                    let mut v = c.clone();
                    v.insert(e, x);
                    variants.push(v);
                }
            }
            for v in variants {
                let word: String = v.iter().collect();
                if word == stem {
                    continue;
                }
                for text in [word.clone(), format!("{word}s")] {
                    assert!(
                        found(&stems, &text).iter().any(|h| h.0 == index),
                        "{text} is {stem} with a typo"
                    );
                }
            }
        }
        // Words that start like no variant are spared the walk.
        let starts = stems.starts.as_ref().expect("built");
        let unrelated = [
            "cold", "carpet", "prawn", "cube", "crown", "pluto", "cherry", "pounds", "coins",
            "party", "court", "pigeon",
        ];
        let spared = unrelated.iter().filter(|w| !starts.contains(w)).count();
        assert!(spared >= 9, "{spared} of 12 unrelated words filtered");
        assert!(starts.contains("prize"), "a real variant of price");
    }

    #[test]
    fn the_prefix_before_the_walk_agrees_with_one_edit() {
        assert!(one_edit("price", "prise"));
        assert!(!one_edit("price", "price"));
        for typo in ["caelndar", "calendr", "calenndar", "clendar", "calendaz"] {
            assert!(one_edit("calendar", typo), "{typo}");
        }
        for far in ["xalendar", "caelndr", "calendarss", "cal"] {
            assert!(!one_edit("calendar", far), "{far}");
        }
        // Letters of two bytes count as one.
        assert!(one_edit(
            "\u{3BB}\u{3CC}\u{3B3}\u{3BF}\u{3C2}",
            "\u{3BB}\u{3CC}\u{3BF}\u{3B3}\u{3C2}"
        ));
        assert!(!one_edit("ab", "a\u{3B3}\u{3B3}"));
        assert_eq!(
            prefix_lengths("price", "prise-list").collect::<Vec<_>>(),
            [5]
        );
    }
}
