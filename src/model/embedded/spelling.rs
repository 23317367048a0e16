//! Reading a slip of typing as the word it was meant to be (`router.embedded.typos_from`): a
//! word of a message that no example has and no word list knows, one edit (a letter wrong,
//! missing, extra, or two neighbours swapped) from a word of the examples, is read as that
//! word, so its character n-grams are the ones the classifier learnt. Whether the examples had
//! a word is the classifier's to say (its vocabulary holds every word's whole-word feature).
//!
//! The examples' words are indexed by their symmetric deletion neighbourhood: each word and
//! the word with each one letter left out, hashed. A word one edit from an example's word shares
//! one of those keys with it (among its own: itself and itself with each letter left out), and
//! each word found under a shared key is then compared letter by letter. Building it is a few
//! hashes a word and one sort; a message pays only for the words the classifier has never seen.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::features::{BASIS, Meant, step, words};
use crate::text::fuzzy::{KnownWords, edit_between};
use crate::text::{Endings, Slips, is_word};

/// The examples' words, indexed for one-edit lookups.
#[derive(Debug, Clone)]
pub(super) struct Spelling {
    /// The fewest letters a word read as another has.
    from: usize,
    /// The examples' words of at least `from - 1` letters, and how many times each occurs.
    words: Vec<(Box<str>, u32)>,
    /// `(key, word)` sorted: each word's hash and its hashes with one letter left out.
    keys: Vec<(u64, u32)>,
    /// Where each key's run starts in `keys`: one probe a lookup, where a binary search over
    /// tens of thousands of keys missed the cache at most steps.
    starts: FxHashMap<u64, u32>,
    /// Each two words side by side in an example, hashed ([`pair`]).
    pairs: FxHashSet<u64>,
    /// Real words no example has, never read as another.
    known: Option<Arc<KnownWords>>,
    /// The language's endings: a word that differs from an example's word only in its ending
    /// is another form of it, not a slip.
    endings: Option<Arc<Endings>>,
    /// The letters a slip puts for one another (`matching.typos.slips`): a word one letter put
    /// for another from an example's word is its slip only when those two are a pair.
    slips: Option<Arc<Slips>>,
}

/// The longest word read as a slip, in letters.
const MAX_LETTERS: usize = 32;

/// A hash of `letters`, with the one at `skip` left out.
fn key(letters: &[char], skip: Option<usize>) -> u64 {
    letters
        .iter()
        .enumerate()
        .filter(|&(k, _)| Some(k) != skip)
        .fold(BASIS, |h, (_, &c)| step(h, c as u32))
}

/// A hash of two words side by side.
fn pair(first: &str, second: &str) -> u64 {
    let h = first.chars().fold(BASIS, |h, c| step(h, c as u32));
    second
        .chars()
        .fold(step(h, u32::from(b' ')), |h, c| step(h, c as u32))
}

/// A letter (a word character that is no digit), by the engine's table of word characters.
fn is_letter(c: char) -> bool {
    is_word(c) && !c.is_ascii_digit()
}

impl Spelling {
    /// The index of the words of `examples` (normalised); `known`: real words never read as
    /// another.
    pub fn new<'a>(
        examples: impl IntoIterator<Item = &'a str>,
        from: usize,
        known: Option<Arc<KnownWords>>,
        endings: Option<Arc<Endings>>,
        slips: Option<Arc<Slips>>,
    ) -> Self {
        let mut counts: FxHashMap<&str, u32> = FxHashMap::default();
        let mut pairs = FxHashSet::default();
        for text in examples {
            let mut before: Option<&str> = None;
            for w in words(text) {
                *counts.entry(w).or_default() += 1;
                if let Some(b) = before {
                    pairs.insert(pair(b, w));
                }
                before = Some(w);
            }
        }
        let mut words: Vec<(Box<str>, u32)> = counts
            .into_iter()
            .filter(|(w, _)| w.chars().count() + 1 >= from && w.chars().all(is_letter))
            .map(|(w, n)| (Box::from(w), n))
            .collect();
        // The same index on every run, whatever the map's order.
        words.sort_unstable();
        let mut keys = Vec::new();
        let mut letters = Vec::new();
        for (i, (w, _)) in words.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            letters.clear();
            letters.extend(w.chars());
            keys.push((key(&letters, None), i));
            keys.extend((0..letters.len()).map(|k| (key(&letters, Some(k)), i)));
        }
        keys.sort_unstable();
        keys.dedup();
        let mut starts = FxHashMap::default();
        for (at, &(k, _)) in keys.iter().enumerate().rev() {
            starts.insert(k, u32::try_from(at).unwrap_or(u32::MAX));
        }
        Self {
            from,
            words,
            keys,
            starts,
            pairs,
            known,
            endings,
            slips,
        }
    }

    /// The word of the examples `word` — one the examples never had — is read as, when it is a
    /// slip: `None` for a word the lists know, a word too short, or one no example's word is
    /// one edit from (or two of them, equally frequent, are).
    pub fn read(&self, word: &str) -> Option<&str> {
        // Too short to be read as a slip.
        word.chars().nth(self.from.max(1) - 1)?;
        // On the stack: this runs for every word the examples never had.
        let mut buf = [' '; MAX_LETTERS];
        let mut n = 0;
        for c in word.chars() {
            if n == MAX_LETTERS || !is_letter(c) {
                return None;
            }
            buf[n] = c;
            n += 1;
        }
        let letters = &buf[..n];
        let mut found: Vec<(u32, &str)> = Vec::new();
        let probes = std::iter::once(None).chain((0..letters.len()).map(Some));
        for probe in probes {
            let h = key(letters, probe);
            let Some(&start) = self.starts.get(&h) else {
                continue;
            };
            let run = self.keys.get(start as usize..).unwrap_or_default();
            for &(_, i) in run.iter().take_while(|&&(k, _)| k == h) {
                let (candidate, n) = &self.words[i as usize];
                // A first letter wrong only in a longer word: short words with another first
                // letter are too often other words.
                match edit_between(candidate, word) {
                    Some(0) if letters.len() <= self.from => {}
                    Some(_) if self.another_form(candidate, word) => return None,
                    // A letter put for one no slip puts for it: another word, not a slip.
                    Some(_)
                        if !self
                            .slips
                            .as_ref()
                            .is_none_or(|s| s.may_be_slip(candidate, word)) => {}
                    Some(_) => found.push((*n, candidate)),
                    None => {}
                }
            }
        }
        // A real word no example has is no slip (looked up only now: most words have no
        // candidate at all).
        if found.is_empty() || self.known.as_ref().is_some_and(|k| k.contains(word)) {
            return None;
        }
        found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        found.dedup_by(|a, b| a.1 == b.1);
        match found.as_slice() {
            [] => None,
            [(_, w)] => Some(w),
            [(n, w), (m, _), ..] => (n > m).then_some(*w),
        }
    }

    /// What `word` — one the examples never had — is read as: a slip of an example's word
    /// ([`Self::read`]), else two words of the examples glued ([`Self::glued`]). The one place
    /// that says which reading comes first, for the features and for the trace alike.
    pub fn meant(&self, word: &str) -> Option<Meant<'_>> {
        (self.read(word).map(Meant::Slip)).or_else(|| self.glued(word).map(Meant::Glued))
    }

    /// Where `word` — one the examples never had and no slip of theirs — is two words that
    /// stand side by side in an example, typed without the space between them («howmuch» for
    /// «how much»): the byte offset of the cut. Only pairs the examples have, so a
    /// compound of two common words («videocard») is not cut. `None` for a real word
    /// (`known`), one shorter than seven letters, or one that cuts into two such pairs.
    pub fn glued(&self, word: &str) -> Option<usize> {
        const SIDE: usize = 3;
        let letters = word.chars().count();
        if !(7..=MAX_LETTERS).contains(&letters) || !word.chars().all(is_letter) {
            return None;
        }
        let mut cut = None;
        for (k, (at, _)) in word.char_indices().enumerate() {
            if k < SIDE || letters - k < SIDE {
                continue;
            }
            if self.pairs.contains(&pair(&word[..at], &word[at..])) {
                if cut.is_some() {
                    return None;
                }
                cut = Some(at);
            }
        }
        // Looked up only now, as in `read`: most words cut into nothing.
        cut.filter(|_| !self.known.as_ref().is_some_and(|k| k.contains(word)))
    }

    /// Whether `a` and `b` are one stem with two of the language's endings.
    fn another_form(&self, a: &str, b: &str) -> bool {
        let Some(endings) = &self.endings else {
            return false;
        };
        let common: usize = (a.chars().zip(b.chars()))
            .take_while(|(x, y)| x == y)
            .map(|(x, _)| x.len_utf8())
            .sum();
        common > 0 && endings.allows(&a[common..]) && endings.allows(&b[common..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spelling(examples: &[&str]) -> Spelling {
        Spelling::new(examples.iter().copied(), 5, None, None, None)
    }

    #[test]
    fn a_word_one_slip_from_an_examples_word_is_read_as_it() {
        let s = spelling(&["remind me tomorrow", "draw a picture"]);
        assert_eq!(s.read("remnid"), Some("remind"), "two letters swapped");
        assert_eq!(s.read("remiind"), Some("remind"), "a letter extra");
        assert_eq!(s.read("picure"), Some("picture"), "a letter missing");
        assert_eq!(s.read("pocture"), Some("picture"), "a letter wrong");
    }

    #[test]
    fn with_slip_letters_a_letter_far_from_the_meant_one_is_another_word() {
        let rows = ["qwertyuiop", "asdfghjkl", "zxcvbnm"].map(String::from);
        let slips = Slips::new(&[rows.to_vec()], &["sz".to_owned()]);
        let s = Spelling::new(
            ["call the drivers", "a useful picture"],
            5,
            None,
            None,
            Some(Arc::new(slips)),
        );
        assert_eq!(s.read("divers"), Some("drivers"), "a letter missing");
        assert_eq!(s.read("drivere"), Some("drivers"), "s and e are neighbours");
        assert_eq!(s.read("drivelr"), None, "a swap of two letters wrong");
        assert_eq!(s.read("uzeful"), Some("useful"), "s and z sound alike");
        assert_eq!(s.read("pictune"), None, "r and n are far apart");
        assert_eq!(s.read("mixture"), None);
    }

    #[test]
    fn short_words_known_words_and_ties_are_read_as_written() {
        let s = spelling(&["draw a picture", "post a photo", "boost a photo"]);
        assert_eq!(s.read("drow"), None, "shorter than typos_from");
        assert_eq!(s.read("ghost"), None, "two letters from every word");
        assert_eq!(
            s.read("xhoto"),
            None,
            "a first letter wrong needs a longer word"
        );
        assert_eq!(s.read("xicture"), Some("picture"));
        let known = KnownWords::new(["pictures"], None);
        let s = Spelling::new(["draw a picture"], 5, Some(Arc::new(known)), None, None);
        assert_eq!(s.read("pictures"), None, "a real word is no slip");
        let s = spelling(&["a hoist", "a heist"]);
        assert_eq!(
            s.read("hbist"),
            None,
            "two words one slip away, equally frequent"
        );
        let s = spelling(&["a hoist", "a hoist again", "a heist"]);
        assert_eq!(s.read("hbist"), Some("hoist"), "the more frequent one");
    }

    #[test]
    fn two_words_side_by_side_in_an_example_typed_without_a_space_are_cut() {
        let s = spelling(&[
            "how much does it cost",
            "a google doc please",
            "a video of the card",
        ]);
        assert_eq!(s.glued("howmuch"), Some(3));
        assert_eq!(s.glued("googledoc"), Some(6));
        assert_eq!(
            s.glued("videocard"),
            None,
            "never side by side in an example"
        );
        assert_eq!(s.glued("muchdoes"), Some(4));
        assert_eq!(s.glued("itcost"), None, "shorter than seven letters");
        let known = KnownWords::new(["googledoc"], None);
        let s = Spelling::new(["a google doc"], 5, Some(Arc::new(known)), None, None);
        assert_eq!(s.glued("googledoc"), None, "a real word is not cut");
    }
}
