//! Pass 1: every id is recorded before anything refers to one, so references resolve whatever
//! the file order, and an id defined twice is one error pointing at both places. What it gives,
//! [`Symbols`], is read by every later pass to resolve a reference (and to say "did you mean").

use std::collections::HashMap;
use std::sync::Arc;

use super::findings::{Findings, did_you_mean};
use crate::diag::{Code, Diagnostic, Location};
use crate::rules::RuleFile;
use crate::source::SourceFile;

/// The ids the files define, each with its index: the first definition's place among those of
/// its kind, in file order.
#[derive(Debug, Default)]
pub(super) struct Symbols {
    pub tools: HashMap<String, usize>,
    pub skills: HashMap<String, usize>,
    pub lists: HashMap<String, usize>,
    /// Declared integrations; empty when the rules declare none (then `integration:` values
    /// are not checked).
    pub integrations: HashMap<String, usize>,
}

/// Records the ids of tools, skills, word lists, integrations and rules.
pub(super) fn collect(files: &[(SourceFile, RuleFile)], findings: &mut Findings) -> Symbols {
    let mut symbols = Symbols::default();
    let mut seen_tools: HashMap<String, Location> = HashMap::new();
    let mut seen_skills: HashMap<String, Location> = HashMap::new();
    let mut seen_lists: HashMap<String, Location> = HashMap::new();
    let mut seen_rules: HashMap<String, Location> = HashMap::new();
    let mut seen_integrations: HashMap<String, Location> = HashMap::new();
    let mut record = |seen: &mut HashMap<String, Location>,
                      ids: Option<&mut HashMap<String, usize>>,
                      kind: &str,
                      id: &str,
                      file: &SourceFile,
                      pointer: &str| {
        define(seen, kind, id, file, pointer, findings);
        if let Some(ids) = ids {
            let n = ids.len();
            ids.entry(id.to_owned()).or_insert(n);
        }
    };
    for (file, rf) in files {
        for (i, t) in rf.tools.iter().enumerate() {
            let p = format!("/tools/{i}/id");
            record(
                &mut seen_tools,
                Some(&mut symbols.tools),
                "tool",
                &t.id,
                file,
                &p,
            );
        }
        for (i, s) in rf.skills.iter().enumerate() {
            let p = format!("/skills/{i}/id");
            record(
                &mut seen_skills,
                Some(&mut symbols.skills),
                "skill",
                &s.id,
                file,
                &p,
            );
        }
        for (i, l) in rf.word_lists.iter().enumerate() {
            let p = format!("/word_lists/{i}/id");
            record(
                &mut seen_lists,
                Some(&mut symbols.lists),
                "word list",
                &l.id,
                file,
                &p,
            );
        }
        for (i, g) in rf.integrations.iter().enumerate() {
            let p = format!("/integrations/{i}/id");
            let ids = Some(&mut symbols.integrations);
            record(&mut seen_integrations, ids, "integration", &g.id, file, &p);
        }
        let rule_ids = rf
            .pre_rules
            .iter()
            .enumerate()
            .map(|(i, r)| (&r.id, format!("/pre_rules/{i}/id")))
            .chain(
                rf.guards
                    .iter()
                    .enumerate()
                    .map(|(i, g)| (&g.id, format!("/guards/{i}/id"))),
            )
            .chain(rf.search.iter().flat_map(|s| {
                s.rules
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (&r.id, format!("/search/rules/{i}/id")))
            }))
            .chain(rf.router.iter().flat_map(|r| {
                let ins = r
                    .instructions
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (&n.id, format!("/router/instructions/{i}/id")));
                let notes = r
                    .notes
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (&n.id, format!("/router/notes/{i}/id")));
                ins.chain(notes)
            }));
        for (id, p) in rule_ids.collect::<Vec<_>>() {
            record(&mut seen_rules, None, "rule", id, file, &p);
        }
    }
    symbols
}

/// Records an id; a second definition is an error pointing at both places.
fn define(
    seen: &mut HashMap<String, Location>,
    kind: &str,
    id: &str,
    file: &SourceFile,
    pointer: &str,
    findings: &mut Findings,
) {
    let here = file.locate(pointer);
    if let Some(first) = seen.get(id) {
        let hint = format!(
            "first defined at {}:{}:{}",
            first.file.display(),
            first.line,
            first.column
        );
        findings.push(
            Diagnostic::error(
                Code::DuplicateId,
                format!("{kind} id '{id}' is defined twice"),
            )
            .at(Some(here))
            .rule(id)
            .hint(hint),
        );
    } else {
        seen.insert(id.to_owned(), here);
    }
}

impl Symbols {
    /// The index of tool `id`, or an `unknown-tool` error at `pointer` of `file`.
    pub fn tool(
        &self,
        id: &str,
        file: &SourceFile,
        pointer: &str,
        findings: &mut Findings,
    ) -> Option<usize> {
        resolve(
            &self.tools,
            Code::UnknownTool,
            "tool",
            id,
            file,
            pointer,
            findings,
        )
    }

    /// The index of skill `id`, or an `unknown-skill` error at `pointer` of `file`.
    pub fn skill(
        &self,
        id: &str,
        file: &SourceFile,
        pointer: &str,
        findings: &mut Findings,
    ) -> Option<usize> {
        resolve(
            &self.skills,
            Code::UnknownSkill,
            "skill",
            id,
            file,
            pointer,
            findings,
        )
    }

    /// The declared integrations' ids, in the order they are declared.
    pub fn integrations_in_order(&self) -> Vec<Arc<str>> {
        let mut ids: Vec<(&String, &usize)> = self.integrations.iter().collect();
        ids.sort_by_key(|(_, i)| **i);
        ids.into_iter()
            .map(|(id, _)| Arc::from(id.as_str()))
            .collect()
    }

    /// The "did you mean" hint for an unknown word list; the list it names counts as used, so
    /// one misspelt `mentions` is one finding (`unknown-list`), not also `unused-list`.
    pub fn list_meant(&self, wrong: &str, used: &mut ListsUsed) -> Option<String> {
        let hint = did_you_mean(wrong, self.lists.keys())?;
        let meant = hint.split('\'').nth(1).unwrap_or_default();
        if let Some(&i) = self.lists.get(meant) {
            used.mark(i);
        }
        Some(hint)
    }
}

fn resolve(
    ids: &HashMap<String, usize>,
    code: Code,
    kind: &str,
    id: &str,
    file: &SourceFile,
    pointer: &str,
    findings: &mut Findings,
) -> Option<usize> {
    if let Some(&i) = ids.get(id) {
        return Some(i);
    }
    let hint = did_you_mean(id, ids.keys());
    let mut d =
        Diagnostic::error(code, format!("unknown {kind} '{id}'")).at(Some(file.locate(pointer)));
    if let Some(h) = hint {
        d = d.hint(h);
    }
    findings.push(d);
    None
}

/// Which word lists something mentions (a condition's `mentions`, a list's `negated_by`, the
/// list a misspelt name was meant to be), by index: what the `unused-list` warning reads once
/// every pass has run.
///
/// Passed as `&mut` to each pass that reads conditions or lists, rather than a `Cell` shared
/// by `&`: those passes run one after another on one thread (the scanner built beside them
/// reads no condition), and the `&mut` in a pass's signature says that it can mark a list
/// used, which a `Cell` behind a `&` would hide.
#[derive(Debug)]
pub(super) struct ListsUsed(Vec<bool>);

impl ListsUsed {
    /// No list used yet, of `symbols`' lists.
    pub fn none(symbols: &Symbols) -> Self {
        Self(vec![false; symbols.lists.len()])
    }

    pub fn mark(&mut self, list: usize) {
        self.0[list] = true;
    }

    pub fn is_used(&self, list: usize) -> bool {
        self.0[list]
    }
}
