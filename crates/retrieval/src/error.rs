//! The error type of `pgraphrag-retrieval`. Each module adds its own variants here.

/// Everything that can go wrong in retrieval.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller passed something unusable.
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

impl From<Error> for pgraphrag_core::Error {
    fn from(e: Error) -> Self {
        pgraphrag_core::Error::backend(e)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
