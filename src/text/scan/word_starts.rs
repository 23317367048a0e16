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
    heads: Vec<Vec<Head>>,
    /// For each stem: where its whole-word phrases begin in `heads` (a word that goes on past
    /// the stem skips them all).
    whole_from: Vec<usize>,
    /// Whether the stem starts any phrase (then it is a known word where it is found).
    starts_phrase: Vec<bool>,
}

/// A phrase or pattern a stem starts.
#[derive(Debug, Clone, Copy)]
struct Head {
    target: Target,
    /// For a phrase whose second word must start with a given letter (an exact word, found
    /// where a word starts): that letter, and how many words may stand before it. Most
    /// phrases that start with a common word are passed over on this alone.
    next: Option<NextLetter>,
}

#[derive(Debug, Clone, Copy)]
struct NextLetter {
    utf8: [u8; 4],
    len: u8,
    gap: u8,
}

impl NextLetter {
    fn of(phrase: &Phrase) -> Option<Self> {
        let next = phrase.words.get(1)?;
        if !phrase.words[0].ends_in_word || !next.starts_in_word || next.fuzzy {
            return None;
        }
        let c = next.stem.chars().next()?;
        let mut utf8 = [0; 4];
        let len = c.encode_utf8(&mut utf8).len();
        Some(Self {
            utf8,
            len: u8::try_from(len).ok()?,
            gap: u8::try_from(next.gap_before).ok()?,
        })
    }

    /// Whether one of the words after word `w` that the gap reaches starts with the letter.
    fn stands_after(&self, text: &Text<'_>, w: usize) -> bool {
        let letter = &self.utf8[..usize::from(self.len)];
        let bytes = text.text.as_bytes();
        let reach = (w + 2 + usize::from(self.gap)).min(text.words.len());
        text.words
            .get(w + 1..reach)
            .unwrap_or(&[])
            .iter()
            .any(|&(s, _)| {
                bytes
                    .get(s as usize..)
                    .is_some_and(|b| b.starts_with(letter))
            })
    }
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
        let mut heads: Vec<Vec<Head>> = (self.heads.into_iter())
            .map(|targets| {
                (targets.into_iter())
                    .map(|target| Head {
                        target,
                        next: match target {
                            Target::Phrase(pid) => NextLetter::of(&phrases[pid as usize]),
                            Target::Pattern(_) => None,
                        },
                    })
                    .collect()
            })
            .collect();
        let mut whole_from = Vec::with_capacity(heads.len());
        let mut starts_phrase = Vec::with_capacity(heads.len());
        for targets in &mut heads {
            let whole = |h: &Head| first_word(&h.target).is_some_and(|w| w.whole);
            targets.sort_by_key(whole);
            // Only a stem that ends with a word character can be followed by more of a word
            // (all phrases under one stem share it).
            let ends_in_word = targets
                .iter()
                .any(|h| first_word(&h.target).is_some_and(|w| w.ends_in_word));
            whole_from.push(if ends_in_word {
                targets.partition_point(|t| !whole(t))
            } else {
                targets.len()
            });
            starts_phrase.push(targets.iter().any(|h| first_word(&h.target).is_some()));
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
                for head in heads {
                    let target = head.target;
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
                    } else if end <= word_end && head.next.is_some_and(|n| !n.stands_after(text, w))
                    {
                        // Its second word cannot be there.
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
