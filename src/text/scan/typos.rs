//! Typo-tolerant first stems: for each word no list knows exactly, the stems one edit away.

use super::{Entries, Found, Keyed, Strategy, Target, Text};
use crate::text::fuzzy::FuzzyStems;
use crate::text::phrase;

/// The typo-tolerant first stems of all lists, and the phrases each starts.
#[derive(Debug, Clone)]
pub(super) struct Typos {
    stems: FuzzyStems,
    heads: Vec<Vec<u32>>,
}

/// The stems of [`Typos`] as they are added.
#[derive(Debug, Default)]
pub(super) struct Builder(Keyed<String, u32>);

impl Builder {
    /// Phrase `pid` starts with the tolerant stem `stem`.
    pub(super) fn add(&mut self, stem: &str, pid: u32) {
        self.0.add(stem, pid);
    }

    pub(super) fn build(self) -> Result<Option<Typos>, String> {
        let Keyed { keys, heads, .. } = self.0;
        if heads.is_empty() {
            return Ok(None);
        }
        let stems =
            FuzzyStems::new(keys.into_iter().zip(0..).collect()).map_err(|e| e.to_string())?;
        Ok(Some(Typos { stems, heads }))
    }
}

impl Strategy for Typos {
    fn find(&self, entries: &Entries, text: &Text<'_>, found: &mut Found) {
        let t = text.text;
        let mut cache = None;
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
            self.stems.walk(&mut cache, &t[i..word_end], |h| {
                for &pid in self.heads.get(h.stem).into_iter().flatten() {
                    let p = &entries.phrases[pid as usize];
                    if let Some(e) = phrase::match_rest(&text.spans, i, p, 0, h.len, true) {
                        found.emit(entries, Target::Phrase(pid), i, e, true);
                    }
                }
            });
        }
    }
}
