//! Trivial baselines that use no LLM, on the same rows as the grids, scored with the grids'
//! own scorers and tables (issue 36).
//!
//! An audit found that most results tables sit below an answer a few lines of code can give:
//! the first ten words of a review as its title, a constant rating, the title plus another
//! user's review of the same item as the review text. This module makes those answers part of
//! the library so every table can show them.
//!
//! * [`Example`]: what one grid row sees: the target's input and the two pools PGraphRAG
//!   retrieves from (the user's other reviews, [`Example::history`], and the other users'
//!   reviews of the same item, [`Example::neighbors`]), each an [`Earlier`] input/output pair.
//! * [`Predictor`]: the baselines: a constant, the input's first k words or first sentence,
//!   the input itself, the user's latest earlier output, the output of the pool entry most
//!   similar to the input by BM25 (the retrieval crate's [`pgraphrag_retrieval::sparse`]), the
//!   input plus that entry's output, the pool's mean or most common rating.
//!   [`NamedBaseline`] gives one a table name and a fallback for rows it has nothing for.
//! * PGraphRAG ([`pgraphrag_baselines`]): the rows of `pgraphrag bench` ([`bench_rows`], the
//!   same users in the same order for the same `--skip`/`--limit`), their golds
//!   ([`split_golds`], bench's own rule) and pools ([`split_examples`]); constants are chosen
//!   on the users after the evaluated ones ([`validation_rows`]), never on the evaluated rows.
//! * LaMP ([`lamp_baselines`], [`lamp_example`]): LaMP-4/5/6 (headline, title, subject from
//!   the article, abstract or e-mail), LaMP-7 and LaMP-3, on a question's dated profile.
//!   [`lamp_golds`] puts a grid's golds in its question order; [`lamp_validation_golds`] takes
//!   the constants' golds from other users (the builder's dev split). Score them with the
//!   grid's own reading and metrics, [`crate::lamp_grid::LampGrid::scorer`].
//! * [`run_baselines`]: every baseline on every row, scored per row (for paired tests) and
//!   over all rows into the grids' [`crate::ResultsTable`] ([`BaselineReport`]).
//! * [`strongest_vs_best`]: the strongest baseline against the best grid cell on the same
//!   rows, paired per row (the difference, its bootstrap interval, the t-test's p).
//!
//! * multistage writing ([`multistage_baselines`], [`multistage_example`]): the passage start
//!   alone, the author's latest or most similar earlier document, the start followed by that
//!   document, scored with the grid's BLEU and ROUGE ([`MultistageScorer`]).
//!
//! Not here: K-RagRec's popularity and history rankings (`pgraphrag_recsys::Method`, scored by
//! the recommendation evaluation itself).
//!
//! ```
//! use pgraphrag_core::Task;
//! use pgraphrag_eval::{Recipe, RatingScorer, baselines::*};
//! let split = pgraphrag_data::parse_split(br#"[
//!   {"id": "a", "profile": [{"title": "Great", "text": "works", "rating": 5, "pid": "p"}]},
//!   {"id": "b", "profile": [{"title": "Fine", "text": "ok", "rating": 4, "pid": "p"}]},
//!   {"id": "c", "profile": [{"title": "Meh", "text": "meh", "rating": 4, "pid": "q"}]}]"#, "s.json").unwrap();
//! let r = Recipe::ReleasedCode;
//! let rows = bench_rows(split.users.len(), 0, Some(2));
//! let val = split_golds(&split, Task::Rating, validation_rows(split.users.len(), &rows, 200)).unwrap();
//! let baselines = pgraphrag_baselines(Task::Rating, BaselineOptions::default(), &val).unwrap();
//! let examples = split_examples(&split, &r.graph(&split), r.id_policy(), Task::Rating, rows.clone()).unwrap();
//! let golds = split_golds(&split, Task::Rating, rows).unwrap();
//! let report = run_baselines("t", AnswerKind::Rating, &examples, &golds, &baselines, &RatingScorer::default()).unwrap();
//! assert_eq!(report.ids, ["a", "b"]);
//! let item_mean = report.results.iter().find(|r| r.name == "item_mean").unwrap();
//! assert_eq!(item_mean.answers, ["4", "5"]); // the other user's rating of item p
//! ```
mod compare;
mod lamp;
mod multistage;
mod pgraphrag;
mod predict;
mod score;

pub use compare::{BaselineVsCell, CellRows, strongest_vs_best};
pub use lamp::{lamp_baselines, lamp_example, lamp_golds, lamp_validation_golds};
pub use multistage::{MultistageScorer, multistage_baselines, multistage_example};
pub use pgraphrag::{
    BaselineOptions, bench_rows, pgraphrag_baselines, split_examples, split_golds, validation_rows,
};
pub use predict::{
    Bm25Rule, Earlier, Example, MatchOn, NamedBaseline, Pool, Predictor, best_constant_answer,
    constant_candidates, first_sentence, first_words, latest, mean_rating, mode_rating,
    most_similar,
};
pub use score::{AnswerKind, BaselineReport, BaselineResult, run_baselines};
