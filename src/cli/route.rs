//! `turnout route`: a request on stdin, a decision on stdout.

use std::io::{BufRead, Read, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use rayon::prelude::*;

use super::{LimitArgs, ModelArgs, load_rules};
use crate::contract::Request;
use crate::engine;
use crate::model::Model;
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
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    max_request_bytes: u64,
    /// Longest message in characters; a longer one is refused as `serve` refuses it (its line
    /// gets an error object with --jsonl).
    #[arg(long, value_name = "CHARS", default_value_t = crate::engine::Limits::DEFAULT.max_message_chars)]
    max_message_chars: usize,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Lines per thread in one batch of a --jsonl run: enough that handing a batch from thread to
/// thread is small beside deciding it.
const LINES_PER_JOB: usize = 1024;

/// Chunks of a batch per thread: the batch ends when its last chunk is decided.
const CHUNKS_PER_JOB: usize = 8;

/// Bytes of requests per thread in one batch, at most (a batch also ends here): up to five
/// batches are in flight at once (being read, waiting, decided, waiting, written), so long
/// lines must not multiply into gigabytes.
const BYTES_PER_JOB: usize = 4 << 20;

/// How much of stdin one read(2) asks for.
const READ_BUFFER: usize = 1 << 20;

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
    let router = Router {
        rt: &rt,
        rs,
        model: model.as_deref(),
        max_bytes: args.max_request_bytes,
        bytes_a_line: std::sync::atomic::AtomicUsize::new(512),
        limits: engine::Limits {
            max_message_chars: args.max_message_chars,
        },
    };
    let ok = if args.jsonl {
        match route_lines(&router, jobs) {
            Ok(ok) => ok,
            Err(status) => return status,
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

/// Numbered lines of stdin: their bytes one after another (one buffer a batch, not one a
/// line), and each line's place in them.
struct Batch {
    bytes: Vec<u8>,
    lines: Vec<(usize, Line)>,
}

/// One line of stdin.
enum Line {
    /// Where its bytes are in the batch's buffer.
    Bytes(std::ops::Range<usize>),
    /// Longer than the limit: not kept.
    TooLong,
}

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
    let (size, max_bytes) = (jobs * LINES_PER_JOB, jobs * BYTES_PER_JOB);
    std::thread::scope(|s| {
        let (batches, to_decide) = std::sync::mpsc::sync_channel::<Batch>(1);
        let (decided, to_write) = std::sync::mpsc::sync_channel::<Vec<Routed>>(1);
        let limit = router.max_bytes;
        let reader = s.spawn(move || {
            // Lines are read as bytes: one line that is not UTF-8 is that line's error, not
            // the end of the run.
            // Read a mebibyte at a time: stdin's own buffer of 8 KiB took a read(2) for every
            // 45 lines.
            let mut stdin = std::io::BufReader::with_capacity(READ_BUFFER, std::io::stdin().lock());
            let mut n = 0;
            // Each batch's buffer starts as large as the last one ended.
            let mut capacity = 0;
            loop {
                let mut batch = Batch {
                    bytes: Vec::with_capacity(capacity),
                    lines: Vec::with_capacity(size),
                };
                while batch.lines.len() < size && batch.bytes.len() < max_bytes {
                    let Some(line) = read_line(&mut stdin, &mut batch.bytes, limit)? else {
                        break;
                    };
                    n += 1;
                    batch.lines.push((n, line));
                }
                capacity = batch.bytes.len();
                // A send fails when the deciding stopped (stdout closed): nothing more to do.
                if batch.lines.is_empty() || batches.send(batch).is_err() {
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
                        bar.suspend(|| eprintln!("{e}"));
                    }
                    ok &= routed.errors.is_empty();
                    out.write_all(&routed.out)?;
                    bar.inc(routed.lines as u64);
                }
            }
            out.flush()?;
            bar.finish();
            Ok::<bool, std::io::Error>(ok)
        });
        for batch in to_decide {
            // Several chunks a thread, so that a thread that finishes early (or was not
            // scheduled for a while) takes over the rest instead of waiting for the batch's end.
            let chunk = batch.lines.len().div_ceil(jobs * CHUNKS_PER_JOB).max(1);
            let done: Vec<Routed> = pool.install(|| {
                batch
                    .lines
                    .par_chunks(chunk)
                    .map(|lines| router.route_chunk(&batch.bytes, lines))
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

/// The next line of `input` without its newline, appended to `bytes`, keeping at most `limit`
/// bytes of it (the rest of a longer line is skipped, never held); `None` at the end.
fn read_line(
    input: &mut impl BufRead,
    bytes: &mut Vec<u8>,
    limit: u64,
) -> std::io::Result<Option<Line>> {
    let start = bytes.len();
    if input
        .take(limit.saturating_add(1))
        .read_until(b'\n', bytes)?
        == 0
    {
        return Ok(None);
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    } else if (bytes.len() - start) as u64 > limit {
        bytes.truncate(start);
        input.skip_until(b'\n')?;
        return Ok(Some(Line::TooLong));
    }
    Ok(Some(Line::Bytes(start..bytes.len())))
}

/// What `route` decides with.
struct Router<'a> {
    rt: &'a tokio::runtime::Runtime,
    rs: &'a RuleSet,
    model: Option<&'a dyn Model>,
    /// `--max-request-bytes`.
    max_bytes: u64,
    /// `--max-message-chars`.
    limits: engine::Limits,
    /// Room for a decided line's output, from the chunks decided so far: a chunk's buffer is
    /// made this large at once (an embedded router's decision, with its trace, takes about
    /// 1.7 KB, and growing the buffer to that copied it over and over).
    bytes_a_line: std::sync::atomic::AtomicUsize,
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

/// One chunk of JSON lines, decided: their output lines, and the bad lines' messages.
struct Routed {
    out: Vec<u8>,
    errors: Vec<String>,
    /// How many input lines the chunk held.
    lines: usize,
}

impl Router<'_> {
    /// Decides numbered lines; a bad line gets an error object on its line.
    fn route_chunk(&self, bytes: &[u8], lines: &[(usize, Line)]) -> Routed {
        let mut routed = Routed {
            out: Vec::with_capacity(
                lines.len() * self.bytes_a_line.load(std::sync::atomic::Ordering::Relaxed),
            ),
            errors: Vec::new(),
            lines: lines.len(),
        };
        for (n, line) in lines {
            let result = match line {
                Line::TooLong => Err(format!(
                    "the request is not valid: the line is longer than {} bytes \
                     (--max-request-bytes)",
                    self.max_bytes
                )),
                Line::Bytes(range) => {
                    // The reader made the range; an empty line is skipped, as a blank one is.
                    let line = bytes.get(range.clone()).unwrap_or_default();
                    // Checked with SIMD: the standard check goes byte by byte through Cyrillic
                    // text, and was 4 % of routing a corpus. A bad line is checked again to
                    // say where.
                    match simdutf8::basic::from_utf8(line)
                        .map_err(|_| std::str::from_utf8(line).err())
                    {
                        Ok(text) if text.trim().is_empty() => continue,
                        Ok(text) => {
                            let start = routed.out.len();
                            let result = self.route(text, &mut routed.out);
                            if result.is_err() {
                                routed.out.truncate(start);
                            }
                            result
                        }
                        Err(e) => Err(format!(
                            "the request is not valid: the line is not UTF-8 (byte {})",
                            e.map_or(0, |e| e.valid_up_to()) + 1
                        )),
                    }
                }
            };
            if let Err(e) = result {
                routed.errors.push(format!("line {n}: {e}"));
                let error = serde_json::json!({ "error": e, "line": n });
                // Writing a JSON value to a Vec cannot fail.
                let _ = serde_json::to_writer(&mut routed.out, &error);
            }
            routed.out.push(b'\n');
        }
        // The average and an eighth, so that a chunk a little above it fits too; at most 8 KiB
        // a line, so that a few huge lines do not make every later chunk's buffer huge.
        let average = routed.out.len() / lines.len().max(1);
        self.bytes_a_line.fetch_max(
            (average + average / 8).min(8 << 10),
            std::sync::atomic::Ordering::Relaxed,
        );
        routed
    }

    /// Decides one request, its JSON appended to `out`.
    fn route(&self, input: &str, out: &mut Vec<u8>) -> Result<(), String> {
        let req =
            Request::from_json(input).map_err(|e| format!("the request is not valid: {e}"))?;
        let options = engine::Options {
            model: self.model,
            limits: self.limits,
            ..engine::Options::default()
        };
        let decision = engine::decide(self.rs, &req, options);
        let decision = match self.model {
            // Rules only, a decision never waits: no runtime is entered for it.
            None => engine::ready(decision)
                .ok_or("a decision without a model waited (a bug; please report it)")?,
            Some(_) => self.rt.block_on(decision),
        }
        .map_err(|e| format!("the request is not valid: {}: {e}", e.field()))?;
        serde_json::to_writer(out, &decision).map_err(|e| e.to_string())
    }
}
