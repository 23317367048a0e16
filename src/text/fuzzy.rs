//! Typo tolerance: a stem matches a word that differs from it by one letter (wrong, missing,
//! extra, or two neighbours swapped). The first letter too, for a stem long enough
//! (`first_letter`: shorter stems with their first letter changed are too often other words).
//!
//! For the first words of entries, every tolerant stem of every list is in one
//! [`FuzzyStems`] index, whose build and walk cost the same however many stems there are; later
//! words of a phrase are compared one to one, with [`prefix_lengths`].
//!
//! The index is a symmetric deletion neighbourhood of the stems' starts: for each stem, its
//! first `key` letters and those letters with each one left out, hashed. A word one edit away
//! from a stem has, among its own `2 key + 2` probes (its first `key` letters, `key - 1`
//! letters, and `key` or `key + 1` letters with one left out), one that equals one of the
//! stem's keys (an edit past the key leaves the first `key` letters alone). A hashed bit set
//! answers no for most probes in a few instructions; a probe that passes looks its stems up in
//! a bucketed table, and each stem found is compared with the word letter by letter. Building it
//! is a few hashes a stem and one counting sort, on any number of stems.
//!
//! A word that some list (or `matching.typos.known_words`) knows in its forms is a real word,
//! not a typo: once a probe has found stems, the word is looked up among the known words first.

use std::sync::Arc;

use super::Endings;

/// The byte lengths of the prefixes of `text` (within its first word) that are one edit away
/// from `stem`, longest first; an edit of the first letter counts only with `first_letter`.
/// Only prefixes of one letter fewer to one letter more than the stem can be, so there are at
/// most three.
pub(super) fn prefix_lengths(
    stem: &str,
    text: &str,
    first_letter: bool,
) -> impl Iterator<Item = usize> {
    let word = &text[..super::words::word_len(text)];
    let mut s = [' '; MAX_LETTERS];
    let mut ends = [0usize; 3];
    let mut found = 0;
    if let Some(n) = letters(stem, &mut s) {
        let mut w = [' '; MAX_LETTERS];
        let mut byte_end = [0usize; MAX_LETTERS + 1];
        let m = decode(word, &mut w, &mut byte_end);
        for k in n.saturating_sub(1).max(1)..=(n + 1).min(m) {
            if edit_at(&s[..n], &w[..k]).is_some_and(|at| first_letter || at > 0) {
                ends[found] = byte_end[k];
                found += 1;
            }
        }
    }
    ends.into_iter().take(found).rev()
}

/// Most letters of a stem the index holds, and of a word it reads (a longer word is read up to
/// there: no stem's prefix reaches further).
const MAX_LETTERS: usize = 48;

/// The letters of `s`, if it has at most [`MAX_LETTERS`].
fn letters(s: &str, out: &mut [char; MAX_LETTERS]) -> Option<usize> {
    let mut n = 0;
    for c in s.chars() {
        *out.get_mut(n)? = c;
        n += 1;
    }
    Some(n)
}

/// The first [`MAX_LETTERS`] letters of `word` into `out`, with the byte offset where each
/// ends (`ends[k]`: the end of the first `k`); returns how many.
#[inline]
fn decode(word: &str, out: &mut [char; MAX_LETTERS], ends: &mut [usize; MAX_LETTERS + 1]) -> usize {
    let mut n = 0;
    for (i, c) in word.char_indices() {
        if n == MAX_LETTERS {
            break;
        }
        out[n] = c;
        ends[n + 1] = i + c.len_utf8();
        n += 1;
    }
    n
}

/// Where `stem` and `word` differ when they differ by exactly one edit: the index of the first
/// letter that differs (so a letter missing from a run of equal letters is the last of the
/// run). A letter after the stem's last is no edit (it starts an ending). A wrong or extra
/// letter must be of the script of the letter it stands beside (the same 256 code points: a
/// Cyrillic stem is not matched through a Latin letter, look-alike folding handles those).
fn edit_at(stem: &[char], word: &[char]) -> Option<usize> {
    let at = stem.iter().zip(word).take_while(|(a, b)| a == b).count();
    if at == stem.len() {
        return None;
    }
    let (s, w) = (&stem[at..], &word[at..]);
    let script = |c: char, like: char| c as u32 >> 8 == like as u32 >> 8;
    let fits = match (s.len() as isize) - (w.len() as isize) {
        // Substitution, or two neighbours swapped.
        0 => {
            !s.is_empty()
                && ((s[1..] == w[1..] && script(w[0], s[0]))
                    || (s.len() >= 2 && s[0] == w[1] && s[1] == w[0] && s[2..] == w[2..]))
        }
        // A letter missing from the word.
        1 => s[1..] == *w,
        // A letter too many in the word.
        -1 => w[1..] == *s && script(w[0], s[0]),
        _ => false,
    };
    fits.then_some(at)
}

/// Where `word` differs from `stem` by exactly one edit ([`edit_at`]): `None` when they are
/// equal, differ by more, or either is longer than [`MAX_LETTERS`].
pub(crate) fn edit_between(stem: &str, word: &str) -> Option<usize> {
    let mut x = [' '; MAX_LETTERS];
    let mut y = [' '; MAX_LETTERS];
    let (nx, ny) = (letters(stem, &mut x)?, letters(word, &mut y)?);
    edit_at(&x[..nx], &y[..ny])
}

/// Most letters a key holds: longer keys spare more words the comparison, but a stem shorter
/// than the key sets it for every stem (each probe is then shorter).
const MAX_KEY: usize = 5;

/// A probe's hash: the polynomial hash of its letters (so that leaving one out is arithmetic
/// on the hashes of the word's starts), with its length mixed in and the bits spread.
const BASE: u64 = 0x0000_0100_0000_01B3;

#[inline]
fn finish(hash: u64, len: usize) -> u64 {
    (hash ^ (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

/// The hash of `letters`, unfinished.
fn poly(letters: &[char]) -> u64 {
    letters.iter().fold(0u64, |h, &c| {
        h.wrapping_mul(BASE).wrapping_add(u64::from(c))
    })
}

/// A stem of the index.
#[derive(Debug, Clone, Copy)]
struct Stem {
    /// Where its letters start in `FuzzyStems::letters`, and how many.
    at: u32,
    len: u8,
    /// Whether its first letter may be the edit.
    first_letter: bool,
    /// The index the caller gave it.
    index: u32,
}

/// A typo-tolerant stem for [`FuzzyStems::new`]: its text, the caller's index, and whether an
/// edit of its first letter counts.
#[derive(Debug, Clone)]
pub(super) struct TolerantStem {
    pub stem: String,
    pub index: usize,
    pub first_letter: bool,
}

/// The tolerant first stems of all lists, and the words that are never typos.
#[derive(Clone)]
pub(super) struct FuzzyStems {
    letters: Vec<char>,
    stems: Vec<Stem>,
    /// How many letters of a stem's start make its keys.
    key: usize,
    /// The fewest letters of a stem: a shorter word, even with one letter missing, matches none.
    min_letters: usize,
    /// The keys as bits of a hashed set: the top `bit_bits` bits of a finished hash.
    bits: Vec<u64>,
    bit_bits: u32,
    /// The keys' stems by bucket (the next `bucket_bits` bits): bucket `b` holds
    /// `entries[starts[b]..starts[b + 1]]`, each a key's fingerprint and its stem.
    starts: Vec<u32>,
    entries: Vec<(u32, u32)>,
    bucket_bits: u32,
    /// The powers of the hash's base.
    pow: [u64; MAX_KEY + 1],
    known: Arc<KnownWords>,
}

impl std::fmt::Debug for FuzzyStems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FuzzyStems")
            .field("stems", &self.stems.len())
            .field("keys", &self.entries.len())
            .finish()
    }
}

/// A stem found with one edit: its index in the map, and the byte length of text it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FuzzyHit {
    pub stem: usize,
    pub len: usize,
}

/// Why the typo index could not be built.
#[derive(Debug, thiserror::Error)]
#[error("the typo-tolerant stems could not be compiled: {0}")]
pub(super) struct FuzzyError(String);

/// The bit of a finished hash in a set of `1 << bits` bits.
#[inline]
fn bit_of(h: u64, bits: u32) -> (usize, u64) {
    let at = (h >> (64 - bits)) as usize;
    (at / 64, 1 << (at % 64))
}

#[inline]
fn bucket_of(h: u64, bits: u32) -> usize {
    (h.rotate_left(24) >> (64 - bits)) as usize
}

#[inline]
fn fingerprint(h: u64) -> u32 {
    h as u32
}

impl FuzzyStems {
    /// Builds the index of `stems` (distinct; a stem of more than [`MAX_LETTERS`] letters or
    /// none is left out). `known` are the words never read as a typo.
    pub fn new(stems: Vec<TolerantStem>, known: Arc<KnownWords>) -> Result<Self, FuzzyError> {
        let mut letters = Vec::new();
        let mut kept = Vec::with_capacity(stems.len());
        for s in &stems {
            let at = letters.len();
            letters.extend(s.stem.chars());
            let len = letters.len() - at;
            if len == 0 || len >= MAX_LETTERS {
                letters.truncate(at);
                continue;
            }
            let too_many = || FuzzyError(format!("{} tolerant stems", stems.len()));
            kept.push(Stem {
                at: u32::try_from(at).map_err(|_| too_many())?,
                len: u8::try_from(len).map_err(|_| too_many())?,
                first_letter: s.first_letter,
                index: u32::try_from(s.index).map_err(|_| too_many())?,
            });
        }
        let min_letters = kept.iter().map(|s| usize::from(s.len)).min().unwrap_or(0);
        let key = min_letters.clamp(1, MAX_KEY);
        // Each stem's keys: its first `key` letters with one left out.
        let mut hashes: Vec<(u64, u32)> = Vec::with_capacity(kept.len() * key);
        let mut buf = [' '; MAX_KEY];
        for (i, s) in (0u32..).zip(&kept) {
            let start = &letters[s.at as usize..s.at as usize + key];
            // Leaving out the first letter stands for a wrong or missing one there: only for
            // stems that allow it (a first letter swapped or put before is found through the
            // others, and refused by the comparison).
            let from = usize::from(!s.first_letter);
            for left_out in from..key {
                let mut n = 0;
                for (k, &c) in start.iter().enumerate() {
                    if k != left_out {
                        buf[n] = c;
                        n += 1;
                    }
                }
                hashes.push((finish(poly(&buf[..n]), key - 1), i));
            }
        }
        // Bucketed by one counting pass, not sorted: a key a stem has twice (a letter left out
        // of a run of equal ones) only finds it twice, and the comparison sees it once.
        let keys = hashes.len().max(1);
        // About sixteen bits a key: one probe in sixteen that no stem has gets past the set.
        let bit_bits = (keys * 16)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(6, 30);
        let bucket_bits = keys.next_power_of_two().trailing_zeros().clamp(1, 28);
        let mut bits = vec![0u64; (1usize << bit_bits) / 64];
        let mut starts = vec![0u32; (1usize << bucket_bits) + 1];
        for &(h, _) in &hashes {
            let (w, b) = bit_of(h, bit_bits);
            bits[w] |= b;
            starts[bucket_of(h, bucket_bits) + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        let mut fill = starts.clone();
        let mut entries = vec![(0u32, 0u32); hashes.len()];
        for &(h, stem) in &hashes {
            let b = bucket_of(h, bucket_bits);
            entries[fill[b] as usize] = (fingerprint(h), stem);
            fill[b] += 1;
        }
        Ok(Self {
            letters,
            stems: kept,
            key,
            min_letters,
            bits,
            bit_bits,
            starts,
            entries,
            bucket_bits,
            pow: std::array::from_fn(|k| (0..k).fold(1u64, |p, _| p.wrapping_mul(BASE))),
            known,
        })
    }

    /// Adds `words` (normalised) to the known words, each matched as written.
    pub fn know<'a>(&mut self, words: impl IntoIterator<Item = &'a str>) {
        Arc::make_mut(&mut self.known).extend(words);
    }

    /// Every word `other` knows is never read as a typo either (`other` is shared, not
    /// copied: the rule set's known words, for a list compiled on its own).
    pub fn share_known(&mut self, other: Arc<KnownWords>) {
        Arc::make_mut(&mut self.known).also = Some(other);
    }

    /// The words never read as a typo.
    pub fn known(&self) -> &Arc<KnownWords> {
        &self.known
    }

    /// The fewest letters a tolerant stem has.
    pub fn min_letters(&self) -> usize {
        self.min_letters
    }

    /// The stems whose key is `h` (finished), added to `found` (at most its capacity; a key of
    /// more stems than that is a pack of thousands of near-identical stems).
    #[inline(always)]
    fn probe(&self, h: u64, found: &mut Found) {
        let (w, b) = bit_of(h, self.bit_bits);
        if self.bits[w] & b == 0 {
            return;
        }
        let bucket = bucket_of(h, self.bucket_bits);
        let (from, to) = (self.starts[bucket], self.starts[bucket + 1]);
        for &(fp, stem) in &self.entries[from as usize..to as usize] {
            if fp == fingerprint(h) {
                found.push(stem);
            }
        }
    }

    /// Calls `f` for each tolerant stem one edit away from a prefix of `word` (one word, from
    /// its start to its end), unless the word is a known one.
    #[inline(never)]
    pub fn walk(&self, word: &str, mut f: impl FnMut(FuzzyHit)) {
        let key = self.key;
        // One letter may be missing from the word, no more (a letter has at least one byte).
        if word.len() + 1 < self.min_letters || self.stems.is_empty() {
            return;
        }
        // The hashes of the word's first `key + 1` letters: all the probes need.
        let mut h = [0u64; MAX_KEY + 1];
        let mut n = 0;
        for c in word.chars().take(key) {
            h[n + 1] = h[n].wrapping_mul(BASE).wrapping_add(u64::from(c));
            n += 1;
        }
        if n + 1 < self.min_letters
            || (n == key
                && key + 1 < self.min_letters
                && super::words::char_len(word) + 1 < self.min_letters)
        {
            return;
        }
        let pow = &self.pow;
        // The hash of the first `m` letters with letter `i` left out.
        let without = |m: usize, i: usize| {
            let tail = h[m].wrapping_sub(h[i + 1].wrapping_mul(pow[m - 1 - i]));
            h[i].wrapping_mul(pow[m - 1 - i]).wrapping_add(tail)
        };
        // Each probe is the word's first `key` letters with one left out; it equals a key of
        // every stem one edit away: with letter `i` wrong, key `i`; with `i` and the next
        // swapped, key `i + 1`; with a letter put in before `i`, or any edit past the key,
        // the last key (the stem's first `key - 1` letters). A word of `key - 1` letters is
        // its own probe (a letter missing from it).
        let mut found = Found::default();
        if n >= key {
            for i in 0..key {
                self.probe(finish(without(key, i), key - 1), &mut found);
            }
        } else if n + 1 == key {
            self.probe(finish(h[n], n), &mut found);
        }
        if found.len == 0 {
            return;
        }
        self.compare(word, found, &mut f);
    }

    /// The stems `found` by the probes of `word`, each compared with it letter by letter,
    /// unless `word` is a known word.
    #[inline(never)]
    fn compare(&self, word: &str, found: Found, f: &mut impl FnMut(FuzzyHit)) {
        let mut w = [' '; MAX_LETTERS];
        let mut ends = [0usize; MAX_LETTERS + 1];
        let n = decode(word, &mut w, &mut ends);
        // A known word is never a typo: asked first, since most words of a message are real
        // words, and one hashed lookup costs less than comparing every stem found.
        if self.known.knows(word, &w[..n], &ends) {
            return;
        }
        let mut hits = [(0usize, 0usize); 16];
        let mut count = 0;
        let mut seen = Found::default();
        for &i in found.as_slice() {
            if seen.as_slice().contains(&i) {
                continue;
            }
            seen.push(i);
            let s = self.stems[i as usize];
            let stem = &self.letters[s.at as usize..s.at as usize + usize::from(s.len)];
            let len = usize::from(s.len);
            for m in (len.saturating_sub(1).max(1)..=(len + 1).min(n)).rev() {
                if count < hits.len()
                    && edit_at(stem, &w[..m]).is_some_and(|at| s.first_letter || at > 0)
                {
                    hits[count] = (s.index as usize, ends[m]);
                    count += 1;
                }
            }
        }
        if count == 0 {
            return;
        }
        for &(stem, len) in &hits[..count] {
            f(FuzzyHit { stem, len });
        }
    }
}

/// The stems a word's probes found (a few; more are dropped).
#[derive(Default, Clone, Copy)]
struct Found {
    items: [u32; 16],
    len: usize,
}

impl Found {
    #[inline]
    fn push(&mut self, stem: u32) {
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = stem;
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[u32] {
        &self.items[..self.len]
    }
}

/// Words that are never read as a typo of a stem: every word of every entry, in its forms (the
/// word and one of the language's endings), and the words of `matching.typos.known_words`, as
/// written (a list of forms: matched in their forms, a short word would cover typos of long ones).
#[derive(Debug, Clone, Default)]
pub(crate) struct KnownWords {
    /// The hash of each word matched in its forms, and of each matched as written, sorted.
    forms: Vec<u64>,
    exact: Vec<u64>,
    /// Both as bits of a hashed set (the top `bit_bits` bits), looked at first.
    bits: Vec<u64>,
    bit_bits: u32,
    endings: Option<Arc<Endings>>,
    /// Another set whose words are known too (the rule set's, for a list compiled alone).
    also: Option<Arc<KnownWords>>,
}

impl KnownWords {
    /// The words (normalised), matched in their forms with `endings`.
    pub fn new<'a>(
        words: impl IntoIterator<Item = &'a str>,
        endings: Option<Arc<Endings>>,
    ) -> Self {
        let mut known = Self {
            endings,
            ..Self::default()
        };
        let hashes = Self::hashes(words);
        known.forms = hashes;
        known.index();
        known
    }

    /// The hashes of `words`, sorted.
    fn hashes<'a>(words: impl IntoIterator<Item = &'a str>) -> Vec<u64> {
        let mut buf = [' '; MAX_LETTERS];
        let mut hashes: Vec<u64> = words
            .into_iter()
            .filter_map(|w| {
                let n = letters(w, &mut buf)?;
                (n > 0).then(|| finish(poly(&buf[..n]), n))
            })
            .collect();
        hashes.sort_unstable();
        hashes.dedup();
        hashes
    }

    /// Adds `words` (normalised), matched as written.
    fn extend<'a>(&mut self, words: impl IntoIterator<Item = &'a str>) {
        self.exact.extend(Self::hashes(words));
        self.exact.sort_unstable();
        self.exact.dedup();
        self.index();
    }

    fn index(&mut self) {
        let all = self.forms.len() + self.exact.len();
        self.bit_bits = (all.max(1) * 16)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(6, 30);
        self.bits = vec![0u64; (1usize << self.bit_bits) / 64];
        for &h in self.forms.iter().chain(&self.exact) {
            let (w, b) = bit_of(h, self.bit_bits);
            self.bits[w] |= b;
        }
    }

    /// Whether `word` (normalised) is a known word, in one of its forms (a word of more than
    /// [`MAX_LETTERS`] letters is not).
    pub(crate) fn contains(&self, word: &str) -> bool {
        let mut w = [' '; MAX_LETTERS];
        let mut ends = [0usize; MAX_LETTERS + 1];
        let n = decode(word, &mut w, &mut ends);
        n < MAX_LETTERS && self.knows(word, &w[..n], &ends)
    }

    /// Whether `word` (its letters `w`, `ends[k]` the byte end of the first `k`) is a known
    /// word (in one of its forms).
    #[inline(never)]
    fn knows(&self, word: &str, w: &[char], ends: &[usize; MAX_LETTERS + 1]) -> bool {
        if self.bits.is_empty() && self.also.is_none() {
            return false;
        }
        // The hash of each prefix of the word, once for this set and the shared one.
        let mut h = 0u64;
        let mut prefixes = [0u64; MAX_LETTERS + 1];
        for (k, &c) in w.iter().enumerate() {
            h = h.wrapping_mul(BASE).wrapping_add(u64::from(c));
            prefixes[k + 1] = h;
        }
        let n = w.len();
        self.knows_hashed(word, &prefixes, n, ends)
            || (self.also.as_ref()).is_some_and(|a| a.knows_hashed(word, &prefixes, n, ends))
    }

    /// [`Self::knows`] in this set alone (not [`Self::also`]'s), given the prefix hashes.
    #[inline]
    fn knows_hashed(
        &self,
        word: &str,
        prefixes: &[u64; MAX_LETTERS + 1],
        n: usize,
        ends: &[usize; MAX_LETTERS + 1],
    ) -> bool {
        if self.bits.is_empty() {
            return false;
        }
        let whole = finish(prefixes[n], n);
        let (i, b) = bit_of(whole, self.bit_bits);
        if self.bits[i] & b != 0 && self.exact.binary_search(&whole).is_ok() {
            return true;
        }
        // The word itself, or a word of an entry and an ending (no longer than the longest).
        let longest = self.endings.as_ref().map_or(0, |e| e.longest());
        (1..=n)
            .rev()
            .take_while(|&m| word.len() - ends[m] <= longest)
            .any(|m| {
                let rest = &word[ends[m]..];
                let h = finish(prefixes[m], m);
                let (i, b) = bit_of(h, self.bit_bits);
                self.bits[i] & b != 0
                    && self.forms.binary_search(&h).is_ok()
                    && (rest.is_empty() || self.endings.as_ref().is_some_and(|e| e.allows(rest)))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `a` and `b` differ by exactly one edit (a letter wrong, missing, extra, or two
    /// neighbours swapped); an edit of the first letter counts only with `first_letter`.
    fn one_edit(a: &str, b: &str, first_letter: bool) -> bool {
        edit_between(a, b).is_some_and(|at| first_letter || at > 0)
    }

    fn tolerant(stems: &[(&str, usize)], first_letter: bool) -> FuzzyStems {
        tolerant_knowing(stems, first_letter, &[])
    }

    fn tolerant_knowing(stems: &[(&str, usize)], first_letter: bool, known: &[&str]) -> FuzzyStems {
        let stems = stems
            .iter()
            .map(|&(stem, index)| TolerantStem {
                stem: stem.to_owned(),
                index,
                first_letter,
            })
            .collect();
        let known = KnownWords::new(known.iter().copied(), None);
        FuzzyStems::new(stems, Arc::new(known)).expect("builds")
    }

    fn found(stems: &FuzzyStems, word: &str) -> Vec<(usize, usize)> {
        let mut hits = Vec::new();
        stems.walk(word, |h| hits.push((h.stem, h.len)));
        hits
    }

    #[test]
    fn one_edit_matches_and_the_stem_itself_does_not() {
        let stems = tolerant(&[("calendar", 7), ("price", 9)], false);
        assert_eq!(found(&stems, "calender"), [(7, 8)]);
        assert_eq!(found(&stems, "calndars"), [(7, 7)]);
        assert_eq!(found(&stems, "caelndar"), [(7, 8)]);
        assert_eq!(found(&stems, "callendar"), [(7, 9)]);
        assert_eq!(found(&stems, "prise"), [(9, 5)]);
        // Without `first_letter`, the first letter is not forgiven; two edits are too many.
        assert!(found(&stems, "kalendar").is_empty());
        assert!(found(&stems, "calnder").is_empty());
        // The stem itself is not a typo; its prefix one letter short is (the scanner reads a
        // word a list knows exactly before it looks for typos).
        assert_eq!(found(&stems, "calendars"), [(7, 7)]);
    }

    #[test]
    fn with_first_letter_an_edit_there_counts_too() {
        let stems = tolerant(&[("calendar", 7), ("price", 9)], true);
        for (typo, len) in [
            ("kalendar", 8),
            ("alendar", 7),
            ("aclendar", 8),
            ("xcalendar", 9),
            ("rpice", 5),
        ] {
            let hits = found(&stems, typo);
            assert!(hits.iter().any(|h| h.1 == len), "{typo}: {hits:?}");
        }
        assert!(found(&stems, "kalendr").is_empty(), "two edits");
    }

    /// Every one-edit variant, whatever letter and wherever, is found: the probes only spare
    /// words that cannot match.
    #[test]
    fn every_variant_is_found_and_unrelated_words_probe_nothing() {
        let list = [("calendar", 0), ("price", 1), ("dollar", 2)];
        let stems = tolerant(&list, true);
        for (stem, index) in list {
            let c: Vec<char> = stem.chars().collect();
            let mut variants = Vec::new();
            for e in 0..c.len() {
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
        for unrelated in [
            "cold", "carpet", "prawn", "cube", "crown", "pluto", "cherry",
        ] {
            assert!(found(&stems, unrelated).is_empty(), "{unrelated}");
        }
    }

    #[test]
    fn a_known_word_is_never_a_typo() {
        let stems = tolerant_knowing(&[("stop", 0)], true, &["stoat"]);
        assert!(found(&stems, "stpo").contains(&(0, 4)));
        assert!(found(&stems, "stoat").is_empty());
        assert!(
            found(&stems, "stoap").contains(&(0, 5)),
            "one letter off is still a typo"
        );
    }

    #[test]
    fn a_wrong_letter_must_be_of_the_stems_script() {
        let stems = tolerant(&[("\u{3BB}\u{3CC}\u{3B3}\u{3BF}\u{3C2}", 0)], false);
        assert_eq!(
            found(&stems, "\u{3BB}\u{3CC}\u{3B3}\u{3B1}\u{3C2}").len(),
            1
        );
        assert!(found(&stems, "\u{3BB}\u{3CC}\u{3B3}o\u{3C2}").is_empty());
    }

    #[test]
    fn the_prefix_before_the_walk_agrees_with_one_edit() {
        assert!(one_edit("price", "prise", false));
        assert!(!one_edit("price", "price", true));
        for typo in ["caelndar", "calendr", "calenndar", "clendar", "calendaz"] {
            assert!(one_edit("calendar", typo, false), "{typo}");
        }
        for far in ["xalendar", "caelndr", "calendarss", "cal"] {
            assert!(!one_edit("calendar", far, false), "{far}");
        }
        assert!(one_edit("calendar", "xalendar", true));
        assert!(one_edit("calendar", "alendar", true));
        // Letters of two bytes count as one.
        assert!(one_edit(
            "\u{3BB}\u{3CC}\u{3B3}\u{3BF}\u{3C2}",
            "\u{3BB}\u{3CC}\u{3BF}\u{3B3}\u{3C2}",
            false
        ));
        assert!(!one_edit("ab", "a\u{3B3}\u{3B3}", true));
        assert_eq!(
            prefix_lengths("price", "prise-list", false).collect::<Vec<_>>(),
            [5]
        );
        assert_eq!(
            prefix_lengths("price", "rpice list", true).collect::<Vec<_>>(),
            [5]
        );
        assert!(
            prefix_lengths("price", "rpice list", false)
                .next()
                .is_none()
        );
    }
}
