//! Scoring a grid's answers as LaMP's `evaluation.py` does, and summarising each cell over its
//! seeds with bootstrap intervals and paired t-tests ([`LampGrid::results`]).

use std::collections::HashMap;

use pgraphrag_core::{LampGold, LampTask};
use pgraphrag_metrics::rating::lamp_rating;
use pgraphrag_metrics::stats::{BootstrapDraws, paired_t_test};
use pgraphrag_metrics::{Rouge, RougeOptions};
use pgraphrag_text::py;
use serde::Serialize;

use super::{AnswerReading, LampCellRun, LampConfig, LampGrid, LampPlan};
use crate::{Error, Result, Scorer};

/// One row of a [`LampTable`]: a cell's scores averaged over seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LampRow {
    /// The cell's name (`base_k4`, `sum_k1`).
    pub config: String,
    /// Questions scored.
    pub n: usize,
    /// Seeds averaged.
    pub seeds: usize,
    /// Per metric: the score (mean over seeds).
    pub mean: Vec<f64>,
    /// Per metric: the 95% bootstrap interval over questions (1,000 resamples).
    pub interval: Vec<(f64, f64)>,
    /// Per metric: the paired two-sided t-test p-value against the baseline cell (NaN for the
    /// baseline itself or where every difference is equal).
    pub p_vs_baseline: Vec<f64>,
    /// Answers that could not be read (LaMP-3: not a number; LaMP-1/2: not a label).
    pub unreadable: usize,
}

/// The grid's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LampTable {
    /// A title line.
    pub title: String,
    /// Metric names (`MAE`, `RMSE`; `accuracy`; `ROUGE-1`, `ROUGE-L`).
    pub columns: Vec<String>,
    /// The baseline the p-values compare with.
    pub baseline: String,
    /// One row per cell.
    pub rows: Vec<LampRow>,
}

/// One cell's scores per question, averaged over its seeds: what [`LampGrid::results`]
/// summarises into a [`LampRow`], and what paired tests against another system on the same
/// questions take ([`LampGrid::cell_scores`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LampCellScores {
    /// The cell.
    pub config: LampConfig,
    /// Seeds averaged.
    pub seeds: usize,
    /// Per metric, per question: the score averaged over seeds (LaMP-3: the absolute error for
    /// `MAE` and the squared error for `RMSE`, whose table value is the root of the mean).
    pub scores: Vec<Vec<f64>>,
    /// Unreadable answers, summed over seeds.
    pub unreadable: usize,
}

impl LampGrid {
    /// Every cell's per-question scores against `golds` (matched by question id; `ids` are the
    /// questions in grid order, [`LampPlan::ids`]), each averaged over the cell's runs (seeds),
    /// read and scored as [`LampGrid::results`] does.
    ///
    /// ```
    /// use pgraphrag_core::{LampGold, LampTask};
    /// use pgraphrag_eval::lamp_grid::{AnswerReading, LampCellRun, LampConfig, LampGrid};
    /// let cell = LampConfig { k: 0, summary: false };
    /// let mut grid = LampGrid::new(LampTask::Lamp3, vec![cell]);
    /// grid.reading = AnswerReading::FirstLabel;
    /// let ids = ["a".to_string(), "b".to_string()];
    /// let golds = [LampGold { id: "b".into(), output: "2".into() }, LampGold { id: "a".into(), output: "5".into() }];
    /// let runs = [LampCellRun { config: cell, seed: 0, outputs: vec!["Score: 4".into(), "5".into()] }];
    /// let s = grid.cell_scores(&ids, &runs, &golds).unwrap();
    /// assert_eq!(s[0].scores[0], [1.0, 3.0]); // absolute errors
    /// assert_eq!(s[0].scores[1], [1.0, 9.0]); // squared errors
    /// ```
    pub fn cell_scores(
        &self,
        ids: &[String],
        runs: &[LampCellRun],
        golds: &[LampGold],
    ) -> Result<Vec<LampCellScores>> {
        let by_id: HashMap<&str, &str> = golds
            .iter()
            .map(|g| (g.id.as_str(), g.output.as_str()))
            .collect();
        let mut gold = Vec::with_capacity(ids.len());
        for id in ids {
            match by_id.get(id.as_str()) {
                Some(g) => gold.push(*g),
                None => {
                    return Err(Error::InvalidInput(format!(
                        "question {id:?} has no gold output"
                    )));
                }
            }
        }
        let labels = self.labels(golds);
        let columns = metric_names(self.task);
        let mut cells = Vec::with_capacity(self.configs.len());
        for &config in &self.configs {
            let mine: Vec<&LampCellRun> = runs.iter().filter(|r| r.config == config).collect();
            let Some(first) = mine.first() else {
                return Err(Error::Scoring {
                    config: config.to_string(),
                    message: "no runs".into(),
                });
            };
            let n = first.outputs.len();
            if n != gold.len() {
                return Err(Error::Scoring {
                    config: config.to_string(),
                    message: format!("{n} answers for {} questions", gold.len()),
                });
            }
            let mut sums = vec![vec![0.0; n]; columns.len()];
            let mut unreadable = 0;
            for run in &mine {
                let scored = score_run(self.task, self.reading, &run.outputs, &gold, &labels)
                    .map_err(|message| Error::Scoring {
                        config: config.to_string(),
                        message,
                    })?;
                unreadable += scored.1;
                for (m, col) in scored.0.into_iter().enumerate() {
                    for (i, v) in col.into_iter().enumerate() {
                        sums[m][i] += v / mine.len() as f64;
                    }
                }
            }
            cells.push(LampCellScores {
                config,
                seeds: mine.len(),
                scores: sums,
                unreadable,
            });
        }
        Ok(cells)
    }

    /// Scores every run against `golds` (matched by question id) and summarises each cell
    /// over its seeds ([`LampGrid::cell_scores`]). The baseline of the p-values is `base_k4`
    /// when the grid has it, else the first cell.
    pub fn results(
        &self,
        title: &str,
        plan: &LampPlan,
        runs: &[LampCellRun],
        golds: &[LampGold],
    ) -> Result<LampTable> {
        self.table(title, &plan.ids, runs, golds)
    }

    /// [`LampGrid::results`] from the question ids alone: the table of answers made earlier
    /// (a grid's committed predictions files), recomputed without building a prompt.
    pub fn table(
        &self,
        title: &str,
        ids: &[String],
        runs: &[LampCellRun],
        golds: &[LampGold],
    ) -> Result<LampTable> {
        let columns = metric_names(self.task);
        let baseline = self
            .configs
            .iter()
            .find(|c| {
                **c == LampConfig {
                    k: 4,
                    summary: false,
                }
            })
            .or(self.configs.first())
            .copied()
            .ok_or_else(|| Error::InvalidInput("a LaMP grid without cells".into()))?;
        let per_cell = self.cell_scores(ids, runs, golds)?;
        let base = per_cell
            .iter()
            .find(|c| c.config == baseline)
            .map(|c| c.scores.clone())
            .unwrap_or_default();
        let mut rows = Vec::with_capacity(per_cell.len());
        for LampCellScores {
            config,
            seeds,
            scores: cols,
            unreadable,
        } in per_cell
        {
            let n = cols.first().map_or(0, Vec::len);
            let draws = BootstrapDraws::new(n, 1000, 0).map_err(|e| Error::Scoring {
                config: config.to_string(),
                message: e.to_string(),
            })?;
            let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
            let ivs = draws.intervals(&refs, 0.95).map_err(|e| Error::Scoring {
                config: config.to_string(),
                message: e.to_string(),
            })?;
            let mut mean = Vec::new();
            let mut interval = Vec::new();
            let mut p = Vec::new();
            for (m, col) in cols.iter().enumerate() {
                let avg = col.iter().sum::<f64>() / n.max(1) as f64;
                let rmse = columns[m] == "RMSE";
                let f = |x: f64| if rmse { x.sqrt() } else { x };
                mean.push(f(avg));
                interval.push((f(ivs[m].low), f(ivs[m].high)));
                p.push(if config == baseline {
                    f64::NAN
                } else {
                    paired_t_test(col, &base[m]).map_or(f64::NAN, |t| t.p_value)
                });
            }
            rows.push(LampRow {
                config: config.to_string(),
                n,
                seeds,
                mean,
                interval,
                p_vs_baseline: p,
                unreadable: unreadable / seeds.max(1),
            });
        }
        Ok(LampTable {
            title: title.to_string(),
            columns: columns.iter().map(|s| s.to_string()).collect(),
            baseline: baseline.to_string(),
            rows,
        })
    }

    /// The task's labels, or (LaMP-2-old) the distinct gold outputs in first-seen order.
    fn labels(&self, golds: &[LampGold]) -> Vec<String> {
        match self.task.labels() {
            Some(l) => l.iter().map(|s| s.to_string()).collect(),
            None => {
                let mut seen = Vec::<String>::new();
                for g in golds {
                    let s = py::strip(&g.output).to_string();
                    if !seen.contains(&s) {
                        seen.push(s);
                    }
                }
                seen
            }
        }
    }
}

/// The grid's reading and metrics as a [`Scorer`], for answers that are not the grid's (the
/// trivial baselines, [`crate::baselines::run_baselines`]) scored exactly as its cells are:
/// made by [`LampGrid::scorer`]. Over several answers the values are the table's (MAE, the
/// root of the mean squared error, mean ROUGE F-measures, accuracy); one answer alone gives
/// its own score (both rating columns then its absolute error).
#[derive(Debug, Clone, PartialEq)]
pub struct LampScorer {
    task: LampTask,
    reading: AnswerReading,
    labels: Vec<String>,
}

impl LampGrid {
    /// This grid's [`LampScorer`] (`golds`: the outputs file's, where LaMP-2-old reads its
    /// labels).
    ///
    /// ```
    /// use pgraphrag_core::LampTask;
    /// use pgraphrag_eval::Scorer;
    /// use pgraphrag_eval::lamp_grid::{AnswerReading, LampGrid, table3_configs};
    /// let mut grid = LampGrid::new(LampTask::Lamp3, table3_configs());
    /// grid.reading = AnswerReading::FirstLabel;
    /// let s = grid.scorer(&[]);
    /// assert_eq!(s.columns(), ["MAE", "RMSE"]);
    /// let v = s.score(&["I say 4".into(), "1".into()], &["5".into(), "4".into()]).unwrap();
    /// assert_eq!(v[0], 2.0);
    /// assert_eq!(v[1], 5f64.sqrt());
    /// ```
    pub fn scorer(&self, golds: &[LampGold]) -> LampScorer {
        LampScorer {
            task: self.task,
            reading: self.reading,
            labels: self.labels(golds),
        }
    }
}

impl Scorer for LampScorer {
    fn columns(&self) -> Vec<String> {
        metric_names(self.task)
            .into_iter()
            .map(String::from)
            .collect()
    }

    fn score(&self, predictions: &[String], references: &[String]) -> Result<Vec<f64>> {
        let scoring = |message: String| Error::Scoring {
            config: self.task.to_string(),
            message,
        };
        if predictions.len() != references.len() || predictions.is_empty() {
            return Err(scoring(format!(
                "{} answers for {} golds",
                predictions.len(),
                references.len()
            )));
        }
        let golds: Vec<&str> = references.iter().map(String::as_str).collect();
        let (cols, _) = score_run(self.task, self.reading, predictions, &golds, &self.labels)
            .map_err(scoring)?;
        let columns = metric_names(self.task);
        Ok(cols
            .iter()
            .zip(columns)
            .map(|(col, name)| {
                let mean = col.iter().sum::<f64>() / col.len() as f64;
                if name == "RMSE" { mean.sqrt() } else { mean }
            })
            .collect())
    }
}

/// The metric columns of a task, as `evaluation.py` names its scores.
fn metric_names(task: LampTask) -> Vec<&'static str> {
    match task {
        LampTask::Lamp3 => vec!["MAE", "RMSE"],
        t if t.is_classification() => vec!["accuracy"],
        _ => vec!["ROUGE-1", "ROUGE-L"],
    }
}

/// Per metric, per question scores, and the unreadable count.
fn score_run(
    task: LampTask,
    reading: AnswerReading,
    outputs: &[String],
    golds: &[&str],
    labels: &[String],
) -> std::result::Result<(Vec<Vec<f64>>, usize), String> {
    match task {
        LampTask::Lamp3 => {
            let mut abs = Vec::with_capacity(outputs.len());
            let mut sq = Vec::with_capacity(outputs.len());
            let mut unreadable = 0;
            for (i, (o, g)) in outputs.iter().zip(golds).enumerate() {
                let gold = py::float(py::strip(g))
                    .map_err(|_| format!("question {i}: gold {g:?} is not a number"))?;
                let answer = read_answer(o, reading, labels);
                if py::float(py::strip(&answer)).is_err() {
                    unreadable += 1;
                }
                let pred = lamp_rating(&answer, gold);
                abs.push((pred - gold).abs());
                sq.push((pred - gold).powi(2));
            }
            Ok((vec![abs, sq], unreadable))
        }
        t if t.is_classification() => {
            let mut acc = Vec::with_capacity(outputs.len());
            let mut unreadable = 0;
            for (o, g) in outputs.iter().zip(golds) {
                let answer = read_answer(o, reading, labels);
                let a = py::strip(&answer);
                if !labels.iter().any(|l| l == a) {
                    unreadable += 1;
                }
                acc.push(f64::from(u8::from(a == py::strip(g))));
            }
            Ok((vec![acc], unreadable))
        }
        _ => {
            let rouge = Rouge::new(RougeOptions::default());
            let mut r1 = Vec::with_capacity(outputs.len());
            let mut rl = Vec::with_capacity(outputs.len());
            for (o, g) in outputs.iter().zip(golds) {
                let s = rouge.score(py::strip(o), py::strip(g));
                r1.push(s.rouge1.fmeasure);
                rl.push(s.rouge_l.fmeasure);
            }
            Ok((vec![r1, rl], 0))
        }
    }
}

/// The answer as [`AnswerReading`] says.
fn read_answer(output: &str, reading: AnswerReading, labels: &[String]) -> String {
    if reading == AnswerReading::Strict {
        return output.to_string();
    }
    // The earliest label occurrence; ties go to the longer label.
    labels
        .iter()
        .filter_map(|l| {
            output
                .find(l.as_str())
                .map(|at| (at, std::cmp::Reverse(l.len()), l))
        })
        .min()
        .map_or_else(|| output.to_string(), |(_, _, l)| l.clone())
}

impl LampTable {
    /// A Markdown table: per metric the score with its 95% interval and the paired t-test
    /// p-value against the baseline, plus the unreadable answers.
    ///
    /// ```
    /// use pgraphrag_eval::lamp_grid::{LampRow, LampTable};
    /// let t = LampTable {
    ///     title: "LaMP-3".into(),
    ///     columns: vec!["MAE".into()],
    ///     baseline: "base_k4".into(),
    ///     rows: vec![LampRow { config: "sum_k1".into(), n: 3, seeds: 1, mean: vec![0.5],
    ///         interval: vec![(0.25, 0.75)], p_vs_baseline: vec![0.04], unreadable: 0 }],
    /// };
    /// assert!(t.to_markdown().contains("| sum_k1 | 3 | 1 | 0.500 [0.250, 0.750] | 0.040 | 0 |"));
    /// ```
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "**{}**\n\n(95% bootstrap intervals over questions; p: paired t-test against {})\n\n| config | n | seeds |",
            self.title, self.baseline
        );
        for c in &self.columns {
            s.push_str(&format!(" {c} | p ({c}) |"));
        }
        s.push_str(" unreadable |\n|---|---:|---:|");
        for _ in &self.columns {
            s.push_str("---:|---:|");
        }
        s.push_str("---:|\n");
        for r in &self.rows {
            s.push_str(&format!("| {} | {} | {} |", r.config, r.n, r.seeds));
            for m in 0..self.columns.len() {
                let (lo, hi) = r.interval[m];
                let p = crate::markdown_p(r.p_vs_baseline[m]);
                // The one table formatter, as the CSV (`to_results_table().to_csv()`) writes the mean.
                s.push_str(&format!(
                    " {} [{}, {}] | {p} |",
                    crate::markdown_value(r.mean[m]),
                    crate::markdown_value(lo),
                    crate::markdown_value(hi)
                ));
            }
            s.push_str(&format!(" {} |\n", r.unreadable));
        }
        s
    }

    /// The scores as a [`ResultsTable`](crate::ResultsTable) (`mode_k` rows), for its CSV and SVG bar charts.
    ///
    /// ```
    /// use pgraphrag_eval::lamp_grid::{LampRow, LampTable};
    /// let t = LampTable { title: "t".into(), columns: vec!["ROUGE-1".into()], baseline: "base_k4".into(),
    ///     rows: vec![LampRow { config: "base_k4".into(), n: 2, seeds: 1, mean: vec![0.25],
    ///         interval: vec![(0.0, 0.5)], p_vs_baseline: vec![f64::NAN], unreadable: 0 }] };
    /// assert_eq!(t.to_results_table().to_csv(), "mode_k,ROUGE-1\nbase_k4,0.25\n");
    /// ```
    pub fn to_results_table(&self) -> crate::ResultsTable {
        crate::ResultsTable {
            title: self.title.clone(),
            columns: self.columns.clone(),
            rows: self
                .rows
                .iter()
                .map(|r| crate::ResultRow {
                    config: r.config.clone(),
                    n: r.n,
                    values: r.mean.clone(),
                    unparsed: r.unreadable,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_label_reading_takes_the_earliest_label() {
        let labels: Vec<String> = ["1", "2", "3", "4", "5"].map(String::from).to_vec();
        assert_eq!(
            read_answer("I'd say 4 (or 5)", AnswerReading::FirstLabel, &labels),
            "4"
        );
        assert_eq!(
            read_answer("none", AnswerReading::FirstLabel, &labels),
            "none"
        );
        assert_eq!(
            read_answer("I'd say 4", AnswerReading::Strict, &labels),
            "I'd say 4"
        );
        let tags: Vec<String> = ["comedy", "dark comedy"].map(String::from).to_vec();
        assert_eq!(
            read_answer("dark comedy", AnswerReading::FirstLabel, &tags),
            "dark comedy"
        );
    }

    #[test]
    fn rating_scores_use_lamps_worst_case_and_rmse_is_a_root() {
        let outs = vec!["5".to_string(), "great".to_string()];
        let (cols, unreadable) = score_run(
            LampTask::Lamp3,
            AnswerReading::Strict,
            &outs,
            &["3", "4"],
            &[],
        )
        .unwrap();
        // "great" is unreadable: LaMP takes whichever of 1 and 5 is farther from 4, i.e. 1.
        assert_eq!(cols[0], vec![2.0, 3.0]);
        assert_eq!(cols[1], vec![4.0, 9.0]);
        assert_eq!(unreadable, 1);
        assert!(
            score_run(
                LampTask::Lamp3,
                AnswerReading::Strict,
                &outs,
                &["x", "4"],
                &[]
            )
            .is_err()
        );
    }

    #[test]
    fn generation_scores_are_rouge_f_measures() {
        let outs = vec!["Cats rule".to_string()];
        let (cols, _) = score_run(
            LampTask::Lamp4,
            AnswerReading::Strict,
            &outs,
            &["cats rule the world"],
            &[],
        )
        .unwrap();
        let f = 2.0 * 1.0 * 0.5 / 1.5;
        assert!((cols[0][0] - f).abs() < 1e-12 && (cols[1][0] - f).abs() < 1e-12);
    }
}
