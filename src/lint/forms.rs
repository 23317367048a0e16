//! Entries that word-aware matching narrowed to nothing the test cases show: with
//! `matching.word_endings`, an unmarked stem matches its word in its forms only, so a stem that
//! was written as the start of longer words (`rewrit` for "rewrite", "rewriting")
//! would match none of them. The cases are the evidence: a stem that some case's word starts
//! with, and that no case's word has in its forms, is reported with the fix (`rewrit*`).

use crate::diag::{Code, Diagnostic};
use crate::ruleset::{ListDef, RuleSet};
use crate::testing::LoadedCase;

/// A warning for each `words` entry word that the cases show narrowed to nothing.
pub(super) fn narrowed(rs: &RuleSet, cases: &[LoadedCase]) -> Vec<Diagnostic> {
    let Some(endings) = rs.normalizer.endings() else {
        return Vec::new();
    };
    // The words of every case's message, with the case they come from.
    let mut words: Vec<(String, usize)> = Vec::new();
    for (k, c) in cases.iter().enumerate() {
        let text = rs
            .normalizer
            .normalize_message(c.case.request.user_message().unwrap_or_default());
        for (s, e) in crate::text::word_spans(&text) {
            if let Some(w) = text.get(s as usize..e as usize) {
                words.push((w.to_owned(), k));
            }
        }
    }
    words.sort();
    words.dedup_by(|a, b| a.0 == b.0);
    let mut out = Vec::new();
    for (list, e, written, stem) in entry_words(rs) {
        if written.ends_with(['$', '*']) {
            continue;
        }
        let from = words.partition_point(|(w, _)| w.as_str() < stem.as_str());
        let starting: Vec<&(String, usize)> = words[from..]
            .iter()
            .take_while(|(w, _)| w.starts_with(stem.as_str()))
            .collect();
        let fits = starting
            .iter()
            .any(|(w, _)| endings.allows(&w[stem.len()..]));
        let Some((longer, case)) = starting.first().filter(|_| !fits) else {
            continue;
        };
        let name = &cases[*case].case.name;
        out.push(
            Diagnostic::warning(
                Code::NarrowedEntry,
                format!(
                    "word list '{}': '{written}' matches its word in its forms only (matching.word_endings), and no test case has one of them; «{longer}» (case '{name}') starts with it and goes on past the endings",
                    list.id
                ),
            )
            .at(list.entry_at.get(e).cloned())
            .hint(format!(
                "write '{written}*' if words that start with it are meant, or '{written}$' and its forms if not"
            )),
        );
    }
    out
}

/// A warning for each whole-word (`$`) entry word that no message ever shows: the normaliser
/// reads it as another word in every message (`matching.transliterate.words`), so the entry
/// waits for a word that is never there. (A stem, or a word in its forms, still matches its
/// longer words, and is left alone.)
pub(super) fn respelled(rs: &RuleSet) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (list, e, written, stem) in entry_words(rs) {
        if !written.ends_with('$') {
            continue;
        }
        // The same question as for a pattern's words (`respelled_patterns`).
        let Some(read) = rs.normalizer.respelling(&stem) else {
            continue;
        };
        out.push(
            Diagnostic::warning(
                Code::RespelledEntry,
                format!(
                    "word list '{}': '{written}' never matches: every message reads «{stem}» as «{read}» (matching.transliterate.words)",
                    list.id
                ),
            )
            .at(list.entry_at.get(e).cloned())
            .hint(format!(
                "write «{read}» in its place, or drop the entry if the list already has it"
            )),
        );
    }
    out
}

/// A warning for each word written in a list's pattern that `matching.transliterate.words`
/// reads as another word in every message (a pattern `meal\s*plan` once «plan» reads as its
/// Russian word), unless the pattern also has the word it is read as.
pub(super) fn respelled_patterns(rs: &RuleSet) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for list in &rs.lists {
        for (e, pattern) in list.entries.iter().enumerate().skip(list.words) {
            let Ok(ast) = regex_syntax::ast::parse::Parser::new().parse(pattern) else {
                continue;
            };
            let mut words = Vec::new();
            literal_words(&ast, &mut words);
            words.sort();
            words.dedup();
            for word in words {
                let Some(read) = rs.normalizer.respelling(&word) else {
                    continue;
                };
                if pattern.contains(read.as_str()) {
                    continue;
                }
                out.push(
                    Diagnostic::warning(
                        Code::RespelledEntry,
                        format!(
                            "word list '{}': the pattern's word «{word}» never matches as written: every message reads it as «{read}» (matching.transliterate.words)",
                            list.id
                        ),
                    )
                    .at(list.entry_at.get(e).cloned())
                    .hint(format!("write «{read}» in the pattern, in its place or beside it")),
                );
            }
        }
    }
    out
}

/// The words a pattern spells out letter by letter: each run of literal letters in a
/// sequence, lower-cased, that nothing else glues a letter to (a class or a repetition ends
/// it).
fn literal_words(ast: &regex_syntax::ast::Ast, out: &mut Vec<String>) {
    use regex_syntax::ast::Ast;
    match ast {
        Ast::Concat(c) => {
            let mut run = String::new();
            for a in &c.asts {
                match a {
                    Ast::Literal(l) if l.c.is_alphanumeric() => run.extend(l.c.to_lowercase()),
                    other => {
                        flush(&mut run, out);
                        literal_words(other, out);
                    }
                }
            }
            flush(&mut run, out);
        }
        Ast::Alternation(a) => a.asts.iter().for_each(|a| literal_words(a, out)),
        Ast::Group(g) => literal_words(&g.ast, out),
        Ast::Repetition(r) => literal_words(&r.ast, out),
        _ => {}
    }
}

/// Ends a run of [`literal_words`]: the run is a word.
fn flush(run: &mut String, out: &mut Vec<String>) {
    if !run.is_empty() {
        out.push(std::mem::take(run));
    }
}

/// Every word of every `words` entry (not the `…` of a gap): its list, the entry's position,
/// the word as written and its stem normalised (without a trailing `$` or `*`); words whose
/// stem is empty or holds more than letters and digits are left out.
fn entry_words(rs: &RuleSet) -> impl Iterator<Item = (&ListDef, usize, &str, String)> {
    rs.lists.iter().flat_map(move |list| {
        (list.entries[..list.words].iter().enumerate()).flat_map(move |(e, entry)| {
            entry
                .split_whitespace()
                .filter(|w| !matches!(*w, "…" | "..."))
                .filter_map(move |written| {
                    let stem = rs
                        .normalizer
                        .normalize(written.trim_end_matches(['$', '*']));
                    (!stem.is_empty() && stem.chars().all(crate::text::is_alphanumeric))
                        .then_some((list, e, written, stem))
                })
        })
    })
}
