//! Rule test cases (`rules/tests/*.yaml`): a request, the stubbed router answer, and the
//! expected decision. `schemas/tests.schema.json` is generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::Request;

/// A file of rule test cases.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "turnout rule test file")]
pub struct TestFile {
    /// The cases, run in order.
    pub cases: Vec<Case>,
}

/// One test case.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What the case shows, in a sentence.
    pub name: String,
    /// Behaviour ids (B1..B21) this case demonstrates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behaviours: Vec<String>,
    /// The request, as a client sends it.
    pub request: Request,
    /// The stubbed router answer. Omitted: the model is called and calls no tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelScript>,
    /// The expected decision; only the keys given are checked.
    pub expect: Expect,
}

/// A scripted router answer: either calls or an error.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "ModelScript")]
pub struct ModelScript {
    /// The calls the model returns, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ScriptedCall>,
    /// A failure instead of an answer: `timeout`, `garbage`, `invalid_json`,
    /// `bad_arguments_json`, `connection_refused`, `rate_limited`, or `http_NNN` (e.g.
    /// `http_500`).
    // The pattern is exactly what `model::scripted::parse_error` takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(
        pattern = r"^(timeout|garbage|invalid_json|bad_arguments_json|connection_refused|rate_limited|http_[1-5][0-9][0-9])$"
    ))]
    pub error: Option<String>,
}

crate::contract::request::objects_only!(ModelScript, ScriptedCall);

/// A call in a scripted answer.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "ScriptedCall")]
pub struct ScriptedCall {
    /// The tool the model calls.
    pub tool: String,
    /// Its arguments.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// The tool is not in the rules on purpose: the case shows what happens when the model
    /// names a tool that does not exist (otherwise such a name is refused as a typo).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// What the decision must look like. Only the keys given are checked.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `chat`, `skill` or `tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<crate::contract::Outcome>,
    /// Tool ids of the surviving calls, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// The active skill after the message (`null`: none).
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub skill: Option<Option<String>>,
    /// Whether web search is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_search: Option<bool>,
    /// Whether the router model was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_called: Option<bool>,
    /// Tool ids of the calls marked `confirm: true`, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Vec<String>>,
    /// Rule ids that must appear in the trace (fired or vetoed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fired: Option<Vec<String>>,
    /// Rule ids that must not appear in the trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_fired: Option<Vec<String>>,
    /// Arguments of the calls, in order; each given object must be contained in the call's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<Value>>,
}

/// Distinguishes `skill: null` (expect no skill) from an absent key (do not check).
fn double_option<'de, D>(de: D) -> Result<Option<Option<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<String>::deserialize(de).map(Some)
}
