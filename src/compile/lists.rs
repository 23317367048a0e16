//! Pass 2: the normaliser of the `matching` section, then every word list normalised the way
//! messages will be and built into its matcher; entries that add nothing are warned about, and
//! lists no condition mentions are found at the end.

use std::collections::HashMap;
use std::sync::Arc;

use super::ruleset::ListDef;
use super::{Compiler, SourceFile, source};
use crate::diag::Diagnostic;
use crate::text::{Normalizer, WordMatcher};

impl Compiler<'_> {
    /// Every word list, in file order (a list defined twice is compiled once).
    pub(super) fn lists(&mut self, normalizer: &Normalizer) -> Vec<ListDef> {
        let files = self.files;
        let mut lists = Vec::new();
        for (file, rf) in files {
            for (i, l) in rf.word_lists.iter().enumerate() {
                if seen_lists_first(&lists, &l.id) {
                    continue;
                }
                lists.push(self.word_list(file, i, l, normalizer));
            }
        }
        lists
    }

    /// Warns about the lists no condition mentions (run after every condition is compiled).
    pub(super) fn unused_lists(&mut self, lists: &[ListDef]) {
        for l in lists {
            let used = self
                .list_ids
                .get(&*l.id)
                .is_some_and(|&idx| self.list_used[idx]);
            if !used {
                self.diagnostics.push(
                    Diagnostic::warning(
                        "unused-list",
                        format!("word list '{}' is not used by any rule", l.id),
                    )
                    .at(Some(l.at.clone())),
                );
            }
        }
    }

    /// The `matching` section: at most one, folds of one character to one character.
    pub(super) fn normalizer(&mut self) -> Normalizer {
        let files = self.files;
        let mut found = files
            .iter()
            .filter_map(|(f, rf)| rf.matching.as_ref().map(|m| (f, m)));
        let Some((file, m)) = found.next() else {
            return Normalizer::default();
        };
        for (f2, _) in found {
            let d = Diagnostic::error(
                "duplicate-section",
                format!("'matching' is already defined in {}", file.path.display()),
            )
            .at(Some(f2.locate_key("/matching")))
            .hint("a rules directory has one 'matching' section; merge the two");
            self.diagnostics.push(d);
        }
        let mut folds = Vec::new();
        for (from, to) in &m.folds {
            let mut f = from.chars();
            let mut t = to.chars();
            match (f.next(), f.next(), t.next(), t.next()) {
                (Some(a), None, Some(b), None) if !a.is_ascii() => folds.push((a, b)),
                _ => {
                    let pointer = format!("/matching/folds/{}", source::escape(from));
                    let d = Diagnostic::error(
                        "bad-fold",
                        format!(
                            "fold '{from}' → '{to}': each side must be one character, and the first not ASCII (ASCII is only lower-cased)"
                        ),
                    )
                    .at(Some(file.locate_key(&pointer)));
                    self.diagnostics.push(d);
                }
            }
        }
        Normalizer::new(folds)
    }

    fn word_list(
        &mut self,
        file: &SourceFile,
        i: usize,
        l: &crate::rules::WordList,
        normalizer: &Normalizer,
    ) -> ListDef {
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
                    .trim_end_matches('$')
            })
            .collect();
        // Each entry's first index, and the entries by first stem: duplicate and redundancy
        // checks by lookup, linear in the list's length.
        let mut first_of: HashMap<&str, usize> = HashMap::new();
        let mut by_head: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, key) in keys.iter().enumerate() {
            first_of.entry(key.as_str()).or_insert(k);
            if !heads[k].is_empty() {
                by_head.entry(heads[k]).or_default().push(k);
            }
        }
        for (j, w) in l.words.iter().enumerate() {
            let p = format!("/word_lists/{i}/words/{j}");
            if let Err(e) = WordMatcher::check_word(w) {
                self.error("bad-word", format!("word list '{}': {e}", l.id), file, &p);
                continue;
            }
            if let Some(&first) = first_of.get(keys[j].as_str()).filter(|&&f| f < j) {
                self.warn(
                    "duplicate-entry",
                    format!(
                        "'{w}' is already entry {} of word list '{}'",
                        first + 1,
                        l.id
                    ),
                    file,
                    &p,
                );
                continue;
            }
            // An entry another one already covers (a shorter stem, fewer words) adds nothing.
            // Only entries whose first stem starts this one can: look those up by each prefix
            // of this entry's first word, instead of comparing every pair.
            let first_word = keys[j].split_whitespace().next().unwrap_or("");
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
                    && WordMatcher::covers(&keys[k], &keys[j])
                    && (k < j || !WordMatcher::covers(&keys[j], &keys[k]))
            });
            if let Some(k) = covering {
                let d = Diagnostic::warning(
                    "redundant-entry",
                    format!(
                        "'{w}' adds nothing to word list '{}': entry {} '{}' already matches everything it matches",
                        l.id,
                        k + 1,
                        l.words[k]
                    ),
                )
                .at(Some(file.locate(&p)))
                .hint(format!(
                    "a stem matches every word that starts with it, so '{}' already matches what '{w}' does; remove '{w}'",
                    l.words[k]
                ));
                self.diagnostics.push(d);
            }
        }
        let mut seen_patterns: HashMap<&str, usize> = HashMap::new();
        for (j, pat) in l.patterns.iter().enumerate() {
            let p = format!("/word_lists/{i}/patterns/{j}");
            if let Err(e) = WordMatcher::compile_pattern(pat) {
                let code = match e {
                    crate::text::EntryError::MatchesEmpty => "matches-empty",
                    _ => "bad-regex",
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
                self.diagnostics.push(d);
            }
            if let Some(first) = seen_patterns.insert(pat.as_str(), j) {
                self.warn(
                    "duplicate-entry",
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
            self.error(
                "empty-list",
                format!("word list '{}' has no words and no patterns", l.id),
                file,
                &format!("/word_lists/{i}/id"),
            );
        }
        let matcher = WordMatcher::new(&l.words, &l.patterns, normalizer);
        if let Some(e) = matcher.error() {
            self.error(
                "list-too-large",
                format!("word list '{}' cannot be compiled: {e}", l.id),
                file,
                &format!("/word_lists/{i}"),
            );
        }
        let entry_at = (0..l.words.len())
            .map(|j| file.locate(&format!("/word_lists/{i}/words/{j}")))
            .chain(
                (0..l.patterns.len())
                    .map(|j| file.locate(&format!("/word_lists/{i}/patterns/{j}"))),
            )
            .collect();
        ListDef {
            id: Arc::from(l.id.as_str()),
            matcher,
            entries: l.words.iter().chain(&l.patterns).cloned().collect(),
            words: l.words.len(),
            at: file.locate(&format!("/word_lists/{i}/id")),
            entry_at,
        }
    }
}

fn seen_lists_first(lists: &[ListDef], id: &str) -> bool {
    lists.iter().any(|l| &*l.id == id)
}
