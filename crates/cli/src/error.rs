//! Exit codes: 0 success, 1 the work failed, 2 bad usage or bad input.
//!
//! clap's own usage errors already exit with 2. Errors of ours that mean "the command line or
//! an input file is wrong" are wrapped in [`UsageError`] (via [`usage`] or
//! [`OrUsage::or_usage`]); `main` maps them to exit code 2, everything else to 1.
use std::fmt::Display;

/// Bad usage or bad input: an unusable flag value or combination, an unreadable or invalid
/// input file. Displays as the error it wraps.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct UsageError(#[from] pub anyhow::Error);

/// A [`UsageError`] with this message.
pub fn usage(message: impl Display) -> anyhow::Error {
    UsageError(anyhow::anyhow!("{message}")).into()
}

/// Marks a result's error as bad usage or bad input.
pub trait OrUsage<T> {
    /// The error, wrapped in a [`UsageError`].
    fn or_usage(self) -> anyhow::Result<T>;
}

impl<T, E: Into<anyhow::Error>> OrUsage<T> for Result<T, E> {
    fn or_usage(self) -> anyhow::Result<T> {
        self.map_err(|e| UsageError(e.into()).into())
    }
}

/// The process exit code for an error: 2 when a [`UsageError`], a refused output
/// ([`is_refusal`]) or a bad resource file ([`is_bad_resource`]) is anywhere
/// in its chain.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.chain()
        .any(|c| c.is::<UsageError>() || is_refusal(c) || is_bad_resource(c))
    {
        2
    } else {
        1
    }
}

/// Whether `e` (one error of a chain) is a refused output, so that a refusal met by a library
/// writer is a usage error (exit code 2) too.
pub fn is_refusal(e: &(dyn std::error::Error + 'static)) -> bool {
    e.is::<pgraphrag_data::output::OutputError>()
        || matches!(
            e.downcast_ref::<pgraphrag_data::Error>(),
            Some(pgraphrag_data::Error::Output(_))
        )
        || matches!(
            e.downcast_ref::<pgraphrag_eval::Error>(),
            Some(pgraphrag_eval::Error::Output(_))
        )
}

/// Whether `e` says a resource file the user passed is missing, unreadable or damaged: a
/// model that is not a usable GGUF file (or its tokenizer), a dense model folder that does not
/// load, a K-RagRec index file that fails its checks, a store file that is not a sound store
/// of the right kind. These are bad input (exit code 2) wherever the command loads them.
pub fn is_bad_resource(e: &(dyn std::error::Error + 'static)) -> bool {
    use pgraphrag_llm::LlmError;
    use pgraphrag_recsys::Error as Recsys;
    use pgraphrag_retrieval::Error as Retrieval;
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

/// Maps the job's bad-input errors to usage errors (exit code 2).
pub fn job_error(e: pgraphrag_stages::Error) -> anyhow::Error {
    match e {
        pgraphrag_stages::Error::OtherConfig { .. }
        | pgraphrag_stages::Error::ConflictingProfiles { .. }
        | pgraphrag_stages::Error::User { .. } => usage_err(e),
        e => anyhow::Error::new(e),
    }
}

fn usage_err(e: pgraphrag_stages::Error) -> anyhow::Error {
    UsageError(anyhow::Error::new(e)).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_resources_exit_2_and_failures_of_the_work_1() {
        let bad = pgraphrag_llm::LlmError::InvalidGguf {
            path: "m.gguf".into(),
            reason: "truncated".into(),
        };
        assert_eq!(exit_code(&anyhow::Error::new(bad).context("loading")), 2);
        let bad = pgraphrag_store::Error::Damaged {
            kind: "generation cache",
            path: "c.sqlite".into(),
            problem: "truncated".into(),
        };
        assert_eq!(exit_code(&anyhow::Error::new(bad)), 2);
        let work = pgraphrag_llm::LlmError::InvalidParams("x".into());
        assert_eq!(exit_code(&anyhow::Error::new(work)), 1);
        assert_eq!(exit_code(&anyhow::anyhow!("the work failed")), 1);
    }
}
