//! `POST /v1/chat/completions`: OpenAI-compatible, personalized with the user's context.

use std::sync::Arc;

use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, StreamExt};
use pgraphrag_core::{GenParams, Generator, Message, Prompt, Role, TokenCounter};
use pgraphrag_llm::{AsyncGenerator, AsyncOpenAiClient, Blocking, Completion};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::{ApiError, EntryOut};

/// One piece of a streamed completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta {
    /// More text.
    Text(String),
    /// Why the completion ended (`stop`, `length`), when the backend knows; sent last.
    Finish(String),
}

/// The pieces of a streamed completion. A stream without a [`Delta::Finish`] ends with
/// `finish_reason` `stop`.
pub type Deltas = BoxStream<'static, pgraphrag_core::Result<Delta>>;

/// What answers chat completions: [`ChatBackend::complete`] and [`ChatBackend::model`] are
/// required; the provided [`ChatBackend::stream`] sends the whole answer as one delta.
pub trait ChatBackend: Send + Sync {
    /// The completion of `prompt`: its text and, where known, why it ended (`stop`,
    /// `length`) and its token counts.
    fn complete(
        &self,
        prompt: Prompt,
        params: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Completion>>;

    /// The completion of `prompt` as deltas. The default sends the whole answer as one
    /// [`Delta::Text`], then its [`Delta::Finish`] when known.
    fn stream(
        &self,
        prompt: Prompt,
        params: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Deltas>> {
        let whole = self.complete(prompt, params);
        Box::pin(async move {
            let c = whole.await?;
            let mut parts = vec![Ok(Delta::Text(c.text))];
            if let Some(reason) = c.finish_reason {
                parts.push(Ok(Delta::Finish(reason)));
            }
            Ok(stream::iter(parts).boxed())
        })
    }

    /// The model's name, for answers and logs.
    fn model(&self) -> String;
}

/// A shareable [`ChatBackend`].
#[derive(Clone)]
pub struct Backend(Arc<dyn ChatBackend>);

impl Backend {
    /// Any backend.
    pub fn new(backend: Arc<dyn ChatBackend>) -> Self {
        Backend(backend)
    }
    /// An OpenAI-compatible server (streams its deltas through).
    pub fn openai(client: AsyncOpenAiClient) -> Self {
        Backend(Arc::new(OpenAi(client)))
    }
    /// A local, blocking generator (a GGUF model), run on tokio's blocking pool. Its answers
    /// end with `finish_reason` `stop`; see [`Backend::local_counted`] for `length`.
    pub fn local<G: Generator + Send + Sync + 'static>(generator: G, name: &str) -> Self {
        Backend(Arc::new(Local {
            generator: Blocking::new(generator),
            name: name.to_string(),
            counter: None,
        }))
    }
    /// [`Backend::local`] with the model's tokenizer: an answer of `max_tokens` tokens or
    /// more (counted by re-tokenizing it) ends with `finish_reason` `length`, and answers
    /// carry their token count.
    pub fn local_counted<G, C>(generator: G, counter: C, name: &str) -> Self
    where
        G: Generator + Send + Sync + 'static,
        C: TokenCounter + Send + Sync + 'static,
    {
        Backend(Arc::new(Local {
            generator: Blocking::new(generator),
            name: name.to_string(),
            counter: Some(Arc::new(counter)),
        }))
    }
    /// The model's name.
    pub fn describe(&self) -> String {
        self.0.model()
    }
    /// [`ChatBackend::complete`].
    pub fn complete(
        &self,
        prompt: Prompt,
        params: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Completion>> {
        self.0.complete(prompt, params)
    }
    /// [`ChatBackend::stream`].
    pub fn stream(
        &self,
        prompt: Prompt,
        params: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Deltas>> {
        self.0.stream(prompt, params)
    }
}

struct OpenAi(AsyncOpenAiClient);

impl ChatBackend for OpenAi {
    fn complete(
        &self,
        prompt: Prompt,
        params: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Completion>> {
        let c = self.0.clone();
        Box::pin(async move {
            c.complete(&prompt, &params)
                .await
                .map_err(pgraphrag_core::Error::backend)
        })
    }
    fn stream(
        &self,
        prompt: Prompt,
        params: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Deltas>> {
        let c = self.0.clone();
        Box::pin(async move {
            let s = c
                .stream(&prompt, &params)
                .await
                .map_err(pgraphrag_core::Error::backend)?;
            Ok(
                s.map(|r| r.map(Delta::Text).map_err(pgraphrag_core::Error::backend))
                    .boxed(),
            )
        })
    }
    fn model(&self) -> String {
        self.0.model().to_string()
    }
}

type Counter = Arc<dyn TokenCounter + Send + Sync>;

struct Local<G> {
    generator: Blocking<G>,
    name: String,
    counter: Option<Counter>,
}

impl<G: Generator + Send + Sync + 'static> ChatBackend for Local<G> {
    fn complete(
        &self,
        prompt: Prompt,
        params: GenParams,
    ) -> BoxFuture<'static, pgraphrag_core::Result<Completion>> {
        let g = self.generator.clone();
        let counter = self.counter.clone();
        Box::pin(async move {
            let text = g.generate(&prompt, &params).await?;
            let tokens = match counter {
                Some(c) => Some(c.count(&text)?),
                None => None,
            };
            let length = tokens.is_some_and(|n| n >= params.max_tokens);
            Ok(Completion {
                text,
                finish_reason: Some(if length { "length" } else { "stop" }.to_string()),
                prompt_tokens: None,
                completion_tokens: tokens.map(|n| n as u64),
            })
        })
    }
    fn model(&self) -> String {
        self.name.clone()
    }
}

/// The request body (OpenAI's; unknown fields are ignored, as OpenAI-compatible servers do).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub(crate) struct ChatBody {
    #[serde(default)]
    pub(crate) model: Option<String>,
    pub(crate) messages: Vec<ChatMessage>,
    #[serde(default)]
    pub(crate) stream: bool,
    /// The profile's user.
    pub(crate) user: Option<String>,
    pub(crate) max_tokens: Option<usize>,
    pub(crate) max_completion_tokens: Option<usize>,
    pub(crate) temperature: Option<f64>,
    pub(crate) top_p: Option<f64>,
    pub(crate) seed: Option<u64>,
    pub(crate) pgraphrag: Option<ChatOptions>,
}

/// One message: `role` (system, developer, user, assistant) and `content` (a string or a
/// list of `{"type": "text", "text"}` parts).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub(crate) struct ChatMessage {
    pub(crate) role: String,
    #[schema(value_type = Object)]
    pub(crate) content: Value,
}

/// `"pgraphrag": {...}` in a chat body (`extra_body` in the `openai` SDK).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChatOptions {
    pub(crate) item: Option<String>,
    #[serde(default)]
    pub(crate) scope: crate::api::ScopeName,
    pub(crate) k: Option<usize>,
    #[serde(default)]
    pub(crate) retriever: crate::api::RetrieverName,
    pub(crate) task: Option<String>,
}

impl ChatMessage {
    /// The text of a message (a string, or OpenAI's list of `{"type": "text", "text"}` parts).
    pub(crate) fn text(&self) -> Result<String, ApiError> {
        match &self.content {
            Value::String(s) => Ok(s.clone()),
            Value::Array(parts) => Ok(parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")),
            Value::Null => Ok(String::new()),
            _ => Err(ApiError::bad_request(
                "a message's content must be a string or a list of text parts",
            )),
        }
    }
}

impl ChatBody {
    /// The generation parameters asked for.
    pub(crate) fn params(&self) -> Result<GenParams, ApiError> {
        let mut p = GenParams::default();
        if let Some(n) = self.max_completion_tokens.or(self.max_tokens) {
            p.max_tokens = n;
        }
        if let Some(t) = self.temperature {
            if !(t.is_finite() && (0.0..=2.0).contains(&t)) {
                return Err(ApiError::bad_request("temperature must be in [0, 2]"));
            }
            p.temperature = t;
        }
        if let Some(t) = self.top_p {
            if !(t > 0.0 && t <= 1.0) {
                return Err(ApiError::bad_request("top_p must be in (0, 1]"));
            }
            p.top_p = Some(t);
        }
        if let Some(s) = self.seed {
            p.seed = s;
        }
        Ok(p)
    }

    /// The prompt: a system message with the retrieved documents, then the conversation.
    pub(crate) fn prompt(&self, entries: &[EntryOut]) -> Result<Prompt, ApiError> {
        let mut context = String::from(
            "Use these documents to personalize your answer to the user. The user's own \
             documents show their interests and style; other users' documents are about the \
             same item.\n",
        );
        for e in entries {
            let who = if e.side == "user" {
                "The user"
            } else {
                "Another user"
            };
            let about = e
                .item
                .as_deref()
                .map(|i| format!(" about {i}"))
                .unwrap_or_default();
            let title = e
                .title
                .as_deref()
                .map(|t| format!("{t}: "))
                .unwrap_or_default();
            context.push_str(&format!("- {who} wrote{about}: {title}{}\n", e.text));
        }
        let mut messages = vec![Message {
            role: Role::System,
            content: context,
        }];
        for m in &self.messages {
            let role = match m.role.as_str() {
                "system" | "developer" => Role::System,
                "user" => Role::User,
                "assistant" => Role::Assistant,
                other => {
                    return Err(ApiError::bad_request(format!(
                        "unknown message role {other:?} (system, user or assistant)"
                    )));
                }
            };
            messages.push(Message {
                role,
                content: m.text()?,
            });
        }
        Ok(Prompt::Chat(messages))
    }
}

/// The `pgraphrag` field of an answer: the documents the answer used.
pub(crate) fn used(entries: &[EntryOut], generation: u64) -> Value {
    json!({
        "generation": generation,
        "documents": entries.iter().map(|e| json!({
            "user": e.user, "doc": e.doc, "item": e.item, "score": e.score, "side": e.side,
        })).collect::<Vec<_>>(),
    })
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A whole (non-streamed) answer, with `usage` where the backend counted tokens.
pub(crate) fn answer(model: &str, c: Completion, pgraphrag: Value) -> Response {
    let id = format!("chatcmpl-{}", now());
    let mut body = json!({
        "id": id,
        "object": "chat.completion",
        "created": now(),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": c.text},
            "finish_reason": c.finish_reason.as_deref().unwrap_or("stop"),
        }],
        "pgraphrag": pgraphrag,
    });
    if let (Some(p), Some(n)) = (c.prompt_tokens, c.completion_tokens) {
        body["usage"] = json!({"prompt_tokens": p, "completion_tokens": n, "total_tokens": p + n});
    }
    axum::Json(body).into_response()
}

/// A streamed answer: server-sent events of `chat.completion.chunk`s, then `[DONE]`.
pub(crate) fn streamed(model: String, deltas: Deltas, pgraphrag: Value) -> Response {
    let id = format!("chatcmpl-{}", now());
    let created = now();
    let chunk = move |delta: Value, finish: Option<&str>, extra: Option<&Value>| {
        let mut c = json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let Some(x) = extra {
            c["pgraphrag"] = x.clone();
        }
        Event::default().data(c.to_string())
    };
    let first = chunk(
        json!({"role": "assistant", "content": ""}),
        None,
        Some(&pgraphrag),
    );
    let chunk2 = chunk.clone();
    let finish = Arc::new(std::sync::Mutex::new(None::<String>));
    let seen = Arc::clone(&finish);
    let body = deltas.filter_map(move |d| {
        let event =
            match d {
                Ok(Delta::Text(text)) => Some(chunk2(json!({"content": text}), None, None)),
                Ok(Delta::Finish(reason)) => {
                    *seen.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
                    None
                }
                Err(e) => Some(Event::default().data(
                    json!({"error": {"code": "backend", "message": e.to_string()}}).to_string(),
                )),
            };
        std::future::ready(event)
    });
    let last = stream::once(async move {
        let reason = finish.lock().unwrap_or_else(|e| e.into_inner()).take();
        chunk(json!({}), Some(reason.as_deref().unwrap_or("stop")), None)
    });
    let events = stream::once(async move { first })
        .chain(body)
        .chain(last)
        .chain(stream::once(async { Event::default().data("[DONE]") }))
        .map(Ok::<_, std::convert::Infallible>);
    Sse::new(events).into_response()
}
