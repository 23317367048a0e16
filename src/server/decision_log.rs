//! The decision log (`serve --decision-log FILE|-`): one JSON line per decision (the format is
//! [`crate::replay::log`]), written by a thread of its own, off the request path.
//!
//! A request hands its request and decision to a bounded queue and goes on; it never waits for
//! the disk. A full queue (by lines, or by the bytes of request bodies it holds) drops the
//! line and counts it (`turnout_decision_log_dropped_total`), and so does a line that could
//! not be written. A regular file is rotated when the next line would take it over its size
//! cap (`FILE` → `FILE.1` → … → `FILE.N`, the oldest removed); `-` is stdout, for collectors;
//! anything else (a FIFO, a device) is opened by the writer thread, so a reader that never
//! comes only fills the queue.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;

use crate::contract::{Decision, Request};
use crate::replay::log::{self, LogMessages, Record};

use super::Metrics;
use super::background::{self, Priority, Step};

/// Bytes written at once (about fifty lines): a busy service makes a write call every few
/// milliseconds, not one a decision.
const BUFFER: usize = 64 << 10;

/// How long the writer naps when a look finds the queue empty (the naps grow to
/// [`background::IDLE_NAP`] while nothing comes): a busy service wakes it a hundred times a
/// second rather than once a decision, and `--decision-log-queue` must hold what arrives
/// meanwhile (4,096 lines: 400,000 decisions a second).
const BATCH: Duration = Duration::from_millis(10);

/// Where and how the log is written.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The file, or `-` for stdout.
    pub path: PathBuf,
    /// How message texts are written.
    pub messages: LogMessages,
    /// Most lines waiting to be written.
    pub queue_lines: usize,
    /// Most bytes of request bodies the waiting lines may hold.
    pub queue_bytes: usize,
    /// A file is rotated before a line would take it over this size.
    pub max_bytes: u64,
    /// Rotated files kept (`FILE.1` … `FILE.N`); 0: a full file is started afresh.
    pub keep: u32,
    /// How the writer shares the cores with requests.
    pub priority: Priority,
}

impl Settings {
    /// `turnout serve`'s default for `--decision-log-queue`.
    pub const QUEUE_LINES: usize = 4096;
    /// `turnout serve`'s default for `--decision-log-queue-bytes`.
    pub const QUEUE_BYTES: usize = 16 << 20;
    /// `turnout serve`'s default for `--decision-log-max-bytes`.
    pub const MAX_BYTES: u64 = 100 << 20;
    /// `turnout serve`'s default for `--decision-log-keep`.
    pub const KEEP: u32 = 5;

    /// A log to `path` (`-`: stdout) with `turnout serve`'s defaults.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            messages: LogMessages::Full,
            queue_lines: Self::QUEUE_LINES,
            queue_bytes: Self::QUEUE_BYTES,
            max_bytes: Self::MAX_BYTES,
            keep: Self::KEEP,
            priority: Priority::Idle,
        }
    }
}

/// One decision on its way to the log.
struct Entry {
    time: SystemTime,
    id: String,
    endpoint: &'static str,
    router: std::borrow::Cow<'static, str>,
    request: Request,
    decision: Decision,
    /// The decision's JSON as answered, when the answer was just that.
    decision_json: Option<Bytes>,
    /// What it was charged against the queue's byte budget.
    bytes: usize,
}

/// The handle requests log through.
pub struct DecisionLog {
    tx: background::Sender<Entry>,
    queued_bytes: Arc<AtomicUsize>,
    max_queued_bytes: usize,
    metrics: Arc<Metrics>,
    /// Set by the writer when it has written out everything queued and waits for more.
    idle: Arc<AtomicBool>,
}

impl std::fmt::Debug for DecisionLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecisionLog").finish_non_exhaustive()
    }
}

impl DecisionLog {
    /// Opens the log (a regular file at once, so a path that cannot be written stops the start)
    /// and starts its writer thread.
    pub fn start(settings: Settings, metrics: Arc<Metrics>) -> Result<Self, String> {
        let sink = Sink::open(&settings)?;
        let (tx, rx) = background::queue::<Entry>(settings.queue_lines);
        let queued_bytes = Arc::new(AtomicUsize::new(0));
        // Not idle until the writer has looked at the queue and found it empty.
        let idle = Arc::new(AtomicBool::new(false));
        let writer = Writer {
            sink,
            settings: settings.clone(),
            queued_bytes: queued_bytes.clone(),
            metrics: metrics.clone(),
            idle: idle.clone(),
        };
        background::spawn("decision-log", settings.priority, move || writer.run(&rx))?;
        Ok(Self {
            tx,
            queued_bytes,
            max_queued_bytes: settings.queue_bytes,
            metrics,
            idle,
        })
    }

    /// Queues one decision, with its JSON as answered when the answer was just that (the line
    /// then reuses it), or drops and counts it when the queue is full (`body_bytes`: the size
    /// of its request body, what it holds of memory). Never waits.
    pub fn record(
        &self,
        id: String,
        endpoint: &'static str,
        router: std::borrow::Cow<'static, str>,
        request: Request,
        (decision, decision_json): (Decision, Option<Bytes>),
        body_bytes: usize,
    ) {
        // A line holds about its body twice over (the request and what the decision repeats).
        let bytes = body_bytes.saturating_mul(2).max(256);
        let before = self.queued_bytes.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) > self.max_queued_bytes && before > 0 {
            self.queued_bytes.fetch_sub(bytes, Ordering::Relaxed);
            self.metrics.decision_log_dropped();
            return;
        }
        let entry = Entry {
            time: SystemTime::now(),
            id,
            endpoint,
            router,
            request,
            decision,
            decision_json,
            bytes,
        };
        match self.tx.try_send(entry) {
            Ok(()) => {}
            Err(e) => {
                self.queued_bytes.fetch_sub(e.bytes, Ordering::Relaxed);
                self.metrics.decision_log_dropped();
            }
        }
    }

    /// Waits up to `grace` for the queued lines to be written out, once requests have stopped
    /// (a sink that never takes them does not hold the shutdown).
    pub fn drain(&self, grace: Duration) {
        let until = std::time::Instant::now() + grace;
        while !(self.idle.load(Ordering::Acquire) && self.queued_bytes.load(Ordering::Acquire) == 0)
        {
            if std::time::Instant::now() >= until {
                tracing::warn!("the decision log's last lines were not written in time");
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

enum Sink {
    Stdout(BufWriter<std::io::Stdout>),
    /// A regular file, rotated by size.
    File {
        out: BufWriter<File>,
        written: u64,
    },
    /// A FIFO or a device: opened by the writer (the open may wait for a reader), never rotated.
    Special(Option<BufWriter<File>>),
}

impl Sink {
    fn open(settings: &Settings) -> Result<Self, String> {
        let path = &settings.path;
        if path.as_os_str() == "-" {
            return Ok(Self::Stdout(BufWriter::with_capacity(
                BUFFER,
                std::io::stdout(),
            )));
        }
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => Ok(Self::Special(None)),
            _ => {
                let file = append(path)?;
                let written = file.metadata().map_or(0, |m| m.len());
                Ok(Self::File {
                    out: BufWriter::with_capacity(BUFFER, file),
                    written,
                })
            }
        }
    }
}

fn append(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open the decision log {}: {e}", path.display()))
}

struct Writer {
    sink: Sink,
    settings: Settings,
    queued_bytes: Arc<AtomicUsize>,
    metrics: Arc<Metrics>,
    idle: Arc<AtomicBool>,
}

impl Writer {
    /// Takes the queue as [`background::drain`] does, napping [`BATCH`] when it is empty, so
    /// that a busy service wakes this thread a hundred times a second rather than once a
    /// decision, and writes in large pieces; once a look finds nothing, what is buffered is
    /// written out.
    fn run(mut self, rx: &background::Receiver<Entry>) {
        let mut failing = false;
        background::drain(rx, BATCH, |step| match step {
            Step::Waiting => {
                // A quiet service's lines are on disk.
                let _ = self.flush();
                self.idle.store(true, Ordering::Release);
            }
            Step::Woken => self.idle.store(false, Ordering::Release),
            Step::Item(entry) => {
                let record = Record {
                    time: entry.time,
                    id: &entry.id,
                    endpoint: entry.endpoint,
                    router: &entry.router,
                    request: &entry.request,
                    decision: &entry.decision,
                    decision_json: entry.decision_json.as_deref(),
                };
                let line = log::line(&record, self.settings.messages);
                self.queued_bytes.fetch_sub(entry.bytes, Ordering::Relaxed);
                drop(entry);
                match self.write(line.as_bytes()) {
                    Ok(()) => failing = false,
                    Err(e) => {
                        self.metrics.decision_log_dropped();
                        if !failing {
                            tracing::error!(path = %self.settings.path.display(), error = %e, "cannot write the decision log; lines are dropped and counted until it can");
                        }
                        failing = true;
                    }
                }
            }
        });
        let _ = self.flush();
    }

    fn write(&mut self, line: &[u8]) -> std::io::Result<()> {
        let len = line.len() as u64;
        let rotate = matches!(&self.sink, Sink::File { written, .. }
            if *written > 0 && written.saturating_add(len) > self.settings.max_bytes);
        if rotate {
            self.rotate()?;
        }
        match &mut self.sink {
            Sink::Stdout(out) => out.write_all(line),
            Sink::File { out, written } => {
                out.write_all(line)?;
                *written += len;
                Ok(())
            }
            Sink::Special(out) => {
                if out.is_none() {
                    *out = Some(BufWriter::with_capacity(
                        BUFFER,
                        OpenOptions::new().write(true).open(&self.settings.path)?,
                    ));
                }
                match out {
                    Some(o) => o.write_all(line),
                    None => Ok(()),
                }
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Stdout(out) => out.flush(),
            Sink::File { out, .. } => out.flush(),
            Sink::Special(Some(out)) => out.flush(),
            Sink::Special(None) => Ok(()),
        }
    }

    /// `FILE.N-1` → `FILE.N`, …, `FILE` → `FILE.1`, then a new `FILE`.
    fn rotate(&mut self) -> std::io::Result<()> {
        self.flush()?;
        rotate_files(&self.settings.path, self.settings.keep)?;
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&self.settings.path)?;
        self.sink = Sink::File {
            out: BufWriter::with_capacity(BUFFER, file),
            written: 0,
        };
        Ok(())
    }
}

/// `path` with `.n` added.
fn numbered(path: &Path, n: u32) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(format!(".{n}"));
    PathBuf::from(s)
}

/// Shifts the rotated files of `path` up by one, keeping `keep` of them; `path` itself
/// becomes `path.1` (with `keep` 0 it is removed).
fn rotate_files(path: &Path, keep: u32) -> std::io::Result<()> {
    if keep == 0 {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    match std::fs::remove_file(numbered(path, keep)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    for n in (1..keep).rev() {
        match std::fs::rename(numbered(path, n), numbered(path, n + 1)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    std::fs::rename(path, numbered(path, 1))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc as StdArc;

    use super::*;
    use crate::contract::Outcome;

    fn entry_parts() -> (Request, Decision) {
        let req = Request::from_json(r#"{"messages":[{"role":"user","content":"hello there"}]}"#)
            .expect("request");
        let d = Decision {
            outcome: Outcome::Chat,
            calls: Vec::new(),
            skill: None,
            skill_badge: None,
            web_search: false,
            model_called: false,
            trace: Vec::new(),
            rules_version: StdArc::from("v"),
            model_call: None,
        };
        (req, d)
    }

    fn settings(path: PathBuf, max_bytes: u64, keep: u32) -> Settings {
        Settings {
            path,
            messages: LogMessages::Full,
            queue_lines: 10_000,
            queue_bytes: 64 << 20,
            max_bytes,
            keep,
            priority: Priority::Normal,
        }
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Records `n` decisions, `r-0` to `r-{n-1}`.
    fn record(log: &DecisionLog, n: usize) {
        for i in 0..n {
            let (req, d) = entry_parts();
            log.record(
                format!("r-{i}"),
                "/v1/route",
                "none".into(),
                req,
                (d, None),
                60,
            );
        }
    }

    #[test]
    fn a_file_is_rotated_by_size_and_keeps_only_the_newest_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("decisions.jsonl");
        let metrics = StdArc::new(Metrics::new());
        let log = DecisionLog::start(settings(path.clone(), 2000, 2), metrics).expect("starts");
        record(&log, 60);
        log.drain(Duration::from_secs(10));
        let files = [path.clone(), numbered(&path, 1), numbered(&path, 2)];
        let mut ids = Vec::new();
        for f in files.iter().rev() {
            let size = std::fs::metadata(f).expect("rotated file").len();
            assert!(size <= 2000, "{} is {size} bytes", f.display());
            for l in lines(f) {
                let v: serde_json::Value = serde_json::from_str(&l).expect("a whole JSON line");
                ids.push(v["id"].as_str().expect("id").to_owned());
            }
        }
        assert!(
            !numbered(&path, 3).exists(),
            "only two rotated files are kept"
        );
        // The newest lines, in order, with nothing lost or split between the files kept.
        let first: usize = ids[0].trim_start_matches("r-").parse().expect("number");
        let expected: Vec<String> = (first..60).map(|i| format!("r-{i}")).collect();
        assert_eq!(ids, expected);
    }

    #[test]
    fn keep_zero_starts_a_full_file_afresh() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("decisions.jsonl");
        let log = DecisionLog::start(settings(path.clone(), 1000, 0), StdArc::new(Metrics::new()))
            .expect("starts");
        record(&log, 20);
        log.drain(Duration::from_secs(10));
        let kept = lines(&path);
        assert!(!kept.is_empty() && kept.last().is_some_and(|l| l.contains("\"r-19\"")));
        assert!(std::fs::metadata(&path).expect("file").len() <= 1000);
        assert!(!numbered(&path, 1).exists());
    }

    #[test]
    fn an_existing_file_is_appended_to() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("decisions.jsonl");
        std::fs::write(&path, "{\"earlier\":1}\n").expect("write");
        let log = DecisionLog::start(
            settings(path.clone(), 1 << 20, 1),
            StdArc::new(Metrics::new()),
        )
        .expect("starts");
        let (req, d) = entry_parts();
        log.record("r".into(), "/v1/route", "none".into(), req, (d, None), 60);
        log.drain(Duration::from_secs(10));
        let kept = lines(&path);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0], "{\"earlier\":1}");
    }

    #[test]
    fn a_path_that_cannot_be_opened_stops_the_start() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("missing").join("decisions.jsonl");
        let err = DecisionLog::start(settings(path, 1 << 20, 1), StdArc::new(Metrics::new()))
            .expect_err("refused");
        assert!(err.contains("cannot open the decision log"), "{err}");
    }
}
