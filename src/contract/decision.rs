//! The decision a request gets (the public contract's shape), with its trace: a typed list of
//! what each stage did and why.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the message is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Words only: the chat model answers.
    Chat,
    /// The active skill answers.
    Skill,
    /// One or two tool calls.
    Tool,
}

/// A tool call that survived the pipeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Call {
    /// The tool's id.
    pub tool: Arc<str>,
    /// Its arguments.
    pub arguments: Value,
    /// The user must confirm it with a button (consequential action).
    pub confirm: bool,
    /// The line the client shows while the tool works.
    pub chip: Arc<str>,
}

/// What to do with the message, and why. (Deserialize: a decision log's recorded decisions
/// are read back by `turnout replay`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Decision {
    /// Chat, skill or tool.
    pub outcome: Outcome,
    /// The surviving calls, in execution order.
    pub calls: Vec<Call>,
    /// The active skill after this message.
    pub skill: Option<Arc<str>>,
    /// The badge of that skill.
    pub skill_badge: Option<Arc<str>>,
    /// Whether the answer uses web search.
    pub web_search: bool,
    /// Whether the router model was asked.
    pub model_called: bool,
    /// Every rule that fired or vetoed, in order.
    pub trace: Vec<TraceStep>,
    /// The version of the ruleset that decided.
    pub rules_version: Arc<str>,
    /// How the model call went, for metrics and logs (not part of the JSON decision).
    #[serde(skip)]
    pub model_call: Option<ModelCall>,
}

/// How long the router model took, what it answered, and how it failed if it did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelCall {
    /// Time from the call to its answer (or to the timeout).
    pub latency: std::time::Duration,
    /// The failure kind (`ModelError::kind`), or a validation failure such as `unknown_tool`.
    pub error: Option<&'static str>,
    /// The calls the model answered, as received, before validation; `None` when the model
    /// gave no answer (then `error` is why). What a decision log records, so that a replay can
    /// give the engine the same answer.
    pub received: Option<Vec<ReceivedCall>>,
}

/// A tool call as the router model answered it, before validation (the tool may not exist).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReceivedCall {
    /// The tool's id as the model wrote it.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
}

impl ReceivedCall {
    /// A call.
    pub fn new(tool: impl Into<String>, arguments: Value) -> Self {
        Self {
            tool: tool.into(),
            arguments,
        }
    }
}

/// The pipeline stage a trace step comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct TraceStep {
    /// Which stage.
    pub stage: Stage,
    /// The rule that fired or vetoed, if a rule did it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Arc<str>>,
    /// What happened, e.g. `dropped shop`.
    #[serde(default)]
    pub effect: Cow<'static, str>,
    /// Why, e.g. `matched 'where to buy' (buying: 'where to b') at 0..12`.
    #[serde(default)]
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
