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

/// The process exit code for an error: 2 when a [`UsageError`] is anywhere in its chain, or
/// an error that [`pgraphrag_runs::is_bad_input`] says is the caller's (a run's setting or
/// input, a refused output, a damaged model, index or store); 1 otherwise.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.chain()
        .any(|c| c.is::<UsageError>() || pgraphrag_runs::is_bad_input(c))
    {
        2
    } else {
        1
    }
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
