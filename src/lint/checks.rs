//! Meaning checks that look at the whole compiled ruleset at once: rules that can never fire,
//! and guards on tools that never reach the guards. None of them makes the rules unusable (the
//! service loads them), so they are warnings; `turnout lint --deny-warnings` fails on them.
//!
//! What is decided, and what is not (see [`super::logic`] for the reasoning about conditions):
//!
//! - `never-fires`: a pre-rule, search rule or guard whose condition can never hold.
//! - `shadowed-rule`: a first-match rule (pre-rules; search rules; the guards watching one tool)
//!   whose condition implies an earlier rule's, or the `any` of the earlier ones', so the earlier
//!   one always fires first; or a search rule that only holds while `search.off_when` does.
//!   Word lists are opaque here: a rule on `mentions: a` is not shadowed by one on
//!   `mentions: b` even if every word of `a` is in `b`.
//! - `never-offered`: a tool whose `available_when` can never hold.
//! - `unreachable-guard`: a guard watching a tool that no call to reach the guards can have:
//!   the router's skill tool and the search tool (their calls become the decision's `skill` and
//!   `web_search`, not calls), or a tool that is never offered to the model and that no pre-rule
//!   calls.

//!
//! Each condition is put in normal form once, and each first-match list is read once, in order,
//! comparing a rule only with the earlier rules that test something it tests
//! ([`super::shadow`]): the work grows with the rules, not with their pairs.

use std::collections::{HashMap, HashSet};

use crate::diag::{Code, Diagnostic, Location};
use crate::ruleset::{ActionDef, RuleSet};

use super::logic::{Normal, satisfiable};
use super::shadow::{Dead, FirstMatch};

/// Every whole-model finding about `rs`. Each compiled definition carries where it is written,
/// so findings point into the files without reading them again.
pub(crate) fn check(rs: &RuleSet) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let pre: Vec<Normal> = rs.pre_rules.iter().map(|r| Normal::new(&r.when)).collect();
    let producible = tools(rs, &pre, &mut out);
    pre_rules(rs, &pre, &mut out);
    search_rules(rs, &mut out);
    guards(rs, &producible, &mut out);
    super::embedded::check(rs, &mut out);
    out
}

/// `file:line` of a place, for hints that point at a second place.
fn line_of(at: &Location) -> String {
    format!("{}:{}", at.file.display(), at.line)
}

/// Tools whose `available_when` never holds; returns which tools can be a call at the guards.
fn tools(rs: &RuleSet, pre: &[Normal], out: &mut Vec<Diagnostic>) -> Vec<bool> {
    let from_pre: HashSet<usize> = rs
        .pre_rules
        .iter()
        .zip(pre)
        .filter(|(_, when)| when.satisfiable() != Some(false))
        .flat_map(|(r, _)| match &r.action {
            ActionDef::Calls(calls) => calls.iter().map(|c| c.tool).collect(),
            ActionDef::Skill(_) => Vec::new(),
        })
        .collect();
    let switches = [
        Some(rs.router.skill_tool_idx),
        rs.search.as_ref().map(|s| s.tool),
    ];
    let mut producible = Vec::with_capacity(rs.tools.len());
    for (k, tool) in rs.tools.iter().enumerate() {
        let offered = match &tool.available_when {
            Some(c) => satisfiable(c) != Some(false),
            None => true,
        };
        if !offered {
            out.push(
                Diagnostic::warning(
                    Code::NeverOffered,
                    format!(
                        "tool '{}' is never offered to the model: its available_when can never hold",
                        tool.id
                    ),
                )
                .at(tool.available_when_at.clone())
                .rule(&*tool.id)
                .hint("its parts contradict each other; remove the tool, or fix the condition"),
            );
        }
        producible.push(!switches.contains(&Some(k)) && (offered || from_pre.contains(&k)));
    }
    producible
}

fn pre_rules(rs: &RuleSet, pre: &[Normal], out: &mut Vec<Diagnostic>) {
    let mut list = FirstMatch::default();
    for (rule, when) in rs.pre_rules.iter().zip(pre) {
        let found = list.judge(when);
        list.push(when, found.is_none());
        let d = match found {
            None => continue,
            Some(Dead::Never) => never(&rule.id, "pre-rule"),
            Some(Dead::ShadowedBy(i)) => {
                let other = &rs.pre_rules[i].id;
                Diagnostic::warning(
                    Code::ShadowedRule,
                    format!(
                        "pre-rule '{}' can never fire: whenever it holds, the earlier pre-rule '{other}' holds too and settles the message first",
                        rule.id
                    ),
                )
                .hint(format!(
                    "'{other}' is at {}; move '{}' before it, or narrow one of the two conditions",
                    line_of(&rs.pre_rules[i].at),
                    rule.id
                ))
            }
            Some(Dead::ShadowedByAll(earlier)) => {
                let names = quoted(earlier.iter().map(|&i| &*rs.pre_rules[i].id));
                Diagnostic::warning(
                    Code::ShadowedRule,
                    format!(
                        "pre-rule '{}' can never fire: whenever it holds, one of the earlier pre-rules {names} holds and settles the message first",
                        rule.id
                    ),
                )
                .hint("move it before them, or narrow its condition")
            }
        };
        out.push(d.at(Some(rule.at.clone())).rule(&*rule.id));
    }
}

fn search_rules(rs: &RuleSet, out: &mut Vec<Diagnostic>) {
    let Some(search) = &rs.search else { return };
    let conds: Vec<Normal> = search.rules.iter().map(|r| Normal::new(&r.when)).collect();
    let off = search.off_when.as_ref().map(Normal::new);
    let mut list = FirstMatch::default();
    for (rule, when) in search.rules.iter().zip(&conds) {
        let found = list.judge(when);
        let off_always = off
            .as_ref()
            .is_some_and(|off| when.implies(off) == Some(true));
        list.push(when, found.is_none() && !off_always);
        let d = match found {
            Some(Dead::Never) => never(&rule.id, "search rule"),
            _ if off_always => {
                let at_off = search
                    .off_when_at
                    .as_ref()
                    .map_or_else(String::new, |l| format!(" (at {})", line_of(l)));
                Diagnostic::warning(
                    Code::ShadowedRule,
                    format!(
                        "search rule '{}' can never fire: whenever it holds, search.off_when holds too and keeps web search off",
                        rule.id
                    ),
                )
                .hint(format!(
                    "narrow the rule, or the off_when{at_off}"
                ))
            }
            None => continue,
            Some(Dead::ShadowedBy(i)) => {
                let other = &search.rules[i].id;
                Diagnostic::warning(
                    Code::ShadowedRule,
                    format!(
                        "search rule '{}' can never fire: whenever it holds, the earlier search rule '{other}' holds too and switches web search on first",
                        rule.id
                    ),
                )
                .hint(format!(
                    "'{other}' is at {}; remove '{}', or narrow one of the two conditions",
                    line_of(&search.rules[i].at),
                    rule.id
                ))
            }
            Some(Dead::ShadowedByAll(earlier)) => {
                let names = quoted(earlier.iter().map(|&i| &*search.rules[i].id));
                Diagnostic::warning(
                    Code::ShadowedRule,
                    format!(
                        "search rule '{}' can never fire: whenever it holds, one of the earlier search rules {names} holds and switches web search on first",
                        rule.id
                    ),
                )
                .hint("remove it, or narrow its condition")
            }
        };
        out.push(d.at(Some(rule.at.clone())).rule(&*rule.id));
    }
}

/// For each guard and each tool it watches that can reach the guards, the earlier guards on
/// that tool that always drop the call first, if any (first match per tool). Each tool's list
/// is read once, in order.
type Shadowers = HashMap<(usize, usize), Vec<usize>>;

fn shadowers_per_tool(
    rs: &RuleSet,
    conds: &[Normal],
    producible: &[bool],
    watched: &mut [Vec<usize>],
) -> Shadowers {
    let can_hold: Vec<bool> = conds
        .iter()
        .map(|c| c.satisfiable() != Some(false))
        .collect();
    let mut found = HashMap::new();
    for (t, list) in rs.guards_by_tool.iter().enumerate().take(rs.tools.len()) {
        let mut earlier = FirstMatch::default();
        for &g in list {
            // A tool listed twice by one guard: the first place counts.
            if watched[g].last() != Some(&t) {
                watched[g].push(t);
                if can_hold[g] && producible.get(t).copied().unwrap_or(true) {
                    let by = match earlier.judge(&conds[g]) {
                        Some(Dead::ShadowedBy(i)) => vec![list[i]],
                        Some(Dead::ShadowedByAll(v)) => v.into_iter().map(|i| list[i]).collect(),
                        Some(Dead::Never) | None => Vec::new(),
                    };
                    if !by.is_empty() {
                        found.insert((g, t), by);
                    }
                }
            }
            earlier.push(&conds[g], can_hold[g]);
        }
    }
    found
}

fn guards(rs: &RuleSet, producible: &[bool], out: &mut Vec<Diagnostic>) {
    let conds: Vec<Normal> = rs
        .guards
        .iter()
        .map(|g| Normal::new(&g.drop_when))
        .collect();
    let mut watched = vec![Vec::new(); rs.guards.len()];
    let shadowed = shadowers_per_tool(rs, &conds, producible, &mut watched);
    for ((g, guard), watched) in rs.guards.iter().enumerate().zip(watched) {
        if conds[g].satisfiable() == Some(false) {
            let d = never(&guard.id, "guard");
            out.push(d.at(Some(guard.at.clone())).rule(&*guard.id));
            continue;
        }
        // Guards written with `tools:`: each listed tool that never reaches the guards.
        let listed = &guard.listed;
        for (name, name_at) in listed {
            let Some(&t) = rs.tool_ids.get(name) else {
                continue;
            };
            if producible.get(t).copied().unwrap_or(true) {
                continue;
            }
            let why = if t == rs.router.skill_tool_idx {
                "it is the router's skill tool: its call switches the skill and never reaches the guards".to_owned()
            } else if rs.search.as_ref().is_some_and(|s| s.tool == t) {
                "it is the search tool: its call switches web search on and never reaches the guards".to_owned()
            } else {
                "it is never offered to the model (its available_when can never hold) and no pre-rule calls it".to_owned()
            };
            let hint = if rs.search.as_ref().is_some_and(|s| s.tool == t) {
                "to keep web search off, use search.off_when".to_owned()
            } else if t == rs.router.skill_tool_idx {
                "to keep a skill from switching on, set 'auto: false' on it".to_owned()
            } else {
                "remove the tool from the guard's list".to_owned()
            };
            out.push(
                Diagnostic::warning(
                    Code::UnreachableGuard,
                    format!(
                        "guard '{}' watches '{name}', which no rule or model can produce: {why}",
                        guard.id
                    ),
                )
                .at(Some(name_at.clone()))
                .rule(&*guard.id)
                .hint(hint),
            );
        }
        let reachable: Vec<usize> = watched
            .iter()
            .copied()
            .filter(|&t| producible.get(t).copied().unwrap_or(true))
            .collect();
        if reachable.is_empty() {
            if listed.is_empty() {
                out.push(
                    Diagnostic::warning(
                        Code::UnreachableGuard,
                        format!("guard '{}' can never fire: no tool can be called", guard.id),
                    )
                    .at(Some(guard.at.clone()))
                    .rule(&*guard.id),
                );
            }
            continue;
        }
        // First match per tool: shadowed when, on every tool it can see, the earlier guards
        // watching that tool (one of them, or together) always drop the call first.
        let mut shadowers: Vec<usize> = Vec::new();
        let shadowed_everywhere = reachable.iter().all(|&t| {
            let Some(earlier) = shadowed.get(&(g, t)) else {
                return false;
            };
            for &h in earlier {
                if !shadowers.contains(&h) {
                    shadowers.push(h);
                }
            }
            true
        });
        if shadowed_everywhere {
            shadowers.sort_unstable();
            let names = quoted(shadowers.iter().map(|&h| &*rs.guards[h].id));
            let first = shadowers.first().copied().unwrap_or(0);
            let (message, hint) = if shadowers.len() == 1 {
                (
                    format!(
                        "guard '{}' can never fire: whenever it holds, the earlier guard {names} holds too and drops the call first",
                        guard.id
                    ),
                    format!(
                        "{names} is at {}; remove this guard, or narrow one of the conditions",
                        line_of(&rs.guards[first].at)
                    ),
                )
            } else {
                (
                    format!(
                        "guard '{}' can never fire: whenever it holds, one of the earlier guards {names} holds and drops the call first",
                        guard.id
                    ),
                    "remove this guard, or narrow its condition".to_owned(),
                )
            };
            out.push(
                Diagnostic::warning(Code::ShadowedRule, message)
                    .at(Some(guard.at.clone()))
                    .rule(&*guard.id)
                    .hint(hint),
            );
        }
    }
}

fn never(id: &str, kind: &str) -> Diagnostic {
    Diagnostic::warning(
        Code::NeverFires,
        format!("{kind} '{id}' can never fire: its condition can never hold"),
    )
    .hint("its parts contradict each other (e.g. longer_than: 20 and shorter_than: 10, or two different skills active at once)")
}

fn quoted<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.map(|id| format!("'{id}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
