//! `--model SPEC` (or `router.model` in the rules): which router model to use, and building it.
//!
//! `embedded` (the default: offline, no key), `none` (rules only), `openai:MODEL[@BASE_URL]`,
//! `anthropic:MODEL[@BASE_URL]`, `script:FILE`. Keys come from `OPENAI_API_KEY` /
//! `ANTHROPIC_API_KEY`, or from a key file; they are never printed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(feature = "http-models")]
use super::anthropic::AnthropicModel;
use super::embedded::EmbeddedModel;
use super::key::ApiKey;
#[cfg(feature = "http-models")]
use super::openai::OpenAiModel;
use super::scripted::ScriptedModel;
use super::{DEFAULT_MAX_ANSWER_BYTES, Model};
pub use crate::contract::{ModelSpec, SpecError};
use crate::rules::testcase::ModelScript;
use crate::ruleset::RouterDef;

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
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
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
        crate::source::load::load_script(path, &crate::source::Limits::default()).map_err(|found| {
            let why: Vec<String> = found.iter().map(ToString::to_string).collect();
            SpecError::Script(format!(
                "the model script {} cannot be used:\n{}",
                path.display(),
                why.join("\n")
            ))
        })
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
            #[cfg(feature = "http-models")]
            ModelSpec::OpenAi { model, base_url } => {
                let key = self.key(keys, "OPENAI_API_KEY", base_url.is_none())?;
                Arc::new(
                    OpenAiModel::new(model, base_url.as_deref(), key)
                        .map_err(SpecError::Client)?
                        .with_max_answer_bytes(max),
                )
            }
            #[cfg(feature = "http-models")]
            ModelSpec::Anthropic { model, base_url } => {
                let key = self.key(keys, "ANTHROPIC_API_KEY", base_url.is_none())?;
                Arc::new(
                    AnthropicModel::new(model, base_url.as_deref(), key)
                        .map_err(SpecError::Client)?
                        .with_max_answer_bytes(max),
                )
            }
            #[cfg(not(feature = "http-models"))]
            ModelSpec::OpenAi { .. } | ModelSpec::Anthropic { .. } => {
                let _ = (keys, max);
                return Err(SpecError::Client(format!(
                    "model '{self}' needs the HTTP backends, and this build has none (the http-models feature is off)"
                )));
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
