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

/// The process exit code for an error: 2 when a [`UsageError`] or a refused output
/// ([`crate::output::is_refusal`]) is anywhere in its chain.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.chain()
        .any(|c| c.is::<UsageError>() || crate::output::is_refusal(c))
    {
        2
    } else {
        1
    }
}
