use std::path::PathBuf;

/// Errors of `pgraphrag-eval`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The SQLite generation cache failed.
    #[error(
        "generation cache {path}: {source} (delete the file to start afresh, or check permissions and free disk space)"
    )]
    Cache {
        /// The cache file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A generator failed on one prompt.
    #[error("generation failed for user {user_id} ({config}): {source}")]
    Generation {
        /// The user whose prompt failed.
        user_id: String,
        /// The grid configuration (`mode_k`).
        config: String,
        /// The generator's error.
        #[source]
        source: pgraphrag_core::Error,
    },
    /// A scorer failed.
    #[error("scoring {config}: {message}")]
    Scoring {
        /// The grid configuration (`mode_k`).
        config: String,
        /// What went wrong.
        message: String,
    },
    /// The caller passed something unusable.
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for pgraphrag_core::Error {
    fn from(e: Error) -> Self {
        pgraphrag_core::Error::backend(e)
    }
}
