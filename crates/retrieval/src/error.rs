//! The error type of `pgraphrag-retrieval`. Each module adds its own variants here.

/// Everything that can go wrong in retrieval.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller passed something unusable.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    // --- sparse (BM25) ---
    /// BM25 was asked to fit an empty corpus (rank_bm25 raises `ZeroDivisionError` computing
    /// `avgdl`). Rank at least one document, or treat an empty candidate list as "no result".
    #[error(
        "BM25 needs at least one document to fit; got an empty corpus (rank_bm25 would raise \
         ZeroDivisionError)"
    )]
    EmptyCorpus,
    /// Every document of the BM25 corpus is empty (rank_bm25 raises `ZeroDivisionError`
    /// computing the average idf).
    #[error(
        "BM25 corpus of {documents} documents has no tokens at all (every document tokenized to \
         nothing; rank_bm25 would raise ZeroDivisionError); check the tokenizer and the texts"
    )]
    EmptyVocabulary {
        /// How many (empty) documents the corpus had.
        documents: usize,
    },
    /// A document index passed to a fitted BM25 index is out of range.
    #[error("document index {index} is out of range for a BM25 index of {corpus_size} documents")]
    DocumentOutOfRange {
        /// The bad index.
        index: usize,
        /// Number of fitted documents.
        corpus_size: usize,
    },
    /// Documents passed alongside a fitted index do not match it in number.
    #[error("BM25 index was fitted on {fitted} documents but {given} were given")]
    CorpusMismatch {
        /// Number of fitted documents.
        fitted: usize,
        /// Number of documents given.
        given: usize,
    },
    /// A scorer produced NaN or infinity, which a `Retriever` may not return.
    #[error(
        "{what} produced a non-finite score {score} for document {index}; check the parameters \
         (e.g. k1 > 0, 0 <= b <= 1)"
    )]
    NonFiniteScore {
        /// The document.
        index: usize,
        /// The score.
        score: f64,
        /// Which scorer and parameters.
        what: String,
    },
    // --- dense (appended by the dense module) ---
    /// A dense model folder could not be loaded: a missing file, an unreadable or wrong
    /// `config.json`, weights that do not match the config, or a bad tokenizer file.
    #[error("dense model {path}: {message}")]
    Model {
        /// The model folder or file involved.
        path: std::path::PathBuf,
        /// What was wrong and what to do.
        message: String,
    },
    /// `pooler_output` was asked for but the checkpoint has no `pooler.dense.*` weights.
    #[error(
        "dense model {path}: the checkpoint has no pooler weights (pooler.dense.weight/bias), so \
         pooler_output cannot be computed; use mean pooling or a checkpoint with a pooler"
    )]
    MissingPooler {
        /// The model folder.
        path: std::path::PathBuf,
    },
    /// Tokenizing a text failed.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A tensor computation (candle) failed.
    #[error("dense model computation failed: {0}")]
    Compute(String),
    /// The embedding cache could not be opened, read or written.
    #[error("embedding cache {path}: {message}")]
    Cache {
        /// The cache file.
        path: std::path::PathBuf,
        /// What was wrong.
        message: String,
    },
    // --- profile (appended by the profile module) ---
    /// A retriever failed while ranking a user's profile.
    #[error("ranking the {side} profile of user {user:?} for item {item}")]
    Profile {
        /// `"user"`, `"neighbour"` or `"random"`.
        side: &'static str,
        /// The target user.
        user: String,
        /// The target item.
        item: String,
        /// The retriever's error.
        #[source]
        source: pgraphrag_core::Error,
    },
    // --- token graph ---
    /// A [`crate::token_graph::TokenGraph`] cannot hold more reviews (u32 review ids).
    #[error("the token graph is full: at most {max} reviews (u32 review ids); split the corpus")]
    GraphFull {
        /// The limit.
        max: usize,
    },
}

impl From<Error> for pgraphrag_core::Error {
    fn from(e: Error) -> Self {
        pgraphrag_core::Error::backend(e)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
