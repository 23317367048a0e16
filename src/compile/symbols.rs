//! Pass 1: every id is recorded before anything refers to one, so references resolve whatever
//! the file order, and an id defined twice is one error pointing at both places.

use std::collections::HashMap;

use super::{Compiler, SourceFile};
use crate::diag::{Code, Diagnostic, Location};

impl Compiler<'_> {
    /// Records the ids of tools, skills, word lists, integrations and rules.
    pub(super) fn symbols(&mut self) {
        let files = self.files;
        let mut seen_tools: HashMap<String, Location> = HashMap::new();
        let mut seen_skills: HashMap<String, Location> = HashMap::new();
        let mut seen_lists: HashMap<String, Location> = HashMap::new();
        let mut seen_rules: HashMap<String, Location> = HashMap::new();
        let mut seen_integrations: HashMap<String, Location> = HashMap::new();
        for (file, rf) in files {
            for (i, t) in rf.tools.iter().enumerate() {
                self.define(
                    &mut seen_tools,
                    "tool",
                    &t.id,
                    file,
                    &format!("/tools/{i}/id"),
                );
                let n = self.tool_ids.len();
                self.tool_ids.entry(t.id.clone()).or_insert(n);
            }
            for (i, s) in rf.skills.iter().enumerate() {
                self.define(
                    &mut seen_skills,
                    "skill",
                    &s.id,
                    file,
                    &format!("/skills/{i}/id"),
                );
                let n = self.skill_ids.len();
                self.skill_ids.entry(s.id.clone()).or_insert(n);
            }
            for (i, l) in rf.word_lists.iter().enumerate() {
                let p = format!("/word_lists/{i}/id");
                self.define(&mut seen_lists, "word list", &l.id, file, &p);
                let n = self.list_ids.len();
                self.list_ids.entry(l.id.clone()).or_insert(n);
            }
            for (i, g) in rf.integrations.iter().enumerate() {
                let p = format!("/integrations/{i}/id");
                self.define(&mut seen_integrations, "integration", &g.id, file, &p);
                let n = self.integration_ids.len();
                self.integration_ids.entry(g.id.clone()).or_insert(n);
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
                self.define(&mut seen_rules, "rule", id, file, &p);
            }
        }
        self.list_used = vec![false; self.list_ids.len()];
    }

    /// Records an id; a second definition is an error pointing at both places.
    fn define(
        &mut self,
        seen: &mut HashMap<String, Location>,
        kind: &str,
        id: &str,
        file: &SourceFile,
        pointer: &str,
    ) {
        let here = file.locate(pointer);
        if let Some(first) = seen.get(id) {
            let hint = format!(
                "first defined at {}:{}:{}",
                first.file.display(),
                first.line,
                first.column
            );
            self.diagnostics.push(
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
}
