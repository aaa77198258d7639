//! The HTTP contract's bodies, and errors as JSON.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// An error answer: an HTTP status and `{"error": {"code", "message"}}`.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The status.
    pub status: StatusCode,
    /// A stable, machine-readable code (`bad_request`, `not_found`, ...).
    pub code: &'static str,
    /// What was wrong, for people.
    pub message: String,
}

impl ApiError {
    /// An error with `status`, `code` and `message`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
    /// 400.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }
    /// 500 (a fault of the server, never of the request).
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

/// Every error's body: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable, machine-readable code (`bad_request`, `not_found`, `unauthorized`,
    /// `too_large`, `rate_limited`, `store_unavailable`, `timeout`, ...).
    pub code: String,
    /// What was wrong and what to do, for people.
    pub message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
            },
        };
        (self.status, axum::Json(body)).into_response()
    }
}

impl From<crate::Error> for ApiError {
    fn from(e: crate::Error) -> Self {
        use pgraphrag_retrieval::Error as R;
        match &e {
            crate::Error::Index(inner) => match inner {
                R::UnknownUser { .. } | R::UnknownItem { .. } | R::UnknownDocument { .. } => {
                    ApiError::not_found(e.to_string())
                }
                R::Encode { .. } | R::NonFiniteScore { .. } => ApiError::internal(e.to_string()),
                _ => ApiError::bad_request(e.to_string()),
            },
            crate::Error::BadRequest(_) => ApiError::bad_request(e.to_string()),
            crate::Error::NoBackend => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "no_backend", e.to_string())
            }
            // Nothing was written; the message says which server is down. Retrying is safe
            // (every write is idempotent).
            crate::Error::StoreUnavailable(_) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                format!("{e}; the request may be retried once the server is back"),
            ),
            crate::Error::Backend(_) => {
                ApiError::new(StatusCode::BAD_GATEWAY, "backend", e.to_string())
            }
            _ => ApiError::internal(e.to_string()),
        }
    }
}

/// `axum::Json` whose refusals are JSON errors saying what was wrong (a malformed body, an
/// unknown field, a body over the size limit: 413).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(ApiJson(v)),
            Err(rejection) => Err(rejected(rejection)),
        }
    }
}

fn rejected(r: JsonRejection) -> ApiError {
    let status = r.status();
    let text = r.body_text();
    if status == StatusCode::PAYLOAD_TOO_LARGE || text.contains("length limit") {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the body is over the server's limit: {text}"),
        );
    }
    match r {
        JsonRejection::MissingJsonContentType(_) => ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "content_type",
            "send the body as JSON with `Content-Type: application/json`",
        ),
        _ => ApiError::bad_request(format!("the JSON body is not usable: {text}")),
    }
}

/// `PUT /v1/users/{user}/documents/{doc}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutDocument {
    /// The body.
    pub text: String,
    /// A title.
    pub title: Option<String>,
    /// The item it is about.
    pub item: Option<String>,
    /// A rating.
    pub rating: Option<f64>,
    /// When it was written, RFC 3339.
    pub time: Option<String>,
}

/// A write's answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WriteAnswer {
    /// The generation that holds the write.
    pub generation: u64,
}

/// `DELETE /v1/users/{user}`'s receipt.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserReceipt {
    /// The user.
    pub user: String,
    /// Documents erased (from the index and the store).
    pub documents: usize,
    /// Token lists erased.
    pub token_lists: usize,
    /// Embeddings erased.
    pub embeddings: usize,
    /// Summaries erased.
    pub summaries: usize,
    /// Cached generations erased.
    pub cached_generations: usize,
    /// The generation without the user.
    pub generation: u64,
}

/// A scope by name: `none`, `user`, `neighbor` (or `neighbour`), `both`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScopeName {
    /// No retrieval.
    None,
    /// The user's own documents.
    User,
    /// Other users' documents of the item.
    #[serde(alias = "neighbour")]
    Neighbor,
    /// Both.
    #[default]
    Both,
}

/// A retriever by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RetrieverName {
    /// BM25.
    #[default]
    Bm25,
    /// Dense.
    Dense,
    /// Hybrid.
    Hybrid,
}

fn default_k() -> usize {
    5
}

/// `POST /v1/context`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextBody {
    /// The target user.
    pub user: String,
    /// The target item.
    pub item: Option<String>,
    /// The query.
    pub query: String,
    /// The scope (default both).
    #[serde(default)]
    pub scope: ScopeName,
    /// Entries per side (default 5).
    #[serde(default = "default_k")]
    pub k: usize,
    /// The retriever (default bm25).
    #[serde(default)]
    pub retriever: RetrieverName,
    /// A task (`text`, `title`, `rating`): the answer then carries the paper's prompt.
    pub task: Option<String>,
    /// The review being written, quoted by the prompt (its title for `text`, its text for
    /// `title` and `rating`).
    pub target: Option<Target>,
}

/// The review a prompt is for.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// Its title.
    pub title: Option<String>,
    /// Its text.
    pub text: Option<String>,
}

/// One entry of a context.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EntryOut {
    /// The author.
    pub user: String,
    /// The document id.
    pub doc: String,
    /// The item.
    pub item: Option<String>,
    /// The title.
    pub title: Option<String>,
    /// The text.
    pub text: String,
    /// The rating.
    pub rating: Option<f64>,
    /// The score.
    pub score: f64,
    /// `user` or `neighbor`.
    pub side: &'static str,
}

/// `POST /v1/context`'s answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ContextAnswer {
    /// The entries: the user side, then the neighbour side, each best first.
    pub entries: Vec<EntryOut>,
    /// The paper's prompt for the task, when a task was named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The user's last task summary, when one has been made (summaries are made in the
    /// background; a context never waits for one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<SummaryOut>,
    /// The generation the answer was computed from.
    pub generation: u64,
}

/// A user's task summary in a context answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SummaryOut {
    /// The summary.
    pub text: String,
    /// The index generation whose documents of the user it summarises.
    pub as_of_generation: u64,
}
