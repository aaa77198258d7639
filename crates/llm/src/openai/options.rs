//! What the OpenAI-compatible clients take ([`OpenAiOptions`]) and return ([`Completion`]),
//! shared by the blocking client ([`super::OpenAiClient`]), the async one and the wire format.

use std::time::Duration;

/// Options of [`OpenAiClient`](crate::OpenAiClient) (and of `AsyncOpenAiClient`, feature `async`).
#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    /// Sent as `Authorization: Bearer {api_key}` when set.
    pub api_key: Option<String>,
    /// Limit on one whole request (connect, send, wait, read). Default 120 s.
    pub timeout: Duration,
    /// Limit on establishing the connection. Default 10 s.
    pub connect_timeout: Duration,
    /// Retries after the first attempt on HTTP 429, HTTP 5xx, and transport failures
    /// (connection refused, timeouts). Default 3.
    pub max_retries: u32,
    /// Wait before the first retry; doubled for each further retry. Default 500 ms.
    pub initial_backoff: Duration,
    /// Upper bound on one wait (also on a server's `Retry-After`). Default 8 s.
    pub max_backoff: Duration,
}

impl Default for OpenAiOptions {
    fn default() -> Self {
        OpenAiOptions {
            api_key: None,
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
        }
    }
}

impl OpenAiOptions {
    /// These options with `api_key` set (sent as `Authorization: Bearer {api_key}`). The
    /// library reads no environment variables: a binary that wants the usual
    /// `OPENAI_API_KEY` reads it and passes it here.
    ///
    /// ```
    /// use pgraphrag_llm::OpenAiOptions;
    /// let key = std::env::var("OPENAI_API_KEY").ok().filter(|k| !k.is_empty());
    /// let opts = OpenAiOptions::default().with_api_key(key);
    /// let fixed = OpenAiOptions::default().with_api_key(Some("sk-test".to_string()));
    /// assert_eq!(fixed.api_key.as_deref(), Some("sk-test"));
    /// # let _ = opts;
    /// ```
    pub fn with_api_key(mut self, api_key: Option<String>) -> Self {
        self.api_key = api_key;
        self
    }
}

/// A completion returned by the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The generated text (cut before any stop string, should the server have kept it).
    pub text: String,
    /// The server's `finish_reason` (`stop`, `length`, ...), if given.
    pub finish_reason: Option<String>,
    /// `usage.prompt_tokens`, if given.
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens`, if given.
    pub completion_tokens: Option<u64>,
}
