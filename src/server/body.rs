//! Reading a request body under the service's limits, in the order that spends nothing on a
//! request that will be refused: the route, the method and the token are settled before a
//! handler runs (so before this), then the content type, then the declared length against
//! `--body-limit`, then a share of the memory budget for bodies in flight; only then is a byte
//! of the body read (and, for a client that asked for it, `100 Continue` sent: hyper sends it
//! on the first read). A body that arrives within the body timeout is handed on with its share
//! of the budget, which is given back when the request is answered.
//!
//! The budget is what bounds the memory a flood of unfinished uploads can take: without it,
//! 900 clients that each send most of a 1 MiB body hold 900 MiB. With it, a body that finds
//! the budget spent is answered 503 `busy` at once (with `Retry-After`), before it is read.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::Request as HttpRequest;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{AppState, conn, error};

/// The memory budget for request bodies in flight, in bytes, across every connection.
#[derive(Debug)]
pub struct Budget {
    bytes: Arc<Semaphore>,
    total: usize,
}

impl Budget {
    /// A budget of `total` bytes.
    pub fn new(total: usize) -> Self {
        let total = total.min(Semaphore::MAX_PERMITS);
        Self {
            bytes: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// Bytes held by bodies being read or decided now.
    pub fn in_use(&self) -> usize {
        self.total - self.bytes.available_permits()
    }

    /// A share of `n` bytes, or `None` when the budget cannot hold it now.
    fn reserve(&self, n: usize) -> Option<Option<OwnedSemaphorePermit>> {
        if n == 0 {
            return Some(None);
        }
        let n = u32::try_from(n).ok()?;
        self.bytes.clone().try_acquire_many_owned(n).ok().map(Some)
    }
}

/// A body read whole, with what it holds while the request is worked on.
pub(super) struct Body {
    /// The body's bytes.
    pub bytes: Bytes,
    /// Its share of the budget, given back when the request is answered.
    _share: Option<OwnedSemaphorePermit>,
    /// Marks the connection as working on a request (shutdown waits for it).
    _working: Option<conn::Working>,
}

/// Whether a `Content-Type` value is JSON: the media type `application/json` (any case, with
/// or without parameters such as `charset`), not merely a value starting with those letters.
fn is_json_media_type(value: &[u8]) -> bool {
    let Ok(value) = std::str::from_utf8(value) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// The declared body length: `Ok(None)` for none (a chunked body), `Err` for a value that is
/// not a length.
fn declared_length(headers: &HeaderMap) -> Result<Option<u64>, ()> {
    match headers.get(header::CONTENT_LENGTH) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(Some)
            .ok_or(()),
    }
}

/// An answer that also closes the connection: the client may still be sending a body that
/// will never be read.
fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    let mut resp = error(status, code, Some("body"), message);
    resp.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    resp
}

/// 413: the body is over `--body-limit`, by its declared length or as it arrived.
fn too_large(limit: usize) -> Response {
    refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        &format!("the body is larger than {limit} bytes"),
    )
}

/// Checks a JSON request's content type and length, takes its share of the budget, and reads
/// its body within the body timeout; every refusal is counted as a bad request except `busy`,
/// which is the service's state, not the client's mistake.
pub(super) async fn read_json(state: &AppState, req: HttpRequest) -> Result<Body, Response> {
    let (parts, body) = req.into_parts();
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_none_or(|v| is_json_media_type(v.as_bytes()));
    if !json {
        state.metrics.bad_request();
        return Err(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the request as application/json",
        ));
    }
    let limit = state.config.body_limit;
    let declared = match declared_length(&parts.headers) {
        Ok(d) => d,
        Err(()) => {
            state.metrics.bad_request();
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "Content-Length is not a number of bytes",
            ));
        }
    };
    if declared.is_some_and(|n| n > limit as u64) {
        state.metrics.bad_request();
        return Err(too_large(limit));
    }
    // A chunked body may be as large as the limit: it takes that much.
    let share = declared.map_or(limit, |n| usize::try_from(n).unwrap_or(limit));
    let Some(share) = state.budget.reserve(share) else {
        state.metrics.busy();
        let mut resp = refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "the service is reading as many request bodies as its memory budget allows; try again shortly",
        );
        resp.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        return Err(resp);
    };
    use http_body_util::BodyExt as _;
    let limited = http_body_util::Limited::new(body, limit);
    let bytes = match tokio::time::timeout(state.config.body_timeout, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            state.metrics.bad_request();
            return Err(too_large(limit));
        }
        Ok(Err(_)) => {
            state.metrics.bad_request();
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "the body could not be read",
            ));
        }
        Err(_) => {
            state.metrics.bad_request();
            return Err(refuse(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                &format!(
                    "the body did not arrive within {} s",
                    state.config.body_timeout.as_secs_f64()
                ),
            ));
        }
    };
    let working = parts
        .extensions
        .get::<conn::ConnHandle>()
        .map(conn::ConnHandle::working);
    Ok(Body {
        bytes,
        _share: share,
        _working: working,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_the_media_type_not_a_prefix() {
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            " application/json ;charset=UTF-8",
        ] {
            assert!(is_json_media_type(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "application/jsonx",
            "text/plain",
            "",
            "application/x-www-form-urlencoded",
        ] {
            assert!(!is_json_media_type(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn the_budget_hands_out_shares_until_it_is_spent_and_takes_them_back() {
        let budget = Budget::new(100);
        let a = budget.reserve(60).expect("room for 60");
        assert_eq!(budget.in_use(), 60);
        assert!(budget.reserve(41).is_none(), "41 more do not fit");
        let b = budget.reserve(40).expect("40 fit");
        assert_eq!(budget.in_use(), 100);
        assert!(
            matches!(budget.reserve(0), Some(None)),
            "an empty body takes nothing"
        );
        drop(a);
        drop(b);
        assert_eq!(budget.in_use(), 0);
        assert!(budget.reserve(usize::MAX).is_none());
    }

    #[test]
    fn a_length_that_is_not_a_number_is_refused() {
        let mut h = HeaderMap::new();
        assert_eq!(declared_length(&h), Ok(None));
        h.insert(
            header::CONTENT_LENGTH,
            "10000000000".parse().expect("value"),
        );
        assert_eq!(declared_length(&h), Ok(Some(10_000_000_000)));
        h.insert(header::CONTENT_LENGTH, "ten".parse().expect("value"));
        assert_eq!(declared_length(&h), Err(()));
    }
}
