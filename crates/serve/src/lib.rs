#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-serve
//!
//! The personalization service: [`pgraphrag_retrieval::live::ProfileIndex`] over HTTP.
//! Documents are written with `PUT`, erased with `DELETE`, and `POST /v1/context` answers a
//! target's ranked context (and the paper's prompt) from the very next read; `POST
//! /v1/chat/completions` is OpenAI-compatible and personalizes a chat with the user's
//! context. Every tenant (a table of the key file, [`Keys`]) has its own index: a tenant sees
//! only its own users, and the neighbour scope never crosses tenants.
//!
//! Embedded mode keeps every document in one SQLite file ([`store::Store`]; a write is
//! acknowledged once committed with `synchronous = FULL`) and rebuilds the indexes from it at
//! start. With the feature `postgres`, `postgres::PgDocuments` keeps them in PostgreSQL (one
//! server, or a coordinator with shard servers) instead, shared by several processes that
//! follow each other's writes; with the feature `jetstream` as well, their task summaries can be
//! made by workers on a shared JetStream work queue ([`ServiceOptions`]'s `summary_queue`).
//! The routes and their bodies are in `docs/serve.md`.
//!
//! ```
//! use pgraphrag_serve::{Keys, Service, ServiceOptions, store::Store};
//! let keys = Keys::parse("[tenants.acme]\nkeys = [\"acme-secret-1\"]\n", "KEYS.toml").unwrap();
//! let service = Service::new(keys, Store::in_memory().unwrap(), ServiceOptions::default()).unwrap();
//! let app = pgraphrag_serve::router(service); // an axum Router: serve it with axum::serve
//! # let _ = app;
//! ```
#![deny(missing_docs)]

pub mod api;
mod app;
mod chat;
mod error;
mod follow;
mod keys;
pub mod metrics;
mod middleware;
pub mod openapi;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub mod postgres;
mod routes;
mod service;
pub mod store;
pub mod summaries;

pub use app::router;
pub use chat::{Backend, ChatBackend, Delta, Deltas};
pub use error::{Error, Result};
pub use keys::Keys;
/// A backend's answer (the same type as `pgraphrag-llm`'s OpenAI client's).
pub use pgraphrag_llm::Completion;
pub use service::{Service, ServiceOptions, Tenant};
pub use summaries::SummaryOptions;
#[cfg(feature = "jetstream")]
#[cfg_attr(docsrs, doc(cfg(feature = "jetstream")))]
pub use summaries::SummaryQueue;

/// Serves `service` on `listener` until `shutdown` resolves, then finishes the requests in
/// flight (every acknowledged write is already durable).
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Service,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    axum::serve(listener, router(service))
        .with_graceful_shutdown(shutdown)
        .await?;
    Ok(())
}

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
