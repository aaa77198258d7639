//! The PostgreSQL profile store as the commands open it (`store`, `queue submit rank
//! --profiles`). Which of its errors are bad input (exit code 2) is
//! `pgraphrag_runs::is_bad_input`'s to say, through `crate::error::exit_code`.
#[cfg(feature = "postgres")]
use pgraphrag_data::Split;
#[cfg(feature = "postgres")]
use pgraphrag_eval::Recipe;
#[cfg(feature = "postgres")]
use pgraphrag_store::postgres::PgProfiles;

/// Opens `dataset` for ranking with `recipe` ([`pgraphrag_eval::store::open_for_ranking`]): a
/// dataset loaded with the other recipe's graph is bad input.
#[cfg(feature = "postgres")]
pub fn open_for_ranking(
    url: &str,
    dataset: &str,
    recipe: Recipe,
) -> anyhow::Result<(Split, PgProfiles)> {
    pgraphrag_eval::store::open_for_ranking(url, dataset, recipe)
        .map_err(|e| anyhow::Error::from(*e))
}
