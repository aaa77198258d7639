//! RecBole's atomic files (`ml-100k.inter`, `.item`, `.user`, `.kg`, `.link`, …) and the line
//! reader under them, with 1-based line numbers in every error ([`RecboleError`]).
//!
//! An atomic file is tab-separated text: a header of `name:type` columns (line 1), then one
//! record a line. [`AtomicFile::read`] keeps each record's fields as written, so a caller
//! chooses its policy: [`AtomicFile::exact`] makes a wrong field count an error naming the line,
//! or a caller counts such rows as skips.
//!
//! ```
//! use pgraphrag_data::recbole::AtomicFile;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("x.inter");
//! std::fs::write(&path, "user_id:token\titem_id:token\n1\t10\n\n2\t20\n").unwrap();
//! let f = AtomicFile::read(&path).unwrap().exact().unwrap();
//! assert_eq!(f.columns, ["user_id", "item_id"]);
//! let item = f.column("item_id").unwrap();
//! assert_eq!((f.rows[1].0, f.rows[1].1[item].as_str()), (4, "20")); // line 4: blank lines count
//! ```
use std::path::{Path, PathBuf};

/// What can go wrong reading a RecBole atomic file or a line-oriented text file. Every variant
/// names the file, and the 1-based line where there is one (the header is line 1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecboleError {
    /// The file could not be read.
    #[error("cannot read {path} (check the path)")]
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
    /// The header lacks a column (or the file has no header).
    #[error("{path}:1: header has no column {column:?} (found {found:?})")]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column looked for.
        column: String,
        /// The header's columns, as [`header_names`] shows them.
        found: Vec<String>,
    },
    /// The file does not end with a newline: its last line may have been cut short (a
    /// timestamp `881250949` cut to `8812509` would still parse), so the file is refused.
    #[error(
        "{path}:{line}: the file ends inside this line (no newline at its end): it looks cut short; if the file is complete, end it with a newline"
    )]
    CutShort {
        /// The file.
        path: PathBuf,
        /// The last line.
        line: usize,
    },
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
}

/// How [`lines`] decodes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decode {
    /// UTF-8; a line that is not is a [`RecboleError::NotUtf8`] naming it.
    Utf8,
    /// UTF-8 when the whole file is valid UTF-8, else ISO-8859-1 (latin-1: every byte is the
    /// code point of the same value, so decoding cannot fail). The original MovieLens-1M
    /// `movies.dat` needs it.
    Utf8OrLatin1,
}

/// A decoded file: its non-blank lines with their 1-based numbers, and whether latin-1 was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines {
    /// `(line, text)`, blank lines left out, a trailing `\r` dropped.
    pub lines: Vec<(usize, String)>,
    /// Whether the file was decoded as latin-1.
    pub latin1: bool,
}

/// The bytes of the line-oriented text file `path`. A file that is not empty must end with a
/// newline, else [`RecboleError::CutShort`] naming its last line: a file cut inside its last
/// line would otherwise be read with a wrong last value.
///
/// ```
/// use pgraphrag_data::recbole::{read, RecboleError};
/// let e = read(std::path::Path::new("no/such/file")).unwrap_err();
/// assert!(e.to_string().starts_with("cannot read no/such/file"));
/// # let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("movies_id_name.txt");
/// std::fs::write(&p, "1\tToy Story\n2\tJuman").unwrap();
/// assert!(matches!(read(&p), Err(RecboleError::CutShort { line: 2, .. })));
/// std::fs::write(&p, "1\tToy Story\n").unwrap();
/// assert_eq!(read(&p).unwrap(), b"1\tToy Story\n");
/// ```
pub fn read(path: &Path) -> Result<Vec<u8>, RecboleError> {
    let bytes = std::fs::read(path).map_err(|source| RecboleError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if bytes.last().is_some_and(|&b| b != b'\n') {
        return Err(RecboleError::CutShort {
            path: path.to_path_buf(),
            line: 1 + bytes.iter().filter(|&&b| b == b'\n').count(),
        });
    }
    Ok(bytes)
}

/// A header's column names as an error message shows them: at most the first 20, each cut to
/// its first 80 characters ([`crate::shown`]), so that a header that is one huge line is named,
/// not echoed.
///
/// ```
/// let names = vec!["user_id".to_string(), "x".repeat(1000)];
/// let shown = pgraphrag_data::recbole::header_names(&names);
/// assert_eq!(shown[0], "user_id");
/// assert!(shown[1].len() < 100 && shown[1].ends_with("(1000 bytes)"));
/// ```
pub fn header_names(columns: &[String]) -> Vec<String> {
    let mut v: Vec<String> = columns.iter().take(20).map(|c| crate::shown(c)).collect();
    if columns.len() > 20 {
        v.push(format!("… ({} columns)", columns.len()));
    }
    v
}

/// Splits `bytes` (the contents of `path`, named in errors) into lines at `\n`, decoding each.
///
/// ```
/// use pgraphrag_data::recbole::{Decode, lines};
/// let p = std::path::Path::new("movies.dat");
/// let l = lines(p, b"a\r\n\nMis\xe9rables\n", Decode::Utf8OrLatin1).unwrap();
/// assert_eq!(l.lines, vec![(1, "a".to_string()), (3, "Misérables".to_string())]);
/// assert!(lines(p, b"a\nb\xe9\n", Decode::Utf8).unwrap_err().to_string().starts_with("movies.dat:2:"));
/// ```
pub fn lines(path: &Path, bytes: &[u8], decode: Decode) -> Result<Lines, RecboleError> {
    let latin1 = decode == Decode::Utf8OrLatin1 && std::str::from_utf8(bytes).is_err();
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = if latin1 {
            raw.iter().map(|&b| char::from(b)).collect::<String>()
        } else {
            match std::str::from_utf8(raw) {
                Ok(s) => s.to_string(),
                Err(_) => {
                    return Err(RecboleError::NotUtf8 {
                        path: path.to_path_buf(),
                        line: i + 1,
                    });
                }
            }
        };
        if !text.trim().is_empty() {
            out.push((i + 1, text));
        }
    }
    Ok(Lines { lines: out, latin1 })
}

/// A RecBole atomic file: its column names (without `:type`) and its records with their lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtomicFile {
    /// The file.
    pub path: PathBuf,
    /// Column names without their `:type`.
    pub columns: Vec<String>,
    /// `(line, fields)`: each record's tab-separated fields, trimmed, as many as the line has.
    pub rows: Vec<(usize, Vec<String>)>,
}

impl AtomicFile {
    /// Reads `path` (UTF-8; blank lines ignored; an empty file has no columns and no rows; any
    /// other must end with a newline, else [`RecboleError::CutShort`]).
    pub fn read(path: &Path) -> Result<AtomicFile, RecboleError> {
        let bytes = read(path)?;
        let mut lines = lines(path, &bytes, Decode::Utf8)?.lines.into_iter();
        let columns: Vec<String> = match lines.next() {
            Some((_, header)) => header
                .split('\t')
                .map(|c| c.split(':').next().unwrap_or("").trim().to_string())
                .collect(),
            None => Vec::new(),
        };
        let rows = lines
            .map(|(line, text)| {
                (
                    line,
                    text.split('\t').map(|f| f.trim().to_string()).collect(),
                )
            })
            .collect();
        Ok(AtomicFile {
            path: path.to_path_buf(),
            columns,
            rows,
        })
    }

    /// The file, provided every record has as many fields as the header; the first that does not
    /// is a [`RecboleError::Fields`] naming its line.
    ///
    /// ```
    /// use pgraphrag_data::recbole::AtomicFile;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("x.kg");
    /// std::fs::write(&path, "head_id:token\trelation_id:token\ttail_id:token\nm.1\tr\n").unwrap();
    /// let e = AtomicFile::read(&path).unwrap().exact().unwrap_err();
    /// assert!(e.to_string().ends_with("x.kg:2: 2 fields, expected 3"));
    /// ```
    pub fn exact(self) -> Result<AtomicFile, RecboleError> {
        if let Some((line, fields)) = self
            .rows
            .iter()
            .find(|(_, f)| f.len() != self.columns.len())
        {
            return Err(RecboleError::Fields {
                path: self.path.clone(),
                line: *line,
                expected: self.columns.len(),
                found: fields.len(),
            });
        }
        Ok(self)
    }

    /// The index of column `name` (a [`RecboleError::MissingColumn`] when the header lacks it).
    ///
    /// ```
    /// use pgraphrag_data::recbole::AtomicFile;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("x.link");
    /// std::fs::write(&path, "item_id:token\tentity_id:token\n1\tm.1\n").unwrap();
    /// let f = AtomicFile::read(&path).unwrap();
    /// assert_eq!(f.column("entity_id").unwrap(), 1);
    /// assert!(f.column("rating").is_err());
    /// ```
    pub fn column(&self, name: &str) -> Result<usize, RecboleError> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| RecboleError::MissingColumn {
                path: self.path.clone(),
                column: name.to_string(),
                found: header_names(&self.columns),
            })
    }
}
