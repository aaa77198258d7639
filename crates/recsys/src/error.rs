use std::path::PathBuf;

/// Everything that can go wrong loading the recommendation data or building rows from it.
/// Every file error names the file and the 1-based line (the header is line 1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read {path} (check the path; scripts/fetch-corpora.sh fetches ML-100K)")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not UTF-8 in a file that must be.
    #[error("{path}:{line}: not UTF-8; re-encode the file as UTF-8")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The line.
        line: usize,
    },
    /// The file has no header, or the header lacks a column.
    #[error("{path}:1: header has no column {column:?} (found {found:?})")]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column looked for.
        column: String,
        /// The header's columns.
        found: Vec<String>,
    },
    /// Another error of the data crate's RecBole reader.
    #[error(transparent)]
    Recbole(pgraphrag_data::RecboleError),
    /// A line has the wrong number of fields.
    #[error("{path}:{line}: {found} fields, expected {expected}")]
    Fields {
        /// The file.
        path: PathBuf,
        /// The line.
        line: usize,
        /// Fields the format has.
        expected: usize,
        /// Fields the line has.
        found: usize,
    },
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
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
