//! A pattern's gate: the pattern with its Unicode word-boundary assertions (`\b`, `\B`, `\<`,
//! `\>`) taken out, so that it matches everywhere the pattern does and more. The lazy DFA
//! cannot check a Unicode word boundary in non-ASCII text (it gives up, and the slower engines
//! run), but it runs the gate: a message the gate refuses is refused by the pattern too, for a
//! few hundred instructions instead of tens of thousands. The embedded router's frames ask
//! their gates first; the pattern itself runs only where the gate matched.

use regex_automata::meta::Regex as MetaRegex;
use regex_syntax::hir::{Capture, Hir, HirKind, Look, Repetition};

use super::REGEX_SIZE_LIMIT;

/// A regex that matches wherever `pattern` does: `None` when it cannot be built (the caller
/// then runs the pattern alone).
pub fn gate(pattern: &str) -> Option<MetaRegex> {
    let hir = regex_syntax::ParserBuilder::new()
        .nest_limit(64)
        .build()
        .parse(pattern)
        .ok()?;
    let loose = without_word_looks(&hir);
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
#[derive(Debug, Clone)]
pub struct Gates {
    re: MetaRegex,
    len: usize,
}

impl Gates {
    /// `None` when one of the patterns cannot be parsed or the automaton cannot be built (the
    /// caller then asks each pattern's own gate).
    pub fn new<'p>(patterns: impl IntoIterator<Item = &'p str>) -> Option<Self> {
        let hirs = patterns
            .into_iter()
            .map(|p| {
                let hir = regex_syntax::ParserBuilder::new()
                    .nest_limit(64)
                    .build()
                    .parse(p)
                    .ok()?;
                Some(without_word_looks(&hir))
            })
            .collect::<Option<Vec<Hir>>>()?;
        let re = MetaRegex::builder()
            .configure(
                MetaRegex::config()
                    .match_kind(regex_automata::MatchKind::All)
                    .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                    // Many patterns' states in one lazy DFA: with one pattern's cache it was
                    // cleared over and over and gave up for the PikeVM (the 100k corpus took
                    // 1.9x as long). A limit, not an allocation: it grows with the states a
                    // thread's messages reach (peak memory on the corpus unchanged).
                    .hybrid_cache_capacity(16 * REGEX_SIZE_LIMIT)
                    .which_captures(regex_automata::nfa::thompson::WhichCaptures::None),
            )
            .build_many_from_hir(&hirs)
            .ok()?;
        Some(Self {
            re,
            len: hirs.len(),
        })
    }

    /// The patterns (by position) whose gates match somewhere in `text`.
    pub fn which(&self, text: &str) -> regex_automata::PatternSet {
        let mut set = regex_automata::PatternSet::new(self.len);
        self.re
            .which_overlapping_matches(&regex_automata::Input::new(text), &mut set);
        set
    }
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
    fn many_gates_in_one_pass_say_what_each_gate_says() {
        let patterns = [
            r"^(?:could|can)\s+you\b",
            r"\bstop\b",
            r"(?:why|how)\s+\p{L}+",
        ];
        let gates = Gates::new(patterns).expect("built");
        let each: Vec<MetaRegex> = patterns.iter().map(|p| gate(p).expect("built")).collect();
        for text in [
            "could you stop",
            "nonstop",
            "how come",
            "ÿ can you ÿ",
            "",
            "why",
        ] {
            let set = gates.which(text);
            for (k, g) in each.iter().enumerate() {
                let id = regex_automata::PatternID::new(k).expect("id");
                assert_eq!(set.contains(id), g.is_match(text), "{text:?}, pattern {k}");
            }
        }
        assert!(Gates::new([r"(unclosed"]).is_none());
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
