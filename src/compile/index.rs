//! Which rules a message can fire, from the word lists it matched: a rule whose condition
//! cannot hold unless some list matched is filed under those lists, so a decision looks only at
//! the rules of the lists its message matched, plus the few rules that need no list. The cost
//! of a decision then follows what the message says, not how many rules there are.

use smallvec::SmallVec;

use super::ruleset::Cond;

/// Lists of which at least one must match for `c` to hold; `None` when `c` can hold without
/// any (it is then always evaluated).
pub(crate) fn gate(c: &Cond) -> Option<Vec<usize>> {
    match c {
        Cond::Mentions(l) => Some(vec![*l]),
        // Any part that needs a list makes the whole need it; the narrowest is best.
        Cond::All(parts) => parts.iter().filter_map(gate).min_by_key(Vec::len),
        // Every part must need one; then any of them will do.
        Cond::Any(parts) => {
            let mut lists = Vec::new();
            for p in parts {
                lists.extend(gate(p)?);
            }
            lists.sort_unstable();
            lists.dedup();
            Some(lists)
        }
        _ => None,
    }
}

/// An ordered set of rules, filed by the lists that gate them.
#[derive(Debug, Default)]
pub(crate) struct RuleIndex {
    /// Rules that need no list, in order.
    always: Vec<u32>,
    /// For each list, the rules it gates, in order.
    by_list: Vec<Vec<u32>>,
}

impl RuleIndex {
    /// Files rules by their conditions (`lists`: how many lists the ruleset has).
    pub fn new<'c>(conditions: impl IntoIterator<Item = &'c Cond>, lists: usize) -> Self {
        let mut index = RuleIndex {
            always: Vec::new(),
            by_list: vec![Vec::new(); lists],
        };
        for (i, c) in (0u32..).zip(conditions) {
            match gate(c) {
                Some(gated) => {
                    for l in gated {
                        if let Some(rules) = index.by_list.get_mut(l) {
                            rules.push(i);
                        }
                    }
                }
                None => index.always.push(i),
            }
        }
        index
    }

    /// The rules that may fire for a message that matched `matched` lists, in rule order.
    pub fn candidates(&self, matched: impl Iterator<Item = usize>) -> impl Iterator<Item = usize> {
        // Inline for the usual handful of rules: no allocation per decision.
        let mut rules: SmallVec<[u32; 32]> = SmallVec::from_slice(&self.always);
        for l in matched {
            if let Some(r) = self.by_list.get(l) {
                rules.extend_from_slice(r);
            }
        }
        rules.sort_unstable();
        rules.dedup();
        rules.into_iter().map(|r| r as usize)
    }
}
