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

use std::collections::HashSet;

use crate::compile::ruleset::{ActionDef, Cond, RuleSet};
use crate::diag::{Diagnostic, Location};

use super::logic::{implies, satisfiable};

/// Every whole-model finding about `rs`. Each compiled definition carries where it is written,
/// so findings point into the files without reading them again.
pub(crate) fn check(rs: &RuleSet) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let producible = tools(rs, &mut out);
    pre_rules(rs, &mut out);
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
fn tools(rs: &RuleSet, out: &mut Vec<Diagnostic>) -> Vec<bool> {
    let from_pre: HashSet<usize> = rs
        .pre_rules
        .iter()
        .filter(|r| satisfiable(&r.when) != Some(false))
        .flat_map(|r| match &r.action {
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
                    "never-offered",
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

/// Why rule `j` of a first-match list never fires, if it can be decided: its condition never
/// holds, or an earlier one (or the earlier ones together) always holds with it.
enum Dead {
    Never,
    ShadowedBy(usize),
    ShadowedByAll(Vec<usize>),
}

/// `dead[i]`: rule `i` (before `j`) was found never to fire; it is not named as the reason.
fn first_match(conds: &[&Cond], dead: &[bool], j: usize) -> Option<Dead> {
    let when = conds[j];
    if satisfiable(when) == Some(false) {
        return Some(Dead::Never);
    }
    let live: Vec<usize> = (0..j).filter(|&i| !dead[i]).collect();
    if let Some(&i) = live
        .iter()
        .find(|&&i| implies(when, conds[i]) == Some(true))
    {
        return Some(Dead::ShadowedBy(i));
    }
    // Together: the earlier rules that can hold at the same time as this one.
    let overlapping: Vec<usize> = live
        .into_iter()
        .filter(|&i| satisfiable(&Cond::All(vec![when.clone(), conds[i].clone()])) != Some(false))
        .collect();
    if overlapping.len() > 1 {
        let union = Cond::Any(overlapping.iter().map(|&i| conds[i].clone()).collect());
        if implies(when, &union) == Some(true) {
            return Some(Dead::ShadowedByAll(overlapping));
        }
    }
    None
}

fn pre_rules(rs: &RuleSet, out: &mut Vec<Diagnostic>) {
    let conds: Vec<&Cond> = rs.pre_rules.iter().map(|r| &r.when).collect();
    let mut dead = vec![false; conds.len()];
    for (j, rule) in rs.pre_rules.iter().enumerate() {
        let found = first_match(&conds, &dead, j);
        dead[j] = found.is_some();
        let d = match found {
            None => continue,
            Some(Dead::Never) => never(&rule.id, "pre-rule"),
            Some(Dead::ShadowedBy(i)) => {
                let other = &rs.pre_rules[i].id;
                Diagnostic::warning(
                    "shadowed-rule",
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
                    "shadowed-rule",
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
    let conds: Vec<&Cond> = search.rules.iter().map(|r| &r.when).collect();
    let mut dead = vec![false; conds.len()];
    for (j, rule) in search.rules.iter().enumerate() {
        let found = first_match(&conds, &dead, j);
        let off = search.off_when.as_ref();
        let off_always = off.is_some_and(|off| implies(&rule.when, off) == Some(true));
        dead[j] = found.is_some() || off_always;
        let d = match found {
            Some(Dead::Never) => never(&rule.id, "search rule"),
            _ if off_always => {
                let at_off = search
                    .off_when_at
                    .as_ref()
                    .map_or_else(String::new, |l| format!(" (at {})", line_of(l)));
                Diagnostic::warning(
                    "shadowed-rule",
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
                    "shadowed-rule",
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
                    "shadowed-rule",
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

fn guards(rs: &RuleSet, producible: &[bool], out: &mut Vec<Diagnostic>) {
    for (g, guard) in rs.guards.iter().enumerate() {
        let watched: Vec<usize> = (0..rs.tools.len())
            .filter(|&t| rs.guards_by_tool[t].contains(&g))
            .collect();
        if satisfiable(&guard.drop_when) == Some(false) {
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
                    "unreachable-guard",
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
                        "unreachable-guard",
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
            let list: Vec<usize> = rs.guards_by_tool[t]
                .iter()
                .copied()
                .take_while(|&h| h != g)
                .chain([g])
                .collect();
            let conds: Vec<&Cond> = list.iter().map(|&h| &rs.guards[h].drop_when).collect();
            let dead: Vec<bool> = conds
                .iter()
                .map(|c| satisfiable(c) == Some(false))
                .collect();
            let earlier = match first_match(&conds, &dead, list.len() - 1) {
                Some(Dead::ShadowedBy(i)) => vec![list[i]],
                Some(Dead::ShadowedByAll(v)) => v.into_iter().map(|i| list[i]).collect(),
                Some(Dead::Never) | None => return false,
            };
            for h in earlier {
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
                Diagnostic::warning("shadowed-rule", message)
                    .at(Some(guard.at.clone()))
                    .rule(&*guard.id)
                    .hint(hint),
            );
        }
    }
}

fn never(id: &str, kind: &str) -> Diagnostic {
    Diagnostic::warning(
        "never-fires",
        format!("{kind} '{id}' can never fire: its condition can never hold"),
    )
    .hint("its parts contradict each other (e.g. longer_than: 20 and shorter_than: 10, or two different skills active at once)")
}

fn quoted<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.map(|id| format!("'{id}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
