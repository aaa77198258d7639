//! The crate's error type: every variant names the file and, where there is one, the line,
//! the record or the field. Each fact is said once along the error's source chain.
use std::path::PathBuf;

/// What can go wrong reading a corpus or building a LaMP task. Problems with single records
/// (a malformed mail, a CSV row with a missing date) are not errors: the converters count them
/// as skips in their [`Report`](crate::Report).
///
/// ```
/// use pgraphrag_corpora::{read_corpus, Error};
/// let e = read_corpus("no/such/corpus.jsonl").unwrap_err();
/// assert!(matches!(e, Error::Read { .. }));
/// assert_eq!(e.to_string(), "cannot read no/such/corpus.jsonl");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or folder could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written (the data crate's error names the file).
    #[error(transparent)]
    Write(#[from] pgraphrag_data::Error),
    /// A RecBole atomic file could not be read (the error names the file and the line).
    #[error(transparent)]
    Recbole(#[from] pgraphrag_data::RecboleError),
    /// A line of a corpus file is not an [`AuthoredDoc`](crate::AuthoredDoc).
    #[error("{}: line {line}: {message}", path.display())]
    CorpusLine {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What was wrong (serde_json's message names the field).
        message: String,
    },
    /// A document's `time` lies outside [`TIMES`](crate::TIMES) (years 1900 to 2200).
    #[error(
        "{}: line {line} (doc_id {doc_id:?}): field \"time\" {time} is not a time from 1900 to 2200 \
         (unix seconds, UTC); correct the record or remove it",
        path.display()
    )]
    BadTime {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The document's id.
        doc_id: String,
        /// The time found.
        time: i64,
    },
    /// A corpus or examples file holds no record at all (empty or blank lines only): refused
    /// rather than building empty tasks from it.
    #[error("{}: no {what} in the file (it is empty); {hint}", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
        /// What it should hold ("documents", "examples").
        what: &'static str,
        /// Where such a file comes from.
        hint: &'static str,
    },
    /// A CSV file ends inside a quoted field or in a row without its line break: it was cut
    /// short (its last row would be read truncated).
    #[error("{}: cut short: {why}; fetch the file again (a complete file ends with a line break)", path.display())]
    CutShort {
        /// The file.
        path: PathBuf,
        /// What gave it away.
        why: &'static str,
    },
    /// A line of an examples file is not a multistage
    /// [`Example`](crate::multistage::Example).
    #[error("{}: line {line}: not an example: {message}", path.display())]
    ExampleLine {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What was wrong (serde_json's message names the field).
        message: String,
    },
    /// A field of a line of a data file (MovieLens-100K's `ml-100k.inter`) cannot be read or
    /// lies outside its domain (a rating off the 1-5 scale, a time outside
    /// [`TIMES`](crate::TIMES)): refused rather than built into a wrong question or gold.
    #[error(
        "{}:{line}: field {field:?}: {value:?} is not {expected}; correct the line or remove it",
        path.display()
    )]
    Value {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The field.
        field: &'static str,
        /// The value, as [`pgraphrag_data::shown`] quotes it.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A line repeats the key of an earlier line of the same file (an item listed twice, a
    /// user rating the same item twice): which one a question would get is undefined.
    #[error(
        "{}:{line}: {what} {key} appears again (first on line {first}); keep one of the lines",
        path.display()
    )]
    Repeated {
        /// The file.
        path: PathBuf,
        /// 1-based line of the repeat.
        line: usize,
        /// 1-based line where the key first appeared.
        first: usize,
        /// What the key is (`"item_id"`, `"rating of (user_id, item_id)"`).
        what: &'static str,
        /// The key, quoted.
        key: String,
    },
    /// A rating names an item that the item file does not hold.
    #[error("{}:{line}: item_id {item:?} is not in {}", path.display(), catalogue.display())]
    UnknownItem {
        /// The ratings file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The item id.
        item: String,
        /// The item file.
        catalogue: PathBuf,
    },
    /// A SpamAssassin record file is not a record (`{id, group, text}` JSON): damaged or cut
    /// short.
    #[error("{}: not a SpamAssassin record ({message}); fetch the corpus again", path.display())]
    Record {
        /// The record file.
        path: PathBuf,
        /// What serde_json said (it names the field and the position).
        message: String,
    },
    /// Two SpamAssassin record files give the same document id (`{group}/{id}`).
    #[error(
        "{}: document id {doc_id:?} is already {}'s; document ids must be unique",
        path.display(),
        first.display()
    )]
    RepeatedRecord {
        /// The later record file.
        path: PathBuf,
        /// The earlier record file with the same id.
        first: PathBuf,
        /// The id.
        doc_id: String,
    },
    /// A PGraphRAG split could not be loaded (the data crate's error names the file and the
    /// record).
    #[error("cannot load the PGraphRAG split")]
    Split {
        /// The data crate's error.
        #[source]
        source: pgraphrag_data::Error,
    },
    /// A CSV or TSV file lacks a column the converter needs.
    #[error("{}: no column {column:?} in the header", path.display())]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column.
        column: &'static str,
    },
    /// A CSV or TSV file's header could not be read.
    #[error("{}: unreadable header: {message}", path.display())]
    Header {
        /// The file.
        path: PathBuf,
        /// What the csv crate said.
        message: String,
    },
    /// An input folder holds none of the files the converter reads.
    #[error("{}: found none of {expected}", path.display())]
    NoInput {
        /// The folder.
        path: PathBuf,
        /// What was looked for.
        expected: &'static str,
    },
    /// Two documents share an id; question and profile ids must be unique.
    #[error("doc_id {doc_id:?} appears twice; document ids must be unique")]
    DuplicateDocId {
        /// The id.
        doc_id: String,
    },
    /// A builder was asked for a task it does not build.
    #[error("{task} cannot be built from {from}; it builds {supported}")]
    UnsupportedTask {
        /// The task asked for.
        task: pgraphrag_core::LampTask,
        /// The kind of input.
        from: &'static str,
        /// What it builds.
        supported: &'static str,
    },
    /// The builder options are unusable.
    #[error("bad builder options: {0}")]
    Options(String),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
