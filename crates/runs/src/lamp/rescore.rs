//! A LaMP grid's table recomputed from its committed predictions files
//! (`<cell>-seed<s>_outputs.json`), the questions and the golds alone: no model, no prompt, no
//! cache (`pgraphrag lamp rescore`). The test command checks every committed grid this way.
use std::path::{Path, PathBuf};

use pgraphrag_core::LampTask;
use pgraphrag_eval::RunDir;
use pgraphrag_eval::lamp_grid::{AnswerReading, LampConfig, LampGrid, table3_configs};
use serde::{Deserialize, Serialize};

use super::files::{grid_runs, read_questions};
use crate::{Error, Result};

/// Recomputes a grid's `results.md`, `results.csv` and `results.svg` from its predictions.
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_runs::lamp::RescoreSpec;
/// let spec = RescoreSpec::new(LampTask::Lamp3, "train_questions.json", "train_outputs.json", "docs/results/lamp/ml100k");
/// assert_eq!(spec.seeds, [0]);
/// assert!(spec.run(std::path::Path::new("out")).is_err()); // no such questions file
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RescoreSpec {
    /// The grid's LaMP questions file.
    pub questions: PathBuf,
    /// Its outputs file (the golds).
    pub outputs: PathBuf,
    /// The task.
    pub task: LampTask,
    /// The grid's limit (its first N questions).
    pub limit: Option<usize>,
    /// The grid's reading of the answers.
    pub reading: AnswerReading,
    /// The grid's cells (`None`: the paper's Table 3).
    pub configs: Option<Vec<LampConfig>>,
    /// The grid's seeds.
    pub seeds: Vec<u64>,
    /// The grid's folder, holding `<cell>-seed<s>_outputs.json` per cell and seed.
    pub grid: PathBuf,
}

impl RescoreSpec {
    /// Every question, strict reading, Table 3's cells, seed 0.
    pub fn new(
        task: LampTask,
        questions: impl Into<PathBuf>,
        outputs: impl Into<PathBuf>,
        grid: impl Into<PathBuf>,
    ) -> RescoreSpec {
        RescoreSpec {
            questions: questions.into(),
            outputs: outputs.into(),
            task,
            limit: None,
            reading: AnswerReading::Strict,
            configs: None,
            seeds: vec![0],
            grid: grid.into(),
        }
    }

    /// Scores the predictions and writes the table's three files into `out`; returns the
    /// Markdown.
    pub fn run(&self, out: &Path) -> Result<String> {
        let task = self.task;
        let mut questions = read_questions(&self.questions, task, "")?;
        if let Some(n) = self.limit {
            questions.truncate(n);
        }
        let golds = pgraphrag_data::lamp::read_outputs_for(&self.outputs, task)
            .map_err(Error::input("reading the outputs file"))?;
        let mut grid = LampGrid::new(task, self.configs.clone().unwrap_or_else(table3_configs));
        grid.reading = self.reading;
        let runs = grid_runs(&self.grid, task, &grid.configs, &self.seeds, &questions)?;
        let ids: Vec<String> = questions.iter().map(|q| q.id.clone()).collect();
        let stem = self
            .questions
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let title = format!("{task} {stem} ({} questions)", questions.len());
        let table = grid.table(&title, &ids, &runs, &golds)?;
        let markdown = table.to_markdown();
        RunDir::new(out).write_results(&markdown, &table.to_results_table())?;
        Ok(markdown)
    }
}
