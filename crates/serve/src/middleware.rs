//! The middleware around the routes: the announced body size, metrics and logs, the key
//! check and the per-key rate limit.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::ApiError;
use crate::service::Service;

/// The tenant a request's key belongs to (set by the key check).
#[derive(Debug, Clone)]
pub(crate) struct TenantName(pub(crate) String);

/// A body announced (`Content-Length`) over `max` bytes is refused before it is read.
pub(crate) async fn announced_size(req: Request, next: Next, max: usize) -> Response {
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
pub(crate) async fn measure(State(s): State<Service>, req: Request, next: Next) -> Response {
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
pub(crate) async fn authenticate(
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
