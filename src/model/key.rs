//! An API key for a hosted router model. It is never printed: `Debug` shows
//! `ApiKey(<redacted>)`, no error message includes it, and the HTTP backends send it in a header
//! marked sensitive.

use std::sync::Arc;

/// An API key.
#[derive(Clone)]
pub struct ApiKey(Arc<str>);

impl ApiKey {
    /// Wraps a key (surrounding whitespace, such as a key file's final newline, is dropped).
    pub fn new(key: &str) -> Self {
        Self(Arc::from(key.trim()))
    }

    /// Whether the key is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The key itself, for the one place that sends it.
    #[cfg_attr(not(feature = "http-models"), allow(dead_code))]
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}
