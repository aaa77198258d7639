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
    Output(#[from] OutputError),
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
    /// A value of the right type outside its field's domain: a rating off the star-rating
    /// scale ([`pgraphrag_core::RATING_SCALE`]), a LaMP gold that is not one of its task's
    /// labels. Scoring it would give a wrong number rather than an error.
    #[error(transparent)]
    OutOfRange(Box<OutOfRange>),
    /// Two records of a split share a user id: the graph would merge them, and one record's
    /// held-out target (`profile[0]`) would become part of the other's profile.
    #[error(
        "{path}: record {record}: user id {user:?} is already record {first}'s; each user needs \
         exactly one record, or one record's held-out target (profile[0]) leaks into the other's \
         profile: merge or rename the records"
    )]
    DuplicateUser {
        /// The file.
        path: PathBuf,
        /// Index of the later record.
        record: usize,
        /// Index of the earlier record with the same id.
        first: usize,
        /// The user id.
        user: String,
    },
    /// Two records of a LaMP questions or outputs file share an id: a gold, a summary or a
    /// prediction found by id could be attached to the wrong question.
    #[error(
        "{path}: record {record}: id {id:?} is already record {first}'s; ids must be unique, or \
         {why}: remove or rename one of the records"
    )]
    DuplicateId {
        /// The file.
        path: PathBuf,
        /// Index of the later record.
        record: usize,
        /// Index of the earlier record with the same id.
        first: usize,
        /// The id.
        id: String,
        /// What a repeated id would do.
        why: &'static str,
    },
}

/// Where a value outside its domain is, what it is and what it must be: the detail of
/// [`Error::OutOfRange`].
///
/// ```
/// let e = pgraphrag_data::parse_split(br#"[{"id": "u", "profile": [{"pid": "p", "rating": 0}]}]"#, "s.json").unwrap_err();
/// let pgraphrag_data::Error::OutOfRange(o) = &e else { panic!("{e}") };
/// assert_eq!((o.record, o.review, o.field, o.id.as_str(), &*o.value), (0, Some(0), "rating", "u", "0"));
/// assert!(e.to_string().starts_with(r#"s.json: record 0 (id "u"), profile[0], field "rating": 0 is not a star rating"#), "{e}");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{}: {}: {value} is not {expected}; correct the record or remove it", path.display(), where_id(*record, *review, field, id))]
pub struct OutOfRange {
    /// The file.
    pub path: PathBuf,
    /// Index of the record in the top-level list.
    pub record: usize,
    /// Index of the item in the record's `profile`, if the value is inside one.
    pub review: Option<usize>,
    /// The field (`"rating"`, `"output"`, `"score"`, ...).
    pub field: &'static str,
    /// The record's id (user or question), as the file has it.
    pub id: String,
    /// The value, as the file has it.
    pub value: String,
    /// What the value must be (`"a star rating from 1 to 5"`).
    pub expected: String,
}

impl From<OutOfRange> for Error {
    fn from(o: OutOfRange) -> Self {
        Error::OutOfRange(Box::new(o))
    }
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

/// [`where_`] with the record's id after the record.
fn where_id(record: usize, review: Option<usize>, field: &str, id: &str) -> String {
    let full = where_(Some(record), review, field);
    let head = format!("record {record}");
    format!("{head} (id {id:?}){}", &full[head.len()..])
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an output path was refused (or could not be opened). Every variant names the path.
///
/// ```
/// use pgraphrag_data::output::{check_output, OutputError, Symlinks};
/// let e = check_output(std::path::Path::new("."), Symlinks::Refuse).unwrap_err();
/// assert!(matches!(e, OutputError::NotRegular { .. }));
/// assert_eq!(e.to_string(), ". is a folder, not a regular file: choose a file path for the output");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The output is a symbolic link and the caller did not ask to follow links.
    #[error(
        "{path} is a symbolic link (to {target}): outputs are not written through links; write to the target path instead"
    )]
    Symlink {
        /// The output path as given.
        path: PathBuf,
        /// Where the link points (as stored in the link).
        target: PathBuf,
    },
    /// The output exists and is not a regular file.
    #[error("{path} is a {kind}, not a regular file: choose a file path for the output")]
    NotRegular {
        /// The output path as given (or the target of a followed link).
        path: PathBuf,
        /// What it is.
        kind: FileKind,
    },
    /// The output is the same file as an input.
    #[error(
        "{output_flag} and {input_flag} are the same file ({path}): choose another {output_flag}"
    )]
    SameFile {
        /// The flag (or name) of the output.
        output_flag: String,
        /// The flag (or name) of the input.
        input_flag: String,
        /// The output path as given.
        path: PathBuf,
    },
    /// Following a symbolic link went round in circles (or too deep).
    #[error("{path}: too many levels of symbolic links")]
    LinkLoop {
        /// The output path as given.
        path: PathBuf,
    },
    /// The path could not be examined or opened.
    #[error("cannot check or open {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// What a non-regular file is, for [`OutputError::NotRegular`].
///
/// ```
/// use pgraphrag_data::output::FileKind;
/// assert_eq!(FileKind::Fifo.to_string(), "named pipe (FIFO)");
/// assert_eq!(FileKind::CharDevice.to_string(), "character device");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A folder.
    Directory,
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (`/dev/null`, `/dev/stdout`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// Anything else that is not a regular file.
    Other,
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::Directory => "folder",
            FileKind::Fifo => "named pipe (FIFO)",
            FileKind::Socket => "socket",
            FileKind::CharDevice => "character device",
            FileKind::BlockDevice => "block device",
            FileKind::Other => "special file",
        })
    }
}

/// `text` as an error message quotes it: its first 80 characters, then `…` and its length in
/// bytes when it is longer (a 20 MB line is named, not echoed).
///
/// ```
/// assert_eq!(pgraphrag_data::shown("rating"), "rating");
/// assert_eq!(pgraphrag_data::shown(&"x".repeat(100)), format!("{}… (100 bytes)", "x".repeat(80)));
/// ```
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_string(),
    }
}
