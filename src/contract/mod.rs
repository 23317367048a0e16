//! The public contract, as types every layer may use and none owns: the request a chat backend
//! sends, the decision it gets back (with its trace), and which router model to use, as data.
//! This module imports nothing from the rest of the crate: it is the lowest layer (the order
//! of all of them is `LAYERS` in `tests/it/layers.rs`, and the map in the crate's doc).

pub mod decision;
pub mod model_spec;
pub mod parse;
pub mod request;

pub use decision::{
    Call, Decision, EffectKind, Fact, FactKind, Match, ModelCall, Outcome, ReceivedCall, Stage,
    TraceStep,
};
pub use model_spec::{ModelSpec, SpecError};
pub use parse::{ParseError, parse_json};
pub use request::{
    Attachment, GenerationMode, Message, OpenFile, RecentCall, Request, RequestError, Role, Ui,
};
