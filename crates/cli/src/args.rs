//! Flag parsers shared by the subcommands, for library types that cannot derive clap's `ValueEnum`
//! (the library crates do not depend on clap): each lists its values, so `--help` shows them.
use anyhow::Context;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use pgraphrag_core::Task;

use crate::error::OrUsage;

/// Loads `--split`: a file that cannot be read or parsed is bad input (exit code 2).
pub fn load_split(path: &std::path::Path) -> anyhow::Result<pgraphrag_data::Split> {
    pgraphrag_data::load_split(path)
        .with_context(|| {
            format!(
                "loading the split {} (pass a PGraphRAG split such as $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json)",
                path.display()
            )
        })
        .or_usage()
}

/// `--task`: `text`, `title` or `rating` (the notebook's `reviewText`, `reviewTitle` and
/// `reviewRating` also accepted), parsed into [`Task`].
pub fn task() -> impl TypedValueParser<Value = Task> {
    PossibleValuesParser::new([
        PossibleValue::new("text")
            .alias("reviewText")
            .help("Review text generation: the query is the target's title"),
        PossibleValue::new("title")
            .alias("reviewTitle")
            .help("Review title generation: the query is the target's text"),
        PossibleValue::new("rating")
            .alias("reviewRating")
            .help("Rating prediction: the query is \"{title} {text}\""),
    ])
    .try_map(|s| s.parse::<Task>())
}

/// `--summary-scope`: `user` or `question`.
pub fn summary_scope(s: &str) -> Result<pgraphrag_core::SummaryScope, String> {
    s.parse()
        .map_err(|e: pgraphrag_core::UnknownName| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_task_parses() {
        for (name, want) in [
            ("text", Task::Text),
            ("reviewTitle", Task::Title),
            ("rating", Task::Rating),
        ] {
            let cmd = clap::Command::new("t")
                .arg(clap::Arg::new("task").long("task").value_parser(task()));
            let m = cmd.try_get_matches_from(["t", "--task", name]).unwrap();
            assert_eq!(*m.get_one::<Task>("task").unwrap(), want);
        }
        let cmd =
            clap::Command::new("t").arg(clap::Arg::new("task").long("task").value_parser(task()));
        assert!(
            cmd.try_get_matches_from(["t", "--task", "summary"])
                .is_err()
        );
    }
}
