//! The strongest trivial baseline against the best grid cell on the same rows, paired per row:
//! the difference of their means, its 95% paired bootstrap interval and the paired t-test.
use pgraphrag_metrics::stats::{paired_bootstrap, paired_t_test};
use serde::Serialize;

use super::score::BaselineReport;
use crate::{Error, Result, markdown_p, markdown_value};

/// Resamples of the paired bootstrap interval (as the LaMP grid's intervals).
const RESAMPLES: usize = 1000;
/// The seed of the paired bootstrap.
const SEED: u32 = 0;
/// The level below which the t-test's p counts as a difference in the sentence.
const ALPHA: f64 = 0.05;

/// One grid cell's per-row scores in the compared column, in the baselines' row order.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRows {
    /// The cell's name (`sum_k0`).
    pub name: String,
    /// Its score per row.
    pub scores: Vec<f64>,
}

/// Result of [`strongest_vs_best`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineVsCell {
    /// The compared column (`MAE`, `ROUGE-1`).
    pub column: String,
    /// Whether lower values are better in it (MAE, RMSE).
    pub lower_is_better: bool,
    /// Rows compared.
    pub n: usize,
    /// The strongest baseline's name.
    pub baseline: String,
    /// Its mean over the rows.
    pub baseline_score: f64,
    /// The best cell's name.
    pub cell: String,
    /// Its mean over the rows.
    pub cell_score: f64,
    /// Baseline minus cell (mean of the per-row differences).
    pub delta: f64,
    /// The 95% percentile interval of `delta` over 1,000 paired resamples of the rows (seed 0).
    pub interval: (f64, f64),
    /// The two-sided paired t-test p-value of the per-row differences (NaN when all are equal).
    pub p_value: f64,
    /// How the grid's model was used, in the sentences: `zero-shot` ([`strongest_vs_best`]'s)
    /// or `fine-tuned`.
    pub regime: String,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The entry with the best mean (the first on a tie).
fn best<'a>(
    items: impl Iterator<Item = (&'a str, &'a [f64])>,
    lower_is_better: bool,
) -> Option<(&'a str, &'a [f64])> {
    let mut out: Option<(&str, &[f64], f64)> = None;
    for (name, v) in items {
        let m = mean(v);
        let better = match &out {
            None => true,
            Some((_, _, b)) if lower_is_better => m < *b,
            Some((_, _, b)) => m > *b,
        };
        if better {
            out = Some((name, v, m));
        }
    }
    out.map(|(n, v, _)| (n, v))
}

/// The strongest baseline of `report` in `column` against the best of `cells` on the same rows:
/// both picked by their mean over the rows (the lowest if `lower_is_better`, else the highest;
/// the first on a tie), then compared per row. The `always_*` rows are left out of the pick:
/// they show every constant on the evaluated rows, and a constant is chosen on validation
/// users only (`const_val`).
///
/// ```
/// use pgraphrag_eval::RatingScorer;
/// use pgraphrag_eval::baselines::{
///     AnswerKind, CellRows, Example, NamedBaseline, Predictor, run_baselines, strongest_vs_best,
/// };
/// let rows = vec![Example::default(); 4];
/// let golds: Vec<String> = ["4", "5", "4", "3"].map(String::from).to_vec();
/// let b = [
///     NamedBaseline::new("always_4", Predictor::Constant("4".into())),
///     NamedBaseline::new("const_val", Predictor::Constant("5".into())),
/// ];
/// let r = run_baselines("t", AnswerKind::Rating, &rows, &golds, &b, &RatingScorer::default()).unwrap();
/// let cells = [CellRows { name: "base_k0".into(), scores: vec![3.0, 4.0, 3.5, 3.0] }];
/// let c = strongest_vs_best(&r, "MAE", true, &cells).unwrap();
/// assert_eq!((c.baseline.as_str(), c.baseline_score), ("const_val", 1.0)); // always_4 is not picked
/// assert_eq!(c.delta, -2.375);
/// assert!(c.p_value < 0.05);
/// assert!(c.sentence().starts_with("`const_val` is better than every zero-shot cell"));
/// ```
pub fn strongest_vs_best(
    report: &BaselineReport,
    column: &str,
    lower_is_better: bool,
    cells: &[CellRows],
) -> Result<BaselineVsCell> {
    let n = report.ids.len();
    let candidates: Vec<(&str, &[f64])> = report
        .results
        .iter()
        .filter(|r| !r.name.starts_with("always_"))
        .map(|r| {
            report
                .per_row(&r.name, column)
                .map(|v| (r.name.as_str(), v))
                .ok_or_else(|| {
                    Error::InvalidInput(format!("the baselines' table has no column {column:?}"))
                })
        })
        .collect::<Result<_>>()?;
    let (baseline, base) = best(candidates.into_iter(), lower_is_better)
        .ok_or_else(|| Error::InvalidInput("no baseline to compare (only always_* rows)".into()))?;
    if let Some(c) = cells.iter().find(|c| c.scores.len() != n) {
        return Err(Error::Scoring {
            config: c.name.clone(),
            message: format!("{} scores for {n} baseline rows", c.scores.len()),
        });
    }
    let (cell, mine) = best(
        cells.iter().map(|c| (c.name.as_str(), c.scores.as_slice())),
        lower_is_better,
    )
    .ok_or_else(|| Error::InvalidInput("no grid cell to compare".into()))?;
    let stats = |e: pgraphrag_metrics::Error| Error::Scoring {
        config: cell.to_string(),
        message: e.to_string(),
    };
    let boot = paired_bootstrap(base, mine, RESAMPLES, 0.95, SEED).map_err(stats)?;
    let p_value = paired_t_test(base, mine).map_err(stats)?.p_value;
    Ok(BaselineVsCell {
        column: column.to_string(),
        lower_is_better,
        n,
        baseline: baseline.to_string(),
        baseline_score: mean(base),
        cell: cell.to_string(),
        cell_score: mean(mine),
        delta: boot.delta,
        interval: (boot.interval.low, boot.interval.high),
        p_value,
        regime: "zero-shot".into(),
    })
}

impl BaselineVsCell {
    /// Whether the baseline is the better of the two on the rows' mean.
    fn baseline_ahead(&self) -> bool {
        if self.lower_is_better {
            self.delta < 0.0
        } else {
            self.delta > 0.0
        }
    }

    /// `p = 0.012` or `p < 0.001`.
    fn p_phrase(&self) -> String {
        let p = markdown_p(self.p_value);
        match p.strip_prefix('<') {
            Some(rest) => format!("p < {rest}"),
            None => format!("p = {p}"),
        }
    }

    /// One plain sentence on what the comparison says: which side is better and by how much
    /// when the paired t-test's p is below 0.05, else that neither is shown better and how far
    /// the interval reaches on each side.
    ///
    /// ```
    /// use pgraphrag_eval::baselines::BaselineVsCell;
    /// let c = BaselineVsCell { column: "ROUGE-1".into(), lower_is_better: false, n: 300,
    ///     baseline: "first_sentence".into(), baseline_score: 0.2, cell: "base_k0".into(),
    ///     cell_score: 0.19, delta: 0.01, interval: (-0.005, 0.025), p_value: 0.2,
    ///     regime: "zero-shot".into() };
    /// assert_eq!(c.sentence(), "Neither is shown better (p = 0.200): the interval allows \
    ///     `first_sentence` to be ahead by up to 0.025 ROUGE-1 or behind by up to 0.005.");
    /// ```
    pub fn sentence(&self) -> String {
        let gap = markdown_value(self.delta.abs());
        let p = self.p_phrase();
        let col = &self.column;
        // A NaN p (every difference equal) shows no difference either.
        if self.p_value.is_nan() || self.p_value >= ALPHA {
            let (ahead, behind) = if self.lower_is_better {
                (-self.interval.0, self.interval.1)
            } else {
                (self.interval.1, -self.interval.0)
            };
            return format!(
                "Neither is shown better ({p}): the interval allows `{}` to be ahead by up to {} \
                 {col} or behind by up to {}.",
                self.baseline,
                markdown_value(ahead.max(0.0)),
                markdown_value(behind.max(0.0))
            );
        }
        if self.baseline_ahead() {
            format!(
                "`{}` is better than every {} cell: the best, `{}`, is {gap} {col} behind it \
                 ({p}).",
                self.baseline, self.regime, self.cell
            )
        } else {
            format!(
                "The {} cell `{}` beats the strongest trivial baseline `{}` by {gap} {col} \
                 ({p}).",
                self.regime, self.cell, self.baseline
            )
        }
    }

    /// The first paragraph of a baselines table written beside a grid: the comparison, its
    /// interval and test over the `rows` (`questions`, `examples`), then [`Self::sentence`].
    /// `setting` says how the grid's cells were scored (its seeds), when that needs saying.
    ///
    /// ```
    /// use pgraphrag_eval::baselines::BaselineVsCell;
    /// let c = BaselineVsCell { column: "MAE".into(), lower_is_better: true, n: 300,
    ///     baseline: "user_mean".into(), baseline_score: 0.857, cell: "sum_k0".into(),
    ///     cell_score: 2.02, delta: -1.163, interval: (-1.33, -1.01), p_value: 1e-9,
    ///     regime: "zero-shot".into() };
    /// assert!(c.headline("ml100k", Some("seed 0"), "questions").starts_with(
    ///     "Against the zero-shot grid `ml100k` (seed 0): strongest trivial baseline `user_mean` (MAE 0.857)"));
    /// ```
    pub fn headline(&self, grid: &str, setting: Option<&str>, rows: &str) -> String {
        let setting = setting.map_or_else(String::new, |s| format!(" ({s})"));
        let p = markdown_p(self.p_value);
        let p = p
            .strip_prefix('<')
            .map_or_else(|| format!("= {p}"), |rest| format!("< {rest}"));
        format!(
            "Against the {} grid `{grid}`{setting}: strongest trivial baseline `{}` ({} {}), best \
             cell `{}` ({}); baseline − cell {} [{}, {}] (95% paired bootstrap over {} {rows}), \
             paired t-test p {p}. {}\n\n",
            self.regime,
            self.baseline,
            self.column,
            markdown_value(self.baseline_score),
            self.cell,
            markdown_value(self.cell_score),
            markdown_value(self.delta),
            markdown_value(self.interval.0),
            markdown_value(self.interval.1),
            self.n,
            self.sentence()
        )
    }

    /// The header of [`BaselineVsCell::to_markdown_row`]'s table (two lines, each ending in a
    /// line break).
    ///
    /// ```
    /// assert!(pgraphrag_eval::baselines::BaselineVsCell::markdown_header().starts_with("| grid |"));
    /// ```
    pub fn markdown_header() -> &'static str {
        "| grid | n | metric | strongest trivial baseline | best cell | baseline − cell \
         [95% CI] | p | what it means |\n|---|---:|---|---|---|---|---:|---|\n"
    }

    /// One row of a table of comparisons, the grid named `grid` (with a line break).
    ///
    /// ```
    /// use pgraphrag_eval::baselines::BaselineVsCell;
    /// let c = BaselineVsCell { column: "MAE".into(), lower_is_better: true, n: 300,
    ///     baseline: "const_val".into(), baseline_score: 0.933, cell: "sum_k0".into(),
    ///     cell_score: 2.02, delta: -1.087, interval: (-1.23, -0.94), p_value: 1e-9,
    ///     regime: "zero-shot".into() };
    /// assert!(c.to_markdown_row("ml100k").starts_with(
    ///     "| ml100k | 300 | MAE | `const_val` 0.933 | `sum_k0` 2.020 | -1.087 [-1.230, -0.940] | <0.001 |"));
    /// ```
    pub fn to_markdown_row(&self, grid: &str) -> String {
        format!(
            "| {grid} | {} | {} | `{}` {} | `{}` {} | {} [{}, {}] | {} | {} |\n",
            self.n,
            self.column,
            self.baseline,
            markdown_value(self.baseline_score),
            self.cell,
            markdown_value(self.cell_score),
            markdown_value(self.delta),
            markdown_value(self.interval.0),
            markdown_value(self.interval.1),
            markdown_p(self.p_value),
            self.sentence()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RatingScorer;
    use crate::baselines::{AnswerKind, Example, NamedBaseline, Predictor, run_baselines};

    fn report(golds: &[&str], answers: &[(&str, &str)]) -> BaselineReport {
        let rows = vec![Example::default(); golds.len()];
        let golds: Vec<String> = golds.iter().map(|s| s.to_string()).collect();
        let b: Vec<NamedBaseline> = answers
            .iter()
            .map(|(n, a)| NamedBaseline::new(*n, Predictor::Constant(a.to_string())))
            .collect();
        run_baselines(
            "t",
            AnswerKind::Rating,
            &rows,
            &golds,
            &b,
            &RatingScorer::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_better_cell_and_the_paired_numbers() {
        let r = report(&["1", "2", "1", "2", "1"], &[("const_val", "5")]);
        let cells = [
            CellRows {
                name: "base_k0".into(),
                scores: vec![0.0, 1.0, 0.0, 0.0, 1.0],
            },
            CellRows {
                name: "base_k1".into(),
                scores: vec![1.0; 5],
            },
        ];
        let c = strongest_vs_best(&r, "MAE", true, &cells).unwrap();
        assert_eq!(c.cell, "base_k0");
        assert!((c.baseline_score - 3.6).abs() < 1e-12);
        assert!((c.delta - 3.2).abs() < 1e-12);
        assert!(c.interval.0 > 0.0 && c.interval.1 >= c.interval.0);
        assert!(c.p_value < 0.01, "{}", c.p_value);
        assert!(
            c.sentence()
                .starts_with("The zero-shot cell `base_k0` beats the strongest trivial baseline"),
            "{}",
            c.sentence()
        );
        assert_eq!(
            BaselineVsCell::markdown_header()
                .lines()
                .next()
                .unwrap()
                .matches('|')
                .count(),
            c.to_markdown_row("g").matches('|').count()
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let r = report(&["1", "2"], &[("always_1", "1")]);
        let cells = [CellRows {
            name: "c".into(),
            scores: vec![0.0, 0.0],
        }];
        assert!(strongest_vs_best(&r, "MAE", true, &cells).is_err());
        let r = report(&["1", "2"], &[("const_val", "1")]);
        assert!(strongest_vs_best(&r, "ROUGE-1", false, &cells).is_err());
        assert!(strongest_vs_best(&r, "MAE", true, &[]).is_err());
        let short = [CellRows {
            name: "c".into(),
            scores: vec![0.0],
        }];
        let e = strongest_vs_best(&r, "MAE", true, &short).unwrap_err();
        assert!(e.to_string().contains("1 scores for 2"), "{e}");
    }
}
