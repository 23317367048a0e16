//! A pattern's gate: the pattern with its Unicode word-boundary assertions (`\b`, `\B`, `\<`,
//! `\>`) taken out, so that it matches everywhere the pattern does and more. The lazy DFA
//! cannot check a Unicode word boundary in non-ASCII text (it gives up, and the slower engines
//! run), but it runs the gate: a message the gate refuses is refused by the pattern too, for a
//! few hundred instructions instead of tens of thousands. The embedded router's frames ask
//! their gates first; the pattern itself runs only where the gate matched.

use std::cell::RefCell;

use regex_automata::meta::Regex as MetaRegex;
use regex_syntax::hir::{Capture, Hir, HirKind, Look, Repetition};

use super::REGEX_SIZE_LIMIT;
use super::alphabet::{self, Alphabet, Transcoded};

/// A regex that matches wherever `pattern` does: `None` when it cannot be built (the caller
/// then runs the pattern alone).
pub fn gate(pattern: &str) -> Option<MetaRegex> {
    let loose = without_word_looks(&parse(pattern)?);
    MetaRegex::builder()
        .configure(
            MetaRegex::config()
                .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                .hybrid_cache_capacity(REGEX_SIZE_LIMIT)
                .which_captures(regex_automata::nfa::thompson::WhichCaptures::None),
        )
        .build_from_hir(&loose)
        .ok()
}

/// The gates of many patterns in one automaton: which of them may match, in one pass over a
/// text instead of one pass each (the embedded router's frames ask all of theirs on every
/// message).
///
/// When every pattern can be written over a small alphabet (see `alphabet`), the automaton
/// runs the patterns themselves, word boundaries included, over the message read one byte a
/// character: the answer is then exact, and the automaton a fraction of the size (a Cyrillic
/// `\p{L}` is one byte class, not the UTF-8 sequences of every letter). Otherwise the word
/// boundaries are taken out and the automaton runs over the text itself.
#[derive(Debug, Clone)]
pub struct Gates {
    re: MetaRegex,
    len: usize,
    alphabet: Option<std::sync::Arc<Alphabet>>,
}

thread_local! {
    /// The message read through a gates' alphabet, reused from call to call.
    static READ: RefCell<Transcoded> = RefCell::new(Transcoded::default());
}

impl Gates {
    /// `None` when one of the patterns cannot be parsed or the automaton cannot be built (the
    /// caller then asks each pattern's own gate).
    pub fn new<'p>(patterns: impl IntoIterator<Item = &'p str>) -> Option<Self> {
        let hirs = patterns
            .into_iter()
            .map(parse)
            .collect::<Option<Vec<Hir>>>()?;
        if hirs.iter().all(alphabet::supported)
            && let Some(a) = Alphabet::new(&hirs.iter().collect::<Vec<_>>())
        {
            let translated: Vec<Hir> = hirs.iter().map(|h| a.translate(h)).collect();
            if let Some(re) = many(&translated, true) {
                return Some(Self {
                    re,
                    len: hirs.len(),
                    alphabet: Some(std::sync::Arc::new(a)),
                });
            }
        }
        let loose: Vec<Hir> = hirs.iter().map(without_word_looks).collect();
        Some(Self {
            re: many(&loose, false)?,
            len: hirs.len(),
            alphabet: None,
        })
    }

    /// The patterns (by position) whose gates match somewhere in `text`: over an alphabet,
    /// exactly the patterns that match.
    pub fn which(&self, text: &str) -> regex_automata::PatternSet {
        let mut set = regex_automata::PatternSet::new(self.len);
        match &self.alphabet {
            Some(a) => READ.with_borrow_mut(|read| {
                a.transcode(text, read);
                self.re
                    .which_overlapping_matches(&regex_automata::Input::new(&read.bytes), &mut set);
            }),
            None => self
                .re
                .which_overlapping_matches(&regex_automata::Input::new(text), &mut set),
        }
        set
    }

    /// Whether the answers of [`Gates::which`] are exact (the patterns themselves ran).
    pub fn exact(&self) -> bool {
        self.alphabet.is_some()
    }
}

/// `pattern` parsed as the gates and the list patterns read it, nesting bounded (`None`: not a
/// pattern).
pub(super) fn parse(pattern: &str) -> Option<Hir> {
    regex_syntax::ParserBuilder::new()
        .nest_limit(64)
        .build()
        .parse(pattern)
        .ok()
}

/// One automaton that says which of `hirs` match anywhere; `over_bytes` for patterns written
/// over an alphabet's bytes, where an empty match may fall inside what was a character.
fn many(hirs: &[Hir], over_bytes: bool) -> Option<MetaRegex> {
    MetaRegex::builder()
        .configure(
            MetaRegex::config()
                .match_kind(regex_automata::MatchKind::All)
                .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                // Many patterns' states in one lazy DFA: with one pattern's cache it was
                // cleared over and over and gave up for the PikeVM (the 100k corpus took 1.9x
                // as long). A limit, not an allocation: it grows with the states a thread's
                // messages reach (peak memory on the corpus unchanged).
                .hybrid_cache_capacity(16 * REGEX_SIZE_LIMIT)
                .utf8_empty(!over_bytes)
                .which_captures(regex_automata::nfa::thompson::WhichCaptures::None),
        )
        .build_many_from_hir(hirs)
        .ok()
}

/// `hir` with every Unicode word-boundary assertion replaced by the empty match (which always
/// holds): the language only grows.
fn without_word_looks(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Look(
            Look::WordUnicode
            | Look::WordUnicodeNegate
            | Look::WordStartUnicode
            | Look::WordEndUnicode
            | Look::WordStartHalfUnicode
            | Look::WordEndHalfUnicode,
        ) => Hir::empty(),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => hir.clone(),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            sub: Box::new(without_word_looks(&r.sub)),
            ..r.clone()
        }),
        HirKind::Capture(c) => Hir::capture(Capture {
            sub: Box::new(without_word_looks(&c.sub)),
            ..c.clone()
        }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(without_word_looks).collect()),
        HirKind::Alternation(parts) => {
            Hir::alternation(parts.iter().map(without_word_looks).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_gates_in_one_pass_say_what_each_pattern_says() {
        // Over an alphabet the patterns themselves run: word boundaries hold on any letters.
        let patterns = [
            r"^(?:could|can)\s+you\b",
            r"\bstop\b",
            r"(?:why|how)\s+\p{L}+",
            r"\bμένε\b",
        ];
        let gates = Gates::new(patterns).expect("built");
        assert!(gates.exact());
        let each: Vec<regex::Regex> = patterns
            .iter()
            .map(|p| regex::Regex::new(p).expect("pattern"))
            .collect();
        for text in [
            "could you stop",
            "nonstop",
            "how come",
            "ÿ can you ÿ",
            "",
            "why",
            "μένε εδώ",
            "περίμενε, μη μένε!",
            "μένετε",
            "how όλα",
        ] {
            let set = gates.which(text);
            for (k, re) in each.iter().enumerate() {
                let id = regex_automata::PatternID::new(k).expect("id");
                assert_eq!(set.contains(id), re.is_match(text), "{text:?}, pattern {k}");
            }
        }
        assert!(Gates::new([r"(unclosed"]).is_none());
    }

    #[test]
    fn gates_a_pattern_the_alphabet_cannot_hold_match_wherever_the_patterns_do() {
        // A line anchor has no alphabet form: the gates fall back to the loose automaton.
        let patterns = [r"(?m)^stop\b", r"\bgo\b"];
        let gates = Gates::new(patterns).expect("built");
        assert!(!gates.exact());
        for text in ["stop now", "a\nstop", "go on", "undergo", "nothing"] {
            let set = gates.which(text);
            for (k, p) in patterns.iter().enumerate() {
                let id = regex_automata::PatternID::new(k).expect("id");
                if regex::Regex::new(p).expect("pattern").is_match(text) {
                    assert!(set.contains(id), "{text:?}, pattern {k}");
                }
            }
        }
        let set = gates.which("nothing");
        assert!(set.is_empty());
    }

    #[test]
    fn the_gate_matches_wherever_the_pattern_does_and_refuses_what_it_must() {
        let patterns = [
            r"^(?P<frame>(?:could\s+you|can\s+you)[,\s]+)\p{L}+(?:ing|e)\b",
            r"\bstop\b",
            r"^(?:why|how\s+(?:\p{L}+\s+)?\p{L}+\b)",
        ];
        let texts = [
            "could you make a cake",
            "can you, please",
            "stop it",
            "nonstop",
            "why not",
            "how to bake bread",
            "ÿ could you ÿ",
            "",
        ];
        for p in patterns {
            let re = regex::Regex::new(p).expect("pattern");
            let g = gate(p).expect("gate");
            for t in texts {
                if re.is_match(t) {
                    assert!(g.is_match(t), "{p} matches '{t}', its gate must");
                }
            }
        }
        let g = gate(patterns[0]).expect("gate");
        assert!(!g.is_match("hello there"));
        assert!(!g.is_match("please could you"), "anchored at the start");
    }
}
