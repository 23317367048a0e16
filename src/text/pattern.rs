//! One word-list `patterns` entry, compiled and analysed once: the regex, and where in a
//! message the scanner looks for it.

use super::{EntryError, MAX_PATTERN_LEN, MetaRegex, REGEX_SIZE_LIMIT, compile_pattern, is_word};

/// A compiled word-list pattern.
#[derive(Debug, Clone)]
pub struct ListPattern {
    pub(super) re: MetaRegex,
    pub(super) start: PatternStart,
}

/// Where a pattern's matches can start.
#[derive(Debug, Clone)]
pub(super) enum PatternStart {
    /// It starts with `\b` and a word character: only where one of these prefixes starts a
    /// word, so it is tried anchored there.
    AtWords(Vec<String>),
    /// Only where one of these literal prefixes occurs.
    Prefixes(Vec<Vec<u8>>),
    /// Anywhere (no literal prefix), or only at the start of the message (`^`): searched once.
    Anywhere,
}

/// Compiles one word-list `patterns` entry, with the same limits and messages as
/// [`compile_pattern`], for the scanner: it runs a pattern anchored where one of its prefixes
/// was found, which the `regex` crate's API cannot ask for.
pub fn compile_list_pattern(pattern: &str) -> Result<ListPattern, EntryError> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(refused(pattern));
    }
    let start = pattern_start(pattern);
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
        Ok(re) if re.is_match("") => Err(EntryError::MatchesEmpty),
        Ok(re) => Ok(ListPattern { re, start }),
        Err(_) => Err(refused(pattern)),
    }
}

/// Why `pattern` was refused, in the `regex` crate's words (the ones users know).
fn refused(pattern: &str) -> EntryError {
    compile_pattern(pattern)
        .err()
        .unwrap_or_else(|| EntryError::Regex("the pattern cannot be compiled".into()))
}

/// Where the matches of `pattern` can start.
fn pattern_start(pattern: &str) -> PatternStart {
    // Anchored at the start of the message: tried there once, not wherever its first words
    // occur.
    if pattern.starts_with('^') {
        return PatternStart::Anywhere;
    }
    match literal_prefixes(pattern) {
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
/// finite set of non-empty ones.
fn literal_prefixes(pattern: &str) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = regex_syntax::ParserBuilder::new()
        .nest_limit(64)
        .build()
        .parse(pattern)
        .ok()?;
    let mut seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    seq.optimize_for_prefix_by_preference();
    let lits = seq.literals()?;
    if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    Some(lits.iter().map(|l| l.as_bytes().to_vec()).collect())
}
