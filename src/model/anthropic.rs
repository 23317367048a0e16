//! Anthropic's Messages API (`POST {base}/v1/messages`). The tools go in `tools` with
//! `tool_choice: {"type": "auto"}`; the calls come back as `tool_use` blocks of `content`, in
//! order, each with its `input` object.
//!
//! The Messages API takes only user and assistant turns, alternating, starting with the user.
//! So system messages of the history, and assistant messages before the first user message
//! (the question the user is answering), go to the end of the system prompt as context, and
//! consecutive messages of one author are joined into one turn.

use async_trait::async_trait;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Value, json};

use super::http::{ApiKey, Endpoint};
use super::prompt;
use super::{Model, ModelAnswer, ModelError, RawCall, RouterInput};
use crate::contract::Role;

/// The base URL used when the spec names none.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// A router model behind Anthropic's Messages API.
#[derive(Debug)]
pub struct AnthropicModel {
    name: String,
    model: String,
    endpoint: Endpoint,
}

impl AnthropicModel {
    /// `model` at `base_url` (`None`: Anthropic's), with the key sent in `x-api-key` when
    /// there is one.
    pub fn new(model: &str, base_url: Option<&str>, key: Option<ApiKey>) -> Result<Self, String> {
        let base = base_url.unwrap_or(DEFAULT_BASE_URL).trim_end_matches('/');
        let mut headers = vec![(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        )];
        if let Some(key) = key.filter(|k| !k.is_empty()) {
            headers.push((
                HeaderName::from_static("x-api-key"),
                key.header("").map_err(|e| e.to_string())?,
            ));
        }
        Ok(Self {
            name: format!("anthropic:{model}"),
            model: model.to_owned(),
            endpoint: Endpoint::new(format!("{base}/v1/messages"), headers)?,
        })
    }

    /// Sets the largest answer read (default 1 MiB); a longer one is a plain chat answer with
    /// kind `answer_too_large`.
    pub fn with_max_answer_bytes(mut self, max: usize) -> Self {
        self.endpoint.set_max_answer_bytes(max);
        self
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        self.endpoint.url()
    }

    /// The request body for this message.
    pub fn body(&self, input: &RouterInput<'_>) -> Value {
        let r = input.router;
        let mut system = prompt::system_prompt(input);
        let mut context = Vec::new();
        let mut turns: Vec<(&str, String)> = Vec::new();
        for m in input.messages {
            let role = match m.role {
                Role::System => {
                    context.push(format!("- System: {}", m.content));
                    continue;
                }
                Role::Assistant if turns.is_empty() => {
                    context.push(format!("- Assistant: {}", m.content));
                    continue;
                }
                Role::Assistant => "assistant",
                Role::User => "user",
            };
            match turns.last_mut() {
                Some((last, text)) if *last == role => {
                    text.push_str("\n\n");
                    text.push_str(&m.content);
                }
                _ => turns.push((role, m.content.clone())),
            }
        }
        if !context.is_empty() {
            system.push_str("\n## Conversation before the messages below\n");
            for line in context {
                system.push_str(&line);
                system.push('\n');
            }
        }
        let messages: Vec<Value> = turns
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        let tools: Vec<Value> = prompt::tools(input)
            .into_iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.parameters,
                })
            })
            .collect();
        let mut body = json!({
            "model": self.model,
            "max_tokens": r.max_tokens,
            "temperature": prompt::temperature(r.temperature),
            "system": system,
            "messages": messages,
        });
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = json!({"type": "auto"});
        }
        body
    }
}

/// Reads the calls out of a Messages API answer.
pub fn parse_answer(answer: &Value) -> Result<ModelAnswer, ModelError> {
    let content = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::Garbage("no content list in the answer".into()))?;
    let calls = content
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|block| {
            let tool = block
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| ModelError::Garbage("a tool_use block has no name".into()))?
                .to_owned();
            let arguments = super::call_arguments(&tool, block.get("input"))?;
            Ok(RawCall { tool, arguments })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ModelAnswer {
        calls,
        ..Default::default()
    })
}

#[async_trait]
impl Model for AnthropicModel {
    fn name(&self) -> &str {
        &self.name
    }

    async fn route(&self, input: &RouterInput<'_>) -> Result<ModelAnswer, ModelError> {
        let body = self.body(input);
        let answer = self
            .endpoint
            .post(&body, input.router.timeout, input.router.retries)
            .await?;
        parse_answer(&answer)
    }
}
