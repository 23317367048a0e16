//! An opt-in record of what a decision looked at, for test coverage (`turnout lint`,
//! `turnout test --coverage`). The service never passes one: with no probe the evaluation does
//! one `None` check per word-list lookup and allocates nothing.
//!
//! The probe only records *which word lists were consulted*; which of their entries occur in
//! the message is worked out afterwards, off the decision path, by the coverage collector.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::ruleset::RuleSet;

/// Which word lists a decision consulted. Make one per ruleset and [`reset`](Probe::reset) it
/// between decisions.
#[derive(Debug)]
pub struct Probe {
    // Atomic (not `Cell`) so the decision future stays `Send`; relaxed order is enough for flags.
    lists: Vec<AtomicBool>,
}

impl Probe {
    /// A probe for the word lists of `rs`.
    pub fn new(rs: &RuleSet) -> Self {
        Self {
            lists: (0..rs.lists.len())
                .map(|_| AtomicBool::new(false))
                .collect(),
        }
    }

    /// Forgets what was recorded.
    pub fn reset(&self) {
        self.lists
            .iter()
            .for_each(|c| c.store(false, Ordering::Relaxed));
    }

    /// Indices (in the ruleset's list order) of the word lists a condition looked up.
    pub fn consulted(&self) -> impl Iterator<Item = usize> + '_ {
        self.lists
            .iter()
            .enumerate()
            .filter(|(_, c)| c.load(Ordering::Relaxed))
            .map(|(i, _)| i)
    }

    pub(crate) fn mark(&self, list: usize) {
        if let Some(c) = self.lists.get(list) {
            c.store(true, Ordering::Relaxed);
        }
    }
}
