//! The async OpenAI-compatible client (feature `async`): reqwest on tokio, with streamed
//! answers (server-sent events) as a [`Stream`] of text pieces.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::{Stream, StreamExt};
use pgraphrag_core::{GenParams, Prompt};

use super::options::{Completion, OpenAiOptions};
use super::sse::{self, SseDecoder, StopFilter};
use super::wire::{self, Attempt, Endpoint, Request};
use crate::async_generator::AsyncGenerator;
use crate::error::{LlmError, Result};

/// The async counterpart of [`OpenAiClient`](crate::OpenAiClient), for tokio programs: the
/// same [`OpenAiOptions`] (API key, timeouts, retries on 429, 5xx and transport failures),
/// the same request bodies, answers and errors, plus [`AsyncOpenAiClient::stream`] for the
/// answer piece by piece as the server writes it (`"stream": true`).
///
/// Chat prompts go to `{base_url}/chat/completions`, raw prompts to `{base_url}/completions`;
/// `base_url` includes the version prefix, e.g. `http://127.0.0.1:8080/v1`. `https` needs the
/// crate's `tls` feature. It implements [`AsyncGenerator`]; the blocking client stays for
/// scripts. Unlike the blocking client it ignores proxy environment variables (the library
/// reads none). Cloning is cheap and shares the connection pool.
///
/// ```
/// use futures_util::StreamExt;
/// use pgraphrag_core::{GenParams, Prompt};
/// use pgraphrag_llm::{AsyncOpenAiClient, OpenAiOptions};
/// # use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// # /// A one-connection-per-answer loopback server standing in for llama-server.
/// # async fn serve(listener: tokio::net::TcpListener, answers: Vec<(&'static str, String)>) {
/// #     for (kind, body) in answers {
/// #         let Ok((mut s, _)) = listener.accept().await else { return };
/// #         let mut req = Vec::new();
/// #         let mut buf = [0u8; 4096];
/// #         while let Ok(n @ 1..) = s.read(&mut buf).await {
/// #             req.extend_from_slice(&buf[..n]);
/// #             let text = String::from_utf8_lossy(&req).to_string();
/// #             if let Some((head, body)) = text.split_once("\r\n\r\n") {
/// #                 let len = head.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0))).unwrap_or(0);
/// #                 if body.len() >= len { break }
/// #             }
/// #         }
/// #         let head = format!("HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
/// #         let _ = s.write_all(format!("{head}{body}").as_bytes()).await;
/// #     }
/// # }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// # let url = format!("http://{}/v1", listener.local_addr()?);
/// # let sse = ["Par", "is", "."].iter().map(|t| format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{t}\"}}}}]}}\n\n")).collect::<String>() + "data: [DONE]\n\n";
/// # tokio::spawn(serve(listener, vec![
/// #     ("application/json", r#"{"choices":[{"message":{"content":"Paris."},"finish_reason":"stop"}]}"#.to_string()),
/// #     ("text/event-stream", sse),
/// # ]));
/// // let url = "http://127.0.0.1:8080/v1";  (llama-server, vLLM, Ollama's /v1, ...)
/// let client = AsyncOpenAiClient::new(url, "smollm2", OpenAiOptions::default())?;
/// let params = GenParams { max_tokens: 16, ..Default::default() };
/// let question = Prompt::user("What is the capital of France?");
///
/// let answer = client.complete(&question, &params).await?;
/// assert_eq!(answer.text, "Paris.");
///
/// let mut pieces = client.stream(&question, &params).await?;
/// let mut text = String::new();
/// while let Some(piece) = pieces.next().await {
///     text.push_str(&piece?);
/// }
/// assert_eq!(text, answer.text);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct AsyncOpenAiClient {
    endpoint: Endpoint,
    model: String,
    opts: OpenAiOptions,
    http: reqwest::Client,
}

/// What a 2xx answer is read as.
enum Answer {
    /// The whole body.
    Body(String),
    /// The response, its body still to be read as an event stream, and the attempts it took.
    Events(reqwest::Response, u32),
}

impl AsyncOpenAiClient {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8080/v1`) and `model` (sent as
    /// `model`). Checks the URL's scheme; connects nothing.
    ///
    /// ```
    /// use pgraphrag_llm::AsyncOpenAiClient;
    /// let c = AsyncOpenAiClient::new("http://127.0.0.1:1/v1/", "m", Default::default()).unwrap();
    /// assert_eq!(c.base_url(), "http://127.0.0.1:1/v1");
    /// assert!(AsyncOpenAiClient::new("ftp://x", "m", Default::default()).is_err());
    /// ```
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
        opts: OpenAiOptions,
    ) -> Result<Self> {
        let endpoint = Endpoint::parse(base_url.into())?;
        let http = reqwest::Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(opts.connect_timeout)
            .no_proxy()
            .build()
            .map_err(|e| LlmError::Transport {
                url: endpoint.base_url.clone(),
                reason: format!(
                    "cannot set up the HTTP client: {}",
                    pgraphrag_core::error_chain(&e)
                ),
                attempts: 0,
            })?;
        Ok(AsyncOpenAiClient {
            endpoint,
            model: model.into(),
            opts,
            http,
        })
    }

    /// The base URL (without a trailing slash).
    pub fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The id of this client's generations in a generation cache, the same as the blocking
    /// client's for the same URL and model (`openai:{url as given}:{model}`), since both get
    /// the same answers.
    ///
    /// ```
    /// use pgraphrag_llm::{AsyncOpenAiClient, OpenAiClient};
    /// let a = AsyncOpenAiClient::new("http://127.0.0.1:1/v1/", "m", Default::default()).unwrap();
    /// assert_eq!(a.cache_id(), "openai:http://127.0.0.1:1/v1/:m");
    /// let b = OpenAiClient::new("http://127.0.0.1:1/v1/", "m", Default::default()).unwrap();
    /// assert_eq!(a.cache_id(), b.cache_id());
    /// ```
    pub fn cache_id(&self) -> String {
        self.endpoint.cache_id(&self.model)
    }

    /// Sends one completion request (with retries) and returns the parsed answer, as
    /// [`OpenAiClient::complete`](crate::OpenAiClient::complete) does.
    ///
    /// ```no_run
    /// # async fn f() -> pgraphrag_llm::Result<()> {
    /// use pgraphrag_core::{GenParams, Prompt};
    /// let c = pgraphrag_llm::AsyncOpenAiClient::new("http://127.0.0.1:8080/v1", "smollm2", Default::default())?;
    /// let answer = c.complete(&Prompt::user("Say hi."), &GenParams::default()).await?;
    /// println!("{} ({:?})", answer.text, answer.finish_reason);
    /// # Ok(()) }
    /// ```
    pub async fn complete(&self, prompt: &Prompt, params: &GenParams) -> Result<Completion> {
        let req = self.request(prompt, params, false)?;
        match self.post_with_retries(&req, false).await? {
            Answer::Body(text) => wire::parse_completion(&req.url, &text, req.chat, &params.stop),
            Answer::Events(..) => Err(LlmError::InvalidResponse {
                url: req.url,
                reason: "a streamed answer to a request without `stream`".into(),
                body: String::new(),
            }),
        }
    }

    /// Asks for a streamed answer (`"stream": true`) and returns its text as it arrives.
    ///
    /// Failures before the answer starts (connection, HTTP status) are retried as for
    /// [`AsyncOpenAiClient::complete`] and returned here; failures while it streams (a broken
    /// connection, the whole-request `timeout`, a malformed event) end the stream with one
    /// `Err` item. Stop strings are applied as the text arrives, so the pieces add up to the
    /// text [`AsyncOpenAiClient::complete`] gives for the same answer. The stream ends at
    /// `data: [DONE]`, at a stop string, or at the end of the body.
    ///
    /// ```no_run
    /// # async fn f() -> pgraphrag_llm::Result<()> {
    /// use futures_util::StreamExt;
    /// use pgraphrag_core::{GenParams, Prompt};
    /// let c = pgraphrag_llm::AsyncOpenAiClient::new("http://127.0.0.1:8080/v1", "smollm2", Default::default())?;
    /// let mut pieces = c.stream(&Prompt::user("Tell a story."), &GenParams::default()).await?;
    /// while let Some(piece) = pieces.next().await {
    ///     print!("{}", piece?);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn stream(&self, prompt: &Prompt, params: &GenParams) -> Result<TextStream> {
        let req = self.request(prompt, params, true)?;
        let (resp, attempts) = match self.post_with_retries(&req, true).await? {
            Answer::Events(resp, attempts) => (resp, attempts),
            // A server that ignored `stream` and answered in one piece.
            Answer::Body(text) => {
                let c = wire::parse_completion(&req.url, &text, req.chat, &params.stop)?;
                return Ok(TextStream::new(futures_util::stream::iter(
                    (!c.text.is_empty()).then_some(Ok(c.text)),
                )));
            }
        };
        let state = Events {
            resp: Some(resp),
            url: req.url,
            chat: req.chat,
            attempts,
            opts: self.opts.clone(),
            sse: SseDecoder::default(),
            stop: StopFilter::new(&params.stop),
            ready: VecDeque::new(),
            read: 0,
        };
        Ok(TextStream::new(futures_util::stream::unfold(
            state,
            Events::next,
        )))
    }

    fn request(&self, prompt: &Prompt, params: &GenParams, stream: bool) -> Result<Request> {
        wire::build_request(&self.endpoint.base_url, &self.model, prompt, params, stream)
    }

    async fn post_with_retries(&self, req: &Request, stream: bool) -> Result<Answer> {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.post_once(req, stream, attempt).await {
                Attempt::Done(a) => return Ok(a),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry(e, retry_after) => {
                    match wire::retry_wait(&self.opts, attempt, retry_after) {
                        Some(wait) => tokio::time::sleep(wait).await,
                        None => return Err(e),
                    }
                }
            }
        }
    }

    async fn post_once(&self, req: &Request, stream: bool, attempts: u32) -> Attempt<Answer> {
        let transport = |reason: String| LlmError::Transport {
            url: req.url.clone(),
            reason,
            attempts,
        };
        let mut builder = self
            .http
            .post(&req.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(req.body.clone());
        if stream {
            builder = builder.header(reqwest::header::ACCEPT, "text/event-stream");
        }
        if let Some(k) = &self.opts.api_key {
            builder = builder.bearer_auth(k);
        }
        let mut resp = match builder.send().await {
            Ok(r) => r,
            Err(e) => return Attempt::Retry(transport(self.reason(e)), None),
        };
        let status = resp.status().as_u16();
        let ok = (200..300).contains(&status);
        let event_stream = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if ok && stream && event_stream {
            return Attempt::Done(Answer::Events(resp, attempts));
        }
        let retry_after = wire::retry_after(
            resp.headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
        );
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(bytes)) if body.len() + bytes.len() > wire::BODY_LIMIT => {
                    return Attempt::Fail(transport(format!(
                        "the body of an HTTP {status} response is over {} bytes",
                        wire::BODY_LIMIT
                    )));
                }
                Ok(Some(bytes)) => body.extend_from_slice(&bytes),
                Ok(None) => break,
                Err(e) => {
                    let reason = format!(
                        "reading the body of an HTTP {status} response: {}",
                        self.reason(e)
                    );
                    return Attempt::Retry(transport(reason), None);
                }
            }
        }
        let text = String::from_utf8_lossy(&body).into_owned();
        if ok {
            Attempt::Done(Answer::Body(text))
        } else {
            wire::status_failure(&req.url, status, &text, attempts, retry_after)
        }
    }

    /// What went wrong, without the URL (the error names it) and with the limit that ran out.
    fn reason(&self, e: reqwest::Error) -> String {
        transport_reason(e, &self.opts)
    }
}

/// A reqwest error as a [`LlmError::Transport`] reason.
fn transport_reason(e: reqwest::Error, opts: &OpenAiOptions) -> String {
    let timed_out = e.is_timeout();
    let connect = e.is_connect();
    let chain = pgraphrag_core::error_chain(&e.without_url());
    match (timed_out, connect) {
        (true, true) => format!(
            "timed out connecting after {:?} (connect_timeout): {chain}",
            opts.connect_timeout
        ),
        (true, false) => format!("timed out after {:?} (timeout): {chain}", opts.timeout),
        _ => chain,
    }
}

impl AsyncGenerator for AsyncOpenAiClient {
    async fn generate(
        &self,
        prompt: &Prompt,
        params: &GenParams,
    ) -> pgraphrag_core::Result<String> {
        Ok(self.complete(prompt, params).await?.text)
    }
}

/// A streamed answer's text, piece by piece, from [`AsyncOpenAiClient::stream`]: a
/// [`Stream`] of `Result<String>` (use `futures_util::StreamExt::next`). Pieces are never
/// empty; after an `Err` item the stream ends.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> pgraphrag_llm::Result<()> {
/// # let url = "http://127.0.0.1:1/v1"; // nothing listens: see AsyncOpenAiClient for a served example
/// let c = pgraphrag_llm::AsyncOpenAiClient::new(url, "m", pgraphrag_llm::OpenAiOptions {
///     max_retries: 0,
///     ..Default::default()
/// })?;
/// let err = c.stream(&pgraphrag_core::Prompt::user("hi"), &Default::default()).await.unwrap_err();
/// assert!(matches!(err, pgraphrag_llm::LlmError::Transport { .. }), "{err}");
/// # Ok(()) }
/// ```
pub struct TextStream {
    inner: Pin<Box<dyn Stream<Item = Result<String>> + Send>>,
}

impl TextStream {
    fn new(inner: impl Stream<Item = Result<String>> + Send + 'static) -> Self {
        TextStream {
            inner: Box::pin(inner),
        }
    }

    /// Reads the rest of the stream and joins its pieces: the whole answer, or the first
    /// error.
    ///
    /// ```no_run
    /// # async fn f() -> pgraphrag_llm::Result<()> {
    /// let c = pgraphrag_llm::AsyncOpenAiClient::new("http://127.0.0.1:8080/v1", "m", Default::default())?;
    /// let text = c.stream(&pgraphrag_core::Prompt::user("hi"), &Default::default()).await?.into_text().await?;
    /// # Ok(()) }
    /// ```
    pub async fn into_text(mut self) -> Result<String> {
        let mut text = String::new();
        while let Some(piece) = self.next().await {
            text.push_str(&piece?);
        }
        Ok(text)
    }
}

impl fmt::Debug for TextStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TextStream").finish_non_exhaustive()
    }
}

impl Stream for TextStream {
    type Item = Result<String>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// The state of a streamed answer being read.
struct Events {
    /// `None` once the answer has ended (the connection is released).
    resp: Option<reqwest::Response>,
    url: String,
    chat: bool,
    /// The attempts it took to get the answer started.
    attempts: u32,
    /// For the limits named in errors.
    opts: OpenAiOptions,
    sse: SseDecoder,
    stop: StopFilter,
    /// Pieces decoded but not yet handed out.
    ready: VecDeque<String>,
    /// Bytes read so far (at most [`wire::BODY_LIMIT`]).
    read: usize,
}

impl Events {
    /// The next piece, reading from the body as needed.
    async fn next(mut self) -> Option<(Result<String>, Events)> {
        loop {
            if let Some(piece) = self.ready.pop_front() {
                return Some((Ok(piece), self));
            }
            let resp = self.resp.as_mut()?;
            let mut data = Vec::new();
            let end = match resp.chunk().await {
                Ok(Some(bytes)) => {
                    self.read += bytes.len();
                    if self.read > wire::BODY_LIMIT {
                        let reason = format!("event stream over {} bytes", wire::BODY_LIMIT);
                        return self.fail(reason);
                    }
                    self.sse.push(&bytes, &mut data).map(|()| false)
                }
                Ok(None) => self.sse.finish(&mut data).map(|()| true),
                Err(e) => {
                    let reason = transport_reason(e, &self.opts);
                    return self.fail(format!("reading the event stream: {reason}"));
                }
            };
            let mut end = match end {
                Ok(end) => end,
                Err(reason) => return self.invalid(reason),
            };
            for event in data {
                match sse::parse_stream_event(&self.url, &event, self.chat) {
                    Ok(Some(delta)) => {
                        let piece = self.stop.push(&delta);
                        self.hand_out(piece);
                    }
                    Ok(None) => {
                        end = true;
                        break;
                    }
                    Err(e) => return self.error(e),
                }
                if self.stop.done() {
                    end = true;
                    break;
                }
            }
            if end {
                let rest = self.stop.finish();
                self.hand_out(rest);
                self.resp = None;
            }
        }
    }

    fn hand_out(&mut self, piece: String) {
        if !piece.is_empty() {
            self.ready.push_back(piece);
        }
    }

    /// Ends the stream with `e` as its last item.
    fn error(mut self, e: LlmError) -> Option<(Result<String>, Events)> {
        self.resp = None;
        self.ready.clear();
        Some((Err(e), self))
    }

    fn fail(self, reason: String) -> Option<(Result<String>, Events)> {
        let e = LlmError::Transport {
            url: self.url.clone(),
            reason,
            attempts: self.attempts,
        };
        self.error(e)
    }

    fn invalid(self, reason: String) -> Option<(Result<String>, Events)> {
        let e = LlmError::InvalidResponse {
            url: self.url.clone(),
            reason,
            body: String::new(),
        };
        self.error(e)
    }
}
