//! Which rules a message can fire, from the word lists it matched: a rule whose condition
//! cannot hold unless some list matched is filed under those lists, so a decision looks only at
//! the rules of the lists its message matched, plus the few rules that need no list. The cost
//! of a decision then follows what the message says, not how many rules there are.

use smallvec::SmallVec;

/// An ordered set of rules, filed by the lists that gate them.
#[derive(Debug, Default)]
pub(crate) struct RuleIndex {
    /// Rules that need no list, in order.
    always: Vec<u32>,
    /// For each list, the rules it gates, in order.
    by_list: Vec<Vec<u32>>,
}

impl RuleIndex {
    /// Files rules by the lists that gate them, in rule order (each rule's
    /// [`Cond::gate`](super::ruleset::Cond::gate); `lists`: how many lists the ruleset has).
    pub fn new(gates: impl IntoIterator<Item = Option<Vec<usize>>>, lists: usize) -> Self {
        let mut index = RuleIndex {
            always: Vec::new(),
            by_list: vec![Vec::new(); lists],
        };
        for (i, gate) in (0u32..).zip(gates) {
            match gate {
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
