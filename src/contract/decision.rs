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

/// What kind of thing a trace step did: the same as its prose `effect`, as a value a reader
/// can render in its own words (the playground does, in Russian or English). `subject` and
/// `rule` name what it did it to and by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EffectKind {
    /// The request's skill is not in the rules and is ignored (`subject`: that skill).
    SkillIgnored,
    /// A pre-rule (`rule`) settled the message: the reply goes to the skill `subject` (none:
    /// no skill is active, the chat answers). The router model is not called.
    SettledSkill,
    /// A pre-rule (`rule`) settled the message with calls (`subject`: the tools, joined by
    /// `, `). The router model is not called.
    SettledCalls,
    /// The router model was not called: rules only (`--model none`).
    NotCalled,
    /// The router model proposed calls (`subject`: the tools, joined by `, `).
    Proposed,
    /// The router model proposed no call.
    NoCall,
    /// The router model failed (`subject`: the error kind, e.g. `timeout`); the answer is a
    /// plain chat answer.
    ModelError,
    /// The embedded router's context rule `rule` holds for this request and changes how likely
    /// some answers are.
    ContextRule,
    /// The embedded router's request frame `rule` matched: the rest is read as a request (for
    /// a quote frame: the message is read without the words the user dictates).
    FrameRequest,
    /// The embedded router's question frame `rule` matched: it leans to no tool.
    FrameQuestion,
    /// The embedded router chose a class (`subject`: `tool:ID`, `skill:ID`, `leave` or `chat`;
    /// `facts`: the best class, the runner-up and their probabilities).
    Chose,
    /// The embedded router filled an argument (`subject`: `tool.argument`; `facts`: the value).
    Filled,
    /// A note of the router model that has no kind of its own (prose only).
    #[default]
    Note,
    /// The model's answer was discarded whole (`subject`: why, e.g. `unknown_tool`).
    Discarded,
    /// The skill `subject` was switched on by the router.
    SwitchedSkill,
    /// The skill `subject` was left, as the router chose.
    LeftSkill,
    /// The router chose to leave the skill, and none was active.
    NoSkillToLeave,
    /// The router chose a skill (`subject`) it may not switch on: not switched.
    NotSwitched,
    /// Web search is off while the search detector's `off_when` holds.
    SearchOff,
    /// The search rule `rule` turned web search on.
    SearchOn,
    /// The router model asked for web search. `subject`: a search rule that also holds (its
    /// matches are in `matches`), when one does; it is not in `rule`, since the model decided.
    SearchAsked,
    /// The guard `rule` vetoed the call of the tool `subject`.
    Dropped,
}

/// What a word list or pattern matched in the user's message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Match {
    /// The word list or pattern that matched (a word list's id, a frame's id).
    pub list: Arc<str>,
    /// The entry of that list that matched, as the rule file writes it.
    pub entry: String,
    /// Where the match starts, in characters (Unicode scalar values) of the original message.
    pub start: usize,
    /// Where it ends (exclusive), in characters of the original message.
    pub end: usize,
    /// The matched text, as the user wrote it.
    pub text: String,
    /// It matched with one letter off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub typo: bool,
}

impl Match {
    /// A match.
    pub fn new(
        list: Arc<str>,
        entry: impl Into<String>,
        start: usize,
        end: usize,
        text: impl Into<String>,
    ) -> Self {
        Self {
            list,
            entry: entry.into(),
            start,
            end,
            text: text.into(),
            typo: false,
        }
    }
}

/// One fact that explains a step, besides what matched (`matches`): the same as a part of
/// the prose `why`, as a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Fact {
    /// Which fact.
    pub kind: FactKind,
    /// What it is about: a word list, skill, generation mode, attachment kind, interface mode,
    /// file, integration, argument, tool, model or class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A value: an argument's value (JSON), a probability, negated text, a schema path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Whether it holds, for a yes-or-no fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holds: Option<bool>,
    /// A count: the message's characters, the calls, the tools offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// The limit `count` is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

impl Fact {
    /// A fact of `kind` with nothing else set.
    pub fn of(kind: FactKind) -> Self {
        Self {
            kind,
            name: None,
            value: None,
            holds: None,
            count: None,
            limit: None,
        }
    }

    /// With `name`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// With `value`.
    pub fn value(mut self, value: impl Into<String>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// With `holds`.
    pub fn holds(mut self, holds: bool) -> Self {
        self.holds = Some(holds);
        self
    }

    /// With `count` and `limit`.
    pub fn count(mut self, count: usize, limit: Option<usize>) -> Self {
        self.count = Some(count);
        self.limit = limit;
        self
    }
}

/// The kinds of [`Fact`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FactKind {
    /// The message has `count` characters (`limit`: the rule's bound).
    Length,
    /// The message has `count` words (`limit`: the rule's bound).
    Words,
    /// Nothing from the word list `name` is in the message.
    NothingFrom,
    /// `value` from the word list `name` is in the message, negated.
    Negated,
    /// The skill `name` is active.
    SkillActive,
    /// No skill is active.
    NoSkill,
    /// The assistant's last message asked a question (`holds`).
    AssistantAsked,
    /// A draft is shown (`holds`).
    DraftShown,
    /// The generation mode `name` is on.
    GenerationMode,
    /// No generation mode is on.
    NoGenerationMode,
    /// An attachment of kind `name` that the condition wants is attached (`holds`).
    Attachment,
    /// The interface mode is `name`.
    UiMode,
    /// No interface mode.
    NoUiMode,
    /// The file `name` is open.
    FileOpen,
    /// No file is open.
    NoFileOpen,
    /// The open file `name` is named in the message (`holds`).
    FileNamed,
    /// The integration `name` is connected (`holds`).
    Integration,
    /// The search toggle is on (`holds`).
    SearchToggle,
    /// The call's argument `name` is `value`.
    Argument,
    /// The call has no argument `name`.
    NoArgument,
    /// The call's argument `name` = `value` is named in the message (`holds`).
    ArgumentInMessage,
    /// An identical call already succeeded in this chat (`holds`).
    RepeatsCall,
    /// The router model `name` was offered `count` tools.
    Offered,
    /// The embedded router's best class `name`, with probability `value`.
    Best,
    /// The runner-up class `name`, with probability `value`.
    RunnerUp,
    /// The best class was not sure enough (threshold, margin).
    NotSure,
    /// The best class and `name` (probability `value`) are a confusable pair: no tool, the
    /// answer asks back.
    Confusable,
    /// The class `name` would have been the best, but the context rule `value` rules it out
    /// and asks back: no tool, the answer asks for what is missing.
    RuledOut,
    /// The filled value (`value`, JSON).
    FilledValue,
    /// The model answered `count` calls; at most `limit` are accepted.
    CallCount,
    /// The tool `name` the model called (unknown, unavailable, or with arguments failing its
    /// schema at `value`).
    Tool,
}

/// One thing the pipeline did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct TraceStep {
    /// Which stage.
    pub stage: Stage,
    /// The rule that fired or vetoed, if a rule did it (a pre-rule, a context rule or frame of
    /// the embedded router, a search rule, a guard).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Arc<str>>,
    /// What happened, e.g. `dropped shop`.
    #[serde(default)]
    pub effect: Cow<'static, str>,
    /// Why, e.g. `matched 'where to buy' (buying: 'where to b') at 0..12`.
    #[serde(default)]
    pub why: Cow<'static, str>,
    /// What happened, as a value (`effect` is the same in English prose).
    #[serde(default)]
    pub kind: EffectKind,
    /// The tool or skill the step is about, if any (see [`EffectKind`] for each kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Arc<str>>,
    /// What matched in the message and made the rule fire, with its place in the original
    /// message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<Match>,
    /// The other facts of `why`, as values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<Fact>,
}

impl TraceStep {
    /// A step of kind [`EffectKind::Note`]; set the kind with [`TraceStep::kind`].
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
            kind: EffectKind::Note,
            subject: None,
            matches: Vec::new(),
            facts: Vec::new(),
        }
    }

    /// With `kind`.
    pub fn kind(mut self, kind: EffectKind) -> Self {
        self.kind = kind;
        self
    }

    /// With `subject`.
    pub fn subject(mut self, subject: impl Into<Arc<str>>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// With the matches and facts of an explanation.
    pub fn explained(mut self, matches: Vec<Match>, facts: Vec<Fact>) -> Self {
        self.matches = matches;
        self.facts = facts;
        self
    }
}
