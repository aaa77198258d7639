//! The service's error, and the one conversion of the PostgreSQL store's errors into it.

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

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(feature = "postgres")]
impl From<crate::postgres::PgError> for Error {
    fn from(e: crate::postgres::PgError) -> Self {
        if e.is_unavailable() {
            Error::StoreUnavailable(e.to_string())
        } else {
            Error::Postgres(Box::new(e))
        }
    }
}
