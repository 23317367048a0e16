//! Connections: the accept loop, the limits every connection lives under, and graceful shutdown.
//!
//! A chat backend's sidecar meets slow and broken clients. Each connection is served by hyper's
//! HTTP/1.1 server with a header read timeout; a request body must arrive within the body
//! timeout (see `read_body` in the parent module); a connection with no request being worked on
//! for the idle timeout is closed. The number of open connections is capped: when a new one
//! arrives at the cap, the connection idle the longest (waiting for headers, a body, or its next
//! keep-alive request) is closed to make room, so a flood of stalled sockets from one client
//! can never lock the probes or well-behaved clients out. Only a connection whose request is
//! being decided is never closed for room; if all of them are, the new one is refused.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tower::ServiceExt as _;

use super::Metrics;

/// Limits on connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Longest time a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// Longest time a connection may sit with no request being worked on (waiting for headers,
    /// a body, or its next keep-alive request).
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// One open connection, as the limits see it.
#[derive(Debug)]
pub(crate) struct Conn {
    /// Requests of this connection being worked on (body read, being decided).
    working: AtomicUsize,
    /// When the connection last had nothing being worked on, in ms since the registry began.
    idle_since_ms: AtomicU64,
    /// Closes the connection at once.
    close: Notify,
}

/// Marks a request of a connection as being worked on while it lives.
#[derive(Debug)]
pub(crate) struct Working {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl Drop for Working {
    fn drop(&mut self) {
        self.conn
            .idle_since_ms
            .store(self.registry.now_ms(), Ordering::Relaxed);
        self.conn.working.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a request carries (in its extensions) to say which connection it came on.
#[derive(Debug, Clone)]
pub(crate) struct ConnHandle {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl ConnHandle {
    /// Marks the request as being worked on: from now on its connection is not closed for room
    /// or for idleness.
    pub fn working(&self) -> Working {
        self.conn.working.fetch_add(1, Ordering::Relaxed);
        Working {
            conn: self.conn.clone(),
            registry: self.registry.clone(),
        }
    }
}

/// The open connections.
#[derive(Debug)]
pub(crate) struct Registry {
    started: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Registry {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn add(&self) -> (u64, Arc<Conn>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            working: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(self.now_ms()),
            close: Notify::new(),
        });
        self.lock().insert(id, conn.clone());
        (id, conn)
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    /// Closes the connection idle the longest; `false` when every one is being worked on. It
    /// leaves the registry at once, so the next eviction picks another even if its task has
    /// not run yet.
    fn evict_oldest_idle(&self) -> bool {
        let mut open = self.lock();
        let oldest = open
            .iter()
            .filter(|(_, c)| c.working.load(Ordering::Relaxed) == 0)
            .min_by_key(|(id, c)| (c.idle_since_ms.load(Ordering::Relaxed), **id))
            .map(|(id, _)| *id);
        match oldest.and_then(|id| open.remove(&id)) {
            Some(c) => {
                c.close.notify_one();
                true
            }
            None => false,
        }
    }

    /// Closes every connection idle for longer than `limit`; returns how many.
    fn close_idle(&self, limit: Duration) -> usize {
        let now = self.now_ms();
        let limit = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
        let mut open = self.lock();
        let before = open.len();
        open.retain(|_, c| {
            let idle = now.saturating_sub(c.idle_since_ms.load(Ordering::Relaxed));
            let close = c.working.load(Ordering::Relaxed) == 0 && idle > limit;
            if close {
                c.close.notify_one();
            }
            !close
        });
        before - open.len()
    }
}

/// How the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Every request finished.
    Clean,
    /// The grace period ended with this many connections still working; they were cut off.
    CutOff(usize),
}

/// Raises the soft limit on open files to the hard limit (the default soft limit of some
/// systems is 1024) and returns the soft limit in force.
pub fn raise_open_files_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rlimit::increase_nofile_limit(u64::MAX).ok()
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Serves `app` on `listener` under `limits` until `shutdown` resolves, then lets in-flight
/// requests finish for at most `grace`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> Stopped {
    let registry = Arc::new(Registry::new());
    let (stop_tx, stop_rx) = watch::channel(false);
    let reaper = {
        let registry = registry.clone();
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let every =
                (limits.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                let closed = registry.close_idle(limits.idle_timeout);
                metrics.connections_closed("idle", closed);
            }
        })
    };
    let mut shutdown = std::pin::pin!(shutdown);
    let mut warned: Option<Instant> = None;
    loop {
        let accepted = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors, or a connection reset before it was accepted: wait a
                // moment instead of spinning, and say so at most once a minute.
                if warned.is_none_or(|w| w.elapsed() > Duration::from_secs(60)) {
                    tracing::warn!(error = %e, "cannot accept a connection");
                    warned = Some(Instant::now());
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        if registry.len() >= limits.max_connections {
            if registry.evict_oldest_idle() {
                metrics.connections_closed("evicted", 1);
            } else {
                metrics.connections_closed("refused", 1);
                drop(stream);
                continue;
            }
        }
        let _ = stream.set_nodelay(true);
        let (id, conn) = registry.add();
        metrics.connection_opened();
        let handle = ConnHandle {
            conn: conn.clone(),
            registry: registry.clone(),
        };
        let app = app.clone();
        let registry = registry.clone();
        let metrics = metrics.clone();
        let stop = stop_rx.clone();
        tokio::spawn(async move {
            connection(stream, peer, app, handle, conn, limits, stop).await;
            registry.remove(id);
            metrics.connection_closed();
        });
    }
    drop(listener);
    reaper.abort();
    let _ = stop_tx.send(true);
    let deadline = Instant::now() + grace;
    loop {
        let left = registry.len();
        if left == 0 {
            return Stopped::Clean;
        }
        if Instant::now() >= deadline {
            return Stopped::CutOff(left);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    app: Router,
    handle: ConnHandle,
    conn: Arc<Conn>,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(handle.clone());
        req.extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        app.clone().oneshot(req.map(axum::body::Body::new))
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let served = builder.serve_connection(TokioIo::new(stream), service);
    let mut served = std::pin::pin!(served);
    tokio::select! {
        _ = served.as_mut() => return,
        () = conn.close.notified() => return,
        _ = stop.wait_for(|s| *s) => {}
    }
    // Shutting down: finish the request in flight (an idle connection closes at once).
    served.as_mut().graceful_shutdown();
    tokio::select! {
        _ = served => {}
        () = conn.close.notified() => {}
    }
}
