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
//! * [`rank_all`]: every user of a split ranked into [`pgraphrag_core::RankedProfile`]s.
//! * [`GenerationCache`] / [`CachedGenerator`]: (model id, prompt, parameters) → output,
//!   written after every generation (WAL, `synchronous=FULL`): a crash or Ctrl-C loses no
//!   finished work and a rerun computes nothing twice.
//! * [`pgraphrag_grid`], [`Bench`]: the grid of `master_generation.py` (`none` and `random`
//!   at k = 1 only), identical prompts generated once, progress through a
//!   [`pgraphrag_core::Progress`]; any [`pgraphrag_core::Generator`] (also `Box<dyn Generator>`).
//! * [`Bench::prompt_records`], [`PromptRecord`], [`write_prompt_records`]: the grid's prompts
//!   with their gold answers as `{"prompt", "target"}` JSON lines, to fine-tune the generator.
//! * [`RunName`], [`write_output_file`]: `OUTPUT-{ds}_{split}_{task}_{MODEL}_{ranker}-{mode}_k{k}.json`.
//! * [`ResultsTable`], [`Scorer`], [`TextScorer`] (ROUGE-1/L, METEOR), [`RatingScorer`]
//!   (MAE/RMSE): extraction, scores, tables (Markdown, CSV, and SVG bar charts with
//!   [`ResultsTable::to_svg`]; [`ResultsTable::from_csv`] reads a CSV back).
//! * [`RunDir`], [`RowsFile`], [`Journal`]: a run's files: result files written atomically,
//!   the resumable rows file with its settings manifest (a run with other settings refused, a
//!   torn last line cut off), the journal of finished units.
//! * [`vs_best_constant`]: a rating grid against answering the same rating for every user,
//!   paired over users with bootstrap intervals.
//! * [`baselines`]: answers without an LLM (constants, the input's first words or sentence,
//!   copies of the user's or a neighbour's earlier output, mean ratings) on the grids' rows,
//!   scored per row and into the same [`ResultsTable`]; `pgraphrag baselines` runs them.
//!
//! * [`lamp`]: LaMP's prompts end to end (query, BM25 over `str.split()` with rank_bm25's tie
//!   order, top-k, the token budget), inputs LaMP cannot prompt counted, not errors.
//! * [`lamp_grid`]: the summary-augmented paper's Table 3 grid (`base_k0/1/4`, `sum_k0/1`)
//!   through the generation cache, scored as LaMP's `evaluation.py`, with bootstrap intervals
//!   and paired t-tests against `base_k4`.
//!
//! * [`cold_start`]: beyond the papers, summaries of the target item's other reviews in the
//!   PGraphRAG prompt for users without history (`isum_` cells), against `both_k4`.
//!
//! * [`multistage`]: the multistage writing paper's Table 2 grid (zero-shot cells, BLEU and
//!   ROUGE with intervals and paired t-tests) and its training-data export.
//!
//! The `pgraphrag bench` command wires these to a split, BM25 ranking, a model and the
//! metrics; see `docs/bench.md`.
#![deny(missing_docs)]

pub mod baselines;
pub mod cold_start;
mod constant;
mod error;
mod export;
mod grid;
pub mod lamp;
pub mod lamp_grid;
pub mod multistage;
mod output;
mod plot;
pub mod rank;
pub mod recipe;
mod run_dir;
#[cfg(feature = "postgres")]
pub mod store;
mod table;

pub use constant::{
    CellVsConstant, ConstantComparison, ConstantScore, best_constant, constant_scores,
    vs_best_constant,
};
pub use error::{Error, Result};
pub use export::{PromptRecord, answer_text, write_prompt_records};
pub use grid::{Bench, ConfigOutputs, RunConfig, RunStats, UserOutput, Wrapper, pgraphrag_grid};
pub use output::{RunName, python_json, read_output_file, write_output_file};
/// The generation cache and its [`pgraphrag_core::Generator`] layer live in the store crate.
pub use pgraphrag_store::{CacheStats, CachedError, CachedGenerator, GenerationCache};
pub use rank::{RankingSummary, rank_all, rank_all_from, ranking_file_name, skip_users};
pub use recipe::Recipe;
pub use run_dir::{Journal, Resumed, RowsFile, RunDir, check_settings, manifest_path};
pub use table::{
    RatingParse, RatingScorer, ResultRow, ResultsTable, Scorer, TABLE_DECIMALS, TextScorer,
    csv_value, gold, markdown_p, markdown_value, paired_p_values, table_value,
};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
