use std::path::PathBuf;

/// Everything that can go wrong reading or writing data files. Every variant names the file;
/// schema errors also name the record (0-based index in the top-level list), the review
/// (0-based index in `profile`) and the field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An output path was refused before anything was written (a link, a FIFO, a device, a
    /// folder), or could not be examined.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// The file could not be read or written.
    #[error("cannot read or write {path} (check the path)")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not UTF-8.
    #[error("{path}: not UTF-8 at byte {offset}; re-encode the file as UTF-8")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The file is not valid JSON.
    #[error("{path}:{line}:{column}: malformed JSON: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde_json said.
        message: String,
    },
    /// A record does not have the expected shape.
    #[error("{path}: {}: {message}", where_(*record, *review, field))]
    Schema {
        /// The file.
        path: PathBuf,
        /// Index of the record in the top-level list (`None`: the top level itself).
        record: Option<usize>,
        /// Index of the review in the record's `profile`, if the problem is inside one.
        review: Option<usize>,
        /// The field (`"id"`, `"profile"`, `"pid"`, ...), empty for the record itself.
        field: String,
        /// What was wrong.
        message: String,
    },
    /// A user has an empty profile, so there is no target review.
    #[error(
        "{path}: record {record} (user {user:?}): empty profile; every user needs at least its target review (profile[0])"
    )]
    EmptyProfile {
        /// The file.
        path: PathBuf,
        /// Index of the record.
        record: usize,
        /// The user id.
        user: String,
    },
}

fn where_(record: Option<usize>, review: Option<usize>, field: &str) -> String {
    let mut s = match record {
        Some(r) => format!("record {r}"),
        None => "top level".to_string(),
    };
    if let Some(v) = review {
        s.push_str(&format!(", profile[{v}]"));
    }
    if !field.is_empty() {
        s.push_str(&format!(", field {field:?}"));
    }
    s
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
