//! Answers without an LLM on the rows `pgraphrag bench` evaluates (the same users, in the same
//! order, for the same skip and limit), scored with the grid's own scorers into the same
//! results table (`pgraphrag baselines`). The baselines are `pgraphrag_eval::baselines`.
use std::path::PathBuf;

use pgraphrag_core::{Language, Progress, Task};
use pgraphrag_eval::Recipe;
use pgraphrag_eval::baselines::{
    AnswerKind, BaselineOptions, bench_rows, pgraphrag_baselines, run_baselines, split_examples,
    split_golds, validation_rows,
};
use serde::{Deserialize, Serialize};

use super::bench::split_names;
use super::source::{load_split, scorer};
pub use crate::BaselinesReport;
use crate::{Error, Result};

/// The trivial baselines of a PGraphRAG grid.
///
/// ```
/// use pgraphrag_core::Task;
/// use pgraphrag_runs::pgraphrag::BaselinesSpec;
/// let spec = BaselinesSpec::new("amazon_dev.json", Task::Rating);
/// assert_eq!((spec.validation, spec.words), (200, 10));
/// assert!(spec.run(&()).is_err()); // no such split
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaselinesSpec {
    /// The split file.
    pub split: PathBuf,
    /// The task.
    pub task: Task,
    /// Only the first N users after [`BaselinesSpec::skip`] (as the bench's).
    pub limit: Option<usize>,
    /// Users skipped first (as the bench's).
    pub skip: usize,
    /// Users after the evaluated ones on which the constant answers are chosen.
    pub validation: usize,
    /// k of the first-k-words baseline.
    pub words: usize,
    /// The prompt language's sentence rules (`None`: the dataset's).
    pub language: Option<Language>,
    /// WordNet 3.0 for METEOR (`None`: METEOR not computed).
    pub wordnet: Option<PathBuf>,
}

impl BaselinesSpec {
    /// Every user, constants chosen on the next 200, the first 10 words, no METEOR.
    pub fn new(split: impl Into<PathBuf>, task: Task) -> BaselinesSpec {
        BaselinesSpec {
            split: split.into(),
            task,
            limit: None,
            skip: 0,
            validation: 200,
            words: 10,
            language: None,
            wordnet: None,
        }
    }

    /// Answers and scores every evaluated row.
    pub fn run(&self, progress: &dyn Progress) -> Result<BaselinesReport> {
        let task = self.task;
        let (dataset, split_name) = split_names(&self.split);
        let split = load_split(&self.split)?;
        let n = split.users.len();
        let rows = bench_rows(n, self.skip, self.limit);
        if rows.is_empty() {
            return Err(Error::Setting(
                "no users to run (a limit of 0, a skip past the end, or an empty split)".into(),
            ));
        }
        let val_rows = validation_rows(n, &rows, self.validation);
        if val_rows.is_empty() {
            return Err(Error::Setting(format!(
                "no users after the evaluated ones ({}–{} of {n}) to choose the constant answers on: \
                 lower the limit or the skip, or raise the validation users",
                rows.start,
                rows.end - 1
            )));
        }
        let validation_golds = split_golds(&split, task, val_rows.clone())?;
        let options = BaselineOptions {
            words: self.words,
            language: self
                .language
                .unwrap_or_else(|| Language::for_dataset(&dataset)),
        };
        let baselines = pgraphrag_baselines(task, options, &validation_golds)?;

        // The grid's graph (the released code's recipe, as the bench ranks with).
        let recipe = Recipe::ReleasedCode;
        let graph = recipe.graph(&split);
        let examples = split_examples(&split, &graph, recipe.id_policy(), task, rows.clone())?;
        let golds = split_golds(&split, task, rows.clone())?;
        let kind = match task {
            Task::Rating => AnswerKind::Rating,
            Task::Text | Task::Title => AnswerKind::Text,
        };
        let title = format!("{dataset}_{split_name}_{}_baselines", task.reference_name());
        let scorer = scorer(task, self.wordnet.as_deref())?;
        progress.note(&format!(
            "baselines: users {}–{} of {dataset}_{split_name} ({} rows), task {}, {} baselines, \
             constants chosen on users {}–{}",
            rows.start,
            rows.end - 1,
            rows.len(),
            task.reference_name(),
            baselines.len(),
            val_rows.start,
            val_rows.end - 1
        ));
        let report = run_baselines(title, kind, &examples, &golds, &baselines, scorer.as_ref())?;
        let mut markdown = report.to_markdown();
        markdown.push_str(&format!(
            "\nRows: users {}–{} of the split in file order, counted from 0 (`pgraphrag bench \
             --skip {} --limit {}`); `const_val` chosen on the gold answers of users {}–{}.\n",
            rows.start,
            rows.end - 1,
            self.skip,
            rows.len(),
            val_rows.start,
            val_rows.end - 1
        ));
        Ok(BaselinesReport {
            markdown,
            predictions: report.to_jsonl()?,
            csv: report.table.to_csv(),
            comparison: None,
        })
    }
}
