//! `turnout serve`: the HTTP service with live rule reload.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::LimitArgs;
use crate::contract::ModelSpec;
use crate::model::spec::KeySource;
use crate::replay::log::LogMessages;
use crate::server::conn::{self, Stopped};
use crate::server::service::{Service, Settings};
use crate::server::{self, Config};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The rules directory (watched: saved changes apply without a restart).
    #[arg(long, default_value = "rules")]
    rules: PathBuf,
    /// Address to listen on. A non-loopback address needs a token (or --allow-unauthenticated).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The router model: embedded (offline, no key), none (rules only), openai:MODEL[@BASE_URL],
    /// anthropic:MODEL[@BASE_URL] or script:FILE. Default: the rules' router.model, else embedded.
    #[arg(long)]
    model: Option<ModelSpec>,
    /// A file holding the API key for openai:/anthropic: (default: OPENAI_API_KEY or
    /// ANTHROPIC_API_KEY). Keys are never logged.
    #[arg(long, value_name = "FILE")]
    model_key_file: Option<PathBuf>,
    /// Largest router model answer read, in bytes; a longer one is cut off and the message gets
    /// a plain chat answer.
    #[arg(long, value_name = "BYTES", default_value_t = crate::model::DEFAULT_MAX_ANSWER_BYTES as u64, value_parser = clap::value_parser!(u64).range(1..))]
    max_model_answer_bytes: u64,
    /// File holding the bearer token clients must send (else the TURNOUT_TOKEN variable).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Listen on a non-loopback address without a token.
    #[arg(long)]
    allow_unauthenticated: bool,
    /// Largest request body in bytes (larger: 413).
    #[arg(long, value_name = "BYTES", default_value_t = Config::DEFAULT.body_limit)]
    body_limit: usize,
    /// Bytes of request bodies held at once across every connection, from the moment a body's
    /// declared length is accepted until its request is answered; a body that does not fit is
    /// answered 503 `busy` before it is read. What bounds the memory of a flood of unfinished
    /// uploads; at least --body-limit.
    #[arg(long, value_name = "BYTES", default_value_t = Config::DEFAULT.body_budget)]
    body_budget: usize,
    /// Largest request line and headers in bytes (larger: 431); also what a connection buffers
    /// at most of what it reads. At least 8192.
    #[arg(long, value_name = "BYTES", default_value_t = conn::Limits::DEFAULT.max_header_bytes as u64, value_parser = clap::value_parser!(u64).range(8192..=(64 << 20)))]
    max_header_bytes: u64,
    /// Most header fields in a request (more: 431).
    #[arg(long, value_name = "N", default_value_t = conn::Limits::DEFAULT.max_headers as u64, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    max_headers: u64,
    /// Longest message in characters (longer: 400).
    #[arg(long, value_name = "CHARS", default_value_t = crate::engine::Limits::DEFAULT.max_message_chars)]
    max_message_chars: usize,
    /// Most client connections open at once. At the cap, the connection idle the longest is
    /// closed to make room for a new one.
    #[arg(long, value_name = "N", default_value_t = conn::Limits::DEFAULT.max_connections as u64, value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: u64,
    /// Seconds a client may take to send a request's headers.
    #[arg(long, value_name = "SECONDS", default_value_t = conn::Limits::DEFAULT.header_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout: u64,
    /// Seconds a client may take to send a request's body (then 408).
    #[arg(long, value_name = "SECONDS", default_value_t = Config::DEFAULT.body_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout: u64,
    /// Seconds a connection may sit with no request being worked on (waiting for headers, a
    /// body, or its next keep-alive request) before it is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = conn::Limits::DEFAULT.idle_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Seconds to let in-flight requests finish after SIGINT/SIGTERM (longer than the default
    /// model timeout of 15 s, so a request waiting on the model is not cut off). A second signal
    /// stops at once.
    #[arg(long, value_name = "SECONDS", default_value_t = Settings::SHUTDOWN_GRACE.as_secs())]
    shutdown_grace: u64,
    /// A corpus of requests (JSON lines, as `turnout replay` reads) replayed after every
    /// successful reload; the playground page at / shows what each save changed on it.
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// Milliseconds the rules directory must be quiet (no further file events) before a change
    /// that removes a rule file is applied: `rm f && write f`, `git checkout`, sync tools and
    /// scripted deploys put files back moments later, and the rules without the file must not
    /// serve in between (a file put back unchanged cancels the removal). Creates and writes
    /// apply at once, and so do SIGHUP and POST /v1/rules/reload. 0: removals apply at once.
    #[arg(long, value_name = "MS", default_value_t = Settings::DELETE_SETTLE.as_millis() as u64, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    delete_settle_ms: u64,
    /// Threads that answer requests (default: one per core the process may use). On a machine
    /// shared with the chat backend, fewer leave it room.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    workers: Option<u16>,
    /// Log every decision of /v1/route and /v1/try as one JSON line (time, request id,
    /// rules_version, the request, the router's answer as received, the decision) to FILE, or
    /// to stdout with `-` (the service's own logs are on stderr; the `listening` line then goes
    /// there too). `turnout replay FILE` reads it as it is. Written by a thread of its own
    /// through a bounded queue: a full queue drops lines (turnout_decision_log_dropped_total),
    /// it never slows a request.
    #[arg(long, value_name = "FILE|-")]
    decision_log: Option<PathBuf>,
    /// How the decision log writes message texts (and the open file's name and the string
    /// arguments of calls, which come from them): full; hash (a stable SHA-256 of each text:
    /// equal texts stay equal, the text is not in the log); none (left out). A line without its
    /// texts cannot be replayed.
    #[arg(long, value_name = "full|hash|none", default_value = "full")]
    log_messages: LogMessages,
    /// Most decision log lines waiting to be written; more are dropped and counted.
    #[arg(long, value_name = "LINES", default_value_t = server::decision_log::Settings::QUEUE_LINES as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    decision_log_queue: u64,
    /// Most bytes of request bodies the waiting decision log lines may hold (each line is
    /// charged twice its body); more are dropped and counted.
    #[arg(long, value_name = "BYTES", default_value_t = server::decision_log::Settings::QUEUE_BYTES as u64, value_parser = clap::value_parser!(u64).range(4096..))]
    decision_log_queue_bytes: u64,
    /// A decision log file is rotated (FILE -> FILE.1 -> ... -> FILE.N) before a line would
    /// take it over this size. Not for `-` or a FIFO.
    #[arg(long, value_name = "BYTES", default_value_t = server::decision_log::Settings::MAX_BYTES, value_parser = clap::value_parser!(u64).range(4096..))]
    decision_log_max_bytes: u64,
    /// Rotated decision log files kept (FILE.1 ... FILE.N, the oldest removed); 0: a full file
    /// is started afresh.
    #[arg(long, value_name = "N", default_value_t = server::decision_log::Settings::KEEP, value_parser = clap::value_parser!(u32).range(0..=1000))]
    decision_log_keep: u32,
    /// A candidate rules directory, loaded, watched and validated like --rules, that decides
    /// every request again after its answer is sent, with the router answer the live decision
    /// got (no second model call), and never changes an answer. Differences are counted
    /// (turnout_shadow_decisions_total{result}), the last ones are at GET /v1/shadow, its
    /// reload status is in /v1/rules under "shadow".
    #[arg(long, value_name = "DIR")]
    shadow: Option<PathBuf>,
    /// Most requests waiting for the shadow rules; more are dropped and counted
    /// (result="dropped"), never waited for.
    #[arg(long, value_name = "N", default_value_t = server::shadow::Settings::DEFAULT.queue as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    shadow_queue: u64,
    /// Differences kept for GET /v1/shadow (the newest; each holds the request and both
    /// decisions).
    #[arg(long, value_name = "N", default_value_t = server::shadow::Settings::DEFAULT.keep as u64, value_parser = clap::value_parser!(u64).range(0..=100_000))]
    shadow_keep: u64,
    /// How the decision log's writer and the shadow rules' thread share the cores with
    /// requests: idle (Linux SCHED_IDLE: only the CPU time requests leave, so on a server
    /// whose cores are all busy with requests their queues fill and lines are dropped and
    /// counted, never a request slowed); normal (the same share as a request: under full load
    /// they keep up by taking CPU time from requests).
    #[arg(long, value_name = "idle|normal", default_value = "idle")]
    background_priority: server::background::Priority,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    // A second initialisation (never in the binary) is harmless: keep the first.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

fn read_token(args: &Args) -> Result<Option<String>, String> {
    let token = match &args.token_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?,
        ),
        None => std::env::var("TURNOUT_TOKEN").ok(),
    };
    match token.map(|t| t.trim().to_owned()) {
        Some(t) if t.is_empty() => Err("the token is empty".to_owned()),
        other => Ok(other),
    }
}

pub fn run(args: Args) -> ExitCode {
    init_logging(args.log_format);
    let token = match read_token(&args) {
        Ok(t) => t,
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::from(2);
        }
    };
    if !args.listen.ip().is_loopback() && token.is_none() && !args.allow_unauthenticated {
        tracing::error!(
            listen = %args.listen,
            "refusing to listen on a non-loopback address without a token; give --token-file (or TURNOUT_TOKEN), or --allow-unauthenticated"
        );
        return ExitCode::from(2);
    }
    if args.body_budget < args.body_limit {
        tracing::error!(
            body_budget = args.body_budget,
            body_limit = args.body_limit,
            "--body-budget must be at least --body-limit, or no body of the largest size could ever be read"
        );
        return ExitCode::from(2);
    }
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.workers {
        rt.worker_threads(usize::from(n));
    }
    // A worker with nothing to do hands the memory it freed back to the system (at most once a
    // second a thread), so that RSS falls back after a flood.
    rt.on_thread_park(super::memory::give_back);
    let rt = match rt.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        body_limit: args.body_limit,
        body_timeout: Duration::from_secs(args.body_timeout),
        max_message_chars: args.max_message_chars,
        body_budget: args.body_budget,
        token,
    };
    match rt.block_on(serve(args, config)) {
        Ok(Stopped::Clean) => ExitCode::SUCCESS,
        Ok(Stopped::CutOff(n)) => {
            tracing::error!(
                requests = n,
                "the shutdown grace period ended with requests still being worked on; they were cut off"
            );
            ExitCode::from(1)
        }
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::from(1)
        }
    }
}

/// The service of the library, started with the flags' settings, on the bound listener.
async fn serve(args: Args, config: Config) -> Result<Stopped, String> {
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let open_files = conn::raise_open_files_limit();
    let mut max_connections = usize::try_from(args.max_connections).unwrap_or(usize::MAX);
    if let Some(files) = open_files {
        // Room for the listener, rule files, the model's connections and the logs.
        let room = usize::try_from(files.saturating_sub(64)).unwrap_or(usize::MAX);
        if room < max_connections {
            tracing::warn!(
                max_connections,
                open_files = files,
                "--max-connections is above what the open-file limit allows; using {room}"
            );
            max_connections = room.max(1);
        }
    }
    let log_on_stdout = args.decision_log.as_deref() == Some(std::path::Path::new("-"));
    let settings = settings(args, config, max_connections);
    let service = Service::start(settings).await?;
    tracing::info!(%addr, model = service.state().model.name(), max_connections, "serving");
    // The one line on stdout: scripts and tests read the bound address from it. With the
    // decision log on stdout, stdout holds only its lines, and this goes to stderr.
    if log_on_stdout {
        eprintln!("turnout listening on http://{addr}");
    } else {
        println!("turnout listening on http://{addr}");
    }
    let stopped = service.serve(listener, shutdown_signal()).await;
    if stopped == Stopped::Clean {
        tracing::info!("stopped");
    }
    Ok(stopped)
}

/// The flags as the library's settings.
fn settings(args: Args, config: Config, max_connections: usize) -> Settings {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let decision_log = args
        .decision_log
        .map(|path| server::decision_log::Settings {
            path,
            messages: args.log_messages,
            queue_lines: size(args.decision_log_queue),
            queue_bytes: size(args.decision_log_queue_bytes),
            max_bytes: args.decision_log_max_bytes,
            keep: args.decision_log_keep,
            priority: args.background_priority,
        });
    let shadow = args.shadow.map(|dir| {
        let how = server::shadow::Settings {
            queue: size(args.shadow_queue),
            keep: size(args.shadow_keep),
            priority: args.background_priority,
        };
        (dir, how)
    });
    Settings {
        rules: args.rules,
        model: args.model,
        keys: KeySource::from_file(args.model_key_file.as_deref()),
        max_model_answer_bytes: size(args.max_model_answer_bytes),
        limits: args.limits.limits(),
        delete_settle: Duration::from_millis(args.delete_settle_ms),
        corpus: args.corpus,
        decision_log,
        shadow,
        config,
        connections: conn::Limits {
            max_connections,
            header_timeout: Duration::from_secs(args.header_timeout),
            idle_timeout: Duration::from_secs(args.idle_timeout),
            max_header_bytes: size(args.max_header_bytes),
            max_headers: size(args.max_headers),
        },
        shutdown_grace: Duration::from_secs(args.shutdown_grace),
    }
}

/// Resolves at the first SIGINT or SIGTERM; a second one ends the process at once (exit 130),
/// without waiting for the grace period.
async fn shutdown_signal() {
    wait_for_signal().await;
    tracing::info!("shutting down: finishing in-flight requests (a second signal stops at once)");
    tokio::spawn(async {
        wait_for_signal().await;
        tracing::warn!("second signal: stopping now");
        std::process::exit(130);
    });
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = async {
            match signal(SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = term => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
