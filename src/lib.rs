//! turnout decides, for every message a chat assistant receives, whether it gets a plain answer,
//! a skill (a conversation mode), or one or two tool calls — and says why.
//!
//! # Layout
//! One message flows through the modules in this order:
//!
//! - [`rules`]: what the YAML rule files say, as serde types (these generate the JSON Schema).
//! - [`compile`]: the only way to get a [`RuleSet`]: reads a directory, validates each file
//!   against the schema, checks meaning, builds every matcher once, and reports every problem as
//!   a [`Diagnostic`] with file:line:column.
//! - [`text`]: the message normalised once (lower case, the rules' character folds) and the
//!   word-list matchers.
//! - [`engine`]: the pipeline for one request — pre-rules → router model → validation →
//!   search detector → post-guards → [`engine::Decision`] with its trace.
//! - [`model`]: the pluggable router model ([`model::Model`]) and its backends.
//! - [`reload`]: the live ruleset (an `ArcSwap`) and the watcher that rebuilds it on the side.
//! - [`server`]: the HTTP service (`turnout serve`): routes, limits, auth, metrics.
//! - [`testing`]: runs rule test cases (`rules/tests/*.yaml`) through the real pipeline.
//! - [`lint`]: loads a directory exactly as reload does, adds whole-model meaning checks, runs
//!   the test cases and measures their coverage; [`report`] prints any [`Diagnostic`] for
//!   people, as JSON, or as GitHub annotations.
//! - `cli`: the `turnout` command line (thin; the library does the work).
//!
//! The engine knows no domain: tool ids, skill ids and Russian words live in `rules/` only.
//!
//! # Use as a library
//!
//! ```
//! use turnout::contract::{Outcome, Request};
//! use turnout::engine;
//!
//! let loaded = turnout::compile::load_dir("rules".as_ref());
//! let rules = loaded.ruleset.expect("the shipped rules are valid");
//! let request = Request::from_json(r#"{"messages":[{"role":"user","content":"hello"}]}"#)
//!     .expect("a valid request");
//! let decision = engine::decide_without_model(&rules, &request).expect("routable");
//! assert_eq!(decision.outcome, Outcome::Chat);
//! assert_eq!(decision.rules_version, rules.version);
//! ```

#[cfg(feature = "cli")]
pub mod cli;
pub mod compile;
pub mod contract;
pub mod diag;
pub mod engine;
pub mod lint;
pub mod model;
pub mod reload;
pub mod report;
pub mod rules;
#[cfg(feature = "server")]
pub mod server;
pub mod testing;
pub mod text;

pub use compile::RuleSet;
pub use diag::{Diagnostic, Severity};
