//! First stems that do not start with a word character (`$`, `+7`, `#tag`), and the literal
//! prefixes of patterns that may start anywhere: one unanchored automaton run once over the
//! text.

use aho_corasick::{AhoCorasick, MatchKind};

use super::{Entries, Found, Keyed, Strategy, Target, Text};
use crate::text::phrase::{self, Phrase};

/// Keys found anywhere in a message, and what each starts.
#[derive(Debug, Clone)]
pub(super) struct Anywhere {
    automaton: AhoCorasick,
    heads: Vec<Vec<Target>>,
}

/// The keys of [`Anywhere`] as they are added.
#[derive(Debug, Default)]
pub(super) struct Builder<'a>(Keyed<'a, [u8], Target>);

impl<'a> Builder<'a> {
    /// `key` (bytes of the normalised text) starts `target`.
    pub(super) fn add(&mut self, key: &'a [u8], target: Target) {
        self.0.add(key, target);
    }

    pub(super) fn build(self) -> Result<Option<Anywhere>, String> {
        let Keyed { keys, heads, .. } = self.0;
        if keys.is_empty() {
            return Ok(None);
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(&keys)
            .map_err(|e| e.to_string())?;
        Ok(Some(Anywhere { automaton, heads }))
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
