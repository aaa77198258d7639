//! The one error of a run, and the one answer to "was the caller's input at fault?".
use std::error::Error as StdError;

/// Any error, boxed (the source of an [`Error`]).
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// What stopped a run.
///
/// [`Error::is_bad_input`] says whether the caller is at fault (a setting, an input file or
/// model); a binary maps that to its exit code in one place.
///
/// ```
/// use pgraphrag_runs::Error;
/// let e = Error::Setting("no rows in 10..20 of the ml1m dataset".into());
/// assert!(e.is_bad_input());
/// let io = std::io::Error::other("disk full");
/// assert!(!Error::work("writing the rows file")(io).is_bad_input());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting of the spec, or a combination of settings, that cannot run.
    #[error("{0}")]
    Setting(String),
    /// An input the caller named (a data file, a model, an index, a rows file) is missing,
    /// unreadable or invalid; `what` says which, the source what is wrong with it.
    #[error("{what}")]
    Input {
        /// Which input, e.g. `the adapter /runs/enc.safetensors`.
        what: String,
        /// What is wrong with it.
        #[source]
        source: BoxError,
    },
    /// An input the caller named is invalid, as its own error (which names it) says.
    #[error(transparent)]
    Invalid(BoxError),
    /// A step of the work failed; `what` says which step.
    #[error("{what}")]
    Work {
        /// The step, e.g. `training (checkpoint run.ckpt)`.
        what: String,
        /// Why it failed.
        #[source]
        source: BoxError,
    },
    /// A library's own error, as it said it.
    #[error(transparent)]
    Library(BoxError),
}

/// A run's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A closure wrapping an error as [`Error::Input`] about `what`.
    ///
    /// ```
    /// use pgraphrag_runs::Error;
    /// let e = Error::input("the model m.gguf")(std::io::Error::other("not found"));
    /// assert_eq!(e.to_string(), "the model m.gguf");
    /// assert!(e.is_bad_input());
    /// ```
    pub fn input<E: Into<BoxError>>(what: impl Into<String>) -> impl FnOnce(E) -> Error {
        let what = what.into();
        move |e| Error::Input {
            what,
            source: e.into(),
        }
    }

    /// `e` as [`Error::Invalid`]: the caller's input, as `e` describes it.
    ///
    /// ```
    /// use pgraphrag_runs::Error;
    /// let e = Error::invalid(std::io::Error::other("train.jsonl line 3: no target"));
    /// assert_eq!(e.to_string(), "train.jsonl line 3: no target");
    /// assert!(e.is_bad_input());
    /// ```
    pub fn invalid<E: Into<BoxError>>(e: E) -> Error {
        Error::Invalid(e.into())
    }

    /// A closure wrapping an error as [`Error::Work`] of the step `what`.
    ///
    /// ```
    /// use pgraphrag_runs::Error;
    /// let e = Error::work("saving the index")(std::io::Error::other("disk full"));
    /// assert_eq!(e.to_string(), "saving the index");
    /// ```
    pub fn work<E: Into<BoxError>>(what: impl Into<String>) -> impl FnOnce(E) -> Error {
        let what = what.into();
        move |e| Error::Work {
            what,
            source: e.into(),
        }
    }

    /// Whether the caller's input was at fault: a [`Error::Setting`], an [`Error::Input`], or
    /// anywhere in the chain an error that [`is_bad_input`] says is one (a damaged model or
    /// index, a refused output).
    pub fn is_bad_input(&self) -> bool {
        chain_is_bad_input(self)
    }
}

/// Whether any link of `e`'s chain [`is_bad_input`].
fn chain_is_bad_input(e: &(dyn StdError + 'static)) -> bool {
    let mut e = Some(e);
    while let Some(c) = e {
        if is_bad_input(c) {
            return true;
        }
        e = c.source();
    }
    false
}

/// Whether `e` itself (one link of a chain) says that the caller's input was at fault: an
/// [`Error::Setting`] or [`Error::Input`]; a refused output (an output path that is an input,
/// a folder, a link); or a resource file that is missing or damaged (a model that is not a
/// usable GGUF file or its tokenizer, a dense model folder that does not load, a K-RagRec
/// index that fails its checks, a store of the wrong kind or damaged, a summary store of
/// another configuration, a PostgreSQL dataset that is not there).
///
/// ```
/// use pgraphrag_runs::is_bad_input;
/// let bad = pgraphrag_llm::LlmError::InvalidGguf { path: "m.gguf".into(), reason: "cut".into() };
/// assert!(is_bad_input(&bad));
/// assert!(!is_bad_input(&pgraphrag_llm::LlmError::InvalidParams("x".into())));
/// ```
pub fn is_bad_input(e: &(dyn StdError + 'static)) -> bool {
    use pgraphrag_llm::LlmError;
    use pgraphrag_recsys::Error as Recsys;
    use pgraphrag_retrieval::Error as Retrieval;
    if let Some(e) = e.downcast_ref::<Error>() {
        return match e {
            Error::Setting(_) | Error::Input { .. } | Error::Invalid(_) => true,
            // Transparent: its chain skips the library's own error, so look at it here.
            Error::Library(inner) => chain_is_bad_input(inner.as_ref()),
            Error::Work { .. } => false,
        };
    }
    if e.is::<pgraphrag_data::output::OutputError>()
        || matches!(
            e.downcast_ref::<pgraphrag_data::Error>(),
            Some(pgraphrag_data::Error::Output(_))
        )
        || matches!(
            e.downcast_ref::<pgraphrag_eval::Error>(),
            Some(pgraphrag_eval::Error::Output(_))
        )
    {
        return true;
    }
    let llm = |e: &LlmError| {
        matches!(
            e,
            LlmError::ModelNotFound { .. }
                | LlmError::Io { .. }
                | LlmError::InvalidGguf { .. }
                | LlmError::UnsupportedArchitecture { .. }
                | LlmError::Tokenizer { .. }
        )
    };
    if let Some(e) = e.downcast_ref::<LlmError>() {
        return llm(e);
    }
    if let Some(pgraphrag_train::TrainError::Llm(e)) =
        e.downcast_ref::<pgraphrag_train::TrainError>()
    {
        return llm(e);
    }
    if let Some(e) = e.downcast_ref::<Retrieval>() {
        return matches!(e, Retrieval::Model { .. } | Retrieval::MissingPooler { .. });
    }
    if let Some(e) = e.downcast_ref::<Recsys>() {
        return matches!(
            e,
            Recsys::IndexFormat { .. }
                | Recsys::IndexVersion { .. }
                | Recsys::IndexModel { .. }
                | Recsys::IndexDim { .. }
                | Recsys::IndexKg { .. }
        );
    }
    #[cfg(feature = "postgres")]
    {
        use pgraphrag_eval::store::StoreError;
        if let Some(e) = e.downcast_ref::<pgraphrag_store::postgres::Error>() {
            return postgres_input(e);
        }
        if let Some(e) = e.downcast_ref::<StoreError>() {
            return match e {
                StoreError::Store(e) => postgres_input(e),
                _ => true,
            };
        }
    }
    if let Some(e) = e.downcast_ref::<pgraphrag_stages::Error>() {
        use pgraphrag_stages::Error as Stages;
        return matches!(
            e,
            Stages::OtherConfig { .. } | Stages::ConflictingProfiles { .. } | Stages::User { .. }
        );
    }
    if let Some(e) = e.downcast_ref::<pgraphrag_store::Error>() {
        return matches!(
            e,
            pgraphrag_store::Error::Damaged { .. }
                | pgraphrag_store::Error::WrongKind { .. }
                | pgraphrag_store::Error::SchemaVersion { .. }
        );
    }
    false
}

/// Whether a PostgreSQL profile store error is the caller's: a bad URL, no server there, a
/// dataset that is not there (or already is), a store of another schema, an unreadable input.
#[cfg(feature = "postgres")]
fn postgres_input(e: &pgraphrag_store::postgres::Error) -> bool {
    use pgraphrag_store::postgres::Error as Pg;
    matches!(
        e,
        Pg::Url { .. }
            | Pg::Connect { .. }
            | Pg::SchemaVersion { .. }
            | Pg::NoDataset { .. }
            | Pg::MissingPartition { .. }
            | Pg::DatasetName { .. }
            | Pg::Exists { .. }
            | Pg::Jsonl { .. }
            | Pg::Io { .. }
    )
}

macro_rules! library_errors {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error::Library(Box::new(e))
            }
        }
    )*};
}

library_errors!(
    pgraphrag_recsys::Error,
    pgraphrag_train::TrainError,
    pgraphrag_llm::LlmError,
    pgraphrag_retrieval::Error,
    pgraphrag_eval::Error,
    pgraphrag_data::Error,
    pgraphrag_data::output::OutputError,
    pgraphrag_metrics::Error,
    pgraphrag_store::Error,
    pgraphrag_stages::Error,
    pgraphrag_corpora::Error,
    pgraphrag_core::Error,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_error_is_classified_through_its_transparent_wrapper() {
        let bad = pgraphrag_llm::LlmError::InvalidGguf {
            path: "m.gguf".into(),
            reason: "cut".into(),
        };
        let e = Error::from(bad);
        assert!(e.is_bad_input());
        // As the binary sees it: the first link of an anyhow-like chain.
        assert!(is_bad_input(&e));
        let work = Error::from(pgraphrag_llm::LlmError::InvalidParams("x".into()));
        assert!(!work.is_bad_input() && !is_bad_input(&work));
        let wrapped = Error::work("scoring")(Error::from(pgraphrag_llm::LlmError::InvalidGguf {
            path: "m.gguf".into(),
            reason: "cut".into(),
        }));
        assert!(wrapped.is_bad_input());
    }
}
