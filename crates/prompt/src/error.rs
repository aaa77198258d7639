/// Errors of `pgraphrag-prompt`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A mode name was not one of `none`, `random`, `user`, `neighbor`, `both`.
    #[error("unknown retrieval mode {0:?}: expected one of none, random, user, neighbor, both")]
    UnknownMode(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for pgraphrag_core::Error {
    fn from(e: Error) -> Self {
        pgraphrag_core::Error::InvalidInput(e.to_string())
    }
}
