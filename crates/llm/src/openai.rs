//! A blocking client for OpenAI-compatible chat-completions servers (OpenAI, llama.cpp's
//! `llama-server`, vLLM, Ollama's `/v1`, ...).

use std::time::Duration;

use pgraphrag_core::{GenParams, Generator, Prompt};
use serde_json::{Value, json};

use crate::error::{LlmError, Result, snippet};

/// Options of [`OpenAiClient`].
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
    base_url: String,
    /// `base_url` exactly as given to [`OpenAiClient::new`] (for [`OpenAiClient::cache_id`]).
    url_as_given: String,
    model: String,
    opts: OpenAiOptions,
    agent: ureq::Agent,
}

enum Attempt {
    Done(String),
    Retry(LlmError, Option<Duration>),
    Fail(LlmError),
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
        let url_as_given = base_url.into();
        let base_url = url_as_given.trim_end_matches('/').to_string();
        let https = base_url.starts_with("https://");
        if !https && !base_url.starts_with("http://") {
            return Err(LlmError::InvalidParams(format!(
                "base URL `{base_url}` must start with http:// or https://"
            )));
        }
        if https && !cfg!(feature = "tls") {
            return Err(LlmError::InvalidParams(format!(
                "base URL `{base_url}` is https but pgraphrag-llm was built without its `tls` feature"
            )));
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(opts.timeout))
            .timeout_connect(Some(opts.connect_timeout))
            .build()
            .new_agent();
        Ok(OpenAiClient {
            base_url,
            url_as_given,
            model: model.into(),
            opts,
            agent,
        })
    }

    /// The base URL (without a trailing slash).
    pub fn base_url(&self) -> &str {
        &self.base_url
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
        format!("openai:{}:{}", self.url_as_given, self.model)
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Sends one completion request (with retries) and returns the parsed answer.
    pub fn complete(&self, prompt: &Prompt, params: &GenParams) -> Result<Completion> {
        let mut body = json!({
            "model": self.model,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "seed": params.seed,
        });
        if let Some(p) = params.top_p {
            body["top_p"] = json!(p);
        }
        if !params.stop.is_empty() {
            body["stop"] = json!(params.stop);
        }
        let (url, chat) = match prompt {
            Prompt::Chat(m) => {
                body["messages"] = serde_json::to_value(m)
                    .map_err(|e| LlmError::InvalidParams(format!("messages: {e}")))?;
                (format!("{}/chat/completions", self.base_url), true)
            }
            Prompt::Raw(s) => {
                body["prompt"] = json!(s);
                (format!("{}/completions", self.base_url), false)
            }
        };
        let text = self.post_with_retries(&url, &body.to_string())?;
        parse_completion(&url, &text, chat, &params.stop)
    }

    fn post_with_retries(&self, url: &str, body: &str) -> Result<String> {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.post_once(url, body, attempt) {
                Attempt::Done(s) => return Ok(s),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry(e, retry_after) => {
                    if attempt > self.opts.max_retries {
                        return Err(e);
                    }
                    let backoff = self
                        .opts
                        .initial_backoff
                        .saturating_mul(1u32 << (attempt - 1).min(16));
                    let wait = retry_after.unwrap_or(backoff).min(self.opts.max_backoff);
                    std::thread::sleep(wait);
                }
            }
        }
    }

    fn post_once(&self, url: &str, body: &str, attempts: u32) -> Attempt {
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
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = match resp
            .body_mut()
            .with_config()
            .limit(64 * 1024 * 1024)
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
        let err = LlmError::Http {
            url: url.to_string(),
            status,
            body: snippet(&text, 500),
            attempts,
        };
        if status == 429 || status >= 500 {
            Attempt::Retry(err, retry_after)
        } else {
            Attempt::Fail(err)
        }
    }
}

fn parse_completion(url: &str, text: &str, chat: bool, stop: &[String]) -> Result<Completion> {
    let bad = |reason: &str| LlmError::InvalidResponse {
        url: url.to_string(),
        reason: reason.to_string(),
        body: snippet(text, 500),
    };
    let v: Value = serde_json::from_str(text).map_err(|e| bad(&format!("not JSON: {e}")))?;
    if let Some(err) = v.get("error") {
        return Err(bad(&format!("the server reported an error: {err}")));
    }
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| bad("no `choices[0]`"))?;
    let content = if chat {
        choice.get("message").and_then(|m| m.get("content"))
    } else {
        choice.get("text")
    };
    let mut out = content
        .and_then(|c| c.as_str())
        .ok_or_else(|| {
            bad(if chat {
                "`choices[0].message.content` is missing or not a string"
            } else {
                "`choices[0].text` is missing or not a string"
            })
        })?
        .to_string();
    if let Some(i) = stop
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| out.find(s.as_str()))
        .min()
    {
        out.truncate(i);
    }
    let usage = v.get("usage");
    Ok(Completion {
        text: out,
        finish_reason: choice
            .get("finish_reason")
            .and_then(|f| f.as_str())
            .map(String::from),
        prompt_tokens: usage
            .and_then(|u| u.get("prompt_tokens"))
            .and_then(|x| x.as_u64()),
        completion_tokens: usage
            .and_then(|u| u.get("completion_tokens"))
            .and_then(|x| x.as_u64()),
    })
}

impl Generator for OpenAiClient {
    fn generate(&self, prompt: &Prompt, params: &GenParams) -> pgraphrag_core::Result<String> {
        Ok(self.complete(prompt, params)?.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chat_and_text_answers() {
        let c = parse_completion(
            "u",
            r#"{"choices":[{"message":{"role":"assistant","content":"Hi STOP there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}"#,
            true,
            &["STOP".into()],
        )
        .unwrap();
        assert_eq!(c.text, "Hi ");
        assert_eq!(c.finish_reason.as_deref(), Some("stop"));
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(5), Some(3)));
        let c = parse_completion("u", r#"{"choices":[{"text":"abc"}]}"#, false, &[]).unwrap();
        assert_eq!(c.text, "abc");
    }

    #[test]
    fn rejects_unusable_answers() {
        for body in [
            "<html>",
            r#"{"choices":[]}"#,
            r#"{"error":{"message":"x"}}"#,
            r#"{"choices":[{"message":{"content":null}}]}"#,
        ] {
            let e = parse_completion("u", body, true, &[]).unwrap_err();
            assert!(matches!(e, LlmError::InvalidResponse { .. }), "{body}: {e}");
        }
    }
}
