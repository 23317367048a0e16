//! turnout decides, for every message a chat assistant receives, whether it gets a plain answer,
//! a skill (a conversation mode), or one or two tool calls — and says why.
//!
//! # Layout
//! One message flows through the modules in this order, and each module only uses those above
//! it in this list. `LAYERS` in `tests/it/layers.rs` is the one statement of that order: the
//! test holds this list to it, reads every `crate::` path of every file against it, and finds
//! import circles between files.
//!
//! - [`contract`]: the public contract as data — the request, the decision and its trace, the
//!   router model spec. It imports nothing from the rest of the crate.
//! - [`diag`] and [`text`]: leaves — a finding with its place; the message normalised once and
//!   the word-list matchers.
//! - [`rules`]: what the YAML rule files say, as serde types; their JSON Schemas are generated
//!   from them ([`rules::schema`]).
//! - [`source`] and [`ruleset`]: the two ends of the compiler. `source` is the YAML front end:
//!   it reads a directory (confined, limited, hashed once), turns text into values and
//!   positions with one YAML parser, explains schema errors and reads the files into the rule
//!   types, every problem a [`Diagnostic`] with file:line:column. `ruleset` is the compiled
//!   form the engine and the models read: ids resolved, matchers built, rules indexed.
//! - [`model`]: the pluggable router model ([`model::Model`]) and its backends.
//! - [`engine`]: the pipeline for one request — pre-rules → router model → validation → search
//!   detector → post-guards → [`contract::Decision`] with its trace.
//! - [`compile`]: the compiler, the only way to get a [`RuleSet`]: the front end's files in,
//!   one file per pass (`symbols`, `lists`, `tools`, `extract`, `router`, `rules`,
//!   `conditions`), the compiled ruleset out. It sits above the engine and the models so that
//!   they cannot import it.
//! - [`reload`], [`testing`] and [`report`]: the live ruleset (an `ArcSwap`) and the watcher
//!   that rebuilds it on the side; rule test cases (`rules/tests/*.yaml`) run through the real
//!   pipeline; any [`Diagnostic`] printed for people, as JSON, or as GitHub annotations.
//! - [`replay`] and [`lint`]: a corpus of requests decided and two rules versions compared on
//!   it (with the test cases' comparison of decisions); a directory loaded exactly as reload
//!   does, with whole-model meaning checks, the test cases run and their coverage measured.
//! - `server`: the HTTP service (`turnout serve`): routes, connection limits, auth, metrics;
//!   `server::service::Service` owns what runs around them (reloads, watchers, SIGHUP, corpus,
//!   decision log, shadow), so a program can embed the whole service.
//! - `cli`: the `turnout` command line (thin; the library does the work).
//!
//! The engine knows no domain: tool ids, skill ids and Russian words live in `rules/` only.
//!
//! # Features
//! `cli` (default) = `server` + `http-models` + the command line. `server` brings axum, hyper and
//! the `watch`er (notify); `http-models` the OpenAI and Anthropic backends (reqwest). With
//! `default-features = false` the library compiles none of them: rules, engine, the embedded and
//! scripted models, lint and tests only.
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
pub mod replay;
pub mod report;
pub mod rules;
pub mod ruleset;
#[cfg(feature = "server")]
pub mod server;
pub mod source;
pub mod testing;
pub mod text;

pub use diag::{Diagnostic, Severity};
pub use ruleset::RuleSet;
