//! The request a chat backend sends for each user message (see the public contract).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One chat message to route, with what the client knows about its context.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The conversation so far; the last one is the user's new message.
    pub messages: Vec<Message>,
    /// The skill active in this chat (`null`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// Whether a draft is shown on screen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub draft_shown: bool,
    /// What the user is doing in the interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<Ui>,
    /// The generation mode switched on in the interface, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_mode: Option<GenerationMode>,
    /// Files attached to the message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// Connected integrations (e.g. `google`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrations: Vec<String>,
    /// Recent tool calls in this chat and whether they succeeded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent_calls: Vec<RecentCall>,
    /// The user's web search toggle.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub web_search_toggle: bool,
}

/// A chat message.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
}

/// The author of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person chatting.
    User,
    /// The assistant.
    Assistant,
    /// A system message.
    System,
}

/// The interface hint.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ui {
    /// The interface mode (e.g. documents, mail).
    #[serde(default)]
    pub mode: Option<String>,
    /// The file open on screen.
    #[serde(default)]
    pub open_file: Option<OpenFile>,
    /// The open tab.
    #[serde(default)]
    pub tab: Option<String>,
}

/// A file open in the interface.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenFile {
    /// Its name as the user sees it.
    pub name: String,
}

/// A generation mode of the interface: while on, the text is the generator's prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GenerationMode {
    /// Pictures.
    Image,
    /// Video.
    Video,
    /// Music.
    Music,
    /// Voice-over.
    Voice,
}

impl GenerationMode {
    /// All modes, for checking names written in rules.
    pub const ALL: [GenerationMode; 4] = [Self::Image, Self::Video, Self::Music, Self::Voice];

    /// The name used in requests and rules.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Video => "video",
            Self::Music => "music",
            Self::Voice => "voice",
        }
    }
}

/// An attachment.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Attachment {
    /// Its kind (e.g. `photo`).
    pub kind: String,
    /// Whether a face was detected on it.
    #[serde(default)]
    pub face: bool,
}

/// A tool call made earlier in the chat.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecentCall {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: Value,
    /// Whether it succeeded.
    #[serde(default)]
    pub ok: bool,
}

impl Request {
    /// The user's new message (the last one), if the request has one.
    pub fn user_message(&self) -> Option<&str> {
        self.messages.last().map(|m| m.content.as_str())
    }

    /// The last assistant message before the user's new one.
    pub fn last_assistant(&self) -> Option<&str> {
        let before = self.messages.len().checked_sub(1)?;
        self.messages[..before]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.content.as_str())
    }

    /// Checks what serde cannot: a non-empty history ending with a non-empty user message.
    pub fn check(&self) -> Result<(), RequestError> {
        let last = self.messages.last().ok_or(RequestError::NoMessages)?;
        if last.role != Role::User {
            return Err(RequestError::LastNotUser);
        }
        if last.content.trim().is_empty() {
            return Err(RequestError::EmptyMessage);
        }
        Ok(())
    }
}

/// A request that cannot be routed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    /// `messages` is empty.
    #[error("messages: at least one message is required")]
    NoMessages,
    /// The last message is not the user's.
    #[error("messages: the last message must have role 'user'")]
    LastNotUser,
    /// The user's message is blank.
    #[error("messages: the user's message is empty")]
    EmptyMessage,
}

impl RequestError {
    /// The request field the error is about.
    pub fn field(&self) -> &'static str {
        "messages"
    }
}

/// A request body that is not valid JSON of the request's shape.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ParseError {
    /// The field at fault, as a path (`messages[0].role`), or `body` for the whole document.
    pub field: String,
    /// What is wrong, with line and column in the body.
    pub message: String,
}

impl Request {
    /// Parses a JSON request and checks it, naming the field at fault on error.
    pub fn from_json(body: &str) -> Result<Request, ParseError> {
        // The usual case first, without tracking the path (a fifth of a request's cost); only a
        // request that fails is parsed again to name the field at fault.
        let req = match serde_json::from_str::<Request>(body) {
            Ok(req) => req,
            Err(_) => Self::explain(body)?,
        };
        req.check().map_err(|e| ParseError {
            field: e.field().to_owned(),
            message: e.to_string(),
        })?;
        Ok(req)
    }

    /// Parses again, tracking where the parser is, to say which field is at fault.
    fn explain(body: &str) -> Result<Request, ParseError> {
        let de = &mut serde_json::Deserializer::from_str(body);
        let req: Request = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
            let path = e.path().to_string();
            let message = e.into_inner().to_string();
            // serde names a missing field only in its message; the path is its parent.
            let missing = message
                .strip_prefix("missing field `")
                .and_then(|m| m.split('`').next())
                .map(|f| match path.as_str() {
                    "." | "?" => f.to_owned(),
                    _ => format!("{path}.{f}"),
                });
            let field = match missing {
                Some(f) => f,
                None if path == "." || path == "?" => "body".to_owned(),
                None => path,
            };
            ParseError { field, message }
        })?;
        // One request per body: anything after it but whitespace (a second object, a NUL
        // byte, stray text) is refused, not silently dropped.
        de.end().map_err(|e| ParseError {
            field: "body".to_owned(),
            message: format!("{e}: the body must hold one JSON object and nothing after it"),
        })?;
        Ok(req)
    }
}
