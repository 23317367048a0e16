//! Stage 5: post-guards. Each call is checked against the guards that watch its tool, in
//! order; the first whose `drop_when` holds vetoes it.

use super::Run;
use super::eval::Why;
use crate::contract::{EffectKind, Stage, TraceStep};

impl Run<'_> {
    pub(super) fn guards(&mut self) {
        let rs = self.cx.rs;
        let calls = std::mem::take(&mut self.calls);
        for call in calls {
            // A guard gated by lists the message did not match cannot veto: skipped unread.
            let veto = rs.guards_by_tool[call.tool]
                .iter()
                .filter(|&&g| {
                    rs.guard_gates[g]
                        .as_deref()
                        .is_none_or(|lists| lists.iter().any(|&l| self.cx.hits.get(l).is_some()))
                })
                .map(|&g| &rs.guards[g])
                .find(|g| !self.skips(&g.id) && self.cx.eval(&g.drop_when, Some(&call)));
            match veto {
                None => self.calls.push(call),
                Some(guard) => {
                    let mut why = Why::default();
                    self.cx.explain(&guard.drop_when, Some(&call), &mut why);
                    let tool = &rs.tools[call.tool].id;
                    let (why, matches, facts) = why.into_parts();
                    self.trace.push(
                        TraceStep::new(
                            Stage::Guard,
                            Some(guard.id.clone()),
                            format!("dropped {tool}"),
                            why,
                        )
                        .kind(EffectKind::Dropped)
                        .subject(tool.clone())
                        .explained(matches, facts),
                    );
                }
            }
        }
    }
}
