//! What the corpus builders (`corpus lamp`, `multistage build`) share.
use std::path::Path;

use pgraphrag_corpora::Report;
use pgraphrag_corpora::lamp::BuildOptions;

use crate::error::usage;

/// The usage error of a build from `input` that made no `what` (every candidate skipped, for
/// the reasons `report` counts), with the rules of `opts` a candidate must meet.
pub(crate) fn nothing_built(
    input: &Path,
    what: &str,
    report: &Report,
    opts: &BuildOptions,
) -> anyhow::Error {
    usage(format!(
        "{}: no {what} could be made ({report}); a target needs at least {} characters and {} \
         earlier documents by its author, and an author at least {} targets",
        input.display(),
        opts.min_target_chars,
        opts.min_profile,
        opts.min_targets_per_author
    ))
}
