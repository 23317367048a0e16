//! `turnout route`: a request on stdin, a decision on stdout.

use std::io::{Read, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{LimitArgs, ModelArgs, load_rules};
use crate::engine::{self, Jsonl, JsonlError};
use crate::ruleset::RuleSet;

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
    /// Threads that decide --jsonl lines at once (decisions still come out in input order).
    /// Default: one per core.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    jobs: Option<u16>,
    /// Largest request read, in bytes: the whole of stdin, or one --jsonl line (a longer line
    /// gets an error object on its line, and the run goes on).
    #[arg(long, value_name = "BYTES", default_value_t = Jsonl::MAX_LINE_BYTES, value_parser = clap::value_parser!(u64).range(1..))]
    max_request_bytes: u64,
    /// Longest message in characters; a longer one is refused as `serve` refuses it (its line
    /// gets an error object with --jsonl).
    #[arg(long, value_name = "CHARS", default_value_t = crate::engine::Limits::DEFAULT.max_message_chars)]
    max_message_chars: usize,
    #[command(flatten)]
    limits: LimitArgs,
}

pub fn run(args: Args) -> ExitCode {
    let Some(rs) = load_rules(&args.rules, &args.limits) else {
        return ExitCode::from(2);
    };
    let status = route_with(&rs, &args);
    // The process ends here: freeing every matcher one by one would only delay the exit (2 to
    // 5 % of a run, more the larger the rules).
    std::mem::forget(rs);
    status
}

fn route_with(rs: &RuleSet, args: &Args) -> ExitCode {
    let jobs = match args.jobs {
        Some(n) => usize::from(n),
        None if args.jsonl => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        None => 1,
    };
    let (model, rt) = match args.model.build(rs, jobs) {
        Ok(built) => built,
        Err(status) => return status,
    };
    let mut router = Jsonl::new(rs, model.as_deref(), &rt);
    router.max_line_bytes = args.max_request_bytes;
    router.limits = engine::Limits {
        max_message_chars: args.max_message_chars,
    };
    let ok = if args.jsonl {
        let bar = progress();
        let shown = bar.clone();
        let run = router.run(
            std::io::stdin(),
            std::io::stdout(),
            jobs,
            |n| bar.inc(n as u64),
            |e| shown.suspend(|| eprintln!("{e}")),
        );
        bar.finish();
        match run {
            Ok(ok) => ok,
            // A closed pipe (`| head`): nothing to say.
            Err(JsonlError::Write(_)) => return ExitCode::from(2),
            Err(JsonlError::Read(e)) => {
                eprintln!("error: cannot read stdin: {e}");
                return ExitCode::from(2);
            }
            Err(JsonlError::Threads(e)) => {
                eprintln!("error: cannot start {jobs} threads: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        let mut input = String::new();
        let limit = args.max_request_bytes;
        if let Err(e) = std::io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_string(&mut input)
        {
            eprintln!("error: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        if input.len() as u64 > limit {
            eprintln!(
                "error: the request is not valid: it is larger than {limit} bytes (--max-request-bytes)"
            );
            return ExitCode::from(2);
        }
        let mut json = Vec::new();
        match router.decide_json(&input, &mut json) {
            Ok(()) => {
                let pretty = serde_json::from_slice::<serde_json::Value>(&json)
                    .and_then(|v| serde_json::to_vec_pretty(&v))
                    .unwrap_or(json);
                let mut out = std::io::stdout().lock();
                if out.write_all(&pretty).and_then(|()| writeln!(out)).is_err() {
                    return ExitCode::from(2);
                }
                true
            }
            Err(e) => {
                eprintln!("error: {e}");
                false
            }
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

/// A count of the lines routed, on stderr when it is a terminal and stdout is not (decisions
/// printed to the terminal would tear it); hidden otherwise.
fn progress() -> indicatif::ProgressBar {
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return indicatif::ProgressBar::hidden();
    }
    super::progress(
        indicatif::ProgressBar::new_spinner(),
        "{spinner} {human_pos} lines in {elapsed}",
    )
}
