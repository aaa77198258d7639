//! The constant-answer baselines of a rating grid: what answering the same rating (1–5) for
//! every user scores, and how each grid cell compares with the best of them, paired over users.
//!
//! A rating model that cannot beat "always 5" has learned nothing about the users; issue 18's
//! fine-tuning check and the zero-shot tables both read this comparison. `pgraphrag bench`
//! appends it ([`ConstantComparison::to_markdown`]) to `results.md` of every rating run.
use pgraphrag_metrics::stats::{Interval, paired_bootstrap};
use pgraphrag_prompt::extract::ExtractOptions;
use pgraphrag_prompt::pgraphrag::Task;

use crate::table::per_user_scores;
use crate::{ConfigOutputs, Error, RatingScorer, Result, Scorer};

/// Bootstrap resamples of [`vs_best_constant`]'s intervals.
const RESAMPLES: usize = 2000;

/// One constant answer's scores on the evaluated users.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstantScore {
    /// The rating answered for every user (1–5).
    pub rating: u8,
    /// Its MAE against the gold ratings.
    pub mae: f64,
    /// Its RMSE.
    pub rmse: f64,
}

/// One grid cell against the best constant, per user on absolute error.
#[derive(Debug, Clone, PartialEq)]
pub struct CellVsConstant {
    /// The cell's `mode_k` label.
    pub config: String,
    /// The cell's MAE minus the best constant's (negative: the cell is better).
    pub delta: f64,
    /// The 95 % percentile interval of that difference over 2,000 paired resamples.
    pub interval: Interval,
    /// Users whose answer is closer to the gold than the constant.
    pub better: usize,
    /// Users whose answer is farther from the gold than the constant.
    pub worse: usize,
}

/// Result of [`vs_best_constant`].
#[derive(Debug, Clone, PartialEq)]
pub struct ConstantComparison {
    /// Every constant 1–5.
    pub constants: Vec<ConstantScore>,
    /// The constant with the lowest MAE (the lower rating on a tie).
    pub best: ConstantScore,
    /// Each cell against [`ConstantComparison::best`], in the order of the outputs.
    pub cells: Vec<CellVsConstant>,
}

/// The constants' scores on `golds` and every rating cell of `outputs` against the best one
/// (the same extraction and LaMP scoring as the results table, [`RatingScorer`]); the paired
/// bootstrap is seeded with `seed`.
///
/// ```
/// use pgraphrag_eval::{ConfigOutputs, RunConfig, UserOutput, vs_best_constant};
/// use pgraphrag_prompt::{extract::ExtractOptions, pgraphrag::Mode};
/// let outs = [ConfigOutputs {
///     config: RunConfig::new(Mode::None, 1),
///     outputs: ["Rating: 5", "Rating: 1", "Rating: 5"]
///         .iter()
///         .map(|o| UserOutput { user_id: "u".into(), output: o.to_string() })
///         .collect(),
/// }];
/// let golds = ["5".to_string(), "1".to_string(), "4".to_string()];
/// let c = vs_best_constant(&outs, &golds, &ExtractOptions::default(), 0).unwrap();
/// assert_eq!(c.best.rating, 4); // errors 1, 3, 0
/// assert_eq!(c.cells[0].better, 2);
/// assert!(c.cells[0].delta < 0.0);
/// ```
pub fn vs_best_constant(
    outputs: &[ConfigOutputs],
    golds: &[String],
    extract: &ExtractOptions,
    seed: u32,
) -> Result<ConstantComparison> {
    let scorer = RatingScorer::default();
    let constants = constant_scores(golds)?;
    let mut per_constant = Vec::with_capacity(5);
    for rating in 1..=5u8 {
        let answers = vec![rating.to_string(); golds.len()];
        per_constant.push(
            answers
                .iter()
                .zip(golds)
                .map(|(a, g)| {
                    scorer
                        .score(std::slice::from_ref(a), std::slice::from_ref(g))
                        .map(|v| v[0])
                })
                .collect::<Result<Vec<f64>>>()?,
        );
    }
    let best = best_of(&constants);
    let base = &per_constant[usize::from(best.rating - 1)];
    let cells = outputs
        .iter()
        .map(|c| {
            let mine = per_user_scores(Task::Rating, c, golds, extract, &scorer)?.swap_remove(0);
            let b = paired_bootstrap(&mine, base, RESAMPLES, 0.95, seed).map_err(|e| {
                Error::Scoring {
                    config: c.config.to_string(),
                    message: e.to_string(),
                }
            })?;
            Ok(CellVsConstant {
                config: c.config.to_string(),
                delta: b.delta,
                interval: b.interval,
                better: mine.iter().zip(base).filter(|(m, b)| m < b).count(),
                worse: mine.iter().zip(base).filter(|(m, b)| m > b).count(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ConstantComparison {
        constants,
        best,
        cells,
    })
}

/// Every constant answer 1–5 scored on `golds` (MAE and RMSE with [`RatingScorer`]), in the
/// order 1 … 5.
///
/// ```
/// let golds = ["5".to_string(), "4".to_string()];
/// let c = pgraphrag_eval::constant_scores(&golds).unwrap();
/// assert_eq!(c.len(), 5);
/// assert_eq!((c[4].rating, c[4].mae), (5, 0.5));
/// ```
pub fn constant_scores(golds: &[String]) -> Result<Vec<ConstantScore>> {
    let scorer = RatingScorer::default();
    (1..=5u8)
        .map(|rating| {
            let s = scorer.score(&vec![rating.to_string(); golds.len()], golds)?;
            Ok(ConstantScore {
                rating,
                mae: s[0],
                rmse: s[1],
            })
        })
        .collect()
}

/// The constant with the lowest MAE on `golds` (the lower rating on a tie): what
/// [`vs_best_constant`] compares against, and, chosen on a validation slice, the constant
/// baseline of `pgraphrag baselines` ([`crate::baselines`]).
///
/// ```
/// let golds: Vec<String> = ["5", "4", "4", "1"].iter().map(|s| s.to_string()).collect();
/// assert_eq!(pgraphrag_eval::best_constant(&golds).unwrap().rating, 4);
/// ```
pub fn best_constant(golds: &[String]) -> Result<ConstantScore> {
    Ok(best_of(&constant_scores(golds)?))
}

/// The lowest MAE of `constants` (1 … 5 in order), the first on a tie.
fn best_of(constants: &[ConstantScore]) -> ConstantScore {
    constants
        .iter()
        .copied()
        .reduce(|best, c| if c.mae < best.mae { c } else { best })
        .unwrap_or(ConstantScore {
            rating: 5,
            mae: f64::NAN,
            rmse: f64::NAN,
        })
}

impl ConstantComparison {
    /// A Markdown section: the constants' MAE/RMSE, then each cell's paired MAE difference
    /// against the best constant with its interval and the users better and worse.
    ///
    /// ```
    /// # use pgraphrag_eval::{ConfigOutputs, RunConfig, UserOutput, vs_best_constant};
    /// # use pgraphrag_prompt::{extract::ExtractOptions, pgraphrag::Mode};
    /// # let outs = [ConfigOutputs { config: RunConfig::new(Mode::None, 1), outputs: vec![UserOutput { user_id: "u".into(), output: "3".into() }] }];
    /// let c = vs_best_constant(&outs, &["4".to_string()], &ExtractOptions::default(), 0).unwrap();
    /// assert!(c.to_markdown().contains("| none_k1 | +1.000 |"));
    /// ```
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("\nConstant answers (the same rating for every user):\n\n");
        out.push_str("| answer | MAE | RMSE |\n|---|---:|---:|\n");
        for c in &self.constants {
            out.push_str(&format!(
                "| always {} | {:.3} | {:.3} |\n",
                c.rating, c.mae, c.rmse
            ));
        }
        out.push_str(&format!(
            "\nEach cell against always {} (the lowest MAE), paired over users ({RESAMPLES} \
             bootstrap resamples, 95 % interval; negative: the cell is better):\n\n",
            self.best.rating
        ));
        out.push_str(
            "| mode_k | MAE difference | 95 % interval | users better | users worse |\n\
             |---|---:|---|---:|---:|\n",
        );
        for c in &self.cells {
            out.push_str(&format!(
                "| {} | {:+.3} | {:+.3} to {:+.3} | {} | {} |\n",
                c.config, c.delta, c.interval.low, c.interval.high, c.better, c.worse
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RunConfig, UserOutput};
    use pgraphrag_prompt::pgraphrag::Mode;

    fn cell(outs: &[&str]) -> ConfigOutputs {
        ConfigOutputs {
            config: RunConfig::new(Mode::Both, 1),
            outputs: outs
                .iter()
                .map(|o| UserOutput {
                    user_id: "u".into(),
                    output: o.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn constants_are_scored_and_the_best_is_the_lowest_mae() {
        let golds: Vec<String> = ["5", "5", "5", "1"].iter().map(|s| s.to_string()).collect();
        let c = vs_best_constant(
            &[cell(&["5", "5", "5", "1"])],
            &golds,
            &ExtractOptions::default(),
            0,
        )
        .unwrap();
        assert_eq!(c.constants.len(), 5);
        assert_eq!(c.best.rating, 5);
        assert_eq!(c.best.mae, 1.0);
        assert_eq!(c.constants[0].mae, 3.0); // always 1: errors 4, 4, 4, 0
        let cell = &c.cells[0];
        assert_eq!((cell.better, cell.worse), (1, 0));
        assert_eq!(cell.delta, -1.0);
        assert!(cell.interval.low <= cell.delta && cell.delta <= cell.interval.high);
    }

    #[test]
    fn an_unparsed_answer_counts_as_the_worst_rating() {
        // "no idea" against gold 4 counts as 1 (farther than 5): error 3, worse than always 4.
        let golds = vec!["4".to_string()];
        let c =
            vs_best_constant(&[cell(&["no idea"])], &golds, &ExtractOptions::default(), 0).unwrap();
        assert_eq!(c.best.rating, 4);
        assert_eq!(c.cells[0].delta, 3.0);
        assert_eq!((c.cells[0].better, c.cells[0].worse), (0, 1));
    }

    #[test]
    fn a_cell_with_fewer_outputs_than_golds_is_an_error() {
        let golds = vec!["4".to_string(), "5".to_string()];
        let e =
            vs_best_constant(&[cell(&["4"])], &golds, &ExtractOptions::default(), 0).unwrap_err();
        assert!(e.to_string().contains("both_k1"), "{e}");
    }
}
