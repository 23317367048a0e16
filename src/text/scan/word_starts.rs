//! First stems that start with a word character: one anchored automaton walked where each
//! word starts. It also finds the literal prefixes of patterns that start a word, and tells
//! which words a list knows exactly.

use super::{Entries, Found, Keyed, Strategy, Target, Text};
use crate::text::phrase::{self, Phrase};
use crate::text::stems::WordStarts;

/// Stems found where a word starts, and what each starts.
#[derive(Debug, Clone)]
pub(super) struct WordStartStems {
    automaton: WordStarts,
    /// What each stem starts.
    heads: Vec<StemHeads>,
}

/// The phrases and patterns one stem starts.
#[derive(Debug, Clone, Default)]
struct StemHeads {
    /// Tried wherever the stem is found: patterns, one-word phrases and phrases whose second
    /// word may start anywhere; the phrases whose first word is whole last.
    always: Vec<Target>,
    /// Where the whole-word phrases begin in `always` (a word that goes on past the stem
    /// skips them all).
    whole_from: usize,
    /// Phrases whose second word is found exactly where a word starts, by that word's first
    /// letter: only those whose letter starts one of the next words are tried. Most phrases
    /// that start with a common word («what», «in») are passed over on this alone.
    by_next_letter: Vec<NextLetter>,
    /// The most words any of them lets stand before its second word.
    widest_gap: usize,
    /// Whether the stem starts any phrase as its entry spells it (then it is a known word
    /// where it is found). A slip variant's stem does not count: the split "price ssnow" of
    /// an entry "prices snow" would make "priceo" a known word, and another list's typo of
    /// "prices" would never be looked for there.
    starts_phrase: bool,
}

#[derive(Debug, Clone, Copy)]
struct NextLetter {
    letter: char,
    /// How many words may stand before the second word.
    gap: usize,
    pid: u32,
}

impl NextLetter {
    fn of(phrase: &Phrase, pid: u32) -> Option<Self> {
        let next = phrase.words.get(1)?;
        // A word read with a typo keeps its first letter unless the typo may be there.
        if !phrase.words[0].ends_in_word || !next.starts_in_word || next.typo_first {
            return None;
        }
        Some(Self {
            letter: next.stem.chars().next()?,
            gap: next.gap_before,
            pid,
        })
    }
}

/// The stems of [`WordStartStems`] as they are added.
#[derive(Debug, Default)]
pub(super) struct Builder<'a>(Keyed<'a, str, Target>);

impl<'a> Builder<'a> {
    /// `stem` (starting with a word character) starts `target`.
    pub(super) fn add(&mut self, stem: &'a str, target: Target) {
        self.0.add(stem, target);
    }

    pub(super) fn build(self, phrases: &[Phrase]) -> Result<Option<WordStartStems>, String> {
        let Keyed { keys, heads, .. } = self.0;
        if heads.is_empty() {
            return Ok(None);
        }
        let first_word = |t: &Target| match *t {
            Target::Phrase(pid) => Some(&phrases[pid as usize].words[0]),
            Target::Pattern(_) => None,
        };
        let heads: Vec<StemHeads> = (heads.into_iter())
            .map(|targets| {
                let spelled = |t: &Target| match *t {
                    Target::Phrase(pid) => !phrases[pid as usize].slip,
                    Target::Pattern(_) => false,
                };
                let mut h = StemHeads {
                    starts_phrase: targets.iter().any(spelled),
                    ..StemHeads::default()
                };
                for target in targets {
                    let next = match target {
                        Target::Phrase(pid) => NextLetter::of(&phrases[pid as usize], pid),
                        Target::Pattern(_) => None,
                    };
                    match next {
                        Some(n) => {
                            h.widest_gap = h.widest_gap.max(n.gap);
                            h.by_next_letter.push(n);
                        }
                        None => h.always.push(target),
                    }
                }
                h.by_next_letter.sort_by_key(|n| n.letter);
                let whole = |t: &Target| first_word(t).is_some_and(|w| w.whole);
                h.always.sort_by_key(whole);
                // Only a stem that ends with a word character can be followed by more of a
                // word (all phrases under one stem share it).
                let ends_in_word =
                    (h.always.iter()).any(|t| first_word(t).is_some_and(|w| w.ends_in_word));
                h.whole_from = if ends_in_word {
                    h.always.partition_point(|t| !whole(t))
                } else {
                    h.always.len()
                };
                h
            })
            .collect();
        let automaton = WordStarts::new(&keys).map_err(|e| e.to_string())?;
        Ok(Some(WordStartStems { automaton, heads }))
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
                let heads = &self.heads[stem];
                // The rest of the word is the same for every phrase of this stem.
                let rest = if end <= word_end {
                    word_end - end
                } else {
                    phrase::word_len(&t[end..])
                };
                if heads.starts_phrase {
                    known = known.max(end - i);
                }
                let mut always = heads.always.as_slice();
                if rest > 0 && end <= word_end {
                    // The word goes on: no phrase that wants it whole can match.
                    always = &always[..heads.whole_from];
                }
                let hit = StemHit { i, end, rest };
                for &target in always {
                    match target {
                        Target::Phrase(pid) => hit.try_phrase(entries, text, pid, found),
                        Target::Pattern(k) => {
                            // Several of its prefixes may end here: tried once.
                            if !found.pattern_at.contains(&(k, i)) {
                                found.pattern_at.push((k, i));
                            }
                        }
                    }
                }
                if heads.by_next_letter.is_empty() {
                    return;
                }
                if end > word_end {
                    // The stem runs past the word: its next words are not the message's.
                    for n in &heads.by_next_letter {
                        hit.try_phrase(entries, text, n.pid, found);
                    }
                    return;
                }
                // The first letters of the next words the widest gap reaches, each letter
                // once (at its nearest word, which every phrase that reaches further reaches).
                let reach = (w + 2 + heads.widest_gap).min(text.words.len());
                let next_words = text.words.get(w + 1..reach).unwrap_or(&[]);
                for (d, &(s, _)) in next_words.iter().enumerate() {
                    let Some(letter) = t.get(s as usize..).and_then(|r| r.chars().next()) else {
                        continue;
                    };
                    let nearer = &next_words[..d];
                    if nearer
                        .iter()
                        .any(|&(e, _)| t[e as usize..].starts_with(letter))
                    {
                        continue;
                    }
                    let from = heads.by_next_letter.partition_point(|n| n.letter < letter);
                    for n in heads.by_next_letter[from..].iter() {
                        if n.letter != letter {
                            break;
                        }
                        if n.gap >= d {
                            hit.try_phrase(entries, text, n.pid, found);
                        }
                    }
                }
            });
            found.known[w] = u32::try_from(known).unwrap_or(u32::MAX);
        }
    }
}

/// A stem found at `i..end`, with `rest` bytes of its word after it.
struct StemHit {
    i: usize,
    end: usize,
    rest: usize,
}

impl StemHit {
    /// Matches phrase `pid`, which starts with the stem, here.
    fn try_phrase(&self, entries: &Entries, text: &Text<'_>, pid: u32, found: &mut Found) {
        let Self { i, end, rest } = *self;
        let p = &entries.phrases[pid as usize];
        let first = &p.words[0];
        if rest > 0 && !text.spans.ending_fits(first, &text.text[end..end + rest]) {
            // A whole word, or a word in its forms, and this one goes on past what they allow.
        } else if p.words.len() == 1 {
            // One word, the common case: only its end is left to check.
            let end = if first.ends_in_word { end + rest } else { end };
            found.emit(entries, Target::Phrase(pid), i, end, p.slip);
        } else if let Some(e) = phrase::match_rest(&text.spans, i, p, 0, end - i, p.slip) {
            found.emit(entries, Target::Phrase(pid), i, e, p.slip);
        }
    }
}
