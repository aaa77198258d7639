/// Errors of `pgraphrag-prompt`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A mode name was not one of `none`, `random`, `user`, `neighbor`, `both`.
    #[error("unknown retrieval mode {0:?}: expected one of none, random, user, neighbor, both")]
    UnknownMode(String),
    /// A task name was not recognised.
    #[error(
        "unknown task {0:?}: expected text, title or rating (or PGraphRAG's reviewText, reviewTitle, reviewRating)"
    )]
    UnknownTask(String),
    /// A language name was not recognised.
    #[error("unknown prompt language {0:?}: expected en or pt")]
    UnknownLanguage(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for pgraphrag_core::Error {
    fn from(e: Error) -> Self {
        pgraphrag_core::Error::InvalidInput(e.to_string())
    }
}
