//! The handlers of the HTTP contract's routes (`crate::app::router` puts them together with
//! the middleware).

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use pgraphrag_core::{Entry, Task};
use pgraphrag_prompt::pgraphrag::{Mode, PromptBuilder};
use pgraphrag_retrieval::live::{Context, ContextRequest, Document, RetrieverKind, Scope};

use crate::api::{
    ApiError, ApiJson, ContextAnswer, ContextBody, EntryOut, PutDocument, RetrieverName, ScopeName,
    SummaryOut, UserReceipt, WriteAnswer,
};
use crate::chat::{self, ChatBody};
use crate::middleware::TenantName;
use crate::service::{Service, Tenant};

fn tenant<'a>(s: &'a Service, req_tenant: &TenantName) -> Result<&'a Tenant, ApiError> {
    s.tenant(&req_tenant.0)
        .ok_or_else(|| ApiError::internal("the key's tenant has no index"))
}

/// Runs blocking index and store work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, crate::Error> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("a worker failed: {e}")))?
        .map_err(ApiError::from)
}

fn parse_time(t: Option<&str>) -> Result<Option<i64>, ApiError> {
    t.map(|t| {
        time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
            .map(|d| d.unix_timestamp())
            .map_err(|e| ApiError::bad_request(format!("time {t:?} is not an RFC 3339 time: {e}")))
    })
    .transpose()
}

/// Creates or replaces a document (idempotent); visible on the very next read.
#[utoipa::path(put, path = "/v1/users/{user}/documents/{doc}", tag = "documents",
    params(("user" = String, Path, description = "The user"), ("doc" = String, Path, description = "The document id")),
    request_body = PutDocument,
    responses(
        (status = 200, description = "Stored durably and published", body = WriteAnswer),
        (status = 400, description = "Bad input: what was wrong", body = crate::api::ErrorBody),
        (status = 401, description = "A missing or unknown key", body = crate::api::ErrorBody),
        (status = 413, description = "A body over the limit", body = crate::api::ErrorBody),
        (status = 429, description = "Over the key's rate", body = crate::api::ErrorBody),
        (status = 503, description = "The store is unavailable or the request timed out; retry", body = crate::api::ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn put_document(
    State(s): State<Service>,
    axum::Extension(t): axum::Extension<TenantName>,
    Path((user, doc)): Path<(String, String)>,
    ApiJson(body): ApiJson<PutDocument>,
) -> Result<axum::Json<WriteAnswer>, ApiError> {
    let time = parse_time(body.time.as_deref())?;
    let document = Document {
        user,
        id: doc,
        item: body.item,
        title: body.title,
        text: body.text,
        rating: body.rating,
        time,
    };
    tenant(&s, &t)?;
    let written = blocking(move || {
        let tn = s.tenant(&t.0).expect("checked above");
        s.put(tn, &t.0, document)
    })
    .await?;
    Ok(axum::Json(WriteAnswer {
        generation: written.generation,
    }))
}

/// Deletes one document.
#[utoipa::path(delete, path = "/v1/users/{user}/documents/{doc}", tag = "documents",
    params(("user" = String, Path, description = "The user"), ("doc" = String, Path, description = "The document id")),
    responses(
        (status = 200, description = "Deleted", body = WriteAnswer),
        (status = 404, description = "No such document", body = crate::api::ErrorBody),
        (status = 400, description = "Bad input: what was wrong", body = crate::api::ErrorBody),
        (status = 401, description = "A missing or unknown key", body = crate::api::ErrorBody),
        (status = 413, description = "A body over the limit", body = crate::api::ErrorBody),
        (status = 429, description = "Over the key's rate", body = crate::api::ErrorBody),
        (status = 503, description = "The store is unavailable or the request timed out; retry", body = crate::api::ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn delete_document(
    State(s): State<Service>,
    axum::Extension(t): axum::Extension<TenantName>,
    Path((user, doc)): Path<(String, String)>,
) -> Result<axum::Json<WriteAnswer>, ApiError> {
    tenant(&s, &t)?;
    let generation = blocking(move || {
        let tn = s.tenant(&t.0).expect("checked above");
        s.delete(tn, &t.0, &user, &doc)
    })
    .await?;
    Ok(axum::Json(WriteAnswer { generation }))
}

/// Erases a user's documents and everything derived from them.
#[utoipa::path(delete, path = "/v1/users/{user}", tag = "documents",
    params(("user" = String, Path, description = "The user")),
    responses(
        (status = 200, description = "Erased: a receipt of counts", body = UserReceipt),
        (status = 404, description = "No such user", body = crate::api::ErrorBody),
        (status = 400, description = "Bad input: what was wrong", body = crate::api::ErrorBody),
        (status = 401, description = "A missing or unknown key", body = crate::api::ErrorBody),
        (status = 413, description = "A body over the limit", body = crate::api::ErrorBody),
        (status = 429, description = "Over the key's rate", body = crate::api::ErrorBody),
        (status = 503, description = "The store is unavailable or the request timed out; retry", body = crate::api::ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn delete_user(
    State(s): State<Service>,
    axum::Extension(t): axum::Extension<TenantName>,
    Path(user): Path<String>,
) -> Result<axum::Json<UserReceipt>, ApiError> {
    tenant(&s, &t)?;
    let u = user.clone();
    let (r, summary) = blocking(move || {
        let tn = s.tenant(&t.0).expect("checked above");
        s.delete_user(tn, &t.0, &u)
    })
    .await?;
    Ok(axum::Json(UserReceipt {
        user,
        documents: r.documents,
        token_lists: r.token_lists,
        embeddings: r.embeddings,
        summaries: usize::from(summary),
        // The service caches no generations (every chat completion is generated afresh).
        cached_generations: 0,
        generation: r.generation,
    }))
}

fn request(
    user: String,
    item: Option<String>,
    query: String,
    scope: ScopeName,
    k: usize,
    retriever: RetrieverName,
) -> ContextRequest {
    ContextRequest {
        user,
        item,
        query,
        scope: match scope {
            ScopeName::None => None,
            ScopeName::User => Some(Scope::User),
            ScopeName::Neighbor => Some(Scope::Neighbor),
            ScopeName::Both => Some(Scope::Both),
        },
        k,
        retriever: match retriever {
            RetrieverName::Bm25 => RetrieverKind::Bm25,
            RetrieverName::Dense => RetrieverKind::Dense,
            RetrieverName::Hybrid => RetrieverKind::Hybrid,
        },
    }
}

fn entries(ctx: &Context) -> Vec<EntryOut> {
    let out = |h: &pgraphrag_retrieval::live::Hit, side| EntryOut {
        user: h.doc.user().to_string(),
        doc: h.doc.id().to_string(),
        item: h.doc.item().map(str::to_string),
        title: h.doc.title().map(str::to_string),
        text: h.doc.text().to_string(),
        rating: h.doc.rating(),
        score: h.score,
        side,
    };
    ctx.user
        .iter()
        .map(|h| out(h, "user"))
        .chain(ctx.neighbors.iter().map(|h| out(h, "neighbor")))
        .collect()
}

fn task(name: &str) -> Result<Task, ApiError> {
    name.parse::<Task>()
        .map_err(|e| ApiError::bad_request(e.to_string()))
}

/// The paper's prompt quotes the review being written: its text (title task), its title
/// (text task), or both (rating task). A missing one would be quoted as Python's `None`.
fn check_target(task: Task, target: &crate::api::Target) -> Result<(), ApiError> {
    let need: &[(&str, bool)] = match task {
        Task::Title => &[("text", target.text.is_some())],
        Task::Text => &[("title", target.title.is_some())],
        Task::Rating => &[
            ("title", target.title.is_some()),
            ("text", target.text.is_some()),
        ],
    };
    match need.iter().find(|(_, present)| !present) {
        Some((field, _)) => Err(ApiError::bad_request(format!(
            "task {task} quotes the review being written: send `target.{field}`"
        ))),
        None => Ok(()),
    }
}

fn mode(scope: ScopeName) -> Mode {
    match scope {
        ScopeName::None => Mode::None,
        ScopeName::User => Mode::User,
        ScopeName::Neighbor => Mode::Neighbor,
        ScopeName::Both => Mode::Both,
    }
}

/// A target's personalized context (and the paper's prompt for a task).
#[utoipa::path(post, path = "/v1/context", tag = "context",
    request_body = ContextBody,
    responses(
        (status = 200, description = "The ranked context", body = ContextAnswer),
        (status = 404, description = "An unknown user or item", body = crate::api::ErrorBody),
        (status = 400, description = "Bad input: what was wrong", body = crate::api::ErrorBody),
        (status = 401, description = "A missing or unknown key", body = crate::api::ErrorBody),
        (status = 413, description = "A body over the limit", body = crate::api::ErrorBody),
        (status = 429, description = "Over the key's rate", body = crate::api::ErrorBody),
        (status = 503, description = "The store is unavailable or the request timed out; retry", body = crate::api::ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn context(
    State(s): State<Service>,
    axum::Extension(t): axum::Extension<TenantName>,
    ApiJson(body): ApiJson<ContextBody>,
) -> Result<axum::Json<ContextAnswer>, ApiError> {
    let task = body.task.as_deref().map(task).transpose()?;
    let req = request(
        body.user,
        body.item,
        body.query,
        body.scope,
        body.k,
        body.retriever,
    );
    let tn = tenant(&s, &t)?;
    let ctx = tn.index.context(&req).map_err(crate::Error::from)?;
    let prompt = task
        .map(|task| {
            let target = body.target.unwrap_or_default();
            check_target(task, &target)?;
            let entry = Entry {
                author: req.user.clone(),
                item: req.item.clone().unwrap_or_default(),
                title: target.title,
                text: target.text,
                ..Default::default()
            };
            Ok::<_, ApiError>(PromptBuilder::new(task).build(
                &ctx.to_profile(&req, Some(entry)),
                mode(body.scope),
                req.k,
            ))
        })
        .transpose()?;
    let summary = tn.summary(&req.user).map(|s| SummaryOut {
        text: s.text,
        as_of_generation: s.as_of_generation,
    });
    Ok(axum::Json(ContextAnswer {
        entries: entries(&ctx),
        prompt,
        summary,
        generation: ctx.generation,
    }))
}

/// OpenAI-compatible chat completions, personalized with the user's context.
#[utoipa::path(post, path = "/v1/chat/completions", tag = "chat",
    request_body = ChatBody,
    responses(
        (status = 200, description = "OpenAI's `chat.completion` (or, with `stream`, server-sent `chat.completion.chunk`s then `[DONE]`), with a `pgraphrag` field listing the documents used", body = Object),
        (status = 502, description = "The generation backend failed", body = crate::api::ErrorBody),
        (status = 400, description = "Bad input: what was wrong", body = crate::api::ErrorBody),
        (status = 401, description = "A missing or unknown key", body = crate::api::ErrorBody),
        (status = 413, description = "A body over the limit", body = crate::api::ErrorBody),
        (status = 429, description = "Over the key's rate", body = crate::api::ErrorBody),
        (status = 503, description = "The store is unavailable or the request timed out; retry", body = crate::api::ErrorBody),
    ),
    security(("bearer" = [])))]
pub(crate) async fn chat_completions(
    State(s): State<Service>,
    axum::Extension(t): axum::Extension<TenantName>,
    ApiJson(body): ApiJson<ChatBody>,
) -> Result<Response, ApiError> {
    let backend = s
        .inner
        .opts
        .backend
        .clone()
        .ok_or_else(|| ApiError::from(crate::Error::NoBackend))?;
    let user = body
        .user
        .clone()
        .filter(|u| !u.trim().is_empty())
        .ok_or_else(|| {
            ApiError::bad_request("name the profile's user in the body's `user` field")
        })?;
    let query = body
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(|m| m.text())
        .transpose()?
        .ok_or_else(|| ApiError::bad_request("the messages have no user message"))?;
    let o = body.pgraphrag.clone().unwrap_or_default();
    if let Some(name) = o.task.as_deref() {
        task(name)?;
    }
    let req = request(user, o.item, query, o.scope, o.k.unwrap_or(4), o.retriever);
    let tn = tenant(&s, &t)?;
    let ctx = tn.index.context(&req).map_err(crate::Error::from)?;
    let entries = entries(&ctx);
    let prompt = body.prompt(&entries)?;
    let params = body.params()?;
    let used = chat::used(&entries, ctx.generation);
    let model = body.model.clone().unwrap_or_else(|| backend.describe());
    if body.stream {
        let deltas = backend
            .stream(prompt, params)
            .await
            .map_err(|e| ApiError::from(crate::Error::Backend(e.to_string())))?;
        Ok(chat::streamed(model, deltas, used))
    } else {
        let completion = backend
            .complete(prompt, params)
            .await
            .map_err(|e| ApiError::from(crate::Error::Backend(e.to_string())))?;
        Ok(chat::answer(&model, completion, used))
    }
}

/// Liveness and configuration.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "`{\"status\": \"ok\", ...}`", body = Object)))]
pub(crate) async fn healthz(State(s): State<Service>) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({
        "status": "ok",
        "tenants": s.inner.keys.tenants().len(),
        "backend": s.inner.opts.backend.as_ref().map(|b| b.describe()),
        "encoder": s.inner.opts.encoder.is_some(),
    }))
}

/// Prometheus metrics (text format).
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Requests, latency histograms, index sizes, queue depth", content_type = "text/plain")))]
pub(crate) async fn metrics(State(s): State<Service>) -> Response {
    // The shared queue's depth is one request away: bounded, NaN when it does not answer.
    let depth = match tokio::time::timeout(Duration::from_secs(2), s.queue_depth()).await {
        Ok(Ok(n)) => n as f64,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "metrics: reading the summary queue's depth");
            f64::NAN
        }
        Err(_) => {
            tracing::warn!("metrics: the summary queue's depth did not come within 2 s");
            f64::NAN
        }
    };
    let tenants = s.inner.keys.tenants();
    let gauge = |f: &dyn Fn(&Tenant) -> f64| -> Vec<(String, f64)> {
        tenants
            .iter()
            .filter_map(|t| s.tenant(t).map(|tn| (format!("{{tenant=\"{t}\"}}"), f(tn))))
            .collect()
    };
    let snap = |tn: &Tenant| tn.index.snapshot();
    let text = s.metrics().render(&[
        (
            "pgraphrag_documents",
            "Documents in the index.",
            gauge(&|tn| snap(tn).num_documents() as f64),
        ),
        (
            "pgraphrag_users",
            "Users with a document.",
            gauge(&|tn| snap(tn).num_users() as f64),
        ),
        (
            "pgraphrag_generation",
            "The index's generation.",
            gauge(&|tn| snap(tn).generation() as f64),
        ),
        (
            "pgraphrag_queue_depth",
            "Users waiting for a summary recomputation (with a summary queue: its units not \
             yet delivered to a worker, shared by every process).",
            vec![(String::new(), depth)],
        ),
    ]);
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        "text/plain; version=0.0.4".parse().expect("a valid header"),
    );
    (headers, text).into_response()
}
