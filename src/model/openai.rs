//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`): OpenAI itself and the
//! servers that speak its protocol (vLLM, llama.cpp's server, Ollama, LiteLLM). The tools go in
//! `tools` with `tool_choice: "auto"`; the calls come back in `choices[0].message.tool_calls`,
//! in order, each with its arguments as a JSON string.

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde_json::{Value, json};

use super::http::{ApiKey, Endpoint};
use super::prompt;
use super::{Model, ModelAnswer, ModelError, RawCall, RouterInput};
use crate::contract::Role;

/// The base URL used when the spec names none.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A router model behind an OpenAI-compatible Chat Completions endpoint.
#[derive(Debug)]
pub struct OpenAiModel {
    name: String,
    model: String,
    endpoint: Endpoint,
    /// The name of the answer-length limit in the request: OpenAI's current API takes
    /// `max_completion_tokens` (and refuses `max_tokens` for its reasoning models); the servers
    /// that speak its protocol at a base URL (vLLM, llama.cpp, Ollama, LiteLLM) all know
    /// `max_tokens`, and some only that.
    tokens_field: &'static str,
}

impl OpenAiModel {
    /// `model` at `base_url` (e.g. `http://127.0.0.1:11434/v1`; `None`: OpenAI's), with the key
    /// sent as a bearer token when there is one (local servers often need none).
    pub fn new(model: &str, base_url: Option<&str>, key: Option<ApiKey>) -> Result<Self, String> {
        let base = base_url.unwrap_or(DEFAULT_BASE_URL).trim_end_matches('/');
        let mut headers: Vec<(HeaderName, HeaderValue)> = Vec::new();
        if let Some(key) = key.filter(|k| !k.is_empty()) {
            headers.push((
                AUTHORIZATION,
                key.header("Bearer ").map_err(|e| e.to_string())?,
            ));
        }
        Ok(Self {
            name: format!("openai:{model}"),
            model: model.to_owned(),
            endpoint: Endpoint::new(format!("{base}/chat/completions"), headers)?,
            tokens_field: if base_url.is_none() {
                "max_completion_tokens"
            } else {
                "max_tokens"
            },
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
        let mut messages = vec![json!({"role": "system", "content": prompt::system_prompt(input)})];
        messages.extend(input.messages.iter().map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::System => "system",
            };
            json!({"role": role, "content": m.content})
        }));
        let tools: Vec<Value> = prompt::tools(input)
            .into_iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    }
                })
            })
            .collect();
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "temperature": prompt::temperature(r.temperature),
        });
        body[self.tokens_field] = json!(r.max_tokens);
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = json!("auto");
        }
        body
    }
}

/// Reads the calls out of a Chat Completions answer.
pub fn parse_answer(answer: &Value) -> Result<ModelAnswer, ModelError> {
    let message = answer
        .pointer("/choices/0/message")
        .filter(|m| m.is_object())
        .ok_or_else(|| ModelError::Garbage("no choices[0].message in the answer".into()))?;
    let calls = match message.get("tool_calls") {
        None | Some(Value::Null) => return Ok(ModelAnswer::default()),
        Some(Value::Array(calls)) => calls,
        Some(_) => return Err(ModelError::Garbage("tool_calls is not a list".into())),
    };
    let calls = calls
        .iter()
        .map(|call| {
            let function = call
                .get("function")
                .ok_or_else(|| ModelError::Garbage("a tool call has no function".into()))?;
            let tool = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| ModelError::Garbage("a tool call has no name".into()))?
                .to_owned();
            let arguments = super::call_arguments(&tool, function.get("arguments"))?;
            Ok(RawCall { tool, arguments })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ModelAnswer {
        calls,
        ..Default::default()
    })
}

#[async_trait]
impl Model for OpenAiModel {
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
