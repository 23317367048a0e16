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
    let ok = if args.jsonl {
        match route_lines(&router, jobs) {
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

/// Numbered lines of stdin.
type Batch = Vec<(usize, Vec<u8>)>;

/// Routes JSON lines from stdin to stdout on `jobs` threads, in batches, keeping the input's
/// order; `Ok(false)` when a line was bad, `Err` when stdin or stdout failed. Reading the next
/// batch and writing the last one's decisions run on threads of their own, beside the deciding.
fn route_lines(router: &Router<'_>, jobs: usize) -> Result<bool, ExitCode> {
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("error: cannot start {jobs} threads: {e}");
            return Err(ExitCode::from(2));
        }
    };
    let size = jobs * LINES_PER_JOB;
    std::thread::scope(|s| {
        let (batches, to_decide) = std::sync::mpsc::sync_channel::<Batch>(1);
        let (decided, to_write) = std::sync::mpsc::sync_channel::<Vec<Routed>>(1);
        let reader = s.spawn(move || {
            // Lines are read as bytes: one line that is not UTF-8 is that line's error, not
            // the end of the run.
            let mut lines = std::io::stdin().lock().split(b'\n').enumerate();
            loop {
                let mut batch = Vec::with_capacity(size);
                for (n, line) in lines.by_ref() {
                    batch.push((n + 1, line?));
                    if batch.len() == size {
                        break;
                    }
                }
                // A send fails when the deciding stopped (stdout closed): nothing more to do.
                if batch.is_empty() || batches.send(batch).is_err() {
                    return Ok::<(), std::io::Error>(());
                }
            }
        });
        let writer = s.spawn(move || {
            // Buffered: one write(2) per line was a sixth of a --jsonl run.
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let bar = progress();
            let mut ok = true;
            for done in to_write {
                for routed in done {
                    for e in &routed.errors {
                        match &bar {
                            Some(bar) => bar.suspend(|| eprintln!("{e}")),
                            None => eprintln!("{e}"),
                        }
                    }
                    ok &= routed.errors.is_empty();
                    out.write_all(&routed.out)?;
                    if let Some(bar) = &bar {
                        bar.inc(routed.lines as u64);
                    }
                }
            }
            out.flush()?;
            if let Some(bar) = bar {
                bar.finish();
            }
            Ok::<bool, std::io::Error>(ok)
        });
        for batch in to_decide {
            let chunk = batch.len().div_ceil(jobs);
            let done: Vec<Routed> = pool.install(|| {
                batch
                    .par_chunks(chunk)
                    .map(|lines| router.route_chunk(lines))
                    .collect()
            });
            if decided.send(done).is_err() {
                break;
            }
        }
        drop(decided);
        let written = writer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        let read = reader
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        if let Err(e) = read {
            eprintln!("error: cannot read stdin: {e}");
            return Err(ExitCode::from(2));
        }
        written.map_err(|_| ExitCode::from(2))
    })
}

/// What `route` decides with.
struct Router<'a> {
    rt: &'a tokio::runtime::Runtime,
    rs: &'a RuleSet,
    model: Option<&'a dyn Model>,
}

/// A count of the lines routed on stderr, only when stderr is a terminal and stdout is not
/// (decisions printed to the terminal would tear it).
fn progress() -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() || std::io::stdout().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{spinner} {human_pos} lines in {elapsed}")
    {
        bar.set_style(style);
    }
    Some(bar)
}

/// One chunk of JSON lines, decided: their output lines, and the bad lines' messages.
struct Routed {
    out: Vec<u8>,
    errors: Vec<String>,
    /// How many input lines the chunk held.
    lines: usize,
}

impl Router<'_> {
    /// Decides numbered lines; a bad line gets an error object on its line.
    fn route_chunk(&self, lines: &[(usize, Vec<u8>)]) -> Routed {
        let mut routed = Routed {
            out: Vec::with_capacity(lines.len() * 512),
            errors: Vec::new(),
            lines: lines.len(),
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
