//! The router model: the pluggable call in the middle of the pipeline. A backend implements
//! [`Model`]; the engine gives it the context (last messages, active skill, draft flag, UI hint,
//! the tools available here, the prompt notes) and takes back zero or more tool calls in order.
//! The engine owns the timeout and validates whatever comes back, so a backend only talks to
//! its model.
//!
//! Backends, one file each: [`embedded`] (the offline default: a classifier over the rules'
//! example messages), [`openai`] (Chat Completions and the servers that speak it), [`anthropic`]
//! (Messages API), [`scripted`] (a fixed answer, for tests). [`prompt`] builds what the two HTTP
//! backends send; `http` is their shared transport; [`spec`] turns `--model SPEC` into one.

#[cfg(feature = "http-models")]
pub mod anthropic;
pub mod embedded;
#[cfg(feature = "http-models")]
pub(crate) mod http;
pub mod key;
#[cfg(feature = "http-models")]
pub mod openai;
pub mod prompt;
pub mod scripted;
pub mod spec;

use async_trait::async_trait;
use serde_json::Value;

use crate::ruleset::{RouterDef, RuleSet, SkillDef, ToolDef};
use std::sync::Arc;

use crate::contract::{EffectKind, Fact, Message, Ui};

pub use crate::contract::ModelSpec;

/// The largest model answer read by default, in bytes: a tool-calling answer is a few
/// kilobytes; anything near this is a broken or hostile server. Here, beside the backends'
/// errors, so the transport (`http`) and the spec that builds backends both read it.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 1 << 20;

/// The context rules (positions in `router.embedded.context`) that hold for a byte span of
/// the normalised message.
pub type PartContext<'a> = dyn Fn((usize, usize)) -> Vec<usize> + Send + Sync + 'a;

/// What the router model sees for one message.
pub struct RouterInput<'a> {
    /// The last messages (at most `router.history`), oldest first; the last is the user's.
    pub messages: &'a [Message],
    /// The active skill, if any.
    pub skill: Option<&'a SkillDef>,
    /// Whether a draft is shown on screen.
    pub draft_shown: bool,
    /// What the user is doing in the interface (a hint, not a command).
    pub ui: Option<&'a Ui>,
    /// The tools available in this context; nothing else may be called.
    pub tools: Vec<&'a ToolDef>,
    /// The embedded router's context rules that hold for this request (positions in
    /// `router.embedded.context`; the engine evaluates them).
    pub context: Vec<usize>,
    /// The context rules that hold for a part of the message (a byte span of
    /// [`RouterInput::normalized_message`]), for a router that decides a compound request part
    /// by part: «find the letter and put its date in the calendar» reads the calendar rule only
    /// in its second part. `None`: the whole message's `context` for every part.
    pub part_context: Option<&'a PartContext<'a>>,
    /// Every skill (the skill tool's schema already lists the allowed ids).
    pub skills: &'a [SkillDef],
    /// Settings and prompt notes.
    pub router: &'a RouterDef,
    /// The whole ruleset deciding this message (every tool, its version, its text normaliser):
    /// a backend that precomputes something from the rules (the embedded router's index) keys
    /// it by `rules.version`, since rules reload while the model lives on.
    pub rules: &'a RuleSet,
    /// The last message as `rules.normalizer` leaves it, when the caller has it (the engine
    /// does: it normalised the message for the rules); see [`RouterInput::normalized_message`].
    pub normalized: Option<&'a str>,
}

impl std::fmt::Debug for RouterInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouterInput")
            .field("messages", &self.messages)
            .field("skill", &self.skill.map(|s| &s.id))
            .field("draft_shown", &self.draft_shown)
            .field("ui", &self.ui)
            .field(
                "tools",
                &self.tools.iter().map(|t| &t.id).collect::<Vec<_>>(),
            )
            .field("rules_version", &self.rules.version)
            .finish_non_exhaustive()
    }
}

impl<'a> RouterInput<'a> {
    /// The input for `messages` with nothing narrowing it: every tool of `rules` offered, no
    /// active skill, no draft, no interface hint, no context rule holding, the message not
    /// normalised yet. For calling a model outside the engine (tests, benchmarks); change
    /// fields with struct update syntax.
    pub fn new(rules: &'a RuleSet, messages: &'a [Message]) -> Self {
        Self {
            messages,
            skill: None,
            draft_shown: false,
            ui: None,
            tools: rules.tools().iter().collect(),
            context: Vec::new(),
            part_context: None,
            skills: rules.skills(),
            router: rules.router(),
            rules,
            normalized: None,
        }
    }

    /// The user's new message.
    pub fn message(&self) -> &str {
        self.messages.last().map_or("", |m| m.content.as_str())
    }

    /// The last message normalised by the rules: [`RouterInput::normalized`], or normalised
    /// here when the caller left it out.
    pub fn normalized_message(&self) -> std::borrow::Cow<'a, str> {
        match self.normalized {
            Some(text) => std::borrow::Cow::Borrowed(text),
            None => {
                std::borrow::Cow::Owned(self.rules.normalizer.normalize_message(self.message()))
            }
        }
    }
}

/// A tool call as the model returned it, before validation.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCall {
    /// The tool's id.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
}

/// The model's answer: calls in execution order (none: a plain answer).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelAnswer {
    /// The calls.
    pub calls: Vec<RawCall>,
    /// What the model says about how it chose, for the trace (the embedded router: the chosen
    /// class, its probability and the runner-up; which words filled which argument).
    pub notes: Vec<ModelNote>,
}

/// One line a model adds to the decision's trace: prose, and the same as values (see
/// [`crate::contract::TraceStep`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelNote {
    /// What it did.
    pub effect: String,
    /// Why.
    pub why: String,
    /// What it did, as a value.
    pub kind: EffectKind,
    /// The rule of the router's own (a context rule, a frame) that did it. For a context rule
    /// the engine adds what its condition matched.
    pub rule: Option<Arc<str>>,
    /// What it is about (see [`EffectKind`]).
    pub subject: Option<Arc<str>>,
    /// The facts of `why`, as values.
    pub facts: Vec<Fact>,
    /// What a pattern matched: the pattern, and the byte span in the normalised message
    /// ([`RouterInput::normalized_message`]); the engine turns it into a match in the original.
    pub matched: Option<(String, usize, usize)>,
}

impl ModelNote {
    /// A note of kind [`EffectKind::Note`] with nothing but prose.
    pub fn new(effect: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            effect: effect.into(),
            why: why.into(),
            kind: EffectKind::Note,
            rule: None,
            subject: None,
            facts: Vec::new(),
            matched: None,
        }
    }

    /// With `kind`.
    pub fn kind(mut self, kind: EffectKind) -> Self {
        self.kind = kind;
        self
    }

    /// With `rule`.
    pub fn rule(mut self, rule: impl Into<Arc<str>>) -> Self {
        self.rule = Some(rule.into());
        self
    }

    /// With `subject`.
    pub fn subject(mut self, subject: impl Into<Arc<str>>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// With one more fact.
    pub fn fact(mut self, fact: Fact) -> Self {
        self.facts.push(fact);
        self
    }
}

/// Why the model gave no usable answer. Every one of these ends in a plain chat answer, with
/// [`ModelError::kind`] in the trace and the metrics. (Unknown tools, arguments failing a tool's
/// schema and too many calls are found by the engine's validation, not here.)
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelError {
    /// No answer within the router timeout.
    #[error("no answer within the timeout")]
    Timeout,
    /// Could not reach the model.
    #[error("could not connect: {0}")]
    Connection(String),
    /// The model's server refused the request for its rate limit.
    #[error("rate limited")]
    RateLimited,
    /// The model's server answered with an HTTP error.
    #[error("HTTP status {0}")]
    Http(u16),
    /// The answer could not be understood (JSON, but not of the expected shape).
    #[error("unreadable answer: {0}")]
    Garbage(String),
    /// The answer's body is not JSON at all.
    #[error("the answer is not JSON: {0}")]
    InvalidJson(String),
    /// The answer was longer than the limit (`--max-model-answer-bytes`); reading stopped there.
    #[error("the answer is longer than {0} bytes")]
    TooLarge(usize),
    /// A tool call whose arguments are not a JSON object.
    #[error("the arguments of the call to '{tool}' are not JSON: {error}")]
    BadArgumentsJson {
        /// The tool the model called.
        tool: String,
        /// What is wrong with them.
        error: String,
    },
}

impl ModelError {
    /// A short, stable name for metrics and the trace.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Timeout => "timeout",
            ModelError::Connection(_) => "connection",
            ModelError::RateLimited => "rate_limited",
            ModelError::Http(s) if *s >= 500 => "http_5xx",
            ModelError::Http(_) => "http_4xx",
            ModelError::Garbage(_) => "garbage",
            ModelError::InvalidJson(_) => "invalid_json",
            ModelError::TooLarge(_) => "answer_too_large",
            ModelError::BadArgumentsJson { .. } => "bad_arguments_json",
        }
    }
}

/// A router model backend.
#[async_trait]
pub trait Model: Send + Sync {
    /// A name for logs and status pages (e.g. `embedded`, `openai:gpt-4o-mini`).
    fn name(&self) -> &str;

    /// Gets ready for a ruleset before it serves, so the work is not done inside a request's
    /// timeout: the embedded router trains here. Blocking; called when rules are loaded and
    /// on every reload, before the new rules are swapped in. Does nothing by default.
    fn prepare(&self, _rules: &RuleSet) {}

    /// Asks the model which tools, if any, to call for this message.
    async fn route(&self, input: &RouterInput<'_>) -> Result<ModelAnswer, ModelError>;
}

#[cfg(feature = "http-models")]
/// A tool call's arguments as a backend received them: an object, a JSON string holding an
/// object (what OpenAI-style servers send, and some Anthropic-compatible ones), or nothing.
pub(crate) fn call_arguments(tool: &str, raw: Option<&Value>) -> Result<Value, ModelError> {
    let bad = |error: &str| ModelError::BadArgumentsJson {
        tool: tool.to_owned(),
        error: error.to_owned(),
    };
    match raw {
        None | Some(Value::Null) => Ok(Value::Object(Default::default())),
        Some(Value::Object(o)) => Ok(Value::Object(o.clone())),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Default::default())),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| bad("not a JSON object")),
        Some(_) => Err(bad("neither a JSON string nor an object")),
    }
}
