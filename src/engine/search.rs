//! Stage 4: the web search detector. Off while `off_when` holds (a skill is active, in the
//! shipped pack); otherwise on when the model asked for it or any search rule fires.

use super::Run;
use super::eval::Why;
use crate::contract::{Stage, TraceStep};

impl Run<'_> {
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
            self.trace.push(TraceStep::new(
                Stage::Search,
                None,
                "web search off",
                why.into_string(),
            ));
            return false;
        }
        if self.model_search {
            self.trace.push(TraceStep::new(
                Stage::Search,
                None,
                "web search on",
                "the router model asked for it",
            ));
            return true;
        }
        let Some(rule) = self
            .cx
            .rs
            .search_index
            .candidates(self.cx.hits.lists())
            .map(|i| &search.rules[i])
            .find(|r| !self.skips(&r.id) && self.cx.eval(&r.when, None))
        else {
            return false;
        };
        let mut why = Why::default();
        self.cx.explain(&rule.when, None, &mut why);
        self.trace.push(TraceStep::new(
            Stage::Search,
            Some(rule.id.clone()),
            "web search on",
            why.into_string(),
        ));
        true
    }
}
