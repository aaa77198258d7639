use std::path::PathBuf;

/// Errors of `pgraphrag-eval`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A store failed: opening it (not SQLite, another kind of store, another schema
    /// version, or no permission) or a statement on it (the generation cache's reads and writes).
    #[error(transparent)]
    Store(Box<pgraphrag_store::Error>),
    /// An output path was refused before anything was written (a link, a FIFO, a device, a
    /// folder; see [`pgraphrag_data::output`]).
    #[error(transparent)]
    Output(#[from] pgraphrag_data::OutputError),
    /// Reading or writing a file failed.
    #[error("cannot read or write {path}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A generator failed on one prompt.
    #[error("generation failed for user {user_id} ({config})")]
    Generation {
        /// The user whose prompt failed.
        user_id: String,
        /// The grid configuration (`mode_k`).
        config: String,
        /// The generator's error.
        #[source]
        source: pgraphrag_core::Error,
    },
    /// A split record has no target review.
    #[error("record {record} (user {user_id:?}) has an empty profile")]
    EmptyProfile {
        /// Index of the record in the split.
        record: usize,
        /// Its user id.
        user_id: String,
    },
    /// Ranking one user's profile failed.
    #[error("ranking record {record} (user {user_id:?})")]
    Ranking {
        /// Index of the record in the split.
        record: usize,
        /// Its user id.
        user_id: String,
        /// The ranker's error.
        #[source]
        source: Box<pgraphrag_retrieval::Error>,
    },
    /// A scorer failed.
    #[error("scoring {config}: {message}")]
    Scoring {
        /// The grid configuration (`mode_k`).
        config: String,
        /// What went wrong.
        message: String,
    },
    /// A resumable file was made with other settings than the run's: its settings manifest
    /// (`FILE.config.json`, see [`crate::RowsFile::resume`]) differs.
    #[error("{path} was made with other settings ({found}; now {expected})")]
    OtherSettings {
        /// The resumable file (not its manifest).
        path: PathBuf,
        /// The settings the file was made with, as `{:?}` shows them.
        found: String,
        /// The settings of this run, as `{:?}` shows them.
        expected: String,
    },
    /// A settings manifest that does not hold settings of the run's type (another program's
    /// file, or one edited by hand).
    #[error("{path} is not a settings manifest of this run ({problem})")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What the parser said.
        problem: String,
    },
    /// A whole line of a rows file that is not a row of the run's type.
    #[error("{path}:{line}: not a row of this run ({problem})")]
    RowsLine {
        /// The rows file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What the parser said.
        problem: String,
    },
    /// The caller passed something unusable.
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<pgraphrag_store::Error> for Error {
    fn from(e: pgraphrag_store::Error) -> Self {
        Error::Store(Box::new(e))
    }
}

impl Error {
    /// A [`pgraphrag_store::CachedError`] of a grid's generator: the generator's failure as
    /// [`Error::Generation`] for `user_id` and `config` (called only then), the cache's as
    /// [`Error::Store`].
    pub(crate) fn cached(
        e: pgraphrag_store::CachedError,
        user_id: impl FnOnce() -> String,
        config: impl FnOnce() -> String,
    ) -> Self {
        match e {
            pgraphrag_store::CachedError::Generator(source) => Error::Generation {
                user_id: user_id(),
                config: config(),
                source,
            },
            pgraphrag_store::CachedError::Cache(e) => e.into(),
        }
    }
}

impl From<Error> for pgraphrag_core::Error {
    fn from(e: Error) -> Self {
        pgraphrag_core::Error::backend(e)
    }
}
