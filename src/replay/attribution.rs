//! Which rules decided a line and which only agreed: a rule in a decision's trace *decided* it
//! when the decision without that rule (the same request, the same router answer) differs in
//! anything the user would see; otherwise it agreed with the model (or with another rule).
//!
//! A search rule is not even looked at when the model asked for web search itself, so it is
//! never in those traces: a phrase the recorded answers already asked for would look unused.
//! Such a line is decided once more with the model's search call taken out of its answer, and
//! a search rule that then fires is counted as matched and agreeing with the model.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Serialize;

use super::{Line, decide_line, differ};
use crate::contract::{Decision, EffectKind, Stage};
use crate::model::{Model, ModelAnswer, ModelError, RouterInput};
use crate::ruleset::RuleSet;

/// What one rule did on a replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RuleEffect {
    /// Lines it matched: it fired (it is in the trace), or it is a search rule that would have
    /// fired had the model not asked for web search itself.
    pub matched: usize,
    /// Lines whose trace names it (it fired, or vetoed a call).
    pub fired: usize,
    /// Lines whose decision would differ without it.
    pub decided: usize,
    /// Lines it matched and whose decision is the same without it: it agreed with the model
    /// (or with another rule).
    pub agreed: usize,
}

/// A model whose answers leave out the calls of one tool.
pub(super) struct Without<'a> {
    pub inner: &'a dyn Model,
    pub tool: &'a str,
}

#[async_trait]
impl Model for Without<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn route(&self, input: &RouterInput<'_>) -> Result<ModelAnswer, ModelError> {
        let mut answer = self.inner.route(input).await?;
        answer.calls.retain(|c| c.tool != self.tool);
        Ok(answer)
    }
}

/// For every rule in the traces of `decisions` (made by `rs` from `lines`, as [`super::run`]
/// makes them, with `model`), how often it matched, fired, decided the line or agreed.
pub async fn attribute(
    rs: &RuleSet,
    lines: &[Line],
    decisions: &[Option<Decision>],
    model: Option<&dyn Model>,
) -> BTreeMap<String, RuleEffect> {
    let search_tool = rs.search.as_ref().map(|s| &*rs.tools[s.tool].id);
    let mut out: BTreeMap<String, RuleEffect> = BTreeMap::new();
    for (line, d) in lines.iter().zip(decisions) {
        let Some(d) = d else { continue };
        // A frame of the embedded router is applied inside the model, which a replay cannot
        // leave it out of: it is not attributed.
        let mut rules: Vec<&str> = d
            .trace
            .iter()
            .filter(|s| !matches!(s.kind, EffectKind::FrameRequest | EffectKind::FrameQuestion))
            .filter_map(|s| s.rule.as_deref())
            .collect();
        rules.sort_unstable();
        rules.dedup();
        for &rule in &rules {
            let without = decide_line(rs, line, model, Some(rule), None).await;
            let effect = out.entry(rule.to_owned()).or_default();
            effect.matched += 1;
            effect.fired += 1;
            match without {
                Some(w) if !differ(d, &w) => effect.agreed += 1,
                _ => effect.decided += 1,
            }
        }
        let searched_by_rule = d
            .trace
            .iter()
            .any(|s| s.stage == Stage::Search && s.rule.is_some());
        if let (true, false, Some(tool)) = (d.web_search, searched_by_rule, search_tool) {
            // Web search on, and no search rule said so: the model asked. Which search rule
            // would have, had it not?
            let Some(alone) = decide_line(rs, line, model, None, Some(tool)).await else {
                continue;
            };
            for step in &alone.trace {
                if let (Stage::Search, Some(rule)) = (step.stage, step.rule.as_deref()) {
                    let effect = out.entry(rule.to_owned()).or_default();
                    effect.matched += 1;
                    effect.agreed += 1;
                }
            }
        }
    }
    out
}
