//! `turnout serve`: the HTTP service with live rule reload.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::model::spec::{KeySource, ModelSpec};
use crate::reload::{self, LiveRules, Trigger};
use crate::server::{self, AppState, Config, Metrics};

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
    /// File holding the bearer token clients must send (else the TURNOUT_TOKEN variable).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Listen on a non-loopback address without a token.
    #[arg(long)]
    allow_unauthenticated: bool,
    /// Largest request body in bytes (larger: 413).
    #[arg(long, default_value_t = 1 << 20)]
    body_limit: usize,
    /// Longest message in characters (longer: 400).
    #[arg(long, default_value_t = 16_000)]
    max_message_chars: usize,
    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Seconds to let in-flight requests finish after SIGINT/SIGTERM.
    #[arg(long, default_value_t = 10)]
    shutdown_grace: u64,
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
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        body_limit: args.body_limit,
        max_message_chars: args.max_message_chars,
        token,
    };
    match rt.block_on(serve(args, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::from(1)
        }
    }
}

async fn serve(args: Args, config: Config) -> Result<(), String> {
    let (rules, report) = LiveRules::load(&args.rules);
    server::log_reload(&report);
    // The backend is chosen once, at start: the command line, else the rules' router.model.
    let spec = match rules.current() {
        Some(rs) => ModelSpec::choose(args.model.as_ref(), rs.router()),
        None => {
            tracing::warn!(dir = %args.rules.display(), "no valid ruleset yet: /readyz answers 503 until the rules are fixed");
            args.model.clone().unwrap_or(ModelSpec::Embedded)
        }
    };
    let keys = KeySource::from_file(args.model_key_file.as_deref());
    let model = spec.build_with(&keys).map_err(|e| e.to_string())?;
    let metrics = Arc::new(Metrics::new());
    metrics.reload(&report);
    let state = Arc::new(AppState {
        rules: rules.clone(),
        model,
        metrics,
        config,
    });

    // Reload requests from the watcher and SIGHUP go through one channel; a full channel
    // means a reload is already pending, which will see the latest files anyway.
    let (tx, mut rx) = mpsc::channel::<Trigger>(1);
    let watch_tx = tx.clone();
    let _watcher = match reload::watch(&args.rules, move || {
        let _ = watch_tx.try_send(Trigger::Watch);
    }) {
        Ok(w) => {
            tracing::info!(dir = %args.rules.display(), polling = w.is_polling(), "watching the rules");
            Some(w)
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot watch the rules directory; use SIGHUP or POST /v1/rules/reload");
            None
        }
    };
    spawn_sighup(tx);
    let reload_state = state.clone();
    tokio::spawn(async move {
        while let Some(trigger) = rx.recv().await {
            server::reload_now(&reload_state, trigger).await;
        }
    });

    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    tracing::info!(%addr, model = state.model.as_ref().map_or("none", |m| m.name()), "serving");
    // The one line on stdout: scripts and tests read the bound address from it.
    println!("turnout listening on http://{addr}");
    let app = server::app(state);
    server::run(
        listener,
        app,
        shutdown_signal(),
        Duration::from_secs(args.shutdown_grace),
    )
    .await
    .map_err(|e| format!("server error: {e}"))?;
    tracing::info!("stopped");
    Ok(())
}

#[cfg(unix)]
fn spawn_sighup(tx: mpsc::Sender<Trigger>) {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::hangup()) {
        Ok(mut hup) => {
            tokio::spawn(async move {
                while hup.recv().await.is_some() {
                    let _ = tx.try_send(Trigger::Signal);
                }
            });
        }
        Err(e) => tracing::warn!(error = %e, "SIGHUP reload unavailable"),
    }
}

#[cfg(not(unix))]
fn spawn_sighup(_tx: mpsc::Sender<Trigger>) {}

async fn shutdown_signal() {
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
    tracing::info!("shutting down: finishing in-flight requests");
}
