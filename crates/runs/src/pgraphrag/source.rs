//! Where the PGraphRAG runs' targets and candidates come from (a split file, or a store
//! dataset), and the grid's scorer.
use std::path::Path;

use pgraphrag_data::Split;
use pgraphrag_eval::Recipe;
use pgraphrag_eval::rank::Candidates;
use pgraphrag_eval::{RatingScorer, Scorer, TextScorer};
use pgraphrag_metrics::Meteor;
use pgraphrag_prompt::pgraphrag::Task;

use crate::jobs::StoreProfiles as Profiles;
use crate::{Error, Result};

/// Reads a PGraphRAG split; a file that cannot be read or parsed, a value outside its domain
/// (a rating off 1–5) or a repeated user id (whose held-out target would leak into the other
/// record's profile) is the caller's input at fault.
///
/// ```
/// let e = pgraphrag_runs::pgraphrag::load_split("no/such/amazon_dev.json".as_ref()).unwrap_err();
/// assert!(e.is_bad_input());
/// ```
pub fn load_split(path: &Path) -> Result<Split> {
    let split = pgraphrag_data::load_split(path).map_err(Error::input(format!(
        "loading the split {} (pass a PGraphRAG split such as $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json)",
        path.display()
    )))?;
    split.check_unique_ids(path).map_err(Error::invalid)?;
    Ok(split)
}

/// The targets and candidates of a store dataset, checked to have been loaded for `recipe`.
#[cfg(feature = "postgres")]
pub(super) fn open_profiles(p: &Profiles, recipe: Recipe) -> Result<(Split, Candidates)> {
    let (targets, profiles) = pgraphrag_eval::store::open_for_ranking(&p.url, &p.dataset, recipe)
        .map_err(|e| Error::Library(e as crate::BoxError))?;
    Ok((targets, Candidates::Store(Box::new(profiles))))
}

/// Without the `postgres` feature a store dataset is a setting this build cannot run.
#[cfg(not(feature = "postgres"))]
pub(super) fn open_profiles(_: &Profiles, _: Recipe) -> Result<(Split, Candidates)> {
    Err(Error::Setting(
        "a store dataset needs pgraphrag built with PostgreSQL support (feature `postgres`)".into(),
    ))
}

/// The grid's scorer for `task`: MAE and RMSE for ratings; ROUGE, BLEU and (with WordNet)
/// METEOR for text and titles.
pub(super) fn scorer(task: Task, wordnet: Option<&Path>) -> Result<Box<dyn Scorer>> {
    Ok(match task {
        Task::Rating => Box::new(RatingScorer::default()),
        Task::Text | Task::Title => {
            let meteor = crate::metrics::load_wordnet(wordnet)?
                .map(|wn| Meteor::with_wordnet(wn, Default::default()));
            Box::new(TextScorer::new(meteor))
        }
    })
}
