use std::path::PathBuf;

/// Errors of `pgraphrag-stages`. Each names the file, user, item or field involved; the
/// underlying error is the [`source`](std::error::Error::source), never repeated in the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The summary store failed: opening it (not SQLite, another kind of store, another
    /// schema version, or no permission) or a statement on it.
    #[error(transparent)]
    Store(Box<pgraphrag_store::Error>),
    /// The store holds summaries, but none of this (model, version): most likely the wrong
    /// `--store` file, another model file, or changed summarizer settings.
    #[error(
        "summary store {path} holds no summaries of model {model:?} with version {version:?}; it holds {holds}"
    )]
    OtherConfig {
        /// The store file.
        path: PathBuf,
        /// The model id asked for.
        model: String,
        /// The summarizer version asked for.
        version: String,
        /// What the store holds: `N of model M version V`, joined by `; `.
        holds: String,
    },
    /// A profile item lacks a field its entry format needs.
    #[error("profile item {item:?} has no field `{field}` (a {format} item has {expected})")]
    MissingField {
        /// The item's id.
        item: String,
        /// The missing field.
        field: &'static str,
        /// The entry format (a LaMP task's name, or e.g. `product-review`).
        format: &'static str,
        /// The fields the format needs, comma-separated.
        expected: String,
    },
    /// Something about one user failed (the source says what).
    #[error("user {user:?}")]
    User {
        /// The user key (the question's `user_id`, else its `id`).
        user: String,
        /// What failed.
        #[source]
        source: Box<Error>,
    },
    /// The summarizer (its model or its token counter) failed for one user.
    #[error("summarising user {user:?}")]
    Summarize {
        /// The user key.
        user: String,
        /// The summarizer's error.
        #[source]
        source: pgraphrag_core::Error,
    },
    /// Two questions of one input share a user key but carry different profiles.
    #[error(
        "questions {first:?} and {second:?} both belong to user {user:?} but carry different profiles (one summary per user: summarise per question, `SummaryScope::Question` / `--summary-scope question`)"
    )]
    ConflictingProfiles {
        /// The user key.
        user: String,
        /// The first question's id.
        first: String,
        /// The second question's id.
        second: String,
    },
    /// Writing an export file failed (the source names the file).
    #[error("exporting the summaries")]
    Export {
        /// The write error.
        #[source]
        source: pgraphrag_data::Error,
    },
    /// The caller passed something unusable.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A multistage stage's model, retriever or encoder failed (the source says how).
    #[error("multistage {stage} failed")]
    Stage {
        /// The stage: `ranking`, `summarization`, `synthesis`, `snippet similarity`.
        stage: &'static str,
        /// The underlying error.
        #[source]
        source: pgraphrag_core::Error,
    },
    /// A ranker's retriever returned an unusable ranking (an index out of range or twice, a
    /// non-finite score).
    #[error("multistage ranking: the retriever {0}")]
    Ranking(String),
    /// A snippet similarity returned unusable scores (a NaN or `+∞`, or the wrong number).
    #[error("summary weak label: {0}")]
    Similarity(String),
    /// Author-distinction pairs cannot be drawn from the eligible documents.
    #[error("author distinction: {0}")]
    AuthorPairs(String),
    /// Something about one multistage example failed (the source says what).
    #[error("example {id:?}")]
    Example {
        /// The example's id.
        id: String,
        /// What failed.
        #[source]
        source: Box<Error>,
    },
    /// Writing a training-records file failed (the source names the file).
    #[error("writing the training records")]
    WriteRecords {
        /// The write error.
        #[source]
        source: pgraphrag_data::Error,
    },
}

impl Error {
    /// This error, about the multistage example `id`.
    ///
    /// ```
    /// let e = pgraphrag_stages::Error::InvalidInput("empty".into()).for_example("m/1");
    /// assert_eq!(e.to_string(), "example \"m/1\"");
    /// ```
    pub fn for_example(self, id: impl Into<String>) -> Error {
        Error::Example {
            id: id.into(),
            source: Box::new(self),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<pgraphrag_store::Error> for Error {
    fn from(e: pgraphrag_store::Error) -> Self {
        Error::Store(Box::new(e))
    }
}
