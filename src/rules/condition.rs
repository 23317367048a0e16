//! Conditions: what pre-rules, search rules, guards and the embedded router's context rules
//! test on a request (and guards on the call they check). Every kind of rule uses them, so they
//! are a file of their own that the rule types import.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A condition on the request (and, in guards, on the call being checked). Write exactly one key.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// Every condition holds.
    All(#[schemars(length(min = 1))] Vec<Condition>),
    /// At least one condition holds.
    Any(#[schemars(length(min = 1))] Vec<Condition>),
    /// The condition does not hold.
    Not(Box<Condition>),
    /// The user's message is longer than this many characters.
    LongerThan(usize),
    /// The user's message is shorter than this many characters.
    ShorterThan(usize),
    /// The user's message has fewer than this many words (runs of letters and digits, a hyphen
    /// inside a word included):
    /// `fewer_words_than: 3` holds for "find report", not for "find the March report".
    FewerWordsThan(usize),
    /// The user's message contains a stem or pattern of this word list.
    Mentions(String),
    /// `true`: some skill is active; `false`: none is; a skill id: that skill is active.
    SkillActive(SkillMatch),
    /// The last assistant message ended with a question mark.
    AssistantAsked(bool),
    /// A draft is shown on screen.
    DraftShown(bool),
    /// A generation mode is on: `any`, or one of `image`, `video`, `music`, `voice`.
    GenerationMode(String),
    /// An attachment of this kind (and, if given, with or without a face) is attached.
    Attachment(AttachmentMatch),
    /// The interface mode hint equals this value.
    UiMode(String),
    /// A file is open in the interface.
    FileOpen(bool),
    /// The open file's name appears in the user's message.
    OpenFileNamed(bool),
    /// This integration is connected.
    Integration(String),
    /// The user's web search toggle is on.
    SearchToggle(bool),
    /// Guards only: an argument of the call has one of these values.
    Argument(ArgumentMatch),
    /// Guards only: the value of this argument of the call appears in the user's message.
    ArgumentInMessage(String),
    /// Guards only: an identical call (same tool, same arguments) already succeeded in this chat.
    RepeatsSuccessfulCall(bool),
}

/// `true`/`false` (any skill / none) or a skill id.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SkillMatch {
    /// Any skill (`true`) or none (`false`).
    Any(bool),
    /// This skill.
    Id(String),
}

/// Which attachment a condition asks for.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachmentMatch {
    /// The attachment kind, e.g. `photo`.
    pub kind: String,
    /// If given, the photo must (or must not) show a face.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub face: Option<bool>,
}

/// An argument test for guards.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArgumentMatch {
    /// The argument's name.
    pub name: String,
    /// The values that make the condition hold.
    pub one_of: Vec<Value>,
}
