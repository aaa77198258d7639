//! The service's router: the routes of the HTTP contract (`crate::routes`), the OpenAPI
//! document's route and the middleware around them (keys, rate limit, metrics, body size,
//! timeouts).

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::routing::{get, post, put};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use crate::api::ApiError;
use crate::middleware::{authenticate, json_errors, measure};
use crate::openapi::openapi;
use crate::routes::{
    chat_completions, context, delete_document, delete_user, healthz, metrics, put_document,
};
use crate::service::Service;

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
        .route("/openapi.json", get(openapi))
        .route("/metrics", get(metrics))
        .fallback(|| async { ApiError::not_found("no such route; see docs/serve.md") })
        // tower-http's limit (an announced body over the limit is refused before it is read,
        // a streamed one when it passes the limit) instead of axum's default 2 MB.
        .layer(DefaultBodyLimit::disable())
        .layer(RequestBodyLimitLayer::new(max_body))
        .layer(middleware::from_fn_with_state(service.clone(), measure))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            timeout,
        ))
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            json_errors(req, next, max_body, timeout)
        }))
        .with_state(service)
}
