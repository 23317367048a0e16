//! `--model SPEC` (or `router.model` in the rules): which router model to use, and building it.
//!
//! `embedded` (the default: offline, no key), `none` (rules only), `openai:MODEL[@BASE_URL]`,
//! `anthropic:MODEL[@BASE_URL]`, `script:FILE`. Keys come from `OPENAI_API_KEY` /
//! `ANTHROPIC_API_KEY`, or from a key file; they are never printed.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use super::Model;
use super::anthropic::AnthropicModel;
use super::embedded::EmbeddedModel;
use super::http::ApiKey;
use super::openai::OpenAiModel;
use super::scripted::ScriptedModel;
use crate::compile::RouterDef;
use crate::rules::testcase::ModelScript;

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

/// Where an HTTP backend's API key comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum KeySource {
    /// `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`.
    #[default]
    Env,
    /// This file (its first line; surrounding whitespace is dropped).
    File(PathBuf),
}

impl KeySource {
    /// The key file if one is given, else the environment.
    pub fn from_file(file: Option<&Path>) -> Self {
        file.map_or(KeySource::Env, |p| KeySource::File(p.to_owned()))
    }

    fn read(&self, var: &str) -> Result<Option<ApiKey>, SpecError> {
        match self {
            KeySource::Env => Ok(std::env::var(var)
                .ok()
                .map(|k| ApiKey::new(&k))
                .filter(|k| !k.is_empty())),
            KeySource::File(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| SpecError::KeyFile {
                    path: path.clone(),
                    reason: e.kind().to_string(),
                })?;
                let key = ApiKey::new(text.lines().next().unwrap_or_default());
                if key.is_empty() {
                    return Err(SpecError::KeyFile {
                        path: path.clone(),
                        reason: "it is empty".into(),
                    });
                }
                Ok(Some(key))
            }
        }
    }
}

/// How backends are built: where keys come from, and the largest answer read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    /// Where an HTTP backend's key comes from.
    pub keys: KeySource,
    /// The largest model answer read, in bytes (`--max-model-answer-bytes`).
    pub max_answer_bytes: usize,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            keys: KeySource::Env,
            max_answer_bytes: super::http::DEFAULT_MAX_ANSWER_BYTES,
        }
    }
}

impl ModelSpec {
    /// Whether [`build_with`](Self::build_with) would succeed with these keys, without building
    /// anything: the key is there for a hosted API, the script file reads and parses.
    pub fn check(&self, keys: &KeySource) -> Result<(), SpecError> {
        match self {
            ModelSpec::None | ModelSpec::Embedded => Ok(()),
            ModelSpec::OpenAi { base_url, .. } => self
                .key(keys, "OPENAI_API_KEY", base_url.is_none())
                .map(drop),
            ModelSpec::Anthropic { base_url, .. } => self
                .key(keys, "ANTHROPIC_API_KEY", base_url.is_none())
                .map(drop),
            ModelSpec::Script(path) => Self::script(path).map(drop),
        }
    }

    fn script(path: &Path) -> Result<ModelScript, SpecError> {
        crate::compile::load::load_script(path, &crate::compile::Limits::default()).map_err(
            |found| {
                let why: Vec<String> = found.iter().map(ToString::to_string).collect();
                SpecError::Script(format!(
                    "the model script {} cannot be used:\n{}",
                    path.display(),
                    why.join("\n")
                ))
            },
        )
    }

    /// The model to use: the command line's if given, else the rules' `router.model`, else
    /// `embedded`.
    pub fn choose(command_line: Option<&ModelSpec>, router: &RouterDef) -> ModelSpec {
        command_line
            .or(router.model.as_ref())
            .cloned()
            .unwrap_or(ModelSpec::Embedded)
    }

    /// Builds the backend (`None` for rules only), with keys from the environment.
    pub fn build(&self) -> Result<Option<Arc<dyn Model>>, SpecError> {
        self.build_with(&KeySource::Env)
    }

    /// Builds the backend (`None` for rules only). A hosted API (no base URL given) needs a
    /// key; a server at a base URL gets one only if there is one.
    pub fn build_with(&self, keys: &KeySource) -> Result<Option<Arc<dyn Model>>, SpecError> {
        self.build_opts(&BuildOptions {
            keys: keys.clone(),
            ..BuildOptions::default()
        })
    }

    /// Builds the backend (`None` for rules only) with these options.
    pub fn build_opts(&self, options: &BuildOptions) -> Result<Option<Arc<dyn Model>>, SpecError> {
        let keys = &options.keys;
        let max = options.max_answer_bytes;
        let model: Arc<dyn Model> = match self {
            ModelSpec::None => return Ok(None),
            ModelSpec::Embedded => Arc::new(EmbeddedModel::new()),
            ModelSpec::OpenAi { model, base_url } => {
                let key = self.key(keys, "OPENAI_API_KEY", base_url.is_none())?;
                Arc::new(
                    OpenAiModel::new(model, base_url.as_deref(), key)
                        .map_err(SpecError::Client)?
                        .with_max_answer_bytes(max),
                )
            }
            ModelSpec::Anthropic { model, base_url } => {
                let key = self.key(keys, "ANTHROPIC_API_KEY", base_url.is_none())?;
                Arc::new(
                    AnthropicModel::new(model, base_url.as_deref(), key)
                        .map_err(SpecError::Client)?
                        .with_max_answer_bytes(max),
                )
            }
            ModelSpec::Script(path) => {
                let script = Self::script(path)?;
                Arc::new(ScriptedModel::from_script(Some(&script)).map_err(SpecError::Script)?)
            }
        };
        Ok(Some(model))
    }

    fn key(
        &self,
        keys: &KeySource,
        var: &'static str,
        required: bool,
    ) -> Result<Option<ApiKey>, SpecError> {
        let key = keys.read(var)?;
        if key.is_none() && required {
            return Err(SpecError::MissingKey {
                spec: self.to_string(),
                var,
            });
        }
        Ok(key)
    }
}
