//! The request a chat backend sends for each user message (see the public contract).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// serde's derived code reads a struct from a JSON array of its fields in order as well as from
/// an object; the contract's objects are objects only, as their schemas (`type: object`) say.
/// A struct derives with `#[serde(remote = "Self")]` (and `#[schemars(rename = "…")]`, to keep
/// its schema's name), and this implements the serde traits over the derived functions, reading
/// through [`MapOnly`].
macro_rules! objects_only {
    ($($t:ty),* $(,)?) => {$(
        impl<'de> ::serde::Deserialize<'de> for $t {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$t>::deserialize($crate::contract::request::MapOnly(d))
            }
        }
        impl ::serde::Serialize for $t {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$t>::serialize(self, s)
            }
        }
    )*};
}
pub(crate) use objects_only;

/// A deserializer that reads a struct only from a map (see [`objects_only`]).
pub struct MapOnly<D>(pub D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(v)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(v)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

objects_only!(Request, Message, Ui, OpenFile, Attachment, RecentCall);

/// One chat message to route, with what the client knows about its context.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "Request")]
pub struct Request {
    /// The conversation so far; the last one is the user's new message: its role must be
    /// `user` and its text not blank.
    #[schemars(length(min = 1))]
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
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "Message")]
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
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "Ui")]
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
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "OpenFile")]
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
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "Attachment")]
pub struct Attachment {
    /// Its kind (e.g. `photo`).
    pub kind: String,
    /// Whether a face was detected on it.
    #[serde(default)]
    pub face: bool,
}

/// A tool call made earlier in the chat.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, remote = "Self")]
#[schemars(rename = "RecentCall")]
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

/// The assistant's message right before the last one of `messages` (the user's new one), if
/// that is where one stands: what a short follow-up answers.
pub fn assistant_just_before(messages: &[Message]) -> Option<&str> {
    match messages {
        [.., previous, _] if previous.role == Role::Assistant => Some(&previous.content),
        _ => None,
    }
}

impl Request {
    /// The user's new message (the last one), if the request has one.
    pub fn user_message(&self) -> Option<&str> {
        self.messages.last().map(|m| m.content.as_str())
    }

    /// The last assistant message before the user's new one (other messages may stand
    /// between them; [`assistant_just_before`] allows none).
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

    /// Checks that no message is longer than `max_message_chars` characters. Runs on every
    /// decision: a message no longer in bytes than the limit (almost all) is not counted.
    pub fn check_limits(&self, max_message_chars: usize) -> Result<(), RequestError> {
        let too_long = |m: &Message| {
            m.content.len() > max_message_chars && m.content.chars().count() > max_message_chars
        };
        match self.messages.iter().position(too_long) {
            Some(index) => Err(RequestError::TooLong {
                index,
                max: max_message_chars,
            }),
            None => Ok(()),
        }
    }
}

/// A request that cannot be routed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    /// `messages` is empty.
    #[error("at least one message is required")]
    NoMessages,
    /// The last message is not the user's.
    #[error("the last message must have role 'user'")]
    LastNotUser,
    /// The user's message is blank.
    #[error("the user's message is empty")]
    EmptyMessage,
    /// The message at `index` is longer than the caller allows ([`Request::check_limits`]).
    #[error("the message is longer than {max} characters")]
    TooLong {
        /// Which message, from the first.
        index: usize,
        /// The most characters allowed.
        max: usize,
    },
}

impl RequestError {
    /// The request field the error is about (`messages`, `messages[3].content`).
    pub fn field(&self) -> String {
        match self {
            Self::TooLong { index, .. } => format!("messages[{index}].content"),
            _ => "messages".to_owned(),
        }
    }

    /// The error code an HTTP answer gives it: `message_too_long` for a message over the
    /// limit, `invalid_request` for the rest.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooLong { .. } => "message_too_long",
            _ => "invalid_request",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::parse::{MAX_ECHO, ParseError, cut};

    fn error_of(body: &str) -> ParseError {
        match Request::from_json(body) {
            Ok(r) => panic!("accepted {body}: {r:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_valid_request_parses() {
        let r = Request::from_json(r#"{"messages":[{"role":"user","content":"hi"}]}"#);
        assert_eq!(r.map(|r| r.messages.len()).ok(), Some(1));
    }

    #[test]
    fn a_number_for_the_generation_mode_names_the_field_and_the_modes() {
        let e = error_of(r#"{"messages":[{"role":"user","content":"hi"}],"generation_mode":5}"#);
        assert_eq!(e.field, "generation_mode");
        assert_eq!(
            e.message,
            r#"expected a string, one of "image", "video", "music", "voice", or null, got the number 5 at line 1 column 64"#
        );
    }

    #[test]
    fn an_unknown_role_is_cut_and_the_roles_listed() {
        let long = "x".repeat(1000);
        let e = error_of(&format!(
            r#"{{"messages":[{{"role":"{long}","content":"hi"}}]}}"#
        ));
        assert_eq!(e.field, "messages[0].role");
        assert!(
            e.message.starts_with(
                r#"expected a string, one of "user", "assistant", "system", got the string "xxx"#
            ),
            "{}",
            e.message
        );
        assert!(e.message.contains("x…\""), "{}", e.message);
        assert!(e.message.len() < 250, "{}", e.message);
    }

    #[test]
    fn a_wrong_type_in_a_nested_object_names_its_path() {
        for (body, field, start) in [
            (
                r#"{"messages":[{"role":"user","content":"hi"}],"ui":{"open_file":{"name":7}}}"#,
                "ui.open_file.name",
                "expected a string, got the number 7",
            ),
            (
                r#"{"messages":[{"role":"user","content":"hi"}],"draft_shown":"yes"}"#,
                "draft_shown",
                r#"expected true or false, got the string "yes""#,
            ),
            (
                r#"{"messages":[["user", "hi"]]}"#,
                "messages[0]",
                "expected an object, got an array",
            ),
            (
                r#"{"messages":{"role":"user"}}"#,
                "messages",
                "expected an array, got an object",
            ),
            // serde's derived code would take an array of the fields in order.
            (
                r#"[[{"role": "user", "content": "hi"}]]"#,
                "body",
                "expected an object, got an array of 1 item",
            ),
        ] {
            let e = error_of(body);
            assert_eq!(e.field, field, "{body}");
            assert!(e.message.starts_with(start), "{body}: {}", e.message);
        }
    }

    #[test]
    fn a_huge_unknown_key_is_echoed_once_and_cut() {
        let key = "k".repeat(900_000);
        let e = error_of(&format!(
            r#"{{"messages":[{{"role":"user","content":"hi","{key}":1}}]}}"#
        ));
        assert_eq!(e.field, "messages[0]");
        assert!(e.message.len() < 300, "{} bytes", e.message.len());
        assert_eq!(e.message.matches("\"kkk").count(), 1, "{}", e.message);
        assert!(
            e.message.contains("expected `role` or `content`")
                || e.message.contains("one of `role`, `content`"),
            "{}",
            e.message
        );
        let e = error_of(&format!(
            r#"{{"messages":[{{"role":"user","content":"hi"}}],"{key}":1}}"#
        ));
        assert_eq!(e.field, "body");
        assert!(e.message.len() < 600, "{} bytes", e.message.len());
    }

    #[test]
    fn a_missing_field_is_named_with_its_path() {
        let e = error_of(r#"{"messages":[{"role":"user"}]}"#);
        assert_eq!(e.field, "messages[0].content");
        assert!(
            e.message.starts_with("this field is required"),
            "{}",
            e.message
        );
        let e = error_of("{}");
        assert_eq!(e.field, "messages");
    }

    #[test]
    fn a_huge_string_of_the_wrong_type_is_cut() {
        let long = "y".repeat(500_000);
        let e = error_of(&format!(
            r#"{{"messages":[{{"role":"user","content":"hi"}}],"web_search_toggle":"{long}"}}"#
        ));
        assert_eq!(e.field, "web_search_toggle");
        assert!(e.message.len() < 250, "{} bytes", e.message.len());
    }

    #[test]
    fn broken_json_keeps_the_parsers_position() {
        let e = error_of("{");
        assert_eq!(e.field, "body");
        let e = error_of(r#"{"messages": [}"#);
        assert!(e.message.contains("line 1 column"), "{}", e.message);
        let e = error_of(r#"{"messages":[{"role":"user","content":"hi"}]} {}"#);
        assert_eq!(e.field, "body");
    }

    #[test]
    fn what_serde_cannot_check_is_refused_too() {
        assert_eq!(error_of(r#"{"messages":[]}"#).field, "messages");
        let e = error_of(r#"{"messages":[{"role":"assistant","content":"hi"}]}"#);
        assert!(e.message.contains("role 'user'"), "{}", e.message);
        assert!(
            error_of(r#"{"messages":[{"role":"user","content":" \n"}]}"#)
                .message
                .contains("empty")
        );
    }

    #[test]
    fn cut_keeps_short_text_and_marks_long_text() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(100);
        let c = cut(&long);
        assert_eq!(c.chars().count(), MAX_ECHO + 1);
        assert!(c.ends_with('…'));
    }
}
