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
    /// The embedding cache could not be opened, read or written (feature `dense`).
    #[cfg(feature = "dense")]
    #[error(transparent)]
    Store(Box<pgraphrag_store::Error>),
    /// The embedding cache holds a row this model cannot use (a damaged vector, another
    /// dimension).
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
    // --- live index ---
    /// A document or request field that must not be empty was empty.
    #[error("{what}: the field `{field}` is empty; give it a non-empty value")]
    EmptyField {
        /// The field.
        field: &'static str,
        /// Which document or request (e.g. `document "d1" of user "ann"`).
        what: String,
    },
    /// A rating that is not a finite number inside the index's rating range.
    #[error(
        "document {doc:?} of user {user:?}: rating {value} is not a finite number in \
         [{min}, {max}]; send a number in the range or leave the rating out"
    )]
    BadRating {
        /// The document's user.
        user: String,
        /// The document id.
        doc: String,
        /// The rating given.
        value: f64,
        /// The smallest rating allowed.
        min: f64,
        /// The largest rating allowed.
        max: f64,
    },
    /// One batch named the same document twice.
    #[error(
        "document {doc:?} of user {user:?} appears twice in one batch; send each document once"
    )]
    DuplicateDocument {
        /// The user.
        user: String,
        /// The document id.
        doc: String,
    },
    /// `k = 0` asked for a ranking of no entries.
    #[error("k = 0 asks for no entries; ask for at least one (or use no scope)")]
    ZeroK,
    /// The user has no document in the index.
    #[error("user {user:?} has no document in the index")]
    UnknownUser {
        /// The user.
        user: String,
    },
    /// The item has no document in the index.
    #[error("item {item:?} has no document in the index")]
    UnknownItem {
        /// The item.
        item: String,
    },
    /// The document is not in the index.
    #[error("user {user:?} has no document {doc:?}")]
    UnknownDocument {
        /// The user.
        user: String,
        /// The document id.
        doc: String,
    },
    /// The neighbour scope was asked for without a target item.
    #[error("the neighbour scope ranks other users' documents of the target item; name the item")]
    MissingItem,
    /// Dense or hybrid retrieval was asked of an index built without an encoder.
    #[error(
        "{retriever} retrieval needs a dense encoder, and this index has none; build it with \
         an encoder or ask for bm25"
    )]
    NoEncoder {
        /// `"dense"` or `"hybrid"`.
        retriever: &'static str,
    },
    /// The encoder failed, or returned vectors of the wrong shape.
    #[error("encoding {what}: {message}")]
    Encode {
        /// What was being encoded.
        what: String,
        /// What went wrong.
        message: String,
    },
    // --- token graph ---
    /// A [`crate::token_graph::TokenGraph`] cannot hold more reviews (u32 review ids).
    #[error("the token graph is full: at most {max} reviews (u32 review ids); split the corpus")]
    GraphFull {
        /// The limit.
        max: usize,
    },
}

#[cfg(feature = "dense")]
impl From<pgraphrag_store::Error> for Error {
    fn from(e: pgraphrag_store::Error) -> Self {
        Error::Store(Box::new(e))
    }
}

impl From<Error> for pgraphrag_core::Error {
    fn from(e: Error) -> Self {
        pgraphrag_core::Error::backend(e)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
