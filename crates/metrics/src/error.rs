//! The error type of `pgraphrag-metrics`.
use std::path::PathBuf;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A WordNet file could not be read.
    #[error(
        "WordNet file {path} cannot be read ({source}); METEOR needs WordNet 3.0: install it with \
         `apt-get install -y wordnet-base` (files in /usr/share/wordnet) or set WORDNET_DIR to a \
         folder holding data.{{noun,verb,adj,adv}}, index.{{noun,verb,adj,adv}} and {{noun,verb,adj,adv}}.exc"
    )]
    WordNetMissing {
        /// The file that was looked for.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A WordNet file is malformed.
    #[error("WordNet file {path}, line {line}: {message}")]
    WordNetFormat {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// Two inputs that must be aligned have different lengths.
    #[error("{what}: {left} values against {right}; they must be aligned one to one")]
    LengthMismatch {
        /// What was being compared.
        what: &'static str,
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// An argument is out of its domain (empty input, confidence outside [0, 1], ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A gold value that must be a number is not one.
    #[error("gold value #{index} ({value:?}) is not a number as Python's float() reads numbers")]
    BadGold {
        /// 0-based position of the value.
        index: usize,
        /// The value.
        value: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
