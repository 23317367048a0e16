//! One word-list `patterns` entry, compiled and analysed once: the regex, and where in a
//! message the scanner looks for it.
//!
//! The patterns of a ruleset are compiled together, over the small [`Alphabet`] they share
//! (see its notes); one the alphabet cannot express keeps the Unicode engines.

use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use rayon::prelude::*;
use regex_automata::hybrid::dfa::{Cache, DFA, OverlappingState};
use regex_automata::nfa::thompson;
use regex_automata::util::pool::Pool;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::hir::{Class, Hir, HirKind, Look};

use super::alphabet::{self, Alphabet, Transcoded};
use super::gate::parse;
use regex_automata::meta::Regex as MetaRegex;

use super::entry::{EntryError, MAX_PATTERN_LEN, REGEX_SIZE_LIMIT, compile_pattern};
use super::words::is_word;

/// A compiled word-list pattern.
#[derive(Debug, Clone)]
pub struct ListPattern {
    engine: Engine,
    pub(super) start: PatternStart,
}

#[derive(Debug, Clone)]
enum Engine {
    /// Over the ruleset's alphabet.
    Alphabet { alphabet: Arc<Alphabet>, over: Over },
    /// Over Unicode text.
    Unicode {
        re: MetaRegex,
        /// For a pattern tried at word starts whose only word boundary is its leading `\b`
        /// (which a word start satisfies): the rest as a forward lazy DFA, much faster than
        /// the engines that can check a Unicode word boundary.
        at_word: Option<WordStartDfa>,
    },
}

/// A pattern over an alphabet, by where it is tried.
#[derive(Debug, Clone)]
enum Over {
    /// At word starts (or at the start): a forward lazy DFA run anchored there.
    Anchored(Dfa),
    /// Searched for: a regex, which also finds where the match starts.
    Searched(MetaRegex),
}

type CacheFn = Box<dyn Fn() -> Cache + Send + Sync + UnwindSafe + RefUnwindSafe>;

/// A forward lazy DFA and the caches of the threads that run it.
#[derive(Clone)]
struct Dfa {
    dfa: Arc<DFA>,
    caches: Arc<Pool<Cache, CacheFn>>,
}

impl Dfa {
    fn new(hir: &Hir, kind: MatchKind, utf8: bool) -> Option<Self> {
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                    .utf8(utf8)
                    .which_captures(thompson::WhichCaptures::None),
            )
            .build_from_hir(hir)
            .ok()?;
        let dfa = Arc::new(
            DFA::builder()
                .configure(
                    DFA::config()
                        .cache_capacity(REGEX_SIZE_LIMIT)
                        .match_kind(kind),
                )
                .build_from_nfa(nfa)
                .ok()?,
        );
        let for_pool = Arc::clone(&dfa);
        let create: CacheFn = Box::new(move || for_pool.create_cache());
        Some(Self {
            dfa,
            caches: Arc::new(Pool::new(create)),
        })
    }

    /// The end of the leftmost-first match of an anchored `input`. Over an alphabet the
    /// search cannot fail: it has no Unicode word boundary to quit on and never gives up.
    fn end(&self, input: &Input<'_>) -> Option<usize> {
        let mut cache = self.caches.get();
        let found = self.dfa.try_search_fwd(&mut cache, input);
        debug_assert!(found.is_ok(), "the lazy DFA gave up: {found:?}");
        found.ok().flatten().map(|m| m.offset())
    }
}

impl std::fmt::Debug for Dfa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dfa")
    }
}

#[derive(Clone, Debug)]
struct WordStartDfa {
    dfa: Dfa,
    /// The pattern ends with `\b`: the DFA finds every end of the rest, and the match is the
    /// one end that stands at a word boundary (with two such ends, the careful engine decides
    /// which the pattern prefers).
    boundary_after: bool,
}

impl WordStartDfa {
    /// The end of the match, if there is one; `None` when the careful engine must decide (the
    /// cache thrashed, or two ends stand at word boundaries).
    fn find(&self, text: &str, input: &Input<'_>) -> Option<Option<usize>> {
        let mut cache = self.dfa.caches.get();
        if !self.boundary_after {
            return self
                .dfa
                .dfa
                .try_search_fwd(&mut cache, input)
                .ok()
                .map(|m| m.map(|m| m.offset()));
        }
        let mut state = OverlappingState::start();
        let mut found = None;
        loop {
            self.dfa
                .dfa
                .try_search_overlapping_fwd(&mut cache, input, &mut state)
                .ok()?;
            let Some(m) = state.get_match() else {
                return Some(found);
            };
            if at_boundary(text, m.offset()) {
                if found.is_some() {
                    return None;
                }
                found = Some(m.offset());
            }
        }
    }
}

/// Whether a Unicode word boundary stands at byte `at` of `text`.
fn at_boundary(text: &str, at: usize) -> bool {
    let before = text
        .get(..at)
        .and_then(|t| t.chars().next_back())
        .is_some_and(is_word);
    let after = text
        .get(at..)
        .and_then(|t| t.chars().next())
        .is_some_and(is_word);
    before != after
}

/// A message's text read through the alphabet its patterns were compiled over, once per
/// message (patterns compiled alone have alphabets of their own).
#[derive(Debug, Default)]
pub(super) struct Transcodings {
    alphabet: Option<Arc<Alphabet>>,
    text: Transcoded,
}

impl Transcodings {
    fn of(&mut self, alphabet: &Arc<Alphabet>, text: &str) -> &Transcoded {
        if !self
            .alphabet
            .as_ref()
            .is_some_and(|a| Arc::ptr_eq(a, alphabet))
        {
            alphabet.transcode(text, &mut self.text);
            self.alphabet = Some(Arc::clone(alphabet));
        }
        &self.text
    }
}

impl ListPattern {
    /// The match that starts exactly at `at` (a word start where one of the prefixes begins).
    pub(super) fn find_at(
        &self,
        text: &str,
        at: usize,
        tx: &mut Transcodings,
    ) -> Option<(usize, usize)> {
        match &self.engine {
            Engine::Alphabet { alphabet, over } => {
                let t = tx.of(alphabet, text);
                let input = Input::new(&t.bytes)
                    .range(t.index(at)..)
                    .anchored(Anchored::Yes);
                let end = match over {
                    Over::Anchored(d) => d.end(&input),
                    Over::Searched(re) => re.search(&input).map(|m| m.end()),
                }?;
                Some((at, t.offset(end)))
            }
            Engine::Unicode { re, at_word } => {
                let input = Input::new(text).range(at..).anchored(Anchored::Yes);
                if let Some(d) = at_word
                    && let Some(found) = d.find(text, &input)
                {
                    return found.map(|end| (at, end));
                }
                re.search(&input).map(|m| (m.start(), m.end()))
            }
        }
    }

    /// The first match that starts at or after `from`.
    pub(super) fn find_from(
        &self,
        text: &str,
        from: usize,
        tx: &mut Transcodings,
    ) -> Option<(usize, usize)> {
        match &self.engine {
            Engine::Alphabet { alphabet, over } => {
                let t = tx.of(alphabet, text);
                let from = t.index(from);
                let d = match over {
                    Over::Searched(re) => {
                        let m = re.search(&Input::new(&t.bytes).range(from..))?;
                        return Some((t.offset(m.start()), t.offset(m.end())));
                    }
                    // Tried anchored, one start after another: where one of its literal
                    // prefixes occurs when it has them (every match starts with one), else
                    // everywhere.
                    Over::Anchored(d) => d,
                };
                let prefixes: &[Vec<u8>] = match &self.start {
                    PatternStart::Prefixes(p) => p,
                    _ => &[],
                };
                let bytes = text.as_bytes();
                (from..=t.bytes.len())
                    .filter(|&s| {
                        let rest = bytes.get(t.offset(s)..).unwrap_or_default();
                        prefixes.is_empty() || prefixes.iter().any(|p| rest.starts_with(p))
                    })
                    .find_map(|s| {
                        let input = Input::new(&t.bytes).range(s..).anchored(Anchored::Yes);
                        d.end(&input).map(|e| (t.offset(s), t.offset(e)))
                    })
            }
            Engine::Unicode { re, .. } => re
                .search(&Input::new(text).range(from..))
                .map(|m| (m.start(), m.end())),
        }
    }

    /// Whether the pattern is compiled over an alphabet (for tests).
    #[cfg(test)]
    fn over_alphabet(&self) -> bool {
        matches!(self.engine, Engine::Alphabet { .. })
    }
}

/// Where a pattern's matches can start.
#[derive(Debug, Clone)]
pub(super) enum PatternStart {
    /// It starts with `\b` and a word character: only where one of these prefixes starts a
    /// word, so it is tried anchored there.
    AtWords(Vec<String>),
    /// Only where one of these literal prefixes occurs.
    Prefixes(Vec<Vec<u8>>),
    /// Only at the start of the message (it starts with `^`): tried there once.
    AtStart,
    /// Anywhere (no literal prefix): searched once.
    Anywhere,
}

/// Compiles one word-list `patterns` entry on its own (over an alphabet of its own), with
/// the same limits and messages as [`compile_pattern`].
pub fn compile_list_pattern(pattern: &str) -> Result<ListPattern, EntryError> {
    compile_list_patterns(&[pattern])
        .pop()
        .unwrap_or_else(|| Err(refused(pattern)))
}

/// Compiles word-list `patterns` entries together, on every core, with the same limits and
/// messages as [`compile_pattern`], for the scanner: it runs a pattern anchored where one of
/// its prefixes was found, which the `regex` crate's API cannot ask for. They share one
/// [`Alphabet`] (see the module's notes).
pub fn compile_list_patterns(patterns: &[&str]) -> Vec<Result<ListPattern, EntryError>> {
    // Parsed once for the analyses below and the alphabet.
    let parsed: Vec<Option<Hir>> = patterns
        .par_iter()
        .map(|p| (p.len() <= MAX_PATTERN_LEN).then(|| parse(p)).flatten())
        .collect();
    let mut admitted: Vec<usize> = (0..parsed.len())
        .filter(|&i| parsed[i].as_ref().is_some_and(alphabet::supported))
        .collect();
    // Past the bytes an alphabet has (a ruleset that spells out very many characters), the
    // first half of the patterns are tried, then the first quarter, …; the rest keep Unicode.
    let alphabet = loop {
        if admitted.is_empty() {
            break None;
        }
        let hirs: Vec<&Hir> = admitted
            .iter()
            .filter_map(|&i| parsed[i].as_ref())
            .collect();
        if let Some(a) = Alphabet::new(&hirs) {
            break Some(Arc::new(a));
        }
        admitted.truncate(admitted.len() / 2);
    };
    let mut over = vec![false; parsed.len()];
    for i in admitted {
        over[i] = true;
    }
    patterns
        .par_iter()
        .zip(parsed.par_iter().zip(over))
        .map(|(pattern, (hir, over))| {
            let Some(hir) = hir else {
                return Err(refused(pattern));
            };
            match &alphabet {
                Some(a) if over => compile_over(pattern, hir, a),
                _ => compile_unicode(pattern, hir),
            }
        })
        .collect()
}

/// `pattern` (parsed: `hir`) over `alphabet`.
fn compile_over(
    pattern: &str,
    hir: &Hir,
    alphabet: &Arc<Alphabet>,
) -> Result<ListPattern, EntryError> {
    if matches_empty(hir) {
        return Err(EntryError::MatchesEmpty);
    }
    let start = pattern_start(pattern, hir);
    let translated = alphabet.translate(hir);
    let over = match start {
        // Tried only where the match may start: at word starts, at the start, or where one of
        // its literal prefixes occurs. The leading `\b` or `^` is kept: there it holds. The
        // forward lazy DFA alone does it: no reverse automaton and no prefilter to build (a
        // grown pack's thousands of patterns took a fifth of its load in them).
        PatternStart::AtWords(_) | PatternStart::AtStart | PatternStart::Prefixes(_) => {
            let d = Dfa::new(&translated, MatchKind::LeftmostFirst, false)
                .ok_or_else(|| refused(pattern))?;
            Over::Anchored(d)
        }
        PatternStart::Anywhere => {
            let re = MetaRegex::builder()
                .configure(
                    MetaRegex::config()
                        .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                        .hybrid_cache_capacity(REGEX_SIZE_LIMIT)
                        .utf8_empty(false)
                        .which_captures(thompson::WhichCaptures::Implicit)
                        .onepass(false)
                        .dfa(false)
                        .backtrack(false),
                )
                .build_from_hir(&translated)
                .map_err(|_| refused(pattern))?;
            Over::Searched(re)
        }
    };
    let p = ListPattern {
        engine: Engine::Alphabet {
            alphabet: Arc::clone(alphabet),
            over,
        },
        start,
    };
    Ok(p)
}

/// `pattern` (parsed: `hir`) over Unicode text.
fn compile_unicode(pattern: &str, hir: &Hir) -> Result<ListPattern, EntryError> {
    let start = pattern_start(pattern, hir);
    // A pattern tried only where its prefix starts a word is searched anchored there: the
    // forward engines suffice (no lazy DFA, hence no reverse NFA to build; it would give up on
    // Unicode word boundaries in non-ASCII text anyway), and only the whole match is read.
    // Any other pattern keeps the lazy DFA and the prefilters for its search through the rest
    // of the message.
    let searched = !matches!(start, PatternStart::AtWords(_));
    let built = MetaRegex::builder()
        .configure(
            MetaRegex::config()
                .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                .hybrid_cache_capacity(REGEX_SIZE_LIMIT)
                .which_captures(regex_automata::nfa::thompson::WhichCaptures::Implicit)
                .auto_prefilter(searched)
                .hybrid(searched)
                .dfa(false)
                .backtrack(false),
        )
        .syntax(regex_automata::util::syntax::Config::new().nest_limit(64))
        .build(pattern);
    match built {
        Ok(_) if matches_empty(hir) => Err(EntryError::MatchesEmpty),
        Ok(re) => {
            let at_word = match start {
                PatternStart::AtWords(_) | PatternStart::AtStart => word_start_dfa(hir),
                _ => None,
            };
            Ok(ListPattern {
                engine: Engine::Unicode { re, at_word },
                start,
            })
        }
        Err(_) => Err(refused(pattern)),
    }
}

/// Whether `hir` matches the empty text (such a pattern would hold for any message). Read from
/// the pattern itself: each assertion is decided at the one place an empty text has, with no
/// character on either side (`^` and `$` hold, `\b` does not, `\B` does). Running the pattern
/// on an empty text instead made each of a grown pack's thousands of patterns build a search
/// cache at load: a tenth of its instructions, and much of the memory the patterns took.
fn matches_empty(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty => true,
        HirKind::Literal(_) | HirKind::Class(_) => false,
        HirKind::Look(look) => !matches!(
            look,
            Look::WordAscii
                | Look::WordUnicode
                | Look::WordStartAscii
                | Look::WordEndAscii
                | Look::WordStartUnicode
                | Look::WordEndUnicode
        ),
        HirKind::Repetition(r) => r.min == 0 || matches_empty(&r.sub),
        HirKind::Capture(c) => matches_empty(&c.sub),
        HirKind::Concat(parts) => parts.iter().all(matches_empty),
        HirKind::Alternation(parts) => parts.iter().any(matches_empty),
    }
}

/// The forward lazy DFA of `pattern` without its leading `\b` or `^` (which the places it is
/// tried at satisfy), when nothing else in it but a last `\b` looks at word boundaries (the
/// lazy DFA cannot check a Unicode one in non-ASCII text).
fn word_start_dfa(hir: &Hir) -> Option<WordStartDfa> {
    let (Look::WordUnicode | Look::Start, mut rest) = leading_look(hir)? else {
        return None;
    };
    let boundary_after = match rest.split_last() {
        Some((last, before)) if matches!(last.kind(), HirKind::Look(Look::WordUnicode)) => {
            rest = before;
            true
        }
        _ => false,
    };
    let rest = Hir::concat(rest.to_vec());
    // A large Unicode class (`\w`, `\d`: hundreds of ranges) compiles to a large automaton a
    // second time, which costs more at load than the DFA saves at a few word starts.
    if rest.properties().look_set().contains_word_unicode() || has_large_class(&rest) {
        return None;
    }
    let kind = if boundary_after {
        MatchKind::All
    } else {
        MatchKind::LeftmostFirst
    };
    Some(WordStartDfa {
        dfa: Dfa::new(&rest, kind, true)?,
        boundary_after,
    })
}

/// A class of more than this many ranges makes a pattern keep its one engine.
const MAX_CLASS_RANGES: usize = 32;

/// Whether `hir` has a character class of more than [`MAX_CLASS_RANGES`] ranges.
fn has_large_class(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c.ranges().len() > MAX_CLASS_RANGES,
        HirKind::Class(Class::Bytes(c)) => c.ranges().len() > MAX_CLASS_RANGES,
        HirKind::Repetition(r) => has_large_class(&r.sub),
        HirKind::Capture(c) => has_large_class(&c.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().any(has_large_class),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Look(_) => false,
    }
}

/// The assertion every match of `hir` starts with, if its first token is one, and the tokens
/// after it.
fn leading_look(hir: &Hir) -> Option<(Look, &[Hir])> {
    let HirKind::Concat(parts) = hir.kind() else {
        return None;
    };
    let (first, rest) = parts.split_first()?;
    match first.kind() {
        HirKind::Look(look) => Some((*look, rest)),
        _ => None,
    }
}

/// Why `pattern` was refused, in the `regex` crate's words (the ones users know).
fn refused(pattern: &str) -> EntryError {
    compile_pattern(pattern)
        .err()
        .unwrap_or_else(|| EntryError::Regex("the pattern cannot be compiled".into()))
}

/// Where the matches of `pattern` (parsed: `hir`) can start.
fn pattern_start(pattern: &str, hir: &Hir) -> PatternStart {
    // Anchored at the start of the message: tried there once, not wherever its first words
    // occur.
    if pattern.starts_with('^') {
        return match leading_look(hir) {
            Some((Look::Start, _)) => PatternStart::AtStart,
            _ => PatternStart::Anywhere,
        };
    }
    match literal_prefixes(hir) {
        // `\b` and a word character: it can only match at a word start.
        Some(prefixes) if pattern.starts_with("\\b") && at_word_start(&prefixes) => {
            PatternStart::AtWords(prefixes.iter().map(|p| utf8_start(p).to_owned()).collect())
        }
        Some(prefixes) => PatternStart::Prefixes(prefixes),
        None => PatternStart::Anywhere,
    }
}

/// Whether every prefix is text that starts with a word character.
fn at_word_start(prefixes: &[Vec<u8>]) -> bool {
    prefixes
        .iter()
        .all(|p| utf8_start(p).chars().next().is_some_and(is_word))
}

/// The longest whole-character start of a literal prefix (the extractor may cut one in the
/// middle of a letter when the letters that may follow share their first byte).
fn utf8_start(prefix: &[u8]) -> &str {
    match std::str::from_utf8(prefix) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&prefix[..e.valid_up_to()]).unwrap_or_default(),
    }
}

/// Literal byte strings one of which every match of `pattern` starts with, if there is such a
/// finite set of non-empty ones. The longer they are, the fewer places the pattern is tried
/// at (`no\s+need` is tried after "no " but not at "nobody"), so the full set is kept while it
/// is small; a larger one is cut down to shorter prefixes.
fn literal_prefixes(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let full = Extractor::new()
        .kind(ExtractKind::Prefix)
        .limit_class(MAX_CLASS_EXPANDED)
        .extract(hir);
    let seq = match full.literals() {
        Some(lits) if lits.len() <= MAX_PREFIXES => full,
        _ => {
            let mut seq = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
            seq.optimize_for_prefix_by_preference();
            seq
        }
    };
    let lits = seq.literals()?;
    if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    let mut prefixes: Vec<Vec<u8>> = lits.iter().map(|l| l.as_bytes().to_vec()).collect();
    prefixes.sort_unstable();
    prefixes.dedup();
    Some(prefixes)
}

/// A class of up to this many characters is spelt out in a pattern's prefixes: Unicode `\s`
/// (25), so that `no\s+need` is tried after "no " and not at "nobody". A larger class is
/// nearly any letter (a Cyrillic letter range has 32): spelling it out makes a key of every
/// letter for the same places, and a grown pack's patterns of a stem, a letter range and a
/// choice of words made 73,000 keys of 6,400 patterns, the longest part of its load.
const MAX_CLASS_EXPANDED: usize = 25;
/// Up to this many prefixes of a pattern are kept as they are.
const MAX_PREFIXES: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    /// `source` compiled over Unicode, as a pattern the alphabet cannot express is.
    fn unicode(source: &str) -> ListPattern {
        compile_unicode(source, &parse(source).expect("parses")).expect("compiles")
    }

    fn unicode_parts(p: &ListPattern) -> (&MetaRegex, Option<&WordStartDfa>) {
        match &p.engine {
            Engine::Unicode { re, at_word } => (re, at_word.as_ref()),
            Engine::Alphabet { .. } => panic!("over an alphabet"),
        }
    }

    /// Whether a pattern matches the empty text, read from the pattern, is what running it on
    /// an empty text says.
    #[test]
    fn matching_the_empty_text_is_read_from_the_pattern_as_running_it_says() {
        let patterns = [
            "a*",
            r"\b",
            r"\B",
            "^",
            "$",
            "^$",
            r"(?m)^$",
            r"\bab",
            "(?:ab)?",
            "a|",
            "(a*)b",
            r"\b{start}",
            r"\b{end}",
            r"\b{start-half}",
            r"\b{end-half}",
            r"(?-u:\b)",
            r"(?-u:\B)",
            r"^\s*$",
            r"x?\b",
            "(?:a|b?)c?",
            r"[^\s\S]*",
            "a{0}",
            "a{1,}",
        ];
        for p in patterns {
            let hir = parse(p).expect("parses");
            let ran = regex::Regex::new(p).expect("compiles").is_match("");
            assert_eq!(matches_empty(&hir), ran, "{p}");
        }
    }

    /// Over the alphabet a pattern finds exactly what it finds over Unicode: from every
    /// character, anchored and searched, in text with letters of several scripts, digits,
    /// typographic punctuation, emoji and characters no pattern names.
    #[test]
    fn the_alphabet_finds_what_unicode_finds() {
        let patterns = [
            r"\bβ\s*[/.\\]\s*υ\b",
            r"\bσμογ\w*\s+ερυδ(οκ|αώ)",
            r"\bλυρσ(εομμαρ|ζγρο)\b",
            r"σμογο[α-ω]* (?:εα|ξζτ)",
            r"(?i)\bTOP\s*\d+",
            r"\b\d{2,4}\s*(ρυβ|ρ\.|₽)",
            r"[^α-ώa-z\s]+",
            r"\Bοκ\b",
            r"\b\w+ιλ\b",
            r"^(?:ξυ\s+)?λαλ\b",
            r"x.y",
            r"\bé\w*",
            r"(?:\p{Greek}|\p{Han})+",
            r"\b[[:alpha:]]+\b",
        ];
        let texts = [
            "ξακει β.υ. τζμζφοξ",
            "σμογο ερυδαώ ι σμογανι ερυδοκ",
            "λυρσεομμαρ λυρσζγρο λυρσζγροx",
            "σμογζωλο εα σμογοξζτ σμογο ξζτ",
            "top 10 ι ΣΞΟ-5 ι Top12",
            "θα 1500 ρυβ, 200ρ. ι 99 ₽",
            "«ψζξα» — 100$ 😀 ϊμλα",
            "βομίάοκ νοκ λρακ",
            "στομιλ λοτιλ ιλ",
            "ξυ λαλ εζμα λαλ",
            "x y xzy x\ny x😀y",
            "école élan e",
            "αβγ 漢字 abc",
            "ǅemal straße ﬁne",
        ];
        let compiled = compile_list_patterns(&patterns);
        for (source, p) in patterns.iter().zip(compiled) {
            let p = p.expect("compiles");
            assert!(p.over_alphabet(), "{source} is over the alphabet");
            let re = unicode(source);
            let (careful, _) = unicode_parts(&re);
            for text in texts {
                let mut tx = Transcodings::default();
                for (at, _) in text.char_indices().chain([(text.len(), ' ')]) {
                    let anchored = careful
                        .search(&Input::new(text).range(at..).anchored(Anchored::Yes))
                        .map(|m| (m.start(), m.end()));
                    let searched = careful
                        .search(&Input::new(text).range(at..))
                        .map(|m| (m.start(), m.end()));
                    assert_eq!(
                        p.find_at(text, at, &mut tx),
                        anchored,
                        "{source} at {at} of {text:?}"
                    );
                    assert_eq!(
                        p.find_from(text, at, &mut tx),
                        searched,
                        "{source} from {at} of {text:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn what_the_alphabet_cannot_say_keeps_unicode() {
        let compiled = compile_list_patterns(&[r"(?-u:\b)ab", r"(?m)^ab$", r"\bab"]);
        let over: Vec<bool> = compiled
            .iter()
            .map(|p| p.as_ref().expect("compiles").over_alphabet())
            .collect();
        assert_eq!(over, [false, false, true]);
        assert!(matches!(
            compile_list_pattern("a*"),
            Err(EntryError::MatchesEmpty)
        ));
        assert!(
            compile_list_pattern(r"\b").is_ok(),
            "no boundary in the empty text"
        );
    }

    /// The fast engines agree with the careful one on where a match that starts at a word
    /// start ends, boundaries, alternatives that prefer the shorter match, and two ends at word
    /// boundaries included.
    #[test]
    fn word_start_matches_agree_with_the_careful_engine() {
        let patterns = [
            r"\bστα(τ|θ)(ος|ου|ο)\b",
            r"\bμη\s+(?:πια\s+|ποτε\s+)?(?:στειλ|σβησ)",
            r"\bσκ(ο|α)(λ?ι?κ)?\s+κοστ(ιζ|ος)",
            r"\btop\s*-?\s*([0-9]+|three|five[a-z]*)\b",
            r"\bprice(s)?\s+(in|at|on)\b",
            r"\bab(c|cd)\b",
            r"\bx(y|y z)\b",
            r"\bgo(\s+[a-z0-9]+)?\b",
            r"^(?:a\s+)?(?:what\s+is|how\s+come)\b",
        ];
        let texts = [
            "στατος",
            "στατου και",
            "στατοςα",
            "μη στειλε",
            "μη πια σβησε",
            "μηδε στειλε",
            "σκολικ κοστος",
            "σκα κοστιζει",
            "top 10 lists",
            "top-five things",
            "top fivex",
            "top 10x",
            "prices in euro",
            "price at",
            "price inx",
            "abc",
            "abcd",
            "abce",
            "xy z",
            "xy zz",
            "xy",
            "go away now",
            "go",
            "go 12",
            "what is it",
            "a what is",
            "what isn't",
            "what island",
            "a  how come?",
        ];
        for source in patterns {
            let p = unicode(source);
            let (re, at_word) = unicode_parts(&p);
            assert!(at_word.is_some(), "{source} has a fast engine");
            for text in texts {
                let careful = re
                    .search(&Input::new(text).anchored(Anchored::Yes))
                    .map(|m| (m.start(), m.end()));
                let mut tx = Transcodings::default();
                assert_eq!(p.find_at(text, 0, &mut tx), careful, "{source} in {text:?}");
            }
        }
    }

    #[test]
    fn a_large_unicode_class_keeps_the_careful_engine() {
        let mut tx = Transcodings::default();
        let p = unicode(r"\btop\s+\w+");
        assert!(unicode_parts(&p).1.is_none(), "\\w is hundreds of ranges");
        assert_eq!(p.find_at("top ten", 0, &mut tx), Some((0, 7)));
        let p = unicode(r"\btop\s+[a-z]+");
        assert!(unicode_parts(&p).1.is_some());
        assert_eq!(p.find_at("top ten", 0, &mut tx), Some((0, 7)));
    }

    #[test]
    fn a_word_boundary_inside_keeps_the_careful_engine() {
        let mut tx = Transcodings::default();
        let p = unicode(r"\bab\b\s+cd");
        assert!(unicode_parts(&p).1.is_none());
        assert_eq!(p.find_at("ab cd", 0, &mut tx), Some((0, 5)));
        assert_eq!(p.find_at("abx cd", 0, &mut tx), None);
    }
}
