use std::path::PathBuf;

/// Everything that can go wrong loading the recommendation data or building rows from it.
/// Every file error names the file and the 1-based line (the header is line 1).
///
/// ```
/// use pgraphrag_recsys::RecboleError;
/// let e = pgraphrag_recsys::Ml1m::load(std::path::Path::new("no/such/dir")).unwrap_err();
/// assert!(matches!(e, pgraphrag_recsys::Error::Recbole(RecboleError::Io { .. })));
/// assert!(e.to_string().starts_with("cannot read no/such/dir"), "{e}");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The data crate's line and RecBole atomic-file reader failed: the file cannot be read,
    /// is cut short, a line is not UTF-8, the header lacks a column, or a line has the wrong
    /// number of fields. Each names the file and the line; the ML-1M readers of this crate
    /// report the same facts with the same variants.
    #[error(transparent)]
    Recbole(#[from] pgraphrag_data::RecboleError),
    /// The CSV reader failed on a record.
    #[error("{path}:{line}: malformed CSV: {message}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The line (0 when the reader gives none).
        line: u64,
        /// What the reader said.
        message: String,
    },
    /// A field's value cannot be read.
    #[error("{path}:{line}: field {field:?}: {value:?} is not {expected}")]
    Value {
        /// The file.
        path: PathBuf,
        /// The line.
        line: usize,
        /// The field.
        field: String,
        /// The value found.
        value: String,
        /// What it should be (`"an integer id"`, ...).
        expected: String,
    },
    /// An item id that the catalogue (the item file) does not hold.
    #[error("{path}:{line}: item {item} is not in the catalogue {catalogue}")]
    UnknownItem {
        /// The file that names the item.
        path: PathBuf,
        /// The line.
        line: usize,
        /// The item id.
        item: u32,
        /// The catalogue file.
        catalogue: PathBuf,
    },
    /// An id appears twice where it must be unique (an item file, a link file).
    #[error("{path}:{line}: {what} {id} appears again (first on line {first})")]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// The line of the repeat.
        line: usize,
        /// `"item"`, `"linked item"`, ...
        what: &'static str,
        /// The id.
        id: String,
        /// The first line it appeared on.
        first: usize,
    },
    /// A file that must hold records holds none (it is empty or blank).
    #[error("{path}: no {what} in the file (it is empty)")]
    EmptyFile {
        /// The file.
        path: PathBuf,
        /// What it should hold (`"movie names"`).
        what: &'static str,
    },
    /// A row of the ML-1M slice has no history items.
    #[error("{path}:{line}: empty history; every row needs at least one history item")]
    EmptyHistory {
        /// The file.
        path: PathBuf,
        /// The line.
        line: usize,
    },
    /// A row's target item is also in its history.
    #[error("{path}:{line}: target item {item} is also in the history")]
    TargetInHistory {
        /// The file.
        path: PathBuf,
        /// The line.
        line: usize,
        /// The item.
        item: u32,
    },
    /// A KG line the graph refused.
    #[error("{path}:{line}: {source}")]
    Kg {
        /// The KG file.
        path: PathBuf,
        /// The line.
        line: usize,
        /// What the graph said.
        #[source]
        source: pgraphrag_graph::kg::KgError,
    },
    /// An item given to the popularity table or gate that is not in its catalogue.
    #[error("item {item} is not in the popularity catalogue ({catalogue} items)")]
    NotInCatalogue {
        /// The item.
        item: u32,
        /// The catalogue's size.
        catalogue: usize,
    },
    /// Too few items the user never interacted with to fill a candidate set.
    #[error(
        "user {user}: only {available} catalogue items the user never interacted with, {needed} needed for the candidate set"
    )]
    TooFewCandidates {
        /// The user.
        user: u32,
        /// Negatives needed (M − 1).
        needed: usize,
        /// Negatives available.
        available: usize,
    },
    /// An option that makes no sense (M outside 2..=26, p outside 0..=1, ...).
    #[error("invalid option {name} = {value}: {expected}")]
    Option {
        /// The option.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// The encoder failed on the texts of the index or of a query.
    #[error("the encoder failed on {what}: {source}")]
    Encode {
        /// What was being encoded (`"entity texts"`, `"queries"`, ...).
        what: &'static str,
        /// The encoder's error.
        #[source]
        source: pgraphrag_core::Error,
    },
    /// The encoder returned something unusable: the wrong number of rows, an empty dimension,
    /// a dimension other than the index's, or a non-finite value.
    #[error("the encoder's output for {what} is unusable: {problem}")]
    EncoderOutput {
        /// What was being encoded.
        what: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// A query vector whose length is not the index's dimension, or that holds a non-finite
    /// value.
    #[error("query vector: {problem} (the index has dimension {dim})")]
    Query {
        /// What is wrong.
        problem: String,
        /// The index's dimension.
        dim: usize,
    },
    /// A [`crate::SubgraphIndex`] broke its contract: fewer result lists than queries, more
    /// than `k` hits, or a hit at another hop or outside the KG.
    #[error("the sub-graph index returned {problem}")]
    IndexOutput {
        /// What is wrong.
        problem: String,
    },
    /// A hop the index does not hold.
    #[error("hop {hop} is not in the index, which holds hops 0..={max}")]
    NoSuchHop {
        /// The hop asked for.
        hop: usize,
        /// The largest hop held.
        max: usize,
    },
    /// Vectors built for another knowledge graph (another fingerprint, see
    /// `kg_fingerprint`).
    #[error(
        "the index was built for another knowledge graph (fingerprint {found:016x}, {found_entities} entities; this graph: {expected:016x}, {expected_entities} entities); rebuild the index"
    )]
    KgMismatch {
        /// The fingerprint of the graph in use.
        expected: u64,
        /// The fingerprint the index was built for.
        found: u64,
        /// Entities of the graph in use.
        expected_entities: usize,
        /// Entities the index holds.
        found_entities: usize,
    },
    /// A history item without a title, so neither its query nor the history prompt can be
    /// written.
    #[error("history item {item} has no title in the title table ({titles} titles)")]
    NoTitle {
        /// The item.
        item: u32,
        /// The size of the title table.
        titles: usize,
    },
    /// The index file could not be read or written.
    #[error("index file {path}: {source}")]
    IndexIo {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The index file is not one (wrong magic), is truncated, or fails its checksum.
    #[error("index file {path}: {problem}")]
    IndexFormat {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The index file has a format version this build cannot read.
    #[error(
        "index file {path}: format version {found}, this build reads version {supported}; rebuild the index"
    )]
    IndexVersion {
        /// The file.
        path: PathBuf,
        /// The file's version.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The index file was built with another model.
    #[error(
        "index file {path} was built with model {found:?}, not {expected:?}; rebuild the index"
    )]
    IndexModel {
        /// The file.
        path: PathBuf,
        /// The model id the caller expects.
        expected: String,
        /// The model id in the file.
        found: String,
    },
    /// The index file's vector dimension is not the encoder's.
    #[error(
        "index file {path} holds {found}-dimensional vectors, the encoder gives {expected}; rebuild the index"
    )]
    IndexDim {
        /// The file.
        path: PathBuf,
        /// The encoder's dimension.
        expected: usize,
        /// The file's dimension.
        found: usize,
    },
    /// The index file was built for another knowledge graph.
    #[error(
        "index file {path} was built for another knowledge graph (fingerprint {found:016x}, {found_entities} entities; this graph: {expected:016x}, {expected_entities} entities); rebuild the index"
    )]
    IndexKg {
        /// The file.
        path: PathBuf,
        /// The fingerprint of the graph in use.
        expected: u64,
        /// The fingerprint in the file.
        found: u64,
        /// Entities of the graph in use.
        expected_entities: usize,
        /// Entities in the file.
        found_entities: usize,
    },
    /// The language model failed while scoring a prompt.
    #[error("the language model failed on {what}: {source}")]
    Model {
        /// What was being scored (`"row 12, method kg-text"`, `"the letter tokens"`).
        what: String,
        /// The model's error.
        #[source]
        source: pgraphrag_llm::LlmError,
    },
    /// An option letter is not one token of the model's vocabulary, so its next-token
    /// probability cannot be read.
    #[error(
        "option letter {letter:?} is {tokens} tokens for this model's tokenizer; letter scoring needs single-token letters (use another model or wrap)"
    )]
    LetterToken {
        /// The letter (as it would be generated, e.g. `"A"` or `" A"`).
        letter: String,
        /// How many tokens it encodes to.
        tokens: usize,
    },
    /// A scorer returned scores that cannot rank the options.
    #[error("the scorer returned {problem}")]
    ScoreOutput {
        /// What is wrong (`"3 scores for 20 options"`, `"a NaN score"`).
        problem: String,
    },
    /// The score cache failed: opening it (not SQLite, another kind of store, another schema
    /// version, or no permission) or a statement on it.
    #[error(transparent)]
    Store(Box<pgraphrag_store::Error>),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<pgraphrag_store::Error> for Error {
    fn from(e: pgraphrag_store::Error) -> Self {
        Error::Store(Box::new(e))
    }
}
