//! Ranking from the PostgreSQL profile store (feature `postgres`): a dataset opened for a
//! recipe, refused when it was loaded with the other recipe's graph.
use pgraphrag_data::Split;
use pgraphrag_store::postgres::{self as pg, PgProfiles};

use crate::Recipe;

/// Why a dataset cannot be ranked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store failed (connection, schema, dataset, partition, query).
    #[error(transparent)]
    Store(#[from] pg::Error),
    /// The dataset was loaded with the other recipe's graph options.
    #[error(
        "dataset {dataset} was loaded with duplicates {duplicates} and ids {ids}, but {wanted} ranking needs {need}: \
         {fix}"
    )]
    Recipe {
        /// The dataset.
        dataset: String,
        /// Its duplicate handling, as stored.
        duplicates: String,
        /// Its id policy, as stored.
        ids: String,
        /// The ranking asked for (`--clean` or the released code's).
        wanted: &'static str,
        /// What that ranking needs.
        need: String,
        /// What to do.
        fix: &'static str,
    },
}

/// Opens `dataset` at `url` for ranking with `recipe`: its targets (each user's `profile[0]`,
/// in file order) and the profile source, after checking that the dataset holds the graph
/// `recipe` builds (its duplicate handling and id policy).
///
/// ```no_run
/// use pgraphrag_eval::{Recipe, store::open_for_ranking};
/// let (targets, profiles) = open_for_ranking("postgres://postgres@127.0.0.1:55432/postgres", "amazon_dev", Recipe::ReleasedCode).unwrap();
/// println!("{} users, {:?}", targets.users.len(), profiles.info().name);
/// ```
pub fn open_for_ranking(
    url: &str,
    dataset: &str,
    recipe: Recipe,
) -> Result<(Split, PgProfiles), Box<StoreError>> {
    let profiles = PgProfiles::open(url, dataset).map_err(StoreError::from)?;
    let want = (recipe.graph_options(), recipe.id_policy());
    if profiles.options() != Some(want) {
        let info = profiles.info();
        let clean = recipe == Recipe::Clean;
        return Err(Box::new(StoreError::Recipe {
            dataset: dataset.to_string(),
            duplicates: info.duplicates.clone(),
            ids: info.ids.clone(),
            wanted: if clean {
                "--clean"
            } else {
                "the released code's"
            },
            need: format!("{:?} and {:?}", want.0.duplicates, want.1),
            fix: if clean {
                "rank without --clean, or reload it (pgraphrag store load --replace --clean)"
            } else {
                "rank with --clean, or reload it (pgraphrag store load --replace)"
            },
        }));
    }
    let targets = profiles.targets().map_err(StoreError::from)?;
    Ok((targets, profiles))
}
