//! Deciding JSON lines in bulk: `turnout route --jsonl`'s pipeline as a library function. One
//! request per line in, one decision per line out, in the input's order, decided on `jobs`
//! threads in batches while the next batch is read and the last one written. A line that is
//! not a valid request (not JSON, not UTF-8, too long, over the limits) gets an error object
//! `{"error", "line"}` on its line, and the run goes on.

use std::io::{BufRead, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::{Limits, Options, decide, ready};
use crate::contract::Request;
use crate::model::Model;
use crate::ruleset::RuleSet;

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

/// What deciding JSON lines needs: `turnout route --jsonl`'s settings.
pub struct Jsonl<'a> {
    /// The rules.
    pub rs: &'a RuleSet,
    /// The router model; `None`: rules only (then no decision waits for the runtime).
    pub model: Option<&'a dyn Model>,
    /// Where a model's decisions are awaited.
    pub rt: &'a tokio::runtime::Runtime,
    /// What each request is held to.
    pub limits: Limits,
    /// The longest line, in bytes (`--max-request-bytes`): a longer one gets an error object
    /// on its line and is never held in memory.
    pub max_line_bytes: u64,
    /// Room for a decided line's output, from the chunks decided so far: a chunk's buffer is
    /// made this large at once (an embedded router's decision, with its trace, takes about
    /// 1.7 KB, and growing the buffer to that copied it over and over).
    bytes_a_line: AtomicUsize,
}

/// Why a run of [`Jsonl::run`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum JsonlError {
    /// The threads could not be started.
    #[error("cannot start the deciding threads: {0}")]
    Threads(String),
    /// The input could not be read.
    #[error("cannot read the input: {0}")]
    Read(std::io::Error),
    /// The output could not be written (a closed pipe, say).
    #[error("cannot write the output: {0}")]
    Write(std::io::Error),
}

impl<'a> Jsonl<'a> {
    /// The longest line by default, in bytes (`route --max-request-bytes`' default).
    pub const MAX_LINE_BYTES: u64 = 1 << 20;

    /// Settings for `rs` and `model` with the default limits.
    pub fn new(
        rs: &'a RuleSet,
        model: Option<&'a dyn Model>,
        rt: &'a tokio::runtime::Runtime,
    ) -> Self {
        Self {
            rs,
            model,
            rt,
            limits: Limits::DEFAULT,
            max_line_bytes: Self::MAX_LINE_BYTES,
            bytes_a_line: AtomicUsize::new(512),
        }
    }
}

/// Numbered lines of the input: their bytes one after another (one buffer a batch, not one a
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

impl Jsonl<'_> {
    /// Decides the JSON lines of `input` into `output` on `jobs` threads, in batches, keeping the
    /// input's order; `Ok(false)` when a line was bad (its error object is on its line, and
    /// `on_bad_line` is told), `Err` when the input or the output failed. Reading the next batch
    /// and writing the last one's decisions run on threads of their own, beside the deciding;
    /// `on_lines` is told how many more lines are written.
    pub fn run(
        &self,
        input: impl Read + Send,
        output: impl Write + Send,
        jobs: usize,
        mut on_lines: impl FnMut(usize) + Send,
        mut on_bad_line: impl FnMut(&str) + Send,
    ) -> Result<bool, JsonlError> {
        let jobs = jobs.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .build()
            .map_err(|e| JsonlError::Threads(e.to_string()))?;
        let (size, max_bytes) = (jobs * LINES_PER_JOB, jobs * BYTES_PER_JOB);
        std::thread::scope(|s| {
            let (batches, to_decide) = std::sync::mpsc::sync_channel::<Batch>(1);
            let (decided, to_write) = std::sync::mpsc::sync_channel::<Vec<Routed>>(1);
            let limit = self.max_line_bytes;
            let reader = s.spawn(move || {
                // Lines are read as bytes: one line that is not UTF-8 is that line's error, not
                // the end of the run.
                // Read a mebibyte at a time: stdin's own buffer of 8 KiB took a read(2) for every
                // 45 lines.
                let mut input = std::io::BufReader::with_capacity(READ_BUFFER, input);
                let mut n = 0;
                // Each batch's buffer starts as large as the last one ended.
                let mut capacity = 0;
                loop {
                    let mut batch = Batch {
                        bytes: Vec::with_capacity(capacity),
                        lines: Vec::with_capacity(size),
                    };
                    while batch.lines.len() < size && batch.bytes.len() < max_bytes {
                        let Some(line) = read_line(&mut input, &mut batch.bytes, limit)? else {
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
                let mut out = std::io::BufWriter::new(output);
                let mut ok = true;
                for done in to_write {
                    for routed in done {
                        for e in &routed.errors {
                            on_bad_line(e);
                        }
                        ok &= routed.errors.is_empty();
                        out.write_all(&routed.out)?;
                        on_lines(routed.lines);
                    }
                }
                out.flush()?;
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
                        .map(|lines| self.route_chunk(&batch.bytes, lines))
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
            read.map_err(JsonlError::Read)?;
            written.map_err(JsonlError::Write)
        })
    }
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

/// One chunk of JSON lines, decided: their output lines, and the bad lines' messages.
struct Routed {
    out: Vec<u8>,
    errors: Vec<String>,
    /// How many input lines the chunk held.
    lines: usize,
}

impl Jsonl<'_> {
    /// Decides numbered lines; a bad line gets an error object on its line.
    fn route_chunk(&self, bytes: &[u8], lines: &[(usize, Line)]) -> Routed {
        let mut routed = Routed {
            out: Vec::with_capacity(lines.len() * self.bytes_a_line.load(Ordering::Relaxed)),
            errors: Vec::new(),
            lines: lines.len(),
        };
        for (n, line) in lines {
            let result = match line {
                Line::TooLong => Err(format!(
                    "the request is not valid: the line is longer than {} bytes \
                     (--max-request-bytes)",
                    self.max_line_bytes
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
                            let result = self.decide_json(text, &mut routed.out);
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
        self.bytes_a_line
            .fetch_max((average + average / 8).min(8 << 10), Ordering::Relaxed);
        routed
    }

    /// Decides one request given as JSON, the decision's JSON appended to `out`; the error
    /// says why the request is not valid.
    pub fn decide_json(&self, input: &str, out: &mut Vec<u8>) -> Result<(), String> {
        let req =
            Request::from_json(input).map_err(|e| format!("the request is not valid: {e}"))?;
        let options = Options {
            model: self.model,
            limits: self.limits,
            ..Options::default()
        };
        let decision = decide(self.rs, &req, options);
        let decision = match self.model {
            // Rules only, a decision never waits: no runtime is entered for it.
            None => ready(decision)
                .ok_or("a decision without a model waited (a bug; please report it)")?,
            Some(_) => self.rt.block_on(decision),
        }
        .map_err(|e| format!("the request is not valid: {}: {e}", e.field()))?;
        serde_json::to_writer(out, &decision).map_err(|e| e.to_string())
    }
}
