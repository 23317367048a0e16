//! The `turnout` command line: one file per subcommand, each with its own arguments. The
//! binary's `main` only parses and dispatches; the work is done by the library.

mod route;
mod schema;
mod test;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::compile::{self, RuleSet};
use crate::model::Model;
use crate::model::scripted::ScriptedModel;
use crate::rules::testcase::ModelScript;

/// Routes chat messages to a plain answer, a skill or tool calls, by rules written in YAML.
#[derive(Debug, Parser)]
#[command(name = "turnout", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Read a request (or JSON lines of requests) on stdin and print the decision(s).
    Route(route::Args),
    /// Run the rule test cases (default: RULES/tests/*.yaml); last line `N passed, M failed`.
    Test(test::Args),
    /// Print the JSON Schema of rule files (or of test files), or write both into a directory.
    Schema(schema::Args),
}

impl Cli {
    /// Runs the command and returns the process exit status.
    pub fn run(self) -> ExitCode {
        match self.command {
            Command::Route(a) => route::run(a),
            Command::Test(a) => test::run(a),
            Command::Schema(a) => schema::run(a),
        }
    }
}

/// Which router model to use, from `--model SPEC`.
#[derive(Debug, Clone)]
pub enum ModelSpec {
    /// Rules only: the router is never called.
    None,
    /// Answers from a script file (a test case's `model:` section, in YAML or JSON).
    Script(PathBuf),
}

impl std::str::FromStr for ModelSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once(':') {
            None if s == "none" => Ok(ModelSpec::None),
            Some(("script", file)) if !file.is_empty() => Ok(ModelSpec::Script(file.into())),
            _ if s == "embedded" || s.starts_with("openai:") || s.starts_with("anthropic:") => {
                Err(format!(
                    "model '{s}' is not available in this build yet; use 'none' or 'script:FILE'"
                ))
            }
            _ => Err(format!(
                "unknown model '{s}'; expected none, embedded, script:FILE, openai:MODEL[@URL] or anthropic:MODEL[@URL]"
            )),
        }
    }
}

impl ModelSpec {
    /// Builds the backend (`None` for rules only).
    pub fn build(&self) -> Result<Option<Arc<dyn Model>>, String> {
        match self {
            ModelSpec::None => Ok(None),
            ModelSpec::Script(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read the model script {}: {e}", path.display()))?;
                let script: ModelScript = serde_yaml::from_str(&text)
                    .map_err(|e| format!("{}: not a model script: {e}", path.display()))?;
                let model = ScriptedModel::from_script(Some(&script))?;
                Ok(Some(Arc::new(model)))
            }
        }
    }
}

/// Loads the rules, printing every finding to stderr; `None` when they cannot be used.
fn load_rules(dir: &std::path::Path) -> Option<RuleSet> {
    let loaded = compile::load_dir(dir);
    for d in &loaded.diagnostics {
        eprintln!("{d}");
    }
    if loaded.ruleset.is_none() && !loaded.diagnostics.iter().any(|d| d.is_error()) {
        eprintln!("error: the rules in {} could not be loaded", dir.display());
    }
    loaded.ruleset
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
