//! First stems that do not start with a word character (`$`, `+7`, `#tag`), and the literal
//! prefixes of patterns that may start anywhere: one unanchored automaton run once over the
//! text.

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::FxHashMap;

use super::{Entries, Found, Strategy, Target, Text};
use crate::text::phrase::{self, Phrase};

/// Keys found anywhere in a message, and what each starts.
#[derive(Debug, Clone)]
pub(super) struct Anywhere {
    automaton: AhoCorasick,
    heads: Vec<Vec<Target>>,
}

/// The keys of [`Anywhere`] as they are added.
#[derive(Debug, Default)]
pub(super) struct Builder {
    index: FxHashMap<Vec<u8>, usize>,
    keys: Vec<Vec<u8>>,
    heads: Vec<Vec<Target>>,
}

impl Builder {
    /// `key` (bytes of the normalised text) starts `target`.
    pub(super) fn add(&mut self, key: &[u8], target: Target) {
        let k = match self.index.get(key) {
            Some(&k) => k,
            None => {
                self.index.insert(key.to_vec(), self.keys.len());
                self.keys.push(key.to_vec());
                self.heads.push(Vec::new());
                self.keys.len() - 1
            }
        };
        if !self.heads[k].contains(&target) {
            self.heads[k].push(target);
        }
    }

    pub(super) fn build(self) -> Result<Option<Anywhere>, String> {
        if self.keys.is_empty() {
            return Ok(None);
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(&self.keys)
            .map_err(|e| e.to_string())?;
        Ok(Some(Anywhere {
            automaton,
            heads: self.heads,
        }))
    }
}

impl Strategy for Anywhere {
    fn find(&self, entries: &Entries, text: &Text<'_>, found: &mut Found) {
        for m in self.automaton.find_overlapping_iter(text.text) {
            for &target in &self.heads[m.pattern().as_usize()] {
                match target {
                    Target::Phrase(pid) => {
                        let p: &Phrase = &entries.phrases[pid as usize];
                        if let Some(end) =
                            phrase::match_rest(&text.spans, m.start(), p, 0, m.len(), false)
                        {
                            found.emit(entries, target, m.start(), end, p.slip);
                        }
                    }
                    Target::Pattern(k) => found.try_pattern_from(k, m.start()),
                }
            }
        }
    }
}
