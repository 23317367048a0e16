//! `--model SPEC` and `router.model` as data: which router model to use. Parsing and printing
//! only; building the model is the `model` layer's job (`turnout::model::spec`).
//!
//! `embedded` (the default: offline, no key), `none` (rules only), `openai:MODEL[@BASE_URL]`,
//! `anthropic:MODEL[@BASE_URL]`, `script:FILE`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Which router model to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// Rules only: the router is never called.
    None,
    /// The offline classifier over the rules' examples.
    Embedded,
    /// An OpenAI-compatible Chat Completions endpoint.
    OpenAi {
        /// The model name, as the server knows it.
        model: String,
        /// The base URL (ending in `/v1` for most servers); `None`: OpenAI's.
        base_url: Option<String>,
    },
    /// Anthropic's Messages API.
    Anthropic {
        /// The model name.
        model: String,
        /// The base URL (without `/v1`); `None`: Anthropic's.
        base_url: Option<String>,
    },
    /// Answers from a script file (a test case's `model:` section, in YAML or JSON).
    Script(PathBuf),
}

/// Why a model spec cannot be used.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// Not one of the known forms.
    #[error(
        "unknown model '{0}'; expected none, embedded, script:FILE, openai:MODEL[@BASE_URL] or anthropic:MODEL[@BASE_URL]"
    )]
    Unknown(String),
    /// `openai:` or `anthropic:` without a model name.
    #[error("model '{0}' names no model; write e.g. openai:gpt-4o-mini")]
    MissingModel(String),
    /// A base URL that is not http(s).
    #[error("model '{0}': the base URL must start with http:// or https://")]
    BadUrl(String),
    /// A hosted API without a key.
    #[error("model '{spec}' needs an API key: set {var} or pass --model-key-file")]
    MissingKey {
        /// The spec.
        spec: String,
        /// The environment variable read.
        var: &'static str,
    },
    /// The key file could not be read, or is empty.
    #[error("cannot use the key file {path}: {reason}")]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The script file could not be read or parsed.
    #[error("{0}")]
    Script(String),
    /// The HTTP client could not be set up.
    #[error("{0}")]
    Client(String),
}

impl FromStr for ModelSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s {
            "none" => return Ok(ModelSpec::None),
            "embedded" => return Ok(ModelSpec::Embedded),
            _ => {}
        }
        let Some((kind, rest)) = s.split_once(':') else {
            return Err(SpecError::Unknown(s.to_owned()));
        };
        match kind {
            "script" if !rest.is_empty() => Ok(ModelSpec::Script(rest.into())),
            "openai" | "anthropic" => {
                // Model names may hold ':' (llama3.1:8b) or '@' (a dated version), so the base
                // URL starts at the last '@' that is followed by a scheme.
                let (model, base_url) = match rest.rfind("@http") {
                    Some(at) => (&rest[..at], Some(&rest[at + 1..])),
                    None => (rest, None),
                };
                if model.is_empty() {
                    return Err(SpecError::MissingModel(s.to_owned()));
                }
                if let Some(url) = base_url
                    && !(url.starts_with("http://") || url.starts_with("https://"))
                {
                    return Err(SpecError::BadUrl(s.to_owned()));
                }
                let model = model.to_owned();
                let base_url = base_url.map(str::to_owned);
                Ok(if kind == "openai" {
                    ModelSpec::OpenAi { model, base_url }
                } else {
                    ModelSpec::Anthropic { model, base_url }
                })
            }
            _ => Err(SpecError::Unknown(s.to_owned())),
        }
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::None => f.write_str("none"),
            ModelSpec::Embedded => f.write_str("embedded"),
            ModelSpec::OpenAi { model, base_url } | ModelSpec::Anthropic { model, base_url } => {
                let kind = if matches!(self, ModelSpec::OpenAi { .. }) {
                    "openai"
                } else {
                    "anthropic"
                };
                write!(f, "{kind}:{model}")?;
                match base_url {
                    Some(url) => write!(f, "@{url}"),
                    None => Ok(()),
                }
            }
            ModelSpec::Script(path) => write!(f, "script:{}", path.display()),
        }
    }
}
