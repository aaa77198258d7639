//! Answers without an LLM on the questions the LaMP grid scores (the same questions file,
//! order and limit, golds from the same outputs file), read and scored with the grid's own
//! reading and metrics, and, given the grid's folder, the strongest of them against the grid's
//! best cell, paired per question.
use std::path::PathBuf;

use pgraphrag_core::LampTask;
use pgraphrag_eval::baselines::{
    AnswerKind, BaselineVsCell, CellRows, lamp_baselines, lamp_example, lamp_golds,
    lamp_validation_golds, run_baselines, strongest_vs_best,
};
use pgraphrag_eval::lamp_grid::{AnswerReading, LampConfig, LampGrid, table3_configs};
use serde::{Deserialize, Serialize};

use super::files::{file_name, grid_runs, read_questions};
pub use crate::BaselinesReport;
use crate::{Error, Result};

/// The trivial baselines of a LaMP grid (`pgraphrag lamp baselines`).
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_runs::lamp::BaselinesSpec;
/// let spec = BaselinesSpec::new(LampTask::Lamp6, "train_q.json", "train_o.json", "dev_q.json", "dev_o.json");
/// assert_eq!((spec.words, spec.limit), (10, None));
/// assert!(spec.run().is_err()); // no such files
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaselinesSpec {
    /// The grid's LaMP questions file.
    pub questions: PathBuf,
    /// Its outputs file (the golds).
    pub outputs: PathBuf,
    /// The task: LaMP-3, 4, 5, 6 or 7.
    pub task: LampTask,
    /// Only the first N questions, as the grid's limit.
    pub limit: Option<usize>,
    /// Questions of other users: the constant answer is chosen on their golds, never on the
    /// evaluated users'.
    pub validation_questions: PathBuf,
    /// The outputs file of [`BaselinesSpec::validation_questions`].
    pub validation_outputs: PathBuf,
    /// How answers are read before scoring (the grid's).
    pub reading: AnswerReading,
    /// k of the first-k-words baseline.
    pub words: usize,
    /// The grid's output folder: compare the strongest baseline with its best cell.
    pub grid: Option<PathBuf>,
    /// The grid's cells (`None`: the paper's Table 3).
    pub configs: Option<Vec<LampConfig>>,
    /// The grid's seeds (a cell's per-question score is the mean over them).
    pub seeds: Vec<u64>,
    /// The grid's model was fine-tuned (`lamp grid --adapter`), as the comparison says;
    /// otherwise zero-shot.
    #[serde(default)]
    pub fine_tuned: bool,
}

impl BaselinesSpec {
    /// Every question, strict reading, the first 10 words, no grid.
    pub fn new(
        task: LampTask,
        questions: impl Into<PathBuf>,
        outputs: impl Into<PathBuf>,
        validation_questions: impl Into<PathBuf>,
        validation_outputs: impl Into<PathBuf>,
    ) -> BaselinesSpec {
        BaselinesSpec {
            questions: questions.into(),
            outputs: outputs.into(),
            task,
            limit: None,
            validation_questions: validation_questions.into(),
            validation_outputs: validation_outputs.into(),
            reading: AnswerReading::Strict,
            words: 10,
            grid: None,
            configs: None,
            seeds: vec![0],
            fine_tuned: false,
        }
    }

    /// Answers, scores and (with a grid) compares.
    pub fn run(&self) -> Result<BaselinesReport> {
        let task = self.task;
        let mut questions = read_questions(&self.questions, task, "")?;
        if let Some(n) = self.limit {
            questions.truncate(n);
        }
        let all_golds = pgraphrag_data::lamp::read_outputs_for(&self.outputs, task)
            .map_err(Error::input("reading the outputs file"))?;
        let golds = lamp_golds(&questions, &all_golds).map_err(Error::invalid)?;
        let validation = read_questions(&self.validation_questions, task, "")?;
        let validation_golds =
            pgraphrag_data::lamp::read_outputs_for(&self.validation_outputs, task)
                .map_err(Error::input("reading the validation outputs file"))?;
        let validation_golds = lamp_validation_golds(&questions, &validation, &validation_golds)
            .map_err(Error::invalid)?;
        let baselines =
            lamp_baselines(task, self.words, &validation_golds).map_err(Error::invalid)?;
        let examples = questions
            .iter()
            .map(|q| lamp_example(task, q))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::invalid)?;

        let mut grid = LampGrid::new(task, self.configs.clone().unwrap_or_else(table3_configs));
        grid.reading = self.reading;
        let scorer = grid.scorer(&all_golds);
        let kind = match task {
            LampTask::Lamp3 => AnswerKind::Rating,
            _ => AnswerKind::Text,
        };
        let stem = self
            .questions
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let n = questions.len();
        let title = format!("{task} {stem} ({n} questions): trivial baselines");
        let report = run_baselines(title, kind, &examples, &golds, &baselines, &scorer)?;

        let comparison = match &self.grid {
            Some(dir) => {
                let runs = grid_runs(dir, task, &grid.configs, &self.seeds, &questions)?;
                let ids: Vec<String> = questions.iter().map(|q| q.id.clone()).collect();
                let cells: Vec<CellRows> = grid
                    .cell_scores(&ids, &runs, &all_golds)?
                    .into_iter()
                    .map(|c| CellRows {
                        name: c.config.to_string(),
                        scores: c.scores.into_iter().next().unwrap_or_default(),
                    })
                    .collect();
                let column = report.table.columns[0].clone();
                let mut c = strongest_vs_best(&report, &column, column == "MAE", &cells)?;
                if self.fine_tuned {
                    c.regime = "fine-tuned".into();
                }
                Some((file_name(dir), c))
            }
            None => None,
        };

        let mut md = String::new();
        if let Some((name, c)) = &comparison {
            let seeds = match self.seeds.as_slice() {
                [s] => format!("seed {s}"),
                more => format!(
                    "mean over seeds {}",
                    more.iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            md.push_str(&c.headline(name, Some(&seeds), "questions"));
        }
        md.push_str(&report.to_markdown());
        md.push_str(&format!(
            "\nRows: the first {n} questions of `{}` in file order, as `pgraphrag lamp grid --limit \
             {n}` scores them, golds from `{}`; answers read with `--reading {}` and scored \
             as the grid scores its cells. `const_val` is chosen on the golds of the {} questions \
             of `{}` (other users: none of them has an evaluated question).\n",
            file_name(&self.questions),
            file_name(&self.outputs),
            self.reading.name(),
            validation.len(),
            file_name(&self.validation_questions),
        ));
        let row = comparison.as_ref().map(|(name, c)| {
            format!(
                "{}{}",
                BaselineVsCell::markdown_header(),
                c.to_markdown_row(name)
            )
        });
        if let Some(row) = &row {
            md.push('\n');
            md.push_str(row);
        }
        Ok(BaselinesReport {
            markdown: md,
            predictions: report.to_jsonl()?,
            csv: report.table.to_csv(),
            comparison: row,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgraphrag_core::{LampGold, LampQuestion};

    #[test]
    fn grid_answers_must_be_for_the_same_questions() {
        let dir = tempfile::tempdir().unwrap();
        let cell = LampConfig {
            k: 0,
            summary: false,
        };
        let qs = [LampQuestion::new("a", "x"), LampQuestion::new("b", "y")];
        let write = |task, ids: &[&str]| {
            let answers: Vec<LampGold> = ids
                .iter()
                .map(|id| LampGold {
                    id: id.to_string(),
                    output: "4".into(),
                })
                .collect();
            let p = dir.path().join("base_k0-seed0_outputs.json");
            pgraphrag_data::lamp::write_outputs(&p, task, &answers).unwrap();
        };
        write(LampTask::Lamp3, &["a", "b"]);
        let runs = grid_runs(dir.path(), LampTask::Lamp3, &[cell], &[0], &qs).unwrap();
        assert_eq!(runs[0].outputs, ["4", "4"]);
        write(LampTask::Lamp3, &["b", "a"]);
        let e = grid_runs(dir.path(), LampTask::Lamp3, &[cell], &[0], &qs).unwrap_err();
        assert!(e.to_string().contains("answers other questions"), "{e}");
        write(LampTask::Lamp4, &["a", "b"]);
        let e = grid_runs(dir.path(), LampTask::Lamp3, &[cell], &[0], &qs).unwrap_err();
        assert!(e.to_string().contains("not of LaMP-3"), "{e}");
        let e = grid_runs(dir.path(), LampTask::Lamp3, &[cell], &[1], &qs).unwrap_err();
        assert!(format!("{e:#}").contains("seed1"), "{e:#}");
    }
}
