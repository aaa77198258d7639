use std::path::{Path, PathBuf};

/// Everything that can go wrong in this crate. Every variant names what was involved (the
/// file, the URL, the token counts) and, where there is one, what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The model (or tokenizer) file does not exist.
    #[error(
        "model file {path} not found; run `scripts/fetch-llms.sh` or pass the path of a GGUF file"
    )]
    ModelNotFound {
        /// The path that was tried.
        path: PathBuf,
    },
    /// Reading a file failed.
    #[error("cannot read {path}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a readable GGUF file (wrong magic, truncated, inconsistent metadata).
    #[error("{path} is not a valid GGUF model: {reason}")]
    InvalidGguf {
        /// The file involved.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// `general.architecture` names a model family this crate cannot run.
    #[error(
        "{path}: unsupported architecture `{architecture}` (supported: llama, gemma3, qwen2, qwen3)"
    )]
    UnsupportedArchitecture {
        /// The file involved.
        path: PathBuf,
        /// The architecture the file declares.
        architecture: String,
    },
    /// The tokenizer could not be built or used.
    #[error("tokenizer for {path}: {reason}")]
    Tokenizer {
        /// The model or tokenizer file involved.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The prompt does not fit the model's context window (under [`crate::ContextOverflow::Error`]).
    #[error(
        "prompt of {prompt_tokens} tokens plus max_tokens {max_tokens} exceeds the context window of {context} tokens; shorten the prompt, lower max_tokens, or use ContextOverflow::TruncateLeft"
    )]
    PromptTooLong {
        /// Tokens in the formatted prompt.
        prompt_tokens: usize,
        /// Requested new tokens.
        max_tokens: usize,
        /// The model's context window.
        context: usize,
    },
    /// The caller passed parameters the backend cannot use.
    #[error("invalid parameters: {0}")]
    InvalidParams(String),
    /// A LoRA adapter does not fit the model it is applied to (shapes, layers, engine), or
    /// its values are unusable.
    #[error("LoRA adapter `{adapter}`: {reason}")]
    Adapter {
        /// The adapter's id ([`crate::LoraAdapter::id`]).
        adapter: String,
        /// What was wrong.
        reason: String,
    },
    /// The model failed while running, with what it was doing.
    #[error("{context}")]
    Model {
        /// What was being done.
        context: String,
        /// The underlying error (candle's, or the native engine's message).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The request needs a cargo feature of this crate that this build lacks (e.g.
    /// [`crate::Engine::Candle`] without the `candle` feature).
    #[error("{what} needs pgraphrag-llm's `{feature}` feature, which this build lacks")]
    FeatureDisabled {
        /// The missing feature.
        feature: &'static str,
        /// What needed it.
        what: String,
    },
    /// The HTTP server answered with an error status (after any retries).
    #[error("{url} answered HTTP {status} after {attempts} attempt(s): {body}")]
    Http {
        /// The endpoint.
        url: String,
        /// HTTP status code.
        status: u16,
        /// The start of the response body (at most 500 characters).
        body: String,
        /// How many requests were sent.
        attempts: u32,
    },
    /// The HTTP request failed before a response arrived (connection refused, timeout, ...).
    #[error("request to {url} failed after {attempts} attempt(s): {reason}")]
    Transport {
        /// The endpoint.
        url: String,
        /// What went wrong.
        reason: String,
        /// How many requests were sent.
        attempts: u32,
    },
    /// The server answered 2xx but the body is not a chat/completions response.
    #[error("{url} sent an unusable response ({reason}): {body}")]
    InvalidResponse {
        /// The endpoint.
        url: String,
        /// What was wrong with it.
        reason: String,
        /// The start of the response body (at most 500 characters).
        body: String,
    },
}

impl LlmError {
    /// [`LlmError::Model`] from what was being done and the error.
    pub(crate) fn model(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        LlmError::Model {
            context: context.into(),
            source: source.into(),
        }
    }
}

/// [`LlmError::InvalidGguf`] for the file at `path`, with what was wrong: the one error of a
/// GGUF file that is not what it should be, whichever layer (reader, tokenizer, engine) found it.
pub(crate) fn invalid(path: &Path, reason: impl Into<String>) -> LlmError {
    LlmError::InvalidGguf {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// `Result` with [`LlmError`].
pub type Result<T, E = LlmError> = std::result::Result<T, E>;

impl From<LlmError> for pgraphrag_core::Error {
    fn from(e: LlmError) -> Self {
        match e {
            LlmError::InvalidParams(m) => pgraphrag_core::Error::InvalidInput(m),
            other => pgraphrag_core::Error::backend(other),
        }
    }
}

/// The first `n` characters of `s` (on a char boundary), with `…` when cut.
pub(crate) fn snippet(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
