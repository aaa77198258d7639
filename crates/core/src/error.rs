use std::path::PathBuf;

/// The common error of the narrow traits. Library crates keep their own, richer error
/// enums and convert into this one at the trait boundary.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller passed something the implementation cannot work with.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Reading or writing a file failed.
    #[error("{path}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An error from a backend (a model, a server, a library crate's own error type).
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl Error {
    /// Wraps any error as [`Error::Backend`].
    ///
    /// ```
    /// let e = pgraphrag_core::Error::backend(std::fmt::Error);
    /// assert!(e.to_string().contains("error"));
    /// ```
    pub fn backend<E: std::error::Error + Send + Sync + 'static>(e: E) -> Self {
        Error::Backend(Box::new(e))
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error and its sources joined as `a: b: c` — what a binary prints. Every error of the
/// workspace says each fact once along this chain: a message never repeats its source's.
///
/// ```
/// let io = std::io::Error::other("disk full");
/// let e = pgraphrag_core::Error::Io { path: "out.json".into(), source: io };
/// assert_eq!(pgraphrag_core::error_chain(&e), "out.json: disk full");
/// ```
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}
