//! Stage 4: the web search detector. Off while `off_when` holds (a skill is active, in the
//! shipped pack); otherwise on when the model asked for it or any search rule fires. When the
//! model asked, the search rule that also holds is not in the step's `rule` (the model
//! decided), but what it matched is in the step's matches: the page highlights it.

use super::Run;
use super::eval::Why;
use crate::contract::{EffectKind, Stage, TraceStep};
use crate::ruleset::SearchRuleDef;

impl<'a> Run<'a> {
    /// Whether the answer uses web search.
    pub(super) fn search(&mut self) -> bool {
        let Some(search) = &self.cx.rs.search else {
            return self.model_search;
        };
        if let Some(off) = &search.off_when
            && self.cx.eval(off, None)
        {
            let mut why = Why::default();
            self.cx.explain(off, None, &mut why);
            let (why, matches, facts) = why.into_parts();
            self.trace.push(
                TraceStep::new(Stage::Search, None, "web search off", why)
                    .kind(EffectKind::SearchOff)
                    .explained(matches, facts),
            );
            return false;
        }
        let rule = self.search_rule();
        if self.model_search {
            let mut step = TraceStep::new(
                Stage::Search,
                None,
                "web search on",
                "the router model asked for it",
            )
            .kind(EffectKind::SearchAsked);
            if let Some(rule) = rule {
                let mut why = Why::default();
                self.cx.explain(&rule.when, None, &mut why);
                let (prose, matches, facts) = why.into_parts();
                step.why = format!(
                    "the router model asked for it; the search rule {} also holds: {prose}",
                    rule.id
                )
                .into();
                step = step.subject(rule.id.clone()).explained(matches, facts);
            }
            self.trace.push(step);
            return true;
        }
        let Some(rule) = rule else {
            return false;
        };
        let mut why = Why::default();
        self.cx.explain(&rule.when, None, &mut why);
        let (why, matches, facts) = why.into_parts();
        self.trace.push(
            TraceStep::new(Stage::Search, Some(rule.id.clone()), "web search on", why)
                .kind(EffectKind::SearchOn)
                .explained(matches, facts),
        );
        true
    }

    /// The first search rule that holds (and is not passed over).
    fn search_rule(&self) -> Option<&'a SearchRuleDef> {
        let rs: &'a crate::ruleset::RuleSet = self.cx.rs;
        let search = rs.search.as_ref()?;
        rs.search_index
            .candidates(self.cx.hits.lists())
            .map(|i| &search.rules[i])
            .find(|r| !self.skips(&r.id) && self.cx.eval(&r.when, None))
    }
}
