//! What the blocking [`OpenAiClient`](super::OpenAiClient) and the async client share: the
//! base URL check, request bodies, response parsing, stop strings and the retry policy. The
//! clients only move bytes.

use std::time::Duration;

use pgraphrag_core::{GenParams, Prompt};
use serde_json::{Value, json};

use super::options::{Completion, OpenAiOptions};
use crate::error::{LlmError, Result, snippet};

/// Most bytes read from one response body (a whole answer, or a whole stream).
pub(crate) const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// A checked base URL.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// Without a trailing slash.
    pub(crate) base_url: String,
    /// Exactly as given (for the cache id).
    pub(crate) url_as_given: String,
}

impl Endpoint {
    /// Checks the scheme (`http://`, or `https://` with the `tls` feature).
    pub(crate) fn parse(url_as_given: String) -> Result<Self> {
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
        Ok(Endpoint {
            base_url,
            url_as_given,
        })
    }

    /// `openai:{url as given}:{model}`.
    pub(crate) fn cache_id(&self, model: &str) -> String {
        format!("openai:{}:{model}", self.url_as_given)
    }
}

/// One request, ready to send.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// `{base}/chat/completions` or `{base}/completions`.
    pub(crate) url: String,
    /// The JSON body.
    pub(crate) body: String,
    /// Whether it is a chat request (where the answer's text is).
    pub(crate) chat: bool,
}

/// The request for `prompt`: chat prompts to `/chat/completions`, raw ones to `/completions`;
/// `"stream": true` only when `stream`.
pub(crate) fn build_request(
    base_url: &str,
    model: &str,
    prompt: &Prompt,
    params: &GenParams,
    stream: bool,
) -> Result<Request> {
    let mut body = json!({
        "model": model,
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
    if stream {
        body["stream"] = json!(true);
    }
    let (url, chat) = match prompt {
        Prompt::Chat(m) => {
            body["messages"] = serde_json::to_value(m)
                .map_err(|e| LlmError::InvalidParams(format!("messages: {e}")))?;
            (format!("{base_url}/chat/completions"), true)
        }
        Prompt::Raw(s) => {
            body["prompt"] = json!(s);
            (format!("{base_url}/completions"), false)
        }
    };
    Ok(Request {
        url,
        body: body.to_string(),
        chat,
    })
}

/// What one attempt at a request came to.
pub(crate) enum Attempt<T> {
    /// A usable answer.
    Done(T),
    /// A failure worth retrying, with the server's `Retry-After` if it sent one.
    Retry(LlmError, Option<Duration>),
    /// A failure not worth retrying.
    Fail(LlmError),
}

/// How long to wait after failed attempt number `attempt` (1-based), or `None` when the
/// retries are spent: `initial_backoff · 2^(attempt-1)` or the server's `Retry-After`, at
/// most `max_backoff`.
pub(crate) fn retry_wait(
    opts: &OpenAiOptions,
    attempt: u32,
    retry_after: Option<Duration>,
) -> Option<Duration> {
    if attempt > opts.max_retries {
        return None;
    }
    let backoff = opts
        .initial_backoff
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    Some(retry_after.unwrap_or(backoff).min(opts.max_backoff))
}

/// A `Retry-After` header given in seconds.
pub(crate) fn retry_after(header: Option<&str>) -> Option<Duration> {
    header
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// The outcome of a non-2xx answer: [`LlmError::Http`], retried on 429 and 5xx.
pub(crate) fn status_failure<T>(
    url: &str,
    status: u16,
    body: &str,
    attempts: u32,
    retry_after: Option<Duration>,
) -> Attempt<T> {
    let err = LlmError::Http {
        url: url.to_string(),
        status,
        body: snippet(body, 500),
        attempts,
    };
    if status == 429 || status >= 500 {
        Attempt::Retry(err, retry_after)
    } else {
        Attempt::Fail(err)
    }
}

/// [`LlmError::InvalidResponse`] for `url` and `body`.
pub(crate) fn invalid(url: &str, reason: &str, body: &str) -> LlmError {
    LlmError::InvalidResponse {
        url: url.to_string(),
        reason: reason.to_string(),
        body: snippet(body, 500),
    }
}

/// `text` cut before the earliest occurrence of any non-empty stop string.
pub(crate) fn cut_at_stop(text: &mut String, stop: &[String]) {
    if let Some(i) = stop
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min()
    {
        text.truncate(i);
    }
}

/// Parses a (non-streamed) chat or text completion body.
pub(crate) fn parse_completion(
    url: &str,
    text: &str,
    chat: bool,
    stop: &[String],
) -> Result<Completion> {
    let bad = |reason: &str| invalid(url, reason, text);
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
    cut_at_stop(&mut out, stop);
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

    #[test]
    fn request_bodies_name_the_endpoint_and_stream_only_when_asked() {
        let params = GenParams {
            max_tokens: 5,
            top_p: Some(0.5),
            stop: vec!["x".into()],
            ..Default::default()
        };
        let r = build_request("http://h/v1", "m", &Prompt::user("hi"), &params, false).unwrap();
        assert_eq!(r.url, "http://h/v1/chat/completions");
        assert!(r.chat);
        let b: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(b["messages"][0]["content"], "hi");
        assert_eq!(
            (b["max_tokens"].as_u64(), b["top_p"].as_f64()),
            (Some(5), Some(0.5))
        );
        assert!(b.get("stream").is_none());
        let r = build_request("http://h/v1", "m", &Prompt::Raw("p".into()), &params, true).unwrap();
        assert_eq!(r.url, "http://h/v1/completions");
        let b: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(
            (b["prompt"].as_str(), b["stream"].as_bool()),
            (Some("p"), Some(true))
        );
    }

    #[test]
    fn retry_waits_double_and_are_capped() {
        let opts = OpenAiOptions {
            max_retries: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(300),
            ..Default::default()
        };
        let ms = |a, ra| retry_wait(&opts, a, ra).map(|d: Duration| d.as_millis());
        assert_eq!(
            (ms(1, None), ms(2, None), ms(3, None)),
            (Some(100), Some(200), Some(300))
        );
        assert_eq!(ms(4, None), None);
        assert_eq!(ms(1, Some(Duration::from_secs(60))), Some(300));
        assert_eq!(retry_after(Some(" 2 ")), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(Some("Wed, 21 Oct 2015")), None);
    }
}
