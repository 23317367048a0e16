//! Test coverage of a rules directory: which rules fired and which word-list entries matched in
//! at least one test case.
//!
//! - A **rule** (pre-rule, search rule, guard) is exercised when it appears in a case's trace:
//!   it fired, or vetoed a call.
//! - A **word-list entry** (a word or a pattern) is exercised when a condition of the case's
//!   decision looked the list up *and* the entry occurs in the case's message. The decision only
//!   records which lists it consulted (an opt-in `Probe`, free when absent); the entries are
//!   matched afterwards, here, with every occurrence rather than the first.
//!
//! The overall figure is exercised items over all items, rules and entries counted alike.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::contract::{Decision, Request};
use crate::diag::Location;
use crate::engine::probe::Probe;
use crate::ruleset::RuleSet;
use crate::testing::{self, CaseResult, LoadedCase};

/// One thing coverage counts.
#[derive(Debug, Clone)]
pub struct Item {
    /// `pre-rule`, `search rule`, `guard`, `word` or `pattern`.
    pub kind: &'static str,
    /// The rule id, or the entry as written.
    pub name: String,
    /// Where it is written.
    pub location: Option<Location>,
    /// Whether a test case exercised it.
    pub covered: bool,
}

/// A word list and its entries.
#[derive(Debug, Clone)]
pub struct ListCoverage {
    /// The list id.
    pub id: String,
    /// Where the list is written.
    pub location: Option<Location>,
    /// Its words, then its patterns.
    pub entries: Vec<Item>,
}

/// What the test cases of a directory exercised.
#[derive(Debug, Clone)]
pub struct Coverage {
    /// Pre-rules, search rules and guards, in ruleset order.
    pub rules: Vec<Item>,
    /// Word lists, in ruleset order.
    pub lists: Vec<ListCoverage>,
    rule_index: HashMap<String, usize>,
}

impl Coverage {
    /// Nothing exercised yet, for `rs` (whose definitions say where they are written).
    pub fn new(rs: &RuleSet) -> Self {
        let search = rs.search.iter().flat_map(|s| &s.rules);
        let rules: Vec<Item> = rs
            .pre_rules
            .iter()
            .map(|r| ("pre-rule", &r.id, &r.at))
            .chain(search.map(|r| ("search rule", &r.id, &r.at)))
            .chain(rs.guards.iter().map(|g| ("guard", &g.id, &g.at)))
            .map(|(kind, id, at)| Item {
                kind,
                name: id.to_string(),
                location: Some(at.clone()),
                covered: false,
            })
            .collect();
        let rule_index = rules
            .iter()
            .enumerate()
            .map(|(k, r)| (r.name.clone(), k))
            .collect();
        let lists = rs
            .lists
            .iter()
            .map(|l| ListCoverage {
                id: l.id.to_string(),
                location: Some(l.at.clone()),
                entries: l
                    .entries
                    .iter()
                    .zip(&l.entry_at)
                    .enumerate()
                    .map(|(e, (text, at))| Item {
                        kind: if e < l.words { "word" } else { "pattern" },
                        name: text.clone(),
                        location: Some(at.clone()),
                        covered: false,
                    })
                    .collect(),
            })
            .collect();
        Coverage {
            rules,
            lists,
            rule_index,
        }
    }

    /// Records one decision: the rules in its trace, and the entries of the lists `probe` saw
    /// consulted that occur in the request's message.
    pub(crate) fn record(
        &mut self,
        rs: &RuleSet,
        request: &Request,
        decision: &Decision,
        probe: &Probe,
    ) {
        for id in decision.trace.iter().filter_map(|s| s.rule.as_deref()) {
            if let Some(&k) = self.rule_index.get(id) {
                self.rules[k].covered = true;
            }
        }
        let text = rs
            .normalizer
            .normalize_message(request.user_message().unwrap_or_default());
        let consulted: Vec<usize> = probe.consulted().collect();
        rs.scanner.each_entry_in(&text, |l, e| {
            if consulted.contains(&l)
                && let Some(item) = self.lists.get_mut(l).and_then(|c| c.entries.get_mut(e))
            {
                item.covered = true;
            }
        });
        // A negation that kept a list from matching ("do not delete") did its job: its entry is
        // exercised, although no rule consults the negation list itself.
        for n in rs.scanner.scan(&text).negations() {
            let (l, e) = (n.by.list as usize, n.by.hit.entry);
            if let Some(item) = self.lists.get_mut(l).and_then(|c| c.entries.get_mut(e)) {
                item.covered = true;
            }
        }
    }

    /// (exercised, all) rules.
    pub fn rules_covered(&self) -> (usize, usize) {
        count(self.rules.iter())
    }

    /// (exercised, all) word-list entries.
    pub fn entries_covered(&self) -> (usize, usize) {
        count(self.lists.iter().flat_map(|l| &l.entries))
    }

    /// Exercised items over all items, in percent (100 when there is nothing to cover).
    pub fn percent(&self) -> f64 {
        let (r, rt) = self.rules_covered();
        let (e, et) = self.entries_covered();
        percent(r + e, rt + et)
    }

    /// The one-line summary: `coverage 61.2% (250/408): rules 21/21, word-list entries 229/387`.
    pub fn summary(&self) -> String {
        let (r, rt) = self.rules_covered();
        let (e, et) = self.entries_covered();
        format!(
            "coverage {:.1}% ({}/{}): rules {r}/{rt}, word-list entries {e}/{et}",
            self.percent(),
            r + e,
            rt + et
        )
    }

    /// What no test case exercised, one line each: every rule, then every list with entries
    /// left, as `file:line: what`.
    pub fn uncovered_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in self.rules.iter().filter(|r| !r.covered) {
            out.push(format!(
                "{}{} '{}' never fired in a test case",
                place(r.location.as_ref()),
                r.kind,
                r.name
            ));
        }
        for l in &self.lists {
            let left: Vec<String> = l
                .entries
                .iter()
                .filter(|e| !e.covered)
                .map(|e| format!("'{}'", e.name))
                .collect();
            if left.is_empty() {
                continue;
            }
            out.push(format!(
                "{}word list '{}': {} of {} entries never matched in a test case: {}",
                place(l.location.as_ref()),
                l.id,
                left.len(),
                l.entries.len(),
                left.join(", ")
            ));
        }
        out
    }

    /// What [`Self::uncovered_lines`] says, short: every rule that never fired, and one line
    /// for the word-list entries no case matched (`--coverage` lists them).
    pub fn uncovered_short(&self) -> Vec<String> {
        let never = self.rules.iter().filter(|r| !r.covered).count();
        let mut out = self.uncovered_lines();
        out.truncate(never);
        let lists = self
            .lists
            .iter()
            .filter(|l| l.entries.iter().any(|e| !e.covered))
            .count();
        if lists > 0 {
            let entries: usize = self
                .lists
                .iter()
                .map(|l| l.entries.iter().filter(|e| !e.covered).count())
                .sum();
            out.push(format!(
                "{entries} word-list entries in {lists} lists never matched in a test case \
                 (--coverage lists them)"
            ));
        }
        out
    }

    /// The coverage as JSON: the figures and what was not exercised, with places.
    pub fn to_json(&self) -> Value {
        let (r, rt) = self.rules_covered();
        let (e, et) = self.entries_covered();
        let loc = |l: Option<&Location>| {
            l.map(|l| json!({"file": l.file.display().to_string(), "line": l.line, "column": l.column}))
        };
        let rules: Vec<Value> = self
            .rules
            .iter()
            .filter(|r| !r.covered)
            .map(|r| json!({"kind": r.kind, "id": r.name, "location": loc(r.location.as_ref())}))
            .collect();
        let entries: Vec<Value> = self
            .lists
            .iter()
            .flat_map(|l| {
                l.entries.iter().filter(|e| !e.covered).map(move |e| {
                    json!({"list": l.id, "kind": e.kind, "entry": e.name, "location": loc(e.location.as_ref())})
                })
            })
            .collect();
        json!({
            "percent": (self.percent() * 10.0).round() / 10.0,
            "rules": {"covered": r, "total": rt},
            "entries": {"covered": e, "total": et},
            "uncovered_rules": rules,
            "uncovered_entries": entries,
        })
    }
}

/// Runs every case with a probe and records what it exercised.
pub async fn run_cases(
    rs: &RuleSet,
    cases: &[LoadedCase],
    coverage: &mut Coverage,
) -> Vec<CaseResult> {
    let probe = Probe::new(rs);
    let mut out = Vec::with_capacity(cases.len());
    for c in cases {
        probe.reset();
        let result = testing::run_case_probed(rs, c, Some(&probe)).await;
        if let Some(d) = &result.decision {
            coverage.record(rs, &c.case.request, d, &probe);
        }
        out.push(result);
    }
    out
}

fn count<'a>(items: impl Iterator<Item = &'a Item>) -> (usize, usize) {
    items.fold((0, 0), |(c, t), i| (c + usize::from(i.covered), t + 1))
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn place(l: Option<&Location>) -> String {
    l.map(|l| format!("{}:{}: ", l.file.display(), l.line))
        .unwrap_or_default()
}
