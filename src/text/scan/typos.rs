//! Typo-tolerant first stems: for each word no list knows exactly, the stems one edit away.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{Entries, Found, Strategy, Target, Text};
use crate::text::Endings;
use crate::text::fuzzy::{FuzzyStems, KnownWords, TolerantStem};
use crate::text::phrase::{self, Phrase};

/// The typo-tolerant first stems of all lists, and the phrases each starts.
#[derive(Debug, Clone)]
pub(super) struct Typos {
    stems: FuzzyStems,
    heads: Vec<Vec<u32>>,
}

/// The stems of [`Typos`] as they are added: each one's index, and whether its first letter
/// may be the typo.
#[derive(Debug, Default)]
pub(super) struct Builder {
    index: FxHashMap<String, (usize, bool)>,
    heads: Vec<Vec<u32>>,
}

impl Builder {
    /// Phrase `pid` starts with the tolerant stem `stem` (`first_letter`: its first letter may
    /// be the typo).
    pub(super) fn add(&mut self, stem: &str, first_letter: bool, pid: u32) {
        let k = match self.index.get_mut(stem) {
            Some(k) => {
                k.1 |= first_letter;
                k.0
            }
            None => {
                self.index
                    .insert(stem.to_owned(), (self.heads.len(), first_letter));
                self.heads.push(Vec::new());
                self.heads.len() - 1
            }
        };
        self.heads[k].push(pid);
    }

    /// The index; every word of every entry of `phrases` is a known word, never a typo.
    pub(super) fn build(
        self,
        phrases: &[Phrase],
        endings: Option<Arc<Endings>>,
    ) -> Result<Option<Typos>, String> {
        if self.heads.is_empty() {
            return Ok(None);
        }
        let known = KnownWords::new(
            phrases
                .iter()
                .filter(|p| !p.slip)
                .flat_map(|p| &p.words)
                .map(|w| w.stem.as_str()),
            endings,
        );
        let stems = self
            .index
            .into_iter()
            .map(|(stem, (index, first_letter))| TolerantStem {
                stem,
                index,
                first_letter,
            })
            .collect();
        let stems = FuzzyStems::new(stems, Arc::new(known)).map_err(|e| e.to_string())?;
        Ok(Some(Typos {
            stems,
            heads: self.heads,
        }))
    }
}

impl Typos {
    /// The words never read as a typo: every word of every entry, and the known words.
    pub(super) fn known(&self) -> &Arc<KnownWords> {
        self.stems.known()
    }

    /// Adds `words` (normalised) to the words never read as a typo.
    pub(super) fn know<'a>(&mut self, words: impl IntoIterator<Item = &'a str>) {
        self.stems.know(words);
    }

    /// Every word `other` knows is never read as a typo either.
    pub(super) fn share_known(&mut self, other: Arc<KnownWords>) {
        self.stems.share_known(other);
    }
}

impl Strategy for Typos {
    fn find(&self, entries: &Entries, text: &Text<'_>, found: &mut Found) {
        let t = text.text;
        for (w, &(i, word_end)) in text.words.iter().enumerate() {
            let (i, word_end) = (i as usize, word_end as usize);
            let known = found.known.get(w).map_or(0, |&k| k as usize);
            // Known: an exact stem of typo length covers all but an ending of two letters.
            if i + known <= word_end
                && crate::text::char_len(&t[i..i + known]) >= self.stems.min_letters()
                && crate::text::char_len(&t[i + known..word_end]) <= 2
            {
                continue;
            }
            self.stems.walk(&t[i..word_end], |h| {
                for &pid in self.heads.get(h.stem).into_iter().flatten() {
                    let p = &entries.phrases[pid as usize];
                    if !text
                        .spans
                        .typo_ending_fits(&p.words[0], &t[i + h.len..word_end])
                    {
                        continue;
                    }
                    if let Some(e) = phrase::match_rest(&text.spans, i, p, 0, h.len, true) {
                        found.emit(entries, Target::Phrase(pid), i, e, true);
                    }
                }
            });
        }
    }
}
