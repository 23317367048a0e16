//! The transport the HTTP backends share: one POST of a JSON body, with every failure turned
//! into a [`ModelError`] of its own kind, and at most `router.retries` retries (0 or 1) on a rate
//! limit or a server error, only while the router's timeout leaves time for them.
//!
//! The engine times the whole call out as well (`tokio::time::timeout`); each request here also
//! carries the time left, so a backend used on its own never waits longer than the rules say.

use std::error::Error as _;
use std::sync::Once;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::time::Instant;

use super::ModelError;

pub use super::key::ApiKey;

impl ApiKey {
    /// A header value holding `prefix` + the key, marked sensitive (hidden from reqwest's and
    /// hyper's own debug output).
    pub(crate) fn header(&self, prefix: &str) -> Result<HeaderValue, ModelError> {
        let mut value =
            HeaderValue::from_str(&format!("{prefix}{}", self.expose())).map_err(|_| {
                ModelError::Connection("the API key is not a valid header value".into())
            })?;
        value.set_sensitive(true);
        Ok(value)
    }
}

use super::DEFAULT_MAX_ANSWER_BYTES;

/// A client for one model endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    max_answer_bytes: usize,
}

static CRYPTO: Once = Once::new();

impl Endpoint {
    /// A client that POSTs to `url` with these headers (already marked sensitive where needed).
    pub fn new(url: String, headers: Vec<(HeaderName, HeaderValue)>) -> Result<Self, String> {
        // reqwest is built without a TLS crypto provider of its own (the default one needs a C
        // and assembler toolchain); ring is installed once, unless the program chose another.
        CRYPTO.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let client = reqwest::Client::builder()
            .user_agent(concat!("turnout/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        Ok(Self {
            client,
            url,
            headers: headers.into_iter().collect(),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        })
    }

    /// Sets the largest answer read; a longer one is cut off and is a `answer_too_large` error.
    pub fn set_max_answer_bytes(&mut self, max: usize) {
        self.max_answer_bytes = max;
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body` and returns the answer's JSON, retrying at most `retries` times on 429 or
    /// 5xx while `budget` (from now) leaves time.
    pub async fn post(
        &self,
        body: &Value,
        budget: Duration,
        retries: u32,
    ) -> Result<Value, ModelError> {
        let deadline = Instant::now() + budget;
        let mut retries_left = retries;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ModelError::Timeout);
            }
            let request = self
                .client
                .post(&self.url)
                .headers(self.headers.clone())
                .timeout(left)
                .json(body);
            let (error, retry_after) = match request.send().await {
                Err(e) => return Err(transport_error(&e)),
                Ok(response) => {
                    let status = response.status();
                    if status.is_success() {
                        let bytes = self.read_capped(response).await?;
                        return serde_json::from_slice(&bytes)
                            .map_err(|e| ModelError::InvalidJson(e.to_string()));
                    }
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    let error = if status.as_u16() == 429 {
                        ModelError::RateLimited
                    } else {
                        ModelError::Http(status.as_u16())
                    };
                    (error, retry_after.unwrap_or(Duration::ZERO))
                }
            };
            let retryable = matches!(error, ModelError::RateLimited)
                || matches!(error, ModelError::Http(s) if s >= 500);
            let left = deadline.saturating_duration_since(Instant::now());
            if !retryable || retries_left == 0 || retry_after >= left {
                return Err(error);
            }
            retries_left -= 1;
            tokio::time::sleep(retry_after).await;
        }
    }
}

impl Endpoint {
    /// Reads an answer's body as it streams in, and stops as soon as it is longer than allowed:
    /// memory per call is bounded whatever the server sends.
    async fn read_capped(&self, mut response: reqwest::Response) -> Result<Vec<u8>, ModelError> {
        let max = self.max_answer_bytes;
        if response.content_length().is_some_and(|n| n > max as u64) {
            return Err(ModelError::TooLarge(max));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| transport_error(&e))? {
            if body.len() + chunk.len() > max {
                return Err(ModelError::TooLarge(max));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// A failure before an HTTP status arrived (or while reading the body).
fn transport_error(e: &reqwest::Error) -> ModelError {
    if e.is_timeout() {
        return ModelError::Timeout;
    }
    // Name the cause (e.g. "connection refused") without the URL or any header.
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return ModelError::Connection(match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
                std::io::ErrorKind::ConnectionReset => "connection reset".to_owned(),
                _ => io.to_string(),
            });
        }
        source = s.source();
    }
    let what = if e.is_connect() {
        "cannot connect"
    } else if e.is_body() || e.is_decode() {
        "the answer was cut off"
    } else {
        "the request failed"
    };
    ModelError::Connection(what.to_owned())
}
