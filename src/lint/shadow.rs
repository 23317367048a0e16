//! First-match lists — the pre-rules, the search rules, the guards watching one tool — read in
//! order: which rule can never fire because an earlier one (or the earlier ones together)
//! always holds with it.
//!
//! Comparing every rule with every earlier one expands hundreds of normal forms per rule. Here
//! the earlier rules that can still fire are filed by the [`Kind`]s of atom they test, and a
//! rule is only compared with those sharing a kind with it: a rule can only imply a condition
//! it shares no kind with when that condition always holds, and can only contradict one it
//! shares a kind with (see [`super::logic`]). "Shadowed by the earlier ones together" is first
//! refuted the cheap way ([`Normal::escapes_all`]); only when that fails are the terms
//! multiplied out. The answers are exactly those of comparing every pair.

use std::collections::HashMap;

use super::logic::{Kind, Normal};

/// Why a rule of a first-match list never fires.
pub(crate) enum Dead {
    /// Its condition never holds.
    Never,
    /// This earlier rule always holds with it.
    ShadowedBy(usize),
    /// One of these earlier rules (every earlier one that can hold with it) always does.
    ShadowedByAll(Vec<usize>),
}

/// A first-match list read so far.
#[derive(Default)]
pub(crate) struct FirstMatch<'n, 'c> {
    rules: Vec<&'n Normal<'c>>,
    /// Whether each rule can fire (one that cannot is never named as the reason).
    live: Vec<bool>,
    /// The live rules testing each kind, in order.
    by_kind: HashMap<Kind<'c>, Vec<usize>>,
    /// The live rules that always hold, in order.
    always: Vec<usize>,
}

impl<'n, 'c> FirstMatch<'n, 'c> {
    /// Adds the next rule of the list; `live`: it can fire.
    pub(crate) fn push(&mut self, rule: &'n Normal<'c>, live: bool) {
        let i = self.rules.len();
        self.rules.push(rule);
        self.live.push(live);
        if !live {
            return;
        }
        for &k in rule.kinds() {
            self.by_kind.entry(k).or_default().push(i);
        }
        if rule.tautology() {
            self.always.push(i);
        }
    }

    /// Why `when`, placed after the rules read so far, would never fire, if that can be decided.
    /// Indices are positions in this list.
    pub(crate) fn judge(&self, when: &Normal<'c>) -> Option<Dead> {
        match when.satisfiable() {
            Some(false) => return Some(Dead::Never),
            // Too large to expand: nothing can be decided about it.
            None => return None,
            Some(true) => {}
        }
        let mut related: Vec<usize> = when
            .kinds()
            .iter()
            .filter_map(|k| self.by_kind.get(k))
            .flatten()
            .copied()
            .collect();
        related.sort_unstable();
        related.dedup();
        let mut candidates: Vec<usize> = related.iter().chain(&self.always).copied().collect();
        candidates.sort_unstable();
        candidates.dedup();
        if let Some(&i) = candidates
            .iter()
            .find(|&&i| when.implies(self.rules[i]) == Some(true))
        {
            return Some(Dead::ShadowedBy(i));
        }
        // Together: the earlier rules that can hold at the same time as this one. A rule that
        // shares no kind with it always can.
        let excluded: Vec<usize> = related
            .into_iter()
            .filter(|&i| when.excludes(self.rules[i]))
            .collect();
        let overlapping: Vec<usize> = (0..self.rules.len())
            .filter(|&i| self.live[i] && excluded.binary_search(&i).is_err())
            .collect();
        if overlapping.len() < 2 {
            return None;
        }
        let parts: Vec<&Normal> = overlapping.iter().map(|&i| self.rules[i]).collect();
        if when.escapes_all(&parts) || when.implies_any(&parts) != Some(true) {
            return None;
        }
        Some(Dead::ShadowedByAll(overlapping))
    }
}
