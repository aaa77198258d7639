//! The middleware around the routes: JSON bodies for tower-http's limit and timeout answers,
//! metrics and logs, the key check and the per-key rate limit.

use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::ApiError;
use crate::service::Service;

/// The tenant a request's key belongs to (set by the key check).
#[derive(Debug, Clone)]
pub(crate) struct TenantName(pub(crate) String);

/// Gives the answers of tower-http's body limit and timeout layers (a plain-text 413, an empty
/// 503) the service's JSON error body, saying what was wrong.
pub(crate) async fn json_errors(
    req: Request,
    next: Next,
    max: usize,
    timeout: Duration,
) -> Response {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let r = next.run(req).await;
    let json = r
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    match r.status() {
        _ if json => r,
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            match announced {
                Some(n) => format!("the body is {n} bytes; the server takes at most {max}"),
                None => format!("the body is over {max} bytes, the most the server takes"),
            },
        )
        .into_response(),
        StatusCode::SERVICE_UNAVAILABLE => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            format!("the request took longer than {timeout:?}"),
        )
        .into_response(),
        _ => r,
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
