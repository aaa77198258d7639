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
mod chat;
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

pub use chat::{Backend, ChatBackend, Delta, Deltas};
pub use keys::Keys;
/// A backend's answer (the same type as `pgraphrag-llm`'s OpenAI client's).
pub use pgraphrag_llm::Completion;
pub use routes::router;
pub use service::{Service, ServiceOptions, Tenant};
pub use summaries::SummaryOptions;
#[cfg(feature = "jetstream")]
#[cfg_attr(docsrs, doc(cfg(feature = "jetstream")))]
pub use summaries::SummaryQueue;

/// Errors of `pgraphrag-serve`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The key file is missing or wrong.
    #[error("key file {path}: {message}")]
    Keys {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// The store could not be opened, read or written.
    #[error("document store: {0}")]
    Store(String),
    /// The store cannot be reached now (its database server, or the shard server holding the
    /// data, is down): nothing was written; the same request may succeed once it is back.
    /// The HTTP answer is 503 `store_unavailable`.
    #[error("document store unavailable: {0}")]
    StoreUnavailable(String),
    /// The PostgreSQL document store refused a request (a bad URL or schema name, another
    /// schema version, a failed statement).
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(Box<crate::postgres::PgError>),
    /// The live index refused a write or a read.
    #[error(transparent)]
    Index(#[from] pgraphrag_retrieval::Error),
    /// A request that is well-formed JSON but unusable.
    #[error("{0}")]
    BadRequest(String),
    /// Chat completions without a generation backend.
    #[error(
        "no generation backend: start the server with --model GGUF or --openai-url URL to \
         answer chat completions (POST /v1/context works without one)"
    )]
    NoBackend,
    /// The generation backend failed.
    #[error("generation backend: {0}")]
    Backend(String),
    /// A stored document does not fit the index (a store written by another version).
    #[error("loading {what}: {source}")]
    Load {
        /// Which document.
        what: String,
        /// Why the index refused it.
        source: pgraphrag_retrieval::Error,
    },
    /// The summaries' JetStream work queue cannot be reached, set up or used with this store
    /// (feature `jetstream`).
    #[cfg(feature = "jetstream")]
    #[error("summary queue: {0}")]
    Queue(#[from] pgraphrag_store::queue::Error),
    /// The server could not listen or serve.
    #[error("server: {0}")]
    Io(#[from] std::io::Error),
}

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

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
