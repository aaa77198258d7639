//! The PostgreSQL profile store as the commands open it (`store`, `rank --store`, `bench
//! --store`, `queue submit rank --profiles`): which of its errors are bad input, a dataset
//! opened for ranking, and the ranking of a split's targets from it. Without the `postgres`
//! feature, `--store` is a usage error.
use pgraphrag_core::{Progress, RankedProfile};
use pgraphrag_data::Split;
use pgraphrag_eval::Recipe;
use pgraphrag_eval::rank::Candidates;
use pgraphrag_retrieval::profile::{CandidateRanker, ProfileRanker, Task};
#[cfg(feature = "postgres")]
use pgraphrag_store::postgres::{self as pg, PgProfiles};

#[cfg(feature = "postgres")]
use crate::error::UsageError;
use crate::error::usage;

/// A store error for `anyhow`: bad input (exit code 2) when the URL, the dataset, the schema
/// or an input file is what needs fixing.
#[cfg(feature = "postgres")]
pub fn store_err(e: pg::Error) -> anyhow::Error {
    let input = matches!(
        e,
        pg::Error::Url { .. }
            | pg::Error::Connect { .. }
            | pg::Error::SchemaVersion { .. }
            | pg::Error::NoDataset { .. }
            | pg::Error::MissingPartition { .. }
            | pg::Error::DatasetName { .. }
            | pg::Error::Exists { .. }
            | pg::Error::Jsonl { .. }
            | pg::Error::Io { .. }
    );
    if input {
        UsageError(e.into()).into()
    } else {
        e.into()
    }
}

/// Opens `dataset` for ranking with `recipe` ([`pgraphrag_eval::store::open_for_ranking`]): a
/// dataset loaded with the other recipe's graph is bad input.
#[cfg(feature = "postgres")]
pub fn open_for_ranking(
    url: &str,
    dataset: &str,
    recipe: Recipe,
) -> anyhow::Result<(Split, PgProfiles)> {
    use pgraphrag_eval::store::{StoreError, open_for_ranking};
    open_for_ranking(url, dataset, recipe).map_err(|e| match *e {
        StoreError::Store(e) => store_err(e),
        e => usage(e.to_string()),
    })
}

/// Ranks `split`'s targets with candidates from `dataset` in the store at `url` (`pgraphrag
/// bench --store`).
pub fn rank_from_store<R: CandidateRanker>(
    url: &str,
    dataset: &str,
    recipe: Recipe,
    split: &Split,
    task: Task,
    ranker: ProfileRanker<R>,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<RankedProfile>> {
    let (_, source) = open_store(url, dataset, recipe)?;
    Ok(source.rank_all(split, recipe.id_policy(), task, ranker, progress)?)
}

/// The targets and candidates of `dataset` in the store at `url` (`rank --store`, `bench
/// --store`).
#[cfg(feature = "postgres")]
pub fn open_store(url: &str, dataset: &str, recipe: Recipe) -> anyhow::Result<(Split, Candidates)> {
    let (targets, profiles) = open_for_ranking(url, dataset, recipe)?;
    Ok((targets, Candidates::Store(Box::new(profiles))))
}

#[cfg(not(feature = "postgres"))]
pub fn open_store(
    _url: &str,
    _dataset: &str,
    _recipe: Recipe,
) -> anyhow::Result<(Split, Candidates)> {
    Err(usage(
        "--store needs a pgraphrag built with PostgreSQL support: cargo build -p pgraphrag-cli --features postgres",
    ))
}
