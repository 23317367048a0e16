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
    /// Largest request line and headers, in bytes (431 above; hyper's floor is 8,192): also
    /// the most a connection buffers of what it reads.
    pub max_header_bytes: usize,
    /// Most header fields in a request (431 above).
    pub max_headers: usize,
}

/// hyper's smallest read buffer.
pub const MIN_HEADER_BYTES: usize = 8192;
/// hyper's own number of header fields, kept on the stack (another number costs a heap
/// allocation a request).
const HYPER_MAX_HEADERS: usize = 100;
/// How long a connection that has answered its last request may take to finish writing the
/// answer once shutdown begins.
const DRAIN: Duration = Duration::from_millis(100);

impl Limits {
    /// `turnout serve`'s defaults (its flags' defaults are these).
    pub const DEFAULT: Self = Self {
        max_connections: 1024,
        header_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(60),
        max_header_bytes: 16 << 10,
        max_headers: HYPER_MAX_HEADERS,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
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

    /// How many connections have a request being worked on.
    fn working(&self) -> usize {
        self.lock()
            .values()
            .filter(|c| c.working.load(Ordering::Relaxed) > 0)
            .count()
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
    /// The grace period ended with this many requests still being worked on; they were cut
    /// off. Connections with no request being worked on (idle, or still sending headers or a
    /// body) are closed at once and never count.
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
            let io = JsonErrors::new(TokioIo::new(stream), limits, metrics.clone());
            connection(io, peer, app, handle, conn, limits, stop).await;
            registry.remove(id);
            metrics.connection_closed();
        });
    }
    drop(listener);
    reaper.abort();
    let _ = stop_tx.send(true);
    let deadline = Instant::now() + grace;
    loop {
        if registry.len() == 0 {
            return Stopped::Clean;
        }
        if Instant::now() >= deadline {
            return match registry.working() {
                0 => Stopped::Clean,
                n => Stopped::CutOff(n),
            };
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn connection(
    io: JsonErrors<TokioIo<tokio::net::TcpStream>>,
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
        .max_buf_size(limits.max_header_bytes.max(MIN_HEADER_BYTES))
        // One buffer a write, so that `JsonErrors` sees hyper's own error answers whole.
        .writev(false)
        .keep_alive(true);
    if limits.max_headers != HYPER_MAX_HEADERS {
        builder.max_headers(limits.max_headers);
    }
    let served = builder.serve_connection(io, service);
    let mut served = std::pin::pin!(served);
    tokio::select! {
        _ = served.as_mut() => return,
        () = conn.close.notified() => return,
        _ = stop.wait_for(|s| *s) => {}
    }
    // Shutting down: a request being worked on is finished and answered; a connection with
    // none (idle, or a client still sending headers or a body) closes at once, after at most
    // `DRAIN` for an answer still being written.
    served.as_mut().graceful_shutdown();
    let drained = async {
        loop {
            if conn.working.load(Ordering::Relaxed) == 0 {
                tokio::time::sleep(DRAIN).await;
                if conn.working.load(Ordering::Relaxed) == 0 {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        _ = served => {}
        () = conn.close.notified() => {}
        () = drained => {}
    }
}

/// The connection's IO, which gives hyper's own error answers the JSON error body every other
/// answer has. hyper answers a request it cannot parse (a bad request line or header, a URI
/// too long, headers over `max_header_bytes` or `max_headers`) by itself, with a status and an
/// empty body, and then closes; no handler runs. Those answers are the only ones of this
/// service with an error status and no body, so such a head, written whole (hyper is set to
/// write one buffer at a time), is replaced by the same head with a JSON body.
struct JsonErrors<I> {
    inner: I,
    limits: Limits,
    metrics: Arc<Metrics>,
    /// A replacement being written, and the length of the head it stands for.
    replacing: Option<(Vec<u8>, usize, usize)>,
}

impl<I> JsonErrors<I> {
    fn new(inner: I, limits: Limits, metrics: Arc<Metrics>) -> Self {
        Self {
            inner,
            limits,
            metrics,
            replacing: None,
        }
    }
}

/// The JSON answer standing for hyper's bodiless error head `head`, or `None` when `head` is
/// not one.
fn json_error_answer(head: &[u8], limits: &Limits) -> Option<Vec<u8>> {
    const EMPTY: &[u8] = b"\r\ncontent-length: 0\r\n";
    if !head.starts_with(b"HTTP/1.") || !head.ends_with(b"\r\n\r\n") {
        return None;
    }
    let status = head.get(9..12)?;
    if !matches!(status.first(), Some(b'4' | b'5')) {
        return None;
    }
    let at = head.windows(EMPTY.len()).position(|w| w == EMPTY)?;
    let (code, message) = match status {
        b"414" => ("uri_too_long", "the request's URI is too long".to_owned()),
        b"431" => (
            "headers_too_large",
            format!(
                "the request line and headers are larger than {} bytes, or more than {} header fields",
                limits.max_header_bytes.max(MIN_HEADER_BYTES),
                limits.max_headers
            ),
        ),
        _ => (
            "invalid_request",
            "the request line or a header could not be read as HTTP/1.1".to_owned(),
        ),
    };
    let body = serde_json::json!({"error": {"code": code, "field": null, "message": message}});
    let body = body.to_string();
    let mut out = Vec::with_capacity(head.len() + body.len() + 64);
    out.extend_from_slice(&head[..at]);
    out.extend_from_slice(b"\r\ncontent-type: application/json");
    out.extend_from_slice(format!("\r\ncontent-length: {}\r\n", body.len()).as_bytes());
    let rest = &head[at + EMPTY.len()..];
    if !head
        .windows(11)
        .any(|w| w.eq_ignore_ascii_case(b"connection:"))
    {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(rest);
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

impl<I: hyper::rt::Read + Unpin> hyper::rt::Read for JsonErrors<I> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<I: hyper::rt::Write + Unpin> hyper::rt::Write for JsonErrors<I> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::task::Poll;
        let this = &mut *self;
        if this.replacing.is_none() {
            match json_error_answer(buf, &this.limits) {
                Some(answer) => {
                    this.metrics.bad_request();
                    this.replacing = Some((answer, 0, buf.len()));
                }
                None => return std::pin::Pin::new(&mut this.inner).poll_write(cx, buf),
            }
        }
        // hyper offers the same head again after `Pending`, so the replacement goes on
        // where it stopped.
        let Some((answer, written, stands_for)) = &mut this.replacing else {
            return Poll::Ready(Ok(0));
        };
        while *written < answer.len() {
            match std::pin::Pin::new(&mut this.inner).poll_write(cx, &answer[*written..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => *written += n,
                other => return other,
            }
        }
        let n = *stands_for;
        this.replacing = None;
        Poll::Ready(Ok(n))
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_bodiless_error_heads_get_the_json_body() {
        let limits = Limits::default();
        let head = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Tue, 01 Dec 2026 20:00:00 GMT\r\n\r\n";
        let answer = json_error_answer(head, &limits).expect("replaced");
        let text = String::from_utf8(answer).expect("utf-8");
        let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        assert_eq!(head.matches("connection: close").count(), 1, "{head}");
        assert!(head.contains("date: "), "{head}");
        let v: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(v["error"]["code"], "headers_too_large");
        let closing = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        let answer = String::from_utf8(json_error_answer(closing, &limits).expect("replaced"))
            .expect("utf-8");
        assert_eq!(answer.matches("connection: close").count(), 1, "{answer}");
        for status in ["400 Bad Request", "414 URI Too Long"] {
            let head = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
            assert!(
                json_error_answer(head.as_bytes(), &limits).is_some(),
                "{status}"
            );
        }
    }

    #[test]
    fn every_other_write_passes_unchanged() {
        let limits = Limits::default();
        for other in [
            &b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"[..],
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n",
            b"{\"error\": 1}",
            b"",
        ] {
            assert!(json_error_answer(other, &limits).is_none(), "{other:?}");
        }
    }
}
