//! `turnout route`: a request on stdin, a decision on stdout.

use std::io::{BufRead, Read, Write};

use super::LimitArgs;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{ModelArgs, load_rules};
use crate::compile::RuleSet;
use crate::contract::Request;
use crate::engine;
use crate::model::Model;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The rules directory.
    #[arg(long, default_value = "rules")]
    rules: PathBuf,
    #[command(flatten)]
    model: ModelArgs,
    /// Read one request per line and print one decision per line (a line that is not a valid
    /// request gets an error object on its line, and the run goes on).
    #[arg(long)]
    jsonl: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

pub fn run(args: Args) -> ExitCode {
    let Some(rs) = load_rules(&args.rules, &args.limits) else {
        return ExitCode::from(2);
    };
    let (model, rt) = match args.model.build(&rs) {
        Ok(built) => built,
        Err(status) => return status,
    };
    let model = model.as_deref();
    let stdin = std::io::stdin();
    // Buffered: one write(2) per line was a sixth of a --jsonl run.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut ok = true;
    if args.jsonl {
        // Lines are read as bytes: one line that is not UTF-8 is that line's error, not the
        // end of the run.
        for (n, line) in stdin.lock().split(b'\n').enumerate() {
            let bytes = match line {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("error: cannot read stdin: {e}");
                    return ExitCode::from(2);
                }
            };
            let result = match std::str::from_utf8(&bytes) {
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => route_one(&rt, &rs, model, line),
                Err(e) => Err(format!(
                    "the request is not valid: the line is not UTF-8 (byte {})",
                    e.valid_up_to() + 1
                )),
            };
            let text = match result {
                Ok(json) => json,
                Err(e) => {
                    ok = false;
                    eprintln!("line {}: {e}", n + 1);
                    serde_json::json!({ "error": e, "line": n + 1 }).to_string()
                }
            };
            if writeln!(out, "{text}").is_err() {
                return ExitCode::from(2);
            }
        }
    } else {
        let mut input = String::new();
        if let Err(e) = stdin.lock().read_to_string(&mut input) {
            eprintln!("error: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        match route_one(&rt, &rs, model, &input) {
            Ok(json) => {
                let pretty = serde_json::from_str::<serde_json::Value>(&json)
                    .and_then(|v| serde_json::to_string_pretty(&v))
                    .unwrap_or(json);
                if writeln!(out, "{pretty}").is_err() {
                    return ExitCode::from(2);
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    if out.flush().is_err() {
        return ExitCode::from(2);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

fn route_one(
    rt: &tokio::runtime::Runtime,
    rs: &RuleSet,
    model: Option<&dyn Model>,
    input: &str,
) -> Result<String, String> {
    let req = Request::from_json(input).map_err(|e| format!("the request is not valid: {e}"))?;
    let decision = match model {
        None => engine::decide_without_model(rs, &req),
        Some(m) => rt.block_on(engine::decide(rs, &req, Some(m))),
    }
    .map_err(|e| format!("the request is not valid: {e}"))?;
    serde_json::to_string(&decision).map_err(|e| e.to_string())
}
