//! Pass 2: the normaliser of the `matching` section, then every word list normalised the way
//! messages will be and built into its matcher; entries that add nothing are warned about, and
//! lists no condition mentions are found at the end.

// Fx hashing: looking up each entry, and each prefix of its first word, is most of the checks.
use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use super::findings::Findings;
use super::symbols::{ListsUsed, Symbols};
use crate::diag::{Code, Diagnostic, Location};
use crate::rules::{RuleFile, Typos, WordList};
use crate::ruleset::ListDef;
use crate::source::{self, SourceFile};
use crate::text::{
    DEFAULT_GAP, EntryError, ListOptions, ListPattern, ListSpec, Normalizer, NormalizerOptions,
    Scanner, Slips, Transliteration, WordMatcher,
};

/// Every word-list pattern of `files`, compiled once each, together (over one alphabet), on
/// every core.
pub(super) fn patterns(
    files: &[(SourceFile, RuleFile)],
) -> HashMap<&str, Result<ListPattern, EntryError>> {
    let mut sources: Vec<&str> = files
        .iter()
        .flat_map(|(_, rf)| &rf.word_lists)
        .flat_map(|l| l.patterns.iter().map(String::as_str))
        .collect();
    sources.sort_unstable();
    sources.dedup();
    let compiled = crate::text::compile_list_patterns(&sources);
    sources.into_iter().zip(compiled).collect()
}

/// Every word list to compile, in file order, with its file and its index there (a list
/// defined twice is compiled once, where it is first defined).
fn unique_lists(files: &[(SourceFile, RuleFile)]) -> Vec<(&SourceFile, usize, &WordList)> {
    let mut seen: HashSet<&str> = HashSet::default();
    files
        .iter()
        .flat_map(|(file, rf)| (rf.word_lists.iter().enumerate()).map(move |(i, l)| (file, i, l)))
        .filter(|(_, _, l)| seen.insert(&l.id))
        .collect()
}

/// What one word list's `words` give on their own: each entry normalised the way messages are,
/// the findings about entries (a bad one, a duplicate, one another entry covers), and where
/// each entry (its words, then its patterns) is written.
pub(super) struct CheckedWords {
    pub keys: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    pub entry_at: Vec<Location>,
}

/// [`CheckedWords`] of every list [`compile`] compiles, in the same order, on every
/// core: they need nothing but the list (and are most of a large pack's list checks).
pub(super) fn check_words(
    files: &[(SourceFile, RuleFile)],
    normalizer: &Normalizer,
) -> Vec<CheckedWords> {
    unique_lists(files)
        .into_par_iter()
        .map(|(file, i, l)| check_list_words(file, i, l, normalizer))
        .collect()
}

/// Every word list, in file order (a list defined twice is compiled once), its `negated_by`
/// resolved through `symbols` (and marked in `used`). `patterns` holds every list pattern
/// compiled ([`patterns`]), `checked` what [`check_words`] gave. Returns the lists and each
/// one's normalised words.
pub(super) fn compile(
    files: &[(SourceFile, RuleFile)],
    symbols: &Symbols,
    patterns: &HashMap<&str, Result<ListPattern, EntryError>>,
    checked: Vec<CheckedWords>,
    used: &mut ListsUsed,
    findings: &mut Findings,
) -> (Vec<ListDef>, Vec<Vec<String>>) {
    let typos = typo_defaults(files);
    let mut lists = Vec::new();
    let mut keys = Vec::new();
    for ((file, i, l), checked) in unique_lists(files).into_iter().zip(checked) {
        keys.push(checked.keys);
        findings.extend(checked.diagnostics);
        let patterns = list_patterns(file, i, l, patterns, findings);
        let options = list_options(file, i, l, symbols, typos, used, findings);
        lists.push(ListDef {
            id: Arc::from(l.id.as_str()),
            patterns,
            options,
            entries: l.words.iter().chain(&l.patterns).cloned().collect(),
            words: l.words.len(),
            at: file.locate(&format!("/word_lists/{i}/id")),
            entry_at: checked.entry_at,
        });
    }
    (lists, keys)
}

/// Warns about the lists nothing mentions (run after every condition is compiled).
pub(super) fn unused(
    lists: &[ListDef],
    symbols: &Symbols,
    used: &ListsUsed,
    findings: &mut Findings,
) {
    for l in lists {
        let used = symbols
            .lists
            .get(&*l.id)
            .is_some_and(|&idx| used.is_used(idx));
        if !used {
            findings.push(
                Diagnostic::warning(
                    Code::UnusedList,
                    format!("word list '{}' is not used by any rule", l.id),
                )
                .at(Some(l.at.clone())),
            );
        }
    }
}

/// The `matching` section: at most one, folds of one character to one character.
pub(super) fn normalizer(files: &[(SourceFile, RuleFile)], findings: &mut Findings) -> Normalizer {
    let Some((file, m)) = findings.single_section(files, "matching", |rf| rf.matching.as_ref())
    else {
        return Normalizer::default();
    };
    let folds = char_pairs(file, "folds", &m.folds, true, findings);
    let look_alikes = char_pairs(file, "look_alikes", &m.look_alikes, false, findings);
    let transliterate = m.transliterate.as_ref().map(|t| {
        // A word the lists write in the table's script is theirs to match as written; the
        // table's `words` do not read it as another.
        let listed = words_in_script(files, &t.table);
        Transliteration {
            table: t
                .table
                .iter()
                .filter(|(from, _)| !from.is_empty())
                .map(|(from, to)| (from.clone(), to.clone()))
                .collect(),
            keep: t
                .keep
                .iter()
                .cloned()
                .chain(listed.iter().cloned())
                .collect(),
            words: (t.words.iter())
                .filter(|(from, _)| listed.binary_search(&from.to_lowercase()).is_err())
                .map(|(from, to)| (from.clone(), to.clone()))
                .collect(),
        }
    });
    Normalizer::with_options(
        folds,
        NormalizerOptions {
            compose: m.compose,
            strip_invisible: m.strip_invisible,
            look_alikes,
            name_endings: m.file_name_endings,
            transliterate,
            word_endings: m.word_endings.clone(),
            joined_particles: m.joined_particles.clone(),
            slips: (m.typos.as_ref()).and_then(|t| t.slips.as_ref()).map(|s| {
                let lower = |v: &[String]| -> Vec<String> {
                    v.iter().map(|r| r.trim().to_lowercase()).collect()
                };
                let keyboards: Vec<Vec<String>> = s.keyboards.iter().map(|k| lower(k)).collect();
                Arc::new(Slips::new(&keyboards, &lower(&s.sound_alike)))
            }),
        },
    )
}

/// The words of every list's entries, and of every tool's extraction choices, written wholly
/// in the letters of a transliteration table (`gmail`, `excel`, `year`): a message's word that
/// the rules write in that script is their word, not a transliteration (`year` among Cyrillic
/// words fills the period the choice `year$` names).
fn words_in_script(
    files: &[(SourceFile, RuleFile)],
    table: &std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    let letters: std::collections::HashSet<char> = table
        .keys()
        .flat_map(|k| k.to_lowercase().chars().collect::<Vec<_>>())
        .collect();
    let mut words: Vec<String> = files
        .iter()
        .flat_map(|(_, rf)| {
            let lists = rf.word_lists.iter().flat_map(|l| l.words.iter());
            let choices = (rf.tools.iter())
                .flat_map(|t| t.extract.values())
                .flat_map(|e| e.choose.iter())
                .flat_map(|c| c.words.iter());
            lists.chain(choices)
        })
        // Through the word table: the standard test searches the Unicode tables for every
        // letter of every entry (most are Cyrillic).
        .flat_map(|entry| entry.split(|c: char| !crate::text::is_alphanumeric(c)))
        .filter(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.to_lowercase().all(|l| letters.contains(&l)))
        })
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// Pairs of single characters from a `matching` map (`folds`: the first must not be
/// ASCII, which is only lower-cased).
fn char_pairs(
    file: &SourceFile,
    key: &str,
    map: &std::collections::BTreeMap<String, String>,
    non_ascii_first: bool,
    findings: &mut Findings,
) -> Vec<(char, char)> {
    let mut pairs = Vec::new();
    for (from, to) in map {
        let mut f = from.chars();
        let mut t = to.chars();
        match (f.next(), f.next(), t.next(), t.next()) {
            (Some(a), None, Some(b), None) if !(non_ascii_first && a.is_ascii()) => {
                let lower = |c: char| c.to_lowercase().next().unwrap_or(c);
                pairs.push((lower(a), lower(b)));
            }
            _ => {
                let pointer = format!("/matching/{key}/{}", source::escape(from));
                let rule = if non_ascii_first {
                    "each side must be one character, and the first not ASCII (ASCII is only lower-cased)"
                } else {
                    "each side must be one character"
                };
                let d =
                    Diagnostic::error(Code::BadFold, format!("{key} '{from}' → '{to}': {rule}"))
                        .at(Some(file.locate_key(&pointer)));
                findings.push(d);
            }
        }
    }
    pairs
}

/// A list's patterns, from those compiled before (`None` in place of one that does not
/// compile, reported); a list with no words and no patterns is an error.
fn list_patterns(
    file: &SourceFile,
    i: usize,
    l: &WordList,
    compiled: &HashMap<&str, Result<ListPattern, EntryError>>,
    findings: &mut Findings,
) -> Vec<Option<ListPattern>> {
    let mut seen_patterns: HashMap<&str, usize> = HashMap::default();
    let mut patterns = Vec::with_capacity(l.patterns.len());
    for (j, pat) in l.patterns.iter().enumerate() {
        let p = format!("/word_lists/{i}/patterns/{j}");
        let compiled = compiled
            .get(pat.as_str())
            .cloned()
            .unwrap_or_else(|| crate::text::compile_list_pattern(pat));
        if let Err(e) = &compiled {
            let code = match e {
                crate::text::EntryError::MatchesEmpty => Code::MatchesEmpty,
                _ => Code::BadRegex,
            };
            // The regex crate's message is several lines (the pattern, a caret, the error);
            // the finding gets its last line, the hint the rest.
            let text = e.to_string();
            let (message, hint) = match text.split_once('\n') {
                Some((head, rest)) => {
                    let lines: Vec<&str> = rest.lines().collect();
                    let (last, shown) = lines.split_last().unwrap_or((&"", &[]));
                    let last = last.strip_prefix("error: ").unwrap_or(last);
                    let hint = (!shown.is_empty()).then(|| shown.join("\n"));
                    (format!("{} {last}", head.trim_end()), hint)
                }
                None => (text, None),
            };
            let mut d = Diagnostic::error(code, format!("word list '{}': {message}", l.id))
                .at(Some(file.locate(&p)));
            if let Some(h) = hint {
                d = d.hint(h);
            }
            findings.push(d);
        }
        patterns.push(compiled.ok());
        if let Some(first) = seen_patterns.insert(pat.as_str(), j) {
            findings.warn(
                Code::DuplicateEntry,
                format!(
                    "pattern '{pat}' is already pattern {} of word list '{}'",
                    first + 1,
                    l.id
                ),
                file,
                &p,
            );
        }
    }
    if l.words.is_empty() && l.patterns.is_empty() {
        findings.error(
            Code::EmptyList,
            format!("word list '{}' has no words and no patterns", l.id),
            file,
            &format!("/word_lists/{i}/id"),
        );
    }
    patterns
}

fn check_list_words(
    file: &SourceFile,
    i: usize,
    l: &WordList,
    normalizer: &Normalizer,
) -> CheckedWords {
    let entry_at: Vec<Location> = (0..l.words.len())
        .map(|j| file.locate(&format!("/word_lists/{i}/words/{j}")))
        .chain((0..l.patterns.len()).map(|j| file.locate(&format!("/word_lists/{i}/patterns/{j}"))))
        .collect();
    let mut diagnostics = Vec::new();
    let keys: Vec<String> = l
        .words
        .iter()
        .map(|w| normalizer.normalize(w.trim()))
        .collect();
    let heads: Vec<&str> = keys
        .iter()
        .map(|k| {
            k.split_whitespace()
                .next()
                .unwrap_or("")
                .trim_end_matches(['$', '*'])
        })
        .collect();
    let forms = normalizer.endings().is_some();
    // Each entry's first index, and the entries by first stem: duplicate and redundancy
    // checks by lookup, linear in the list's length.
    let mut first_of: HashMap<&str, usize> = HashMap::default();
    let mut by_head: HashMap<&str, Vec<usize>> = HashMap::default();
    for (k, key) in keys.iter().enumerate() {
        first_of.entry(key.as_str()).or_insert(k);
        if !heads[k].is_empty() {
            by_head.entry(heads[k]).or_default().push(k);
        }
    }
    for (j, w) in l.words.iter().enumerate() {
        let at = || Some(entry_at[j].clone());
        if let Err(e) = WordMatcher::check_word(w) {
            let d = Diagnostic::error(Code::BadWord, format!("word list '{}': {e}", l.id));
            diagnostics.push(d.at(at()));
            continue;
        }
        if let Some(&first) = first_of.get(keys[j].as_str()).filter(|&&f| f < j) {
            let d = Diagnostic::warning(
                Code::DuplicateEntry,
                format!(
                    "'{w}' is already entry {} of word list '{}'",
                    first + 1,
                    l.id
                ),
            );
            diagnostics.push(d.at(at()));
            continue;
        }
        // An entry another one already covers (a shorter stem, fewer words) adds nothing.
        // Only entries whose first stem starts this one can: look those up by each prefix
        // of this entry's first word, instead of comparing every pair.
        let first_word = keys[j]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches(['$', '*']);
        let mut candidates: Vec<usize> = first_word
            .char_indices()
            .map(|(at, c)| &first_word[..at + c.len_utf8()])
            .filter_map(|prefix| by_head.get(prefix))
            .flatten()
            .copied()
            .collect();
        candidates.sort_unstable();
        let covering = candidates.into_iter().find(|&k| {
            k != j
                && keys[k] != keys[j]
                && WordMatcher::covers(&keys[k], &keys[j], forms)
                && (k < j || !WordMatcher::covers(&keys[j], &keys[k], forms))
        });
        if let Some(k) = covering {
            let d = Diagnostic::warning(
                    Code::RedundantEntry,
                    format!(
                        "'{w}' adds nothing to word list '{}': entry {} '{}' already matches everything it matches",
                        l.id,
                        k + 1,
                        l.words[k]
                    ),
                )
                .at(at())
                .hint(format!(
                    "every message '{w}' matches, '{}' matches too; remove '{w}', or narrow '{}' if '{w}' is the one you meant",
                    l.words[k], l.words[k]
                ));
            diagnostics.push(d);
        }
    }
    CheckedWords {
        keys,
        diagnostics,
        entry_at,
    }
}

/// `gap`, the typo lengths (the list's own, or `defaults`, `matching.typos`, unless it
/// says `typos: false`) and `negated_by`, with the negating list resolved and marked used.
fn list_options(
    file: &SourceFile,
    i: usize,
    l: &WordList,
    symbols: &Symbols,
    defaults: Option<&Typos>,
    used: &mut ListsUsed,
    findings: &mut Findings,
) -> ListOptions {
    let negated_by = l.negated_by.as_ref().and_then(|n| {
        let pointer = format!("/word_lists/{i}/negated_by/list");
        match symbols.lists.get(&n.list) {
            Some(_) if n.list == l.id => {
                findings.error(
                    Code::SelfNegation,
                    format!("word list '{}' cannot be negated by itself", l.id),
                    file,
                    &pointer,
                );
                None
            }
            Some(&k) => {
                used.mark(k);
                Some((k, n.within))
            }
            None => {
                let hint = symbols.list_meant(&n.list, used);
                let mut d = Diagnostic::error(
                    Code::UnknownList,
                    format!("negated_by: no word list '{}'", n.list),
                )
                .at(Some(file.locate(&pointer)));
                if let Some(h) = hint {
                    d = d.hint(h);
                }
                findings.push(d);
                None
            }
        }
    });
    let typos_from = match (l.typos, l.typos_from) {
        (Some(false), Some(_)) => {
            findings.warn(
                Code::TyposConflict,
                format!(
                    "word list '{}' says typos: false and typos_from: the list tolerates no typo",
                    l.id
                ),
                file,
                &format!("/word_lists/{i}/typos_from"),
            );
            None
        }
        (Some(false), None) => None,
        (_, Some(from)) => Some(from),
        (Some(true), None) if defaults.is_none() => {
            findings.warn(
                Code::TyposWithoutLength,
                format!(
                    "word list '{}' says typos: true, but no length is given: it tolerates no typo",
                    l.id
                ),
                file,
                &format!("/word_lists/{i}/typos"),
            );
            None
        }
        (_, None) => defaults.map(|t| t.from),
    };
    ListOptions {
        gap: l.gap.unwrap_or(DEFAULT_GAP),
        typos_from,
        typo_first_letter_from: Some(
            defaults.map_or(crate::rules::Typos::default_first_letter_from(), |t| {
                t.first_letter_from
            }),
        ),
        negated_by,
    }
}

/// The finding about the scanner [`scanner`] built, when its automaton was too large to
/// build.
pub(super) fn scanner_finding(scanner: &Scanner, lists: &[ListDef], findings: &mut Findings) {
    if let Some(e) = scanner.error() {
        let d = Diagnostic::error(
            Code::ListTooLarge,
            format!("the word lists cannot be compiled: {e}"),
        )
        .at(lists.first().map(|l| l.at.clone()))
        .hint("split long lists of stems into fewer, shorter entries");
        findings.push(d);
    }
}

/// The `matching.typos` section of `files`, if any (the first: a second is reported as a
/// duplicate `matching`).
pub(super) fn typo_defaults(files: &[(SourceFile, RuleFile)]) -> Option<&Typos> {
    files
        .iter()
        .find_map(|(_, rf)| rf.matching.as_ref())
        .and_then(|m| m.typos.as_ref())
}

/// The one-pass matcher over every list's words and patterns (it holds its own error when an
/// automaton is too large to build; see [`scanner_finding`]); `keys` are each list's
/// words normalised by `normalizer` ([`CheckedWords::keys`]), `files` give the known words of
/// `matching.typos`.
pub(super) fn scanner(
    lists: &[ListDef],
    keys: &[Vec<String>],
    normalizer: &Normalizer,
    files: &[(SourceFile, RuleFile)],
) -> Scanner {
    let specs: Vec<ListSpec<'_>> = lists
        .iter()
        .zip(keys)
        .map(|(l, keys)| ListSpec {
            words: &l.entries[..l.words],
            normalized: Some(keys),
            patterns: &l.patterns,
            options: &l.options,
        })
        .collect();
    // Each item of `known_words` is one or more words.
    let known: Vec<String> = typo_defaults(files)
        .into_iter()
        .flat_map(|t| &t.known_words)
        .map(|w| normalizer.normalize(w.trim()))
        .collect();
    let words = known.iter().flat_map(|k| k.split_whitespace());
    Scanner::new(&specs, normalizer).with_known_words(words)
}
