//! The classifier's features: character 3- to 5-grams of each word, its first five characters
//! and the whole word, and (when `router.embedded.word_pairs` asks) each pair of neighbouring
//! words cut to their first letters, hashed (FNV-1a, one step per character) and resolved to
//! dense ids through an open-addressing [`FeatureTable`]; a word the examples never had may be
//! read as the example word it is a slip for (a [`Reading`], which the spelling index gives).

use std::collections::HashMap;

use crate::text::is_alphanumeric;

/// Feature hashes to dense ids: open addressing with linear probing over a power-of-two table
/// at most half full. The keys are already hashes, so the slot is a multiply away.
#[derive(Debug, Clone)]
pub(super) struct FeatureTable {
    /// `(key, id)`; key 0 marks an empty slot (a real key of 0 is stored as 1).
    slots: Vec<(u64, u32)>,
    shift: u32,
}

impl FeatureTable {
    pub(super) fn new(ids: &HashMap<u64, u32>) -> Self {
        let size = (ids.len() * 2).max(16).next_power_of_two();
        let mut table = Self {
            slots: vec![(0, 0); size],
            shift: 64 - size.trailing_zeros(),
        };
        // In id order, so the table is the same on every run.
        let mut sorted: Vec<(u64, u32)> = ids.iter().map(|(&k, &v)| (k, v)).collect();
        sorted.sort_unstable_by_key(|&(_, id)| id);
        let mask = size - 1;
        for (key, id) in sorted {
            let key = key.max(1);
            let mut slot = table.slot(key);
            while table.slots[slot].0 != 0 {
                slot = (slot + 1) & mask;
            }
            table.slots[slot] = (key, id);
        }
        table
    }

    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    pub(super) fn get(&self, key: u64) -> Option<u32> {
        let key = key.max(1);
        let mask = self.slots.len() - 1;
        let mut slot = self.slot(key);
        loop {
            let (k, id) = self.slots[slot];
            if k == key {
                return Some(id);
            }
            if k == 0 {
                return None;
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// Sorted feature hashes with their counts.
pub(super) fn counted(mut hashes: Vec<u64>) -> Vec<(u64, f32)> {
    hashes.sort_unstable();
    let mut out: Vec<(u64, f32)> = Vec::with_capacity(hashes.len());
    for h in hashes {
        match out.last_mut() {
            Some((last, n)) if *last == h => *n += 1.0,
            _ => out.push((h, 1.0)),
        }
    }
    out
}

/// The feature hashes of normalised text, one per occurrence: character 3- to 5-grams of each
/// word padded with a boundary mark, each word's first five characters, and the whole word.
pub(super) fn features(text: &str, pairs: Option<usize>) -> Vec<u64> {
    let mut out = Vec::with_capacity(text.len() * 2);
    features_into(text, &mut out, &mut Vec::with_capacity(32), None, pairs);
    out
}

/// What a word the examples never had is read as (the spelling index's `meant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Meant<'s> {
    /// A slip of typing for this word of the examples.
    Slip(&'s str),
    /// Two words of the examples typed without the space: the byte offset of the cut.
    Glued(usize),
}

/// How a message's words are read: a word whose whole-word feature was never `seen` may be a
/// slip for a word of the examples, or two of them glued, which `read` says.
pub(super) struct Reading<'a> {
    pub seen: &'a FeatureTable,
    pub read: &'a dyn Fn(&str) -> Option<Meant<'a>>,
}

/// [`features`] into `out`, with `padded` as the word buffer, each word read with `reading`,
/// and each pair of neighbouring words (as read) cut to `pairs` letters; whether a word was
/// read as a slip.
pub(super) fn features_into(
    text: &str,
    out: &mut Vec<u64>,
    padded: &mut Vec<char>,
    reading: Option<&Reading<'_>>,
    pairs: Option<usize>,
) -> bool {
    let mut slipped = false;
    let mut pair = Pairs {
        letters: pairs.unwrap_or(0),
        last: None,
    };
    for word in words(text) {
        padded.clear();
        padded.push(' ');
        padded.extend(word.chars());
        padded.push(' ');
        let before = out.len();
        word_features(padded, out);
        // The whole word's feature, just pushed: a word the examples had is read as written.
        let whole = out.last().copied().unwrap_or_default();
        let Some(meant) = reading
            .filter(|r| r.seen.get(whole).is_none())
            .and_then(|r| (r.read)(word))
        else {
            pair.push(word, out);
            continue;
        };
        // A slip is read as the word it was meant as, its own features dropped: they are
        // the classifier's unseen ones, and each made the message longer without a vote, so a
        // message with a slip leaned to no tool (a search for one's misspelled essay; on the
        // eval sets +5 tools and skills, +3 left alone). A glued word
        // keeps its features and adds those of the two words, as if the space were there.
        let (first, second) = match meant {
            Meant::Slip(w) => {
                out.truncate(before);
                (w, "")
            }
            Meant::Glued(at) => (&word[..at], &word[at..]),
        };
        for meant in [first, second].into_iter().filter(|w| !w.is_empty()) {
            padded.truncate(1);
            padded.extend(meant.chars());
            padded.push(' ');
            word_features(padded, out);
            pair.push(meant, out);
        }
        slipped = true;
    }
    slipped
}

/// The word-pair features: each word's first `letters` characters hashed, and each hash mixed
/// with the word's before it, so "how much is it worth" and "is it worth a thought" differ in
/// their pairs though they share words, and a pair survives its words' endings. `letters` 0:
/// none.
struct Pairs {
    letters: usize,
    last: Option<u64>,
}

impl Pairs {
    fn push(&mut self, word: &str, out: &mut Vec<u64>) {
        if self.letters == 0 {
            return;
        }
        let this = (word.chars().take(self.letters))
            .fold(step(BASIS, u32::from(b'p')), |h, c| step(h, c as u32));
        if let Some(last) = self.last {
            // Order matters: the first word's hash is rotated before the second is mixed in.
            out.push(step(last.rotate_left(29) ^ this, u32::from(b'p')));
        }
        self.last = Some(this);
    }
}

/// The features of one word, `padded` with a space on each side; the whole word's last.
#[inline]
fn word_features(padded: &[char], out: &mut Vec<u64>) {
    // The 3-, 4- and 5-grams starting at each place share their first characters, and the
    // hash extends a prefix: three hashes for the price of five steps.
    let tag = step(BASIS, u32::from(b'c'));
    for start in 0..padded.len().saturating_sub(2) {
        let mut h = tag;
        for (k, &c) in padded[start..].iter().take(5).enumerate() {
            h = step(h, c as u32);
            if k >= 2 {
                out.push(h);
            }
        }
    }
    let stem = &padded[1..padded.len() - 1];
    let mut h = step(BASIS, u32::from(b'w'));
    for (k, &c) in stem.iter().enumerate() {
        h = step(h, c as u32);
        if k + 1 == 5 {
            out.push(h);
        }
    }
    if stem.len() < 5 {
        out.push(hash(b'w', stem));
    }
    out.push(hash(b'x', stem));
}

/// The words of normalised text, as features see them: runs of letters and digits.
pub(super) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_alphanumeric(c))
        .filter(|w| !w.is_empty())
}

/// The whole-word feature of `word` (what [`word_features`] pushes last).
pub(super) fn whole_word(word: &str) -> u64 {
    word.chars()
        .fold(step(BASIS, u32::from(b'x')), |h, c| step(h, c as u32))
}

/// FNV-1a's offset basis.
pub(super) const BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// One FNV-1a step over a whole character (not its bytes: a quarter of the multiplications;
/// the feature table's multiply-shift spreads the result).
pub(super) fn step(h: u64, c: u32) -> u64 {
    (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3)
}

/// FNV-1a over a tag and the characters, one step per character.
pub(super) fn hash(tag: u8, chars: &[char]) -> u64 {
    chars
        .iter()
        .fold(step(BASIS, u32::from(tag)), |h, &c| step(h, c as u32))
}
