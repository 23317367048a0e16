//! The trace: a typed list of what each stage did and why, serialised into the decision.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;

/// The pipeline stage a trace step comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Pre-rules.
    Pre,
    /// The router model call.
    Router,
    /// Validation of the model's answer.
    Validate,
    /// The skill switch.
    Skill,
    /// The web search detector.
    Search,
    /// Post-guards.
    Guard,
}

/// One thing the pipeline did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    /// Which stage.
    pub stage: Stage,
    /// The rule that fired or vetoed, if a rule did it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Arc<str>>,
    /// What happened, e.g. `dropped shop`.
    pub effect: Cow<'static, str>,
    /// Why, e.g. `matched 'where to buy' (buying: 'where to b') at 0..12`.
    pub why: Cow<'static, str>,
}

impl TraceStep {
    /// A step.
    pub fn new(
        stage: Stage,
        rule: Option<Arc<str>>,
        effect: impl Into<Cow<'static, str>>,
        why: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            stage,
            rule,
            effect: effect.into(),
            why: why.into(),
        }
    }
}
