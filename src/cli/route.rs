//! `turnout route`: a request on stdin, a decision on stdout.

use std::io::{BufRead, Read, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use rayon::prelude::*;

use super::{LimitArgs, ModelArgs, load_rules};
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
    /// Threads that decide --jsonl lines at once (decisions still come out in input order).
    /// Default: one per core.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    jobs: Option<u16>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Lines per thread in one batch of a --jsonl run: the batch is read, decided on every thread,
/// then written, so it is large enough that the threads' start and the serial read and write
/// are small beside the deciding, and small enough to hold in memory.
const LINES_PER_JOB: usize = 1024;

pub fn run(args: Args) -> ExitCode {
    let Some(rs) = load_rules(&args.rules, &args.limits) else {
        return ExitCode::from(2);
    };
    let jobs = match args.jobs {
        Some(n) => usize::from(n),
        None if args.jsonl => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        None => 1,
    };
    let (model, rt) = match args.model.build(&rs, jobs) {
        Ok(built) => built,
        Err(status) => return status,
    };
    let router = Router {
        rt: &rt,
        rs: &rs,
        model: model.as_deref(),
    };
    // Buffered: one write(2) per line was a sixth of a --jsonl run.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let ok = if args.jsonl {
        match route_lines(&router, jobs, &mut out) {
            Ok(ok) => ok,
            Err(status) => return status,
        }
    } else {
        let mut input = String::new();
        if let Err(e) = std::io::stdin().lock().read_to_string(&mut input) {
            eprintln!("error: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        let mut json = Vec::new();
        match router.route(&input, &mut json) {
            Ok(()) => {
                let pretty = serde_json::from_slice::<serde_json::Value>(&json)
                    .and_then(|v| serde_json::to_vec_pretty(&v))
                    .unwrap_or(json);
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
    if out.flush().is_err() {
        return ExitCode::from(2);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

/// Routes JSON lines from stdin to `out` on `jobs` threads, in batches, keeping the input's
/// order; `Ok(false)` when a line was bad, `Err` when stdin or stdout failed.
fn route_lines(router: &Router<'_>, jobs: usize, out: &mut impl Write) -> Result<bool, ExitCode> {
    let stdin = std::io::stdin();
    // Lines are read as bytes: one line that is not UTF-8 is that line's error, not the end of
    // the run.
    let mut lines = stdin.lock().split(b'\n').enumerate();
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("error: cannot start {jobs} threads: {e}");
            return Err(ExitCode::from(2));
        }
    };
    let mut ok = true;
    let mut batch: Vec<(usize, Vec<u8>)> = Vec::with_capacity(jobs * LINES_PER_JOB);
    loop {
        batch.clear();
        for (n, line) in lines.by_ref() {
            match line {
                Ok(bytes) => batch.push((n + 1, bytes)),
                Err(e) => {
                    eprintln!("error: cannot read stdin: {e}");
                    return Err(ExitCode::from(2));
                }
            }
            if batch.len() == jobs * LINES_PER_JOB {
                break;
            }
        }
        if batch.is_empty() {
            return Ok(ok);
        }
        let chunk = batch.len().div_ceil(jobs);
        let done: Vec<Routed> = pool.install(|| {
            batch
                .par_chunks(chunk)
                .map(|lines| router.route_chunk(lines))
                .collect()
        });
        for routed in done {
            for e in &routed.errors {
                eprintln!("{e}");
            }
            ok &= routed.errors.is_empty();
            if out.write_all(&routed.out).is_err() {
                return Err(ExitCode::from(2));
            }
        }
    }
}

/// What `route` decides with.
struct Router<'a> {
    rt: &'a tokio::runtime::Runtime,
    rs: &'a RuleSet,
    model: Option<&'a dyn Model>,
}

/// One chunk of JSON lines, decided: their output lines, and the bad lines' messages.
struct Routed {
    out: Vec<u8>,
    errors: Vec<String>,
}

impl Router<'_> {
    /// Decides numbered lines; a bad line gets an error object on its line.
    fn route_chunk(&self, lines: &[(usize, Vec<u8>)]) -> Routed {
        let mut routed = Routed {
            out: Vec::with_capacity(lines.len() * 512),
            errors: Vec::new(),
        };
        for (n, bytes) in lines {
            let result = match std::str::from_utf8(bytes) {
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => {
                    let start = routed.out.len();
                    let result = self.route(line, &mut routed.out);
                    if result.is_err() {
                        routed.out.truncate(start);
                    }
                    result
                }
                Err(e) => Err(format!(
                    "the request is not valid: the line is not UTF-8 (byte {})",
                    e.valid_up_to() + 1
                )),
            };
            if let Err(e) = result {
                routed.errors.push(format!("line {n}: {e}"));
                let error = serde_json::json!({ "error": e, "line": n });
                // Writing a JSON value to a Vec cannot fail.
                let _ = serde_json::to_writer(&mut routed.out, &error);
            }
            routed.out.push(b'\n');
        }
        routed
    }

    /// Decides one request, its JSON appended to `out`.
    fn route(&self, input: &str, out: &mut Vec<u8>) -> Result<(), String> {
        let req =
            Request::from_json(input).map_err(|e| format!("the request is not valid: {e}"))?;
        let decision = match self.model {
            None => engine::decide_without_model(self.rs, &req),
            Some(m) => self.rt.block_on(engine::decide(self.rs, &req, Some(m))),
        }
        .map_err(|e| format!("the request is not valid: {e}"))?;
        serde_json::to_writer(out, &decision).map_err(|e| e.to_string())
    }
}
