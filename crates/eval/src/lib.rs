#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-eval
//!
//! Experiment grids for pgraphrag: named recipes, whole-split ranking, PGraphRAG's (mode, k)
//! grid run through a resumable, SQLite-cached generator, PGraphRAG's OUTPUT files, and
//! results tables (Markdown/CSV/SVG).
//!
//! * [`Recipe`]: the released code's semantics ([`Recipe::ReleasedCode`]) or the library's
//!   clean ones ([`Recipe::Clean`]), every preset (graph, ids, profile ranking, ties,
//!   extraction) from one value.
//! * [`rank_all`]: every user of a split ranked into ranking-file records.
//! * [`GenerationCache`] / [`CachedGenerator`]: (model id, prompt, parameters) → output,
//!   written after every generation (WAL, `synchronous=FULL`): a crash or Ctrl-C loses no
//!   finished work and a rerun computes nothing twice.
//! * [`pgraphrag_grid`], [`Bench`]: the grid of `master_generation.py` (`none` and `random`
//!   at k = 1 only), identical prompts generated once, progress through a
//!   [`pgraphrag_core::Progress`]; any [`pgraphrag_core::Generator`] (also `Box<dyn Generator>`).
//! * [`RunName`], [`write_output_file`]: `OUTPUT-{ds}_{split}_{task}_{MODEL}_{ranker}-{mode}_k{k}.json`.
//! * [`ResultsTable`], [`Scorer`], [`TextScorer`] (ROUGE-1/L, METEOR), [`RatingScorer`]
//!   (MAE/RMSE): extraction, scores, tables (Markdown, CSV, and SVG bar charts with
//!   [`ResultsTable::to_svg`]; [`ResultsTable::from_csv`] reads a CSV back).
//! * [`ranked_profile`]: a `pgraphrag-data` ranking record as a prompt input.
//!
//! The `pgraphrag bench` command wires these to a split, BM25 ranking, a model and the
//! metrics; see `docs/bench.md`.
#![deny(missing_docs)]

mod cache;
mod error;
mod grid;
mod output;
mod plot;
pub mod rank;
pub mod recipe;
mod table;

pub use cache::{CacheStats, CachedGenerator, GenerationCache};
pub use error::{Error, Result};
pub use grid::{Bench, ConfigOutputs, RunConfig, RunStats, UserOutput, Wrapper, pgraphrag_grid};
pub use output::{RunName, python_json, read_output_file, write_atomic, write_output_file};
pub use rank::{RankingSummary, rank_all, ranking_file_name};
pub use recipe::Recipe;
pub use table::{RatingParse, RatingScorer, ResultRow, ResultsTable, Scorer, TextScorer, gold};

use pgraphrag_core::Entry;
use pgraphrag_data::RankingRecord;
use pgraphrag_prompt::pgraphrag::RankedProfile;

/// A ranking-file record as the prompt's input, as `UserProfile.__init__` reads it: the
/// target's raw title/text/rating, and title, text and rating of each ranked review.
///
/// ```
/// let rec: pgraphrag_data::RankingRecord = serde_json::from_str(r#"{"user_id": "u", "product_id": "p",
///   "user_review_text": "x", "user_review_title": "t", "user_review_rating": 4,
///   "user_ratings": [], "neighbor_ratings": [{"user_id": "v", "reviewRating": 5,
///   "reviewTitle": "None", "reviewText": "y", "doc_id": 3}], "random_review": null}"#).unwrap();
/// let p = pgraphrag_eval::ranked_profile(&rec);
/// assert_eq!(p.neighbors[0].title.as_deref(), Some("None"));
/// assert_eq!(p.target.rating, Some(4.0));
/// assert!(p.random.is_none());
/// ```
pub fn ranked_profile(rec: &RankingRecord) -> RankedProfile {
    let e = |title: &str, text: &str, rating: Option<i64>, id: usize| Entry {
        id,
        title: Some(title.to_string()),
        text: Some(text.to_string()),
        rating: rating.map(|r| r as f64),
        ..Default::default()
    };
    RankedProfile {
        user_id: rec.user_id.clone(),
        target: Entry {
            author: rec.user_id.clone(),
            title: rec.user_review_title.clone(),
            text: rec.user_review_text.clone(),
            rating: rec.user_review_rating.map(|r| r as f64),
            ..Default::default()
        },
        user: rec
            .user_ratings
            .iter()
            .map(|r| e(&r.review_title, &r.review_text, r.review_rating, r.doc_id))
            .collect(),
        neighbors: rec
            .neighbor_ratings
            .iter()
            .map(|r| e(&r.review_title, &r.review_text, r.review_rating, r.doc_id))
            .collect(),
        random: rec
            .random_review
            .as_ref()
            .map(|r| e(&r.review_title, &r.review_text, r.review_rating, r.doc_id)),
    }
}
