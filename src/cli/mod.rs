//! The `turnout` command line: one file per subcommand, each with its own arguments. The
//! binary's `main` only parses and dispatches; the work is done by the library.

mod calibrate;
mod lint;
mod memory;
mod replay;
mod route;
mod schema;
mod serve;
mod test;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::compile;
/// `--model SPEC`.
use crate::contract::ModelSpec;
use crate::ruleset::RuleSet;
use crate::source;

/// Routes chat messages to a plain answer, a skill or tool calls, by rules written in YAML.
#[derive(Debug, Parser)]
#[command(name = "turnout", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve decisions over HTTP; rule files are watched and applied live.
    Serve(serve::Args),
    /// Read a request (or JSON lines of requests) on stdin and print the decision(s).
    Route(route::Args),
    /// Run the rule test cases (default: RULES/tests/*.yaml); last line `N passed, M failed`.
    Test(test::Args),
    /// Print the JSON Schema of rule files (or of test files), or write both into a directory.
    Schema(schema::Args),
    /// Check rule directories (schema, meaning, test cases, coverage); exit 0 clean, 1 findings, 2 unusable.
    Lint(lint::Args),
    /// Decide a corpus of requests and count what happened; with --against, exactly what an
    /// edit of the rules changes.
    Replay(replay::Args),
    /// Cross-validate the embedded router on the rules' own examples: how many tool/skill and
    /// chat examples its threshold, margin and confusable ratio get right, now and at the best
    /// values found, with the YAML lines to paste.
    Calibrate(calibrate::Args),
}

impl Cli {
    /// Runs the command and returns the process exit status.
    pub fn run(self) -> ExitCode {
        match self.command {
            Command::Serve(a) => serve::run(a),
            Command::Route(a) => route::run(a),
            Command::Test(a) => test::run(a),
            Command::Schema(a) => schema::run(a),
            Command::Lint(a) => lint::run(a),
            Command::Replay(a) => replay::run(a),
            Command::Calibrate(a) => calibrate::run(a),
        }
    }
}

/// Limits on rule files, shared by every command that reads them (so `lint` and `test` can be
/// run with the service's limits).
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Largest rule file, in bytes; larger files are refused before they are read.
    #[arg(long, value_name = "BYTES", default_value_t = source::Limits::default().max_file_bytes, value_parser = clap::value_parser!(u64).range(1..))]
    max_rule_file_bytes: u64,
    /// Deepest nesting of lists and mappings in a rule file.
    #[arg(long, value_name = "LEVELS", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_rule_depth: u32,
}

impl LimitArgs {
    fn limits(&self) -> source::Limits {
        source::Limits {
            max_file_bytes: self.max_rule_file_bytes,
            max_depth: self.max_rule_depth as usize,
        }
    }
}

/// The router model of the commands that decide requests on the spot (`route`, `replay`).
#[derive(Debug, Clone, clap::Args)]
pub struct ModelArgs {
    /// The router model: embedded (offline, no key), none (rules only), openai:MODEL[@BASE_URL],
    /// anthropic:MODEL[@BASE_URL] or script:FILE. Default: the rules' router.model, else embedded.
    #[arg(long, value_name = "SPEC")]
    model: Option<ModelSpec>,
    /// A file holding the API key for openai:/anthropic: (default: OPENAI_API_KEY or
    /// ANTHROPIC_API_KEY).
    #[arg(long, value_name = "FILE")]
    model_key_file: Option<std::path::PathBuf>,
    /// Largest router model answer read, in bytes; a longer one is cut off and the message gets
    /// a plain chat answer.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    max_model_answer_bytes: u64,
}

impl ModelArgs {
    /// Whether `--model` was given on the command line.
    fn given(&self) -> bool {
        self.model.is_some()
    }

    /// The model these arguments choose for `rs` (`None`: rules only), and a runtime to call it
    /// on from `threads` threads at once; the error is printed, and the exit status returned.
    fn build(
        &self,
        rs: &RuleSet,
        threads: usize,
    ) -> Result<
        (
            Option<std::sync::Arc<dyn crate::model::Model>>,
            tokio::runtime::Runtime,
        ),
        ExitCode,
    > {
        let spec = ModelSpec::choose(self.model.as_ref(), rs.router());
        let options = crate::model::spec::BuildOptions {
            keys: crate::model::spec::KeySource::from_file(self.model_key_file.as_deref()),
            max_answer_bytes: usize::try_from(self.max_model_answer_bytes).unwrap_or(usize::MAX),
        };
        let model = spec.build_opts(&options).map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::from(2)
        })?;
        // Trained (or otherwise readied) now, before the first request and its timeout.
        if let Some(m) = &model {
            m.prepare(rs);
        }
        let rt = if threads > 1 {
            // Several threads block on it at once, so it needs workers of its own to drive a
            // hosted model's connections.
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .enable_all()
                .build()
        } else {
            runtime()
        };
        let rt = rt.map_err(|e| {
            eprintln!("error: cannot start the async runtime: {e}");
            ExitCode::from(2)
        })?;
        Ok((model, rt))
    }
}

/// `--format` of the commands that print a report: for people, or one JSON object for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    /// For people.
    Human,
    /// One JSON object.
    Json,
}

/// Loads the rules; `None` when they cannot be used. Rules that cannot be used have every
/// finding printed to stderr; rules that load only have their warnings counted in one line
/// (`lint` is where they are read: a grown pack's dozens would bury the decisions).
fn load_rules(dir: &std::path::Path, limits: &LimitArgs) -> Option<RuleSet> {
    let loaded = compile::load_dir_with(dir, &limits.limits());
    if loaded.ruleset.is_some() {
        let warnings = (loaded.diagnostics.iter())
            .filter(|d| d.severity == crate::diag::Severity::Warning)
            .count();
        if warnings > 0 {
            eprintln!(
                "note: {warnings} warning{} in {}; `turnout lint {}` lists them",
                if warnings == 1 { "" } else { "s" },
                dir.display(),
                dir.display()
            );
        }
    } else {
        for d in &loaded.diagnostics {
            eprintln!("{d}");
        }
    }
    if loaded.ruleset.is_none() && !loaded.diagnostics.iter().any(|d| d.is_error()) {
        eprintln!("error: the rules in {} could not be loaded", dir.display());
    }
    loaded.ruleset
}

/// `bar` styled by `template`, drawn on stderr only when stderr is a terminal: hidden
/// otherwise, so that its calls draw nothing and a piped stderr holds only messages.
fn progress(bar: indicatif::ProgressBar, template: &str) -> indicatif::ProgressBar {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return indicatif::ProgressBar::hidden();
    }
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
