//! The crate's error.

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    /// A Punkt parameter file is malformed.
    #[error("{resource}:{line}: bad Punkt parameters: {message}")]
    PunktData {
        /// File or resource name.
        resource: String,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// A file could not be read.
    #[error(
        "cannot read {path} (check the path; NLTK data lives in tokenizers/punkt_tab/<language>/)"
    )]
    Io {
        /// The path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}
