//! What the job handlers share and nothing else: the jobs' error, the part of a unit a handler
//! reads ([`UnitRange`]), and the opening of their stores and models. A leaf of `jobs`: the
//! handlers import it, and it imports none of them.
use std::path::PathBuf;

/// Errors of the jobs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A payload is not a unit of a known job kind.
    #[error(
        "not a pgraphrag job unit ({reason}); was it submitted by another pgraphrag version? resubmit the job"
    )]
    BadUnit {
        /// What is wrong.
        reason: String,
    },
    /// A job specification or plan is unusable.
    #[error("invalid job: {0}")]
    InvalidJob(String),
    /// The job store could not be opened.
    #[error(transparent)]
    StoreOpen(Box<pgraphrag_store::Error>),
    /// The job store failed.
    #[error(
        "job store {path} failed (check permissions and free disk space; every finished unit stays stored)"
    )]
    Store {
        /// The file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// The store holds a job with this id but another specification.
    #[error(
        "job store {path}: job {job} is registered with another specification; use another store"
    )]
    JobMismatch {
        /// The job id.
        job: String,
        /// The store.
        path: PathBuf,
    },
    /// The store location is of a kind this build cannot open.
    #[error(
        "result store {store:?}: only SQLite files are supported by this build (pass a file path)"
    )]
    UnsupportedStore {
        /// The location as given.
        store: String,
    },
    /// An input file (a split, a texts file) cannot be read, or changed since the job was
    /// submitted.
    #[error("{path}: {reason}")]
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// An input file cannot be read or is not valid: the reader's error names the file and
    /// the record, line and field.
    #[error(transparent)]
    Data(Box<pgraphrag_data::Error>),
    /// A texts file (JSON lines) cannot be read or is not valid: the reader's error names the
    /// file, the line and the field.
    #[error(transparent)]
    Texts(Box<pgraphrag_data::JsonlError>),
    /// A job's profile store cannot be used (feature `postgres`).
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Profiles(Box<pgraphrag_eval::store::StoreError>),
    /// A job's work failed (ranking a user, say).
    #[error("job {job} unit {unit}")]
    Work {
        /// The job id.
        job: String,
        /// The unit.
        unit: u64,
        /// What failed.
        #[source]
        source: Box<pgraphrag_eval::Error>,
    },
    /// Summarising a unit's users failed (the summary store, or some users' summaries: a
    /// retry summarises only the users the store lacks).
    #[error("job {job} unit {unit}: {reason}")]
    Summarize {
        /// The job id.
        job: String,
        /// The unit.
        unit: u64,
        /// What failed.
        reason: String,
    },
    /// A job is not finished, so its result cannot be exported yet.
    #[error(
        "job {job} is not finished: {done} of {total} records stored (run `pgraphrag worker`, see `pgraphrag queue status`)"
    )]
    Incomplete {
        /// The job id.
        job: String,
        /// Records stored.
        done: u64,
        /// Records the job produces.
        total: u64,
    },
    /// Writing an exported file failed.
    #[error("cannot write {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The part of a unit a handler reads: the job, the unit, its range of items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UnitRange<'a> {
    /// The job id.
    pub job: &'a str,
    /// The unit number (0-based).
    pub unit: u64,
    /// First item (user index) of the unit.
    pub start: usize,
    /// One past its last item.
    pub end: usize,
}

/// Opens an artifact store (`what` names it in errors) at `location` with `open` (a store's
/// `open_location`: a file path, or a `postgres://` URL with the feature `postgres`; without
/// it a URL is [`Error::UnsupportedStore`]).
pub(super) fn open_artifact<T, E: std::error::Error + 'static>(
    location: &str,
    what: &str,
    open: impl FnOnce(&std::path::Path) -> std::result::Result<T, E>,
) -> Result<T> {
    let is_url = pgraphrag_store::is_postgres_url(location);
    #[cfg(not(feature = "postgres"))]
    if is_url {
        return Err(Error::UnsupportedStore {
            store: location.to_string(),
        });
    }
    open(std::path::Path::new(location)).map_err(|e| {
        #[cfg(feature = "postgres")]
        let shown = if is_url {
            pgraphrag_store::postgres::redact(location)
        } else {
            location.to_string()
        };
        #[cfg(not(feature = "postgres"))]
        let shown = location;
        Error::InvalidJob(format!(
            "{what} {shown}: {}",
            pgraphrag_core::error_chain(&e)
        ))
    })
}

/// Loads the GGUF model at `path` with `options` for a job (a missing file is
/// [`Error::Input`], a model that does not load [`Error::InvalidJob`]).
pub(super) fn load_gguf(
    path: &std::path::Path,
    options: pgraphrag_llm::GgufOptions,
) -> Result<pgraphrag_llm::GgufModel> {
    if !path.is_file() {
        return Err(Error::Input {
            path: path.to_path_buf(),
            reason: "model file not found (scripts/fetch-llms.sh --smollm-only fetches SmolLM2)"
                .into(),
        });
    }
    pgraphrag_llm::GgufModel::load(path, options).map_err(|e| {
        Error::InvalidJob(format!(
            "loading the model {}: {}",
            path.display(),
            pgraphrag_core::error_chain(&e)
        ))
    })
}
