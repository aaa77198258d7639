//! The routes of the HTTP contract and the middleware around them (keys, rate limit,
//! metrics, body size, timeouts).

use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use pgraphrag_core::{Entry, Task};
use pgraphrag_prompt::pgraphrag::{Mode, PromptBuilder};
use pgraphrag_retrieval::live::{Context, ContextRequest, Document, RetrieverKind, Scope};

use crate::api::{
    ApiError, ApiJson, ContextAnswer, ContextBody, EntryOut, PutDocument, RetrieverName, ScopeName,
    SummaryOut, UserReceipt, WriteAnswer,
};
use crate::chat::{self, ChatBody};
use crate::service::{Service, Tenant};

/// The tenant a request's key belongs to (set by the key check).
#[derive(Debug, Clone)]
struct TenantName(String);

/// The service's routes: the HTTP contract of `docs/serve.md`.
pub fn router(service: Service) -> Router {
    let opts = &service.inner.opts;
    let (max_body, timeout) = (opts.max_body, opts.timeout);
    let api = Router::new()
        .route(
            "/v1/users/{user}/documents/{doc}",
            put(put_document).delete(delete_document),
        )
        .route("/v1/users/{user}", axum::routing::delete(delete_user))
        .route("/v1/context", post(context))
        .route("/v1/chat/completions", post(chat_completions))
        .route_layer(middleware::from_fn_with_state(
            service.clone(),
            authenticate,
        ));
    Router::new()
        .merge(api)
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .fallback(|| async { ApiError::not_found("no such route; see docs/serve.md") })
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            announced_size(req, next, max_body)
        }))
        .layer(middleware::from_fn_with_state(service.clone(), measure))
        .layer(middleware::from_fn(
            move |req: Request, next: Next| async move {
                match tokio::time::timeout(timeout, next.run(req)).await {
                    Ok(r) => r,
                    Err(_) => ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "timeout",
                        format!("the request took longer than {timeout:?}"),
                    )
                    .into_response(),
                }
            },
        ))
        .with_state(service)
}

/// A body announced (`Content-Length`) over `max` bytes is refused before it is read.
async fn announced_size(req: Request, next: Next, max: usize) -> Response {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match announced {
        Some(n) if n > max as u64 => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the body is {n} bytes; the server takes at most {max}"),
        )
        .into_response(),
        _ => next.run(req).await,
    }
}

/// Counts every answer by route and status, with its latency.
async fn measure(State(s): State<Service>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |m| m.as_str())
        .to_string();
    let method = req.method().to_string();
    let t = Instant::now();
    let resp = next.run(req).await;
    let (status, took) = (resp.status().as_u16(), t.elapsed());
    s.metrics().record(&route, &method, status, took);
    tracing::info!(
        route = %route,
        method = %method,
        status,
        micros = took.as_micros() as u64,
        "request"
    );
    resp
}

/// `Authorization: Bearer KEY` -> the key's tenant (401 otherwise), then its rate limit.
async fn authenticate(
    State(s): State<Service>,
    mut req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let key = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "send `Authorization: Bearer KEY` with a key of the server's key file",
            )
        })?;
    let tenant = s
        .inner
        .keys
        .tenant(key)
        .map(str::to_string)
        .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "unknown key"))?;
    if let Some(rate) = s.inner.opts.rate_per_key
        && !take_token(&s, key, rate)
    {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("more than {rate} requests per second with this key; slow down"),
        ));
    }
    req.extensions_mut().insert(TenantName(tenant));
    Ok(next.run(req).await)
}

/// A token bucket per key: `rate` tokens a second, at most one second's worth banked.
fn take_token(s: &Service, key: &str, rate: f64) -> bool {
    let Ok(mut buckets) = s.inner.buckets.lock() else {
        return true;
    };
    let now = Instant::now();
    let (tokens, last) = buckets.entry(key.to_string()).or_insert((rate, now));
    *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * rate).min(rate.max(1.0));
    *last = now;
    if *tokens >= 1.0 {
        *tokens -= 1.0;
        true
    } else {
        false
    }
}

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

async fn put_document(
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

async fn delete_document(
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

async fn delete_user(
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

async fn context(
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

async fn chat_completions(
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

async fn healthz(State(s): State<Service>) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({
        "status": "ok",
        "tenants": s.inner.keys.tenants().len(),
        "backend": s.inner.opts.backend.as_ref().map(|b| b.describe()),
        "encoder": s.inner.opts.encoder.is_some(),
    }))
}

async fn metrics(State(s): State<Service>) -> Response {
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
            "Users waiting for a summary recomputation.",
            vec![(String::new(), s.summary_queue_depth() as f64)],
        ),
    ]);
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        "text/plain; version=0.0.4".parse().expect("a valid header"),
    );
    (headers, text).into_response()
}
