//! First stems that start with a word character: one anchored automaton walked where each
//! word starts. It also finds the literal prefixes of patterns that start a word, and tells
//! which words a list knows exactly.

use rustc_hash::FxHashMap;

use super::{Entries, Found, Strategy, Target, Text};
use crate::text::phrase::{self, Phrase};
use crate::text::stems::WordStarts;

/// Stems found where a word starts, and what each starts.
#[derive(Debug, Clone)]
pub(super) struct WordStartStems {
    automaton: WordStarts,
    /// The phrases and patterns each stem starts, the phrases whose first word is whole last.
    heads: Vec<Vec<Target>>,
    /// For each stem: where its whole-word phrases begin in `heads` (a word that goes on past
    /// the stem skips them all).
    whole_from: Vec<usize>,
    /// Whether the stem starts any phrase (then it is a known word where it is found).
    starts_phrase: Vec<bool>,
}

/// The stems of [`WordStartStems`] as they are added.
#[derive(Debug, Default)]
pub(super) struct Builder {
    index: FxHashMap<String, usize>,
    heads: Vec<Vec<Target>>,
}

impl Builder {
    /// `stem` (starting with a word character) starts `target`.
    pub(super) fn add(&mut self, stem: &str, target: Target) {
        let k = match self.index.get(stem) {
            Some(&k) => k,
            None => {
                self.index.insert(stem.to_owned(), self.heads.len());
                self.heads.push(Vec::new());
                self.heads.len() - 1
            }
        };
        // Once: two prefixes of a pattern may be the same stem.
        if !self.heads[k].contains(&target) {
            self.heads[k].push(target);
        }
    }

    pub(super) fn build(self, phrases: &[Phrase]) -> Result<Option<WordStartStems>, String> {
        if self.heads.is_empty() {
            return Ok(None);
        }
        let first_word = |t: &Target| match *t {
            Target::Phrase(pid) => Some(&phrases[pid as usize].words[0]),
            Target::Pattern(_) => None,
        };
        let mut heads = self.heads;
        let mut whole_from = Vec::with_capacity(heads.len());
        let mut starts_phrase = Vec::with_capacity(heads.len());
        for targets in &mut heads {
            let whole = |t: &Target| first_word(t).is_some_and(|w| w.whole);
            targets.sort_by_key(whole);
            // Only a stem that ends with a word character can be followed by more of a word
            // (all phrases under one stem share it).
            let ends_in_word = targets
                .iter()
                .any(|t| first_word(t).is_some_and(|w| w.ends_in_word));
            whole_from.push(if ends_in_word {
                targets.partition_point(|t| !whole(t))
            } else {
                targets.len()
            });
            starts_phrase.push(targets.iter().any(|t| first_word(t).is_some()));
        }
        let mut stems: Vec<(&str, usize)> =
            self.index.iter().map(|(s, &k)| (s.as_str(), k)).collect();
        stems.sort_unstable_by_key(|s| s.1);
        let stems: Vec<&str> = stems.into_iter().map(|s| s.0).collect();
        let automaton = WordStarts::new(&stems).map_err(|e| e.to_string())?;
        Ok(Some(WordStartStems {
            automaton,
            heads,
            whole_from,
            starts_phrase,
        }))
    }
}

impl Strategy for WordStartStems {
    fn find(&self, entries: &Entries, text: &Text<'_>, found: &mut Found) {
        let t = text.text;
        found.known.clear();
        found.known.resize(text.words.len(), 0);
        for (w, &(i, word_end)) in text.words.iter().enumerate() {
            let (i, word_end) = (i as usize, word_end as usize);
            // The longest stem found exactly here.
            let mut known = 0;
            self.automaton.walk(t, i, &mut |end, stem| {
                // The rest of the word is the same for every phrase of this stem.
                let rest = if end <= word_end {
                    word_end - end
                } else {
                    phrase::word_len(&t[end..])
                };
                if self.starts_phrase[stem] {
                    known = known.max(end - i);
                }
                let mut heads = self.heads[stem].as_slice();
                if rest > 0 && end <= word_end {
                    // The word goes on: no phrase that wants it whole can match.
                    heads = &heads[..self.whole_from[stem]];
                }
                for &target in heads {
                    let pid = match target {
                        Target::Phrase(pid) => pid,
                        Target::Pattern(k) => {
                            // Several of its prefixes may end here: tried once.
                            if !found.pattern_at.contains(&(k, i)) {
                                found.pattern_at.push((k, i));
                            }
                            continue;
                        }
                    };
                    let p = &entries.phrases[pid as usize];
                    let first = &p.words[0];
                    if rest > 0 && !text.spans.ending_fits(first, &t[end..end + rest]) {
                        // A whole word, or a word in its forms, and this one goes on past
                        // what they allow.
                    } else if p.words.len() == 1 {
                        // One word, the common case: only its end is left to check.
                        let end = if first.ends_in_word { end + rest } else { end };
                        found.emit(entries, target, i, end, p.slip);
                    } else if let Some(e) =
                        phrase::match_rest(&text.spans, i, p, 0, end - i, p.slip)
                    {
                        found.emit(entries, target, i, e, p.slip);
                    }
                }
            });
            found.known[w] = u32::try_from(known).unwrap_or(u32::MAX);
        }
    }
}
