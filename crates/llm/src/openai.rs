//! Clients for OpenAI-compatible chat-completions servers (OpenAI, llama.cpp's
//! `llama-server`, vLLM, Ollama's `/v1`, ...): the blocking [`OpenAiClient`] here, the async
//! one in `async_client` (feature `async`). Request bodies, response parsing, stop strings
//! and the retry policy live once, in [`wire`]; streamed answers are decoded in `sse`.

use pgraphrag_core::{GenParams, Generator, Prompt};

use crate::error::{LlmError, Result};

#[cfg(feature = "async")]
pub(crate) mod async_client;
pub(crate) mod options;
#[cfg(any(feature = "async", test))]
pub(crate) mod sse;
pub(crate) mod wire;

use options::{Completion, OpenAiOptions};
use wire::{Attempt, Endpoint};

/// A [`Generator`] that calls an OpenAI-compatible server.
///
/// Chat prompts go to `{base_url}/chat/completions`; raw prompts to `{base_url}/completions`
/// (the legacy text endpoint, which llama.cpp and vLLM serve). `base_url` includes the
/// version prefix, e.g. `http://127.0.0.1:8080/v1`. `https` needs the crate's `tls` feature.
///
/// ```no_run
/// use pgraphrag_core::{GenParams, Generator, Prompt};
/// use pgraphrag_llm::{OpenAiClient, OpenAiOptions};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let key = std::env::var("OPENAI_API_KEY").ok(); // binaries read the environment, not the library
/// let c = OpenAiClient::new("http://127.0.0.1:8080/v1", "smollm2", OpenAiOptions::default().with_api_key(key))?;
/// let text = c.generate(&Prompt::user("Say hi."), &GenParams { max_tokens: 16, ..Default::default() })?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    endpoint: Endpoint,
    model: String,
    opts: OpenAiOptions,
    agent: ureq::Agent,
}

impl OpenAiClient {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8080/v1`) and `model` (sent as `model`).
    ///
    /// ```
    /// let c = pgraphrag_llm::OpenAiClient::new("http://127.0.0.1:1/v1/", "m", Default::default()).unwrap();
    /// assert_eq!(c.base_url(), "http://127.0.0.1:1/v1");
    /// assert!(pgraphrag_llm::OpenAiClient::new("ftp://x", "m", Default::default()).is_err());
    /// ```
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
        opts: OpenAiOptions,
    ) -> Result<Self> {
        let endpoint = Endpoint::parse(base_url.into())?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(opts.timeout))
            .timeout_connect(Some(opts.connect_timeout))
            .build()
            .new_agent();
        Ok(OpenAiClient {
            endpoint,
            model: model.into(),
            opts,
            agent,
        })
    }

    /// The base URL (without a trailing slash).
    pub fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }

    /// The id of this client's generations in a generation cache: `openai:{url}:{model}`, with
    /// the base URL exactly as given to [`OpenAiClient::new`] (a trailing slash kept), as the
    /// ids of existing caches were made.
    ///
    /// ```
    /// let c = pgraphrag_llm::OpenAiClient::new("http://127.0.0.1:1/v1", "m", Default::default()).unwrap();
    /// assert_eq!(c.cache_id(), "openai:http://127.0.0.1:1/v1:m");
    /// let c = pgraphrag_llm::OpenAiClient::new("http://127.0.0.1:1/v1/", "m", Default::default()).unwrap();
    /// assert_eq!(c.cache_id(), "openai:http://127.0.0.1:1/v1/:m");
    /// ```
    pub fn cache_id(&self) -> String {
        self.endpoint.cache_id(&self.model)
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Sends one completion request (with retries) and returns the parsed answer.
    pub fn complete(&self, prompt: &Prompt, params: &GenParams) -> Result<Completion> {
        let req = wire::build_request(&self.endpoint.base_url, &self.model, prompt, params, false)?;
        let text = self.post_with_retries(&req.url, &req.body)?;
        wire::parse_completion(&req.url, &text, req.chat, &params.stop)
    }

    fn post_with_retries(&self, url: &str, body: &str) -> Result<String> {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.post_once(url, body, attempt) {
                Attempt::Done(s) => return Ok(s),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry(e, retry_after) => {
                    match wire::retry_wait(&self.opts, attempt, retry_after) {
                        Some(wait) => std::thread::sleep(wait),
                        None => return Err(e),
                    }
                }
            }
        }
    }

    fn post_once(&self, url: &str, body: &str, attempts: u32) -> Attempt<String> {
        let mut req = self
            .agent
            .post(url)
            .header("Content-Type", "application/json");
        if let Some(k) = &self.opts.api_key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let mut resp = match req.send(body) {
            Ok(r) => r,
            Err(e) => {
                return Attempt::Retry(
                    LlmError::Transport {
                        url: url.to_string(),
                        reason: e.to_string(),
                        attempts,
                    },
                    None,
                );
            }
        };
        let status = resp.status().as_u16();
        let retry_after = wire::retry_after(
            resp.headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok()),
        );
        let text = match resp
            .body_mut()
            .with_config()
            .limit(wire::BODY_LIMIT as u64)
            .read_to_string()
        {
            Ok(t) => t,
            Err(e) => {
                return Attempt::Retry(
                    LlmError::Transport {
                        url: url.to_string(),
                        reason: format!("reading the body of an HTTP {status} response: {e}"),
                        attempts,
                    },
                    None,
                );
            }
        };
        if (200..300).contains(&status) {
            return Attempt::Done(text);
        }
        wire::status_failure(url, status, &text, attempts, retry_after)
    }
}

impl Generator for OpenAiClient {
    fn generate(&self, prompt: &Prompt, params: &GenParams) -> pgraphrag_core::Result<String> {
        Ok(self.complete(prompt, params)?.text)
    }
}
