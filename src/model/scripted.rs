//! A model that answers from a script: what rule test cases and benchmarks use.

use async_trait::async_trait;

use super::{Model, ModelAnswer, ModelError, RawCall, RouterInput};
use crate::rules::testcase::ModelScript;

/// Always gives the same answer (or the same error).
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    answer: Result<ModelAnswer, ModelError>,
}

impl ScriptedModel {
    /// A model that answers `calls`.
    pub fn calls(calls: Vec<RawCall>) -> Self {
        Self {
            answer: Ok(ModelAnswer {
                calls,
                ..Default::default()
            }),
        }
    }

    /// A model that fails with `error`.
    pub fn failing(error: ModelError) -> Self {
        Self { answer: Err(error) }
    }

    /// From a test case's `model:` section (absent: the model calls no tool).
    pub fn from_script(script: Option<&ModelScript>) -> Result<Self, String> {
        let Some(script) = script else {
            return Ok(Self::calls(Vec::new()));
        };
        if let Some(error) = &script.error {
            return parse_error(error).map(Self::failing);
        }
        Ok(Self::calls(
            script
                .calls
                .iter()
                .map(|c| RawCall {
                    tool: c.tool.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
        ))
    }
}

/// `timeout`, `garbage`, `invalid_json`, `bad_arguments_json`, `connection_refused`,
/// `rate_limited`, `http_NNN`.
pub fn parse_error(name: &str) -> Result<ModelError, String> {
    match name {
        "timeout" => Ok(ModelError::Timeout),
        "garbage" => Ok(ModelError::Garbage("scripted garbage".into())),
        "invalid_json" => Ok(ModelError::InvalidJson("scripted invalid JSON".into())),
        "bad_arguments_json" => Ok(ModelError::BadArgumentsJson {
            tool: "scripted".into(),
            error: "scripted arguments that are not JSON".into(),
        }),
        "connection_refused" => Ok(ModelError::Connection("connection refused".into())),
        "rate_limited" => Ok(ModelError::RateLimited),
        // Three digits, 100 to 599 (the schema's `http_[1-5][0-9][0-9]`): `http_+500` or
        // `http_0042` is a typo, not a status.
        other => other
            .strip_prefix("http_")
            .filter(|code| code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|code| code.parse::<u16>().ok())
            .filter(|code| (100..600).contains(code))
            .map(ModelError::Http)
            .ok_or_else(|| {
                format!(
                    "unknown scripted model error {}; expected timeout, garbage, invalid_json, \
                     bad_arguments_json, connection_refused, rate_limited or http_NNN",
                    serde_json::to_string(&*crate::contract::parse::cut(other)).unwrap_or_default()
                )
            }),
    }
}

#[async_trait]
impl Model for ScriptedModel {
    fn name(&self) -> &str {
        "script"
    }

    async fn route(&self, _input: &RouterInput<'_>) -> Result<ModelAnswer, ModelError> {
        self.answer.clone()
    }
}
