//! Scoring a grid's outputs and the results tables (Markdown and CSV).
use pgraphrag_prompt::extract::{ExtractOptions, extract, parse_rating};
use pgraphrag_prompt::pgraphrag::{RankedProfile, Task};
use serde::Serialize;

use crate::{ConfigOutputs, Error, Result, RunConfig};

/// Scores one grid cell's extracted answers against the gold answers.
///
/// `pgraphrag-metrics` provides the real ones (ROUGE-1/L and METEOR for text and titles,
/// MAE/RMSE for ratings); [`RatingScorer`] is built in.
pub trait Scorer {
    /// Column names, e.g. `["ROUGE-1", "ROUGE-L", "METEOR"]`.
    fn columns(&self) -> Vec<String>;
    /// One value per column over all pairs.
    fn score(&self, predictions: &[String], references: &[String]) -> Result<Vec<f64>>;
}

impl<S: Scorer + ?Sized> Scorer for &S {
    fn columns(&self) -> Vec<String> {
        (**self).columns()
    }
    fn score(&self, predictions: &[String], references: &[String]) -> Result<Vec<f64>> {
        (**self).score(predictions, references)
    }
}

/// How a rating answer becomes a number before MAE/RMSE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum RatingParse {
    /// [`parse_rating`]: the first number in the answer, if it lies in 1–5 (the default).
    #[default]
    FirstNumber,
    /// LaMP's `float(answer)` on the whole answer, any value.
    LampFloat,
}

/// MAE and RMSE of rating answers the LaMP way (`pgraphrag_metrics::rating::mae_rmse`): each
/// answer is parsed ([`RatingParse`]); an unparseable one counts as whichever of 1 or 5 is
/// farther from the gold.
///
/// ```
/// use pgraphrag_eval::{RatingScorer, Scorer};
/// let s = RatingScorer::default().score(&["4".into(), "no idea".into()], &["5".into(), "2".into()]).unwrap();
/// // errors: |4-5| = 1, and "no idea" vs gold 2 counts as 5: |5-2| = 3
/// assert_eq!(s[0], 2.0);
/// assert!((s[1] - 5f64.sqrt()).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct RatingScorer {
    /// The parse rule.
    pub parse: RatingParse,
}

impl Scorer for RatingScorer {
    fn columns(&self) -> Vec<String> {
        vec!["MAE".into(), "RMSE".into()]
    }

    fn score(&self, predictions: &[String], references: &[String]) -> Result<Vec<f64>> {
        let parsed: Vec<String> = match self.parse {
            RatingParse::FirstNumber => predictions
                .iter()
                .map(|p| parse_rating(p).map(|x| x.to_string()).unwrap_or_default())
                .collect(),
            RatingParse::LampFloat => predictions.to_vec(),
        };
        let m = pgraphrag_metrics::rating::mae_rmse(&parsed, references).map_err(|e| {
            Error::Scoring {
                config: String::new(),
                message: e.to_string(),
            }
        })?;
        Ok(vec![m.mae, m.rmse])
    }
}

/// ROUGE-1 and ROUGE-L (F-measure; rouge-score tokenizer, no stemmer, as HF `evaluate`
/// defaults) and METEOR (nltk 3.9.1 as HF `evaluate`), each the mean over pairs.
///
/// HF `evaluate`'s ROUGE reports the median of 1,000 unseeded bootstrap resample means
/// (`BootstrapAggregator`'s `mid`), which is not reproducible run to run; the plain mean
/// reported here is what that median estimates.
///
/// Without a METEOR scorer (no WordNet on the machine) the METEOR column is NaN, which the
/// Markdown table shows as `missing`, the CSV writes as `NaN` and the chart draws no bar for.
pub struct TextScorer {
    rouge: pgraphrag_metrics::Rouge,
    meteor: Option<pgraphrag_metrics::Meteor>,
}

impl TextScorer {
    /// ROUGE-1, ROUGE-L and, when given, METEOR (load it with
    /// `pgraphrag_metrics::Meteor::load(dir)`, the folder from `pgraphrag_metrics::wordnet::find`).
    ///
    /// ```
    /// use pgraphrag_eval::{Scorer, TextScorer};
    /// let s = TextScorer::new(None);
    /// let v = s.score(&["a good day".into()], &["a good day".into()]).unwrap();
    /// assert_eq!(v[0], 1.0);
    /// assert!(v[2].is_nan()); // METEOR not computed
    /// ```
    pub fn new(meteor: Option<pgraphrag_metrics::Meteor>) -> Self {
        TextScorer {
            rouge: pgraphrag_metrics::Rouge::default(),
            meteor,
        }
    }
}

/// A [`Scorer`]'s inputs checked: one prediction per reference, at least one.
pub(crate) fn check_pairs(predictions: &[String], references: &[String]) -> Result<()> {
    if predictions.len() != references.len() || predictions.is_empty() {
        return Err(Error::Scoring {
            config: String::new(),
            message: format!(
                "{} predictions for {} references",
                predictions.len(),
                references.len()
            ),
        });
    }
    Ok(())
}

impl Scorer for TextScorer {
    fn columns(&self) -> Vec<String> {
        vec!["ROUGE-1".into(), "ROUGE-L".into(), "METEOR".into()]
    }

    fn score(&self, predictions: &[String], references: &[String]) -> Result<Vec<f64>> {
        check_pairs(predictions, references)?;
        let (mut r1, mut rl, mut me) = (0.0, 0.0, 0.0);
        for (p, r) in predictions.iter().zip(references) {
            let s = self.rouge.score(p, r);
            r1 += s.rouge1.fmeasure;
            rl += s.rouge_l.fmeasure;
            me += self.meteor.map_or(f64::NAN, |m| m.score_str(p, r));
        }
        let n = predictions.len() as f64;
        Ok(vec![r1 / n, rl / n, me / n])
    }
}

/// The gold answer of a profile for a task, as `master_eval.py` reads it: the target's
/// text or title `.strip()`ped (a missing one is empty), or the rating as an integer.
///
/// ```
/// use pgraphrag_core::Entry;
/// use pgraphrag_prompt::pgraphrag::{RankedProfile, Task};
/// let p = RankedProfile { target: Entry { title: Some(" Hi ".into()), rating: Some(4.0), ..Default::default() }, ..Default::default() };
/// assert_eq!(pgraphrag_eval::gold(&p, Task::Title), "Hi");
/// assert_eq!(pgraphrag_eval::gold(&p, Task::Rating), "4");
/// ```
pub fn gold(profile: &RankedProfile, task: Task) -> String {
    let t = &profile.target;
    match task {
        Task::Text => t.text.as_deref().unwrap_or("").trim().to_string(),
        Task::Title => t.title.as_deref().unwrap_or("").trim().to_string(),
        Task::Rating => pgraphrag_prompt::pgraphrag::py_rating(t.rating),
    }
}

/// Per grid cell, per scorer column: the two-sided paired t-test p-value of the cell's
/// per-user scores against `baseline`'s (each answer extracted as [`ResultsTable::score`]
/// does and scored alone; NaN for the baseline itself and where every difference is equal).
///
/// ```
/// use pgraphrag_eval::{ConfigOutputs, RatingScorer, RunConfig, UserOutput, paired_p_values};
/// use pgraphrag_prompt::{extract::ExtractOptions, pgraphrag::{Mode, Task}};
/// let cell = |mode, outs: &[&str]| ConfigOutputs {
///     config: RunConfig::new(mode, 1),
///     outputs: outs.iter().map(|o| UserOutput { user_id: "u".into(), output: o.to_string() }).collect(),
/// };
/// let outs = [cell(Mode::Both, &["Rating: 5", "Rating: 4", "Rating: 1"]), cell(Mode::User, &["Rating: 1", "Rating: 2", "Rating: 1"])];
/// let golds = ["5".to_string(), "4".to_string(), "2".to_string()];
/// let p = paired_p_values(Task::Rating, &outs, &golds, &ExtractOptions::default(), &RatingScorer::default(), RunConfig::new(Mode::Both, 1)).unwrap();
/// assert!(p[0][0].is_nan());
/// assert!(p[1][0] > 0.0 && p[1][0] < 1.0);
/// ```
pub fn paired_p_values(
    task: Task,
    outputs: &[ConfigOutputs],
    golds: &[String],
    extract_options: &ExtractOptions,
    scorer: &dyn Scorer,
    baseline: RunConfig,
) -> Result<Vec<Vec<f64>>> {
    let per_user = |c: &ConfigOutputs| per_user_scores(task, c, golds, extract_options, scorer);
    let base = outputs
        .iter()
        .find(|c| c.config == baseline)
        .ok_or_else(|| Error::InvalidInput(format!("the grid has no baseline cell {baseline}")))?;
    let base = per_user(base)?;
    outputs
        .iter()
        .map(|c| {
            if c.config == baseline {
                return Ok(vec![f64::NAN; base.len()]);
            }
            let mine = per_user(c)?;
            Ok(mine
                .iter()
                .zip(&base)
                .map(|(a, b)| {
                    pgraphrag_metrics::stats::paired_t_test(a, b).map_or(f64::NAN, |t| t.p_value)
                })
                .collect())
        })
        .collect()
}

/// One grid cell's scores per user: one vector per scorer column, in the order of `golds`
/// (each answer extracted and scored alone). A cell whose output count differs from the
/// golds' is an error naming the cell.
pub(crate) fn per_user_scores(
    task: Task,
    cell: &ConfigOutputs,
    golds: &[String],
    extract_options: &ExtractOptions,
    scorer: &dyn Scorer,
) -> Result<Vec<Vec<f64>>> {
    if cell.outputs.len() != golds.len() {
        return Err(Error::Scoring {
            config: cell.config.to_string(),
            message: format!("{} outputs for {} golds", cell.outputs.len(), golds.len()),
        });
    }
    let mut cols = vec![Vec::with_capacity(golds.len()); scorer.columns().len()];
    for (o, g) in cell.outputs.iter().zip(golds) {
        let answer = extract(&o.output, task, extract_options);
        let values = scorer.score(std::slice::from_ref(&answer), std::slice::from_ref(g))?;
        for (col, v) in cols.iter_mut().zip(values) {
            col.push(v);
        }
    }
    Ok(cols)
}

/// One row of a [`ResultsTable`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultRow {
    /// The `mode_k` label.
    pub config: String,
    /// How many users were scored.
    pub n: usize,
    /// One value per column.
    pub values: Vec<f64>,
    /// For rating tasks: how many answers could not be parsed (else 0).
    pub unparsed: usize,
}

/// Scores per grid cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultsTable {
    /// A title line (e.g. `amazon_dev_reviewTitle_SmolLM2_bm25`).
    pub title: String,
    /// Metric names.
    pub columns: Vec<String>,
    /// One row per grid cell, in grid order.
    pub rows: Vec<ResultRow>,
}

impl ResultsTable {
    /// Extracts every answer (see [`extract`]) and scores each grid cell.
    pub fn score(
        title: impl Into<String>,
        task: Task,
        outputs: &[ConfigOutputs],
        golds: &[String],
        extract_options: &ExtractOptions,
        scorer: &dyn Scorer,
    ) -> Result<Self> {
        let mut rows = Vec::with_capacity(outputs.len());
        for c in outputs {
            if c.outputs.len() != golds.len() {
                return Err(Error::Scoring {
                    config: c.config.to_string(),
                    message: format!("{} outputs for {} golds", c.outputs.len(), golds.len()),
                });
            }
            let answers: Vec<String> = c
                .outputs
                .iter()
                .map(|o| extract(&o.output, task, extract_options))
                .collect();
            let unparsed = if task == Task::Rating {
                answers.iter().filter(|a| parse_rating(a).is_none()).count()
            } else {
                0
            };
            let values = scorer.score(&answers, golds).map_err(|e| match e {
                Error::Scoring { message, .. } => Error::Scoring {
                    config: c.config.to_string(),
                    message,
                },
                other => other,
            })?;
            rows.push(ResultRow {
                config: c.config.to_string(),
                n: answers.len(),
                values,
                unparsed,
            });
        }
        Ok(ResultsTable {
            title: title.into(),
            columns: scorer.columns(),
            rows,
        })
    }

    /// A Markdown table: `| mode_k | n | <columns> |` (+ `unparsed` for ratings), each value as
    /// [`markdown_value`] writes it (`master_eval.py`'s `round(x, 3)`, three decimals shown; the
    /// same digits as [`ResultsTable::to_csv`]).
    pub fn to_markdown(&self) -> String {
        let rating = self.rows.iter().any(|r| r.unparsed > 0)
            || self.columns.first().is_some_and(|c| c == "MAE");
        let mut s = format!("**{}**\n\n| mode_k | n |", self.title);
        for c in &self.columns {
            s.push_str(&format!(" {c} |"));
        }
        if rating {
            s.push_str(" unparsed |");
        }
        s.push_str("\n|---|---:|");
        for _ in &self.columns {
            s.push_str("---:|");
        }
        if rating {
            s.push_str("---:|");
        }
        s.push('\n');
        for r in &self.rows {
            s.push_str(&format!("| {} | {} |", r.config, r.n));
            for v in &r.values {
                s.push_str(&format!(" {} |", markdown_value(*v)));
            }
            if rating {
                s.push_str(&format!(" {} |", r.unparsed));
            }
            s.push('\n');
        }
        s
    }

    /// CSV with `master_eval.py`'s header (`mode_k,ROUGE-1,ROUGE-L,METEOR`, or
    /// `mode_k,MAE,RMSE`), each value as [`csv_value`] writes it (the same rounding as
    /// [`ResultsTable::to_markdown`], printed as Python prints the float).
    pub fn to_csv(&self) -> String {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        let header = std::iter::once("mode_k").chain(self.columns.iter().map(String::as_str));
        // Writing to a Vec cannot fail.
        let _ = w.write_record(header);
        for r in &self.rows {
            let cells =
                std::iter::once(r.config.clone()).chain(r.values.iter().map(|v| csv_value(*v)));
            let _ = w.write_record(cells);
        }
        let bytes = w.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// Decimals kept in a results table (`master_eval.py` reports `round(x, 3)`).
pub const TABLE_DECIMALS: u32 = 3;

/// The one rounding of a results-table value, behind both [`markdown_value`] and
/// [`csv_value`]: Python's `round(x, 3)` ([`pgraphrag_text::py::round`]: the exact binary value
/// rounded to the nearest three-decimal number, ties to even), as `master_eval.py` reports it.
///
/// A value that sits on a half-thousandth in decimal is stored just below or above it, and
/// rounds the way it is stored: 2.3975 is the float 2.39749999…, so it reports 2.397. (An earlier
/// CSV writer scaled by 1000 first, `(x * 1000.0).round() / 1000.0`, whose product rounds up to
/// 2397.5 and so gave 2.398 where the Markdown said 2.397.)
///
/// ```
/// use pgraphrag_eval::table_value;
/// assert_eq!(table_value(2.3975), 2.397);
/// assert_eq!(table_value(0.12345), 0.123);
/// assert!(table_value(f64::NAN).is_nan());
/// ```
pub fn table_value(x: f64) -> f64 {
    pgraphrag_text::py::round(x, TABLE_DECIMALS)
}

/// A results-table value in a Markdown cell: [`table_value`] with all three decimals shown
/// (`2.240`); `missing` for NaN (a metric not computed).
///
/// ```
/// use pgraphrag_eval::markdown_value;
/// assert_eq!(markdown_value(2.24), "2.240");
/// assert_eq!(markdown_value(2.3975), "2.397");
/// assert_eq!(markdown_value(f64::NAN), "missing");
/// ```
pub fn markdown_value(x: f64) -> String {
    if x.is_nan() {
        "missing".into()
    } else {
        format!("{:.prec$}", table_value(x), prec = TABLE_DECIMALS as usize)
    }
}

/// A results-table value in a CSV cell: the same [`table_value`] as [`markdown_value`], printed
/// as Python prints the float (`2.24`, `1.0`, `0.123`, `master_eval.py`'s CSV); `NaN`, `inf`
/// and `-inf` for the non-finite values (read back by `pgraphrag plot`).
///
/// ```
/// use pgraphrag_eval::csv_value;
/// assert_eq!(csv_value(2.24), "2.24");
/// assert_eq!(csv_value(1.0), "1.0");
/// assert_eq!(csv_value(2.3975), "2.397");
/// assert_eq!(csv_value(f64::NAN), "NaN");
/// ```
pub fn csv_value(x: f64) -> String {
    if x.is_finite() {
        pgraphrag_text::py::python_float_repr(table_value(x))
    } else {
        format!("{x}")
    }
}

/// A p-value in a Markdown cell: three decimals, `<0.001` below 0.001, `–` for NaN (no
/// test: the reference row itself, or every difference equal).
///
/// ```
/// use pgraphrag_eval::markdown_p;
/// assert_eq!(markdown_p(0.0391), "0.039");
/// assert_eq!(markdown_p(0.0004), "<0.001");
/// assert_eq!(markdown_p(f64::NAN), "–");
/// ```
pub fn markdown_p(p: f64) -> String {
    if p.is_nan() {
        "–".into()
    } else if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RunConfig, UserOutput};
    use pgraphrag_prompt::pgraphrag::Mode;

    #[test]
    fn rating_table() {
        let outs = vec![ConfigOutputs {
            config: RunConfig::new(Mode::Both, 1),
            outputs: vec![
                UserOutput {
                    user_id: "a".into(),
                    output: "Rating: 5".into(),
                },
                UserOutput {
                    user_id: "b".into(),
                    output: "I cannot say".into(),
                },
            ],
        }];
        let golds = vec!["5".to_string(), "4".to_string()];
        let t = ResultsTable::score(
            "t",
            Task::Rating,
            &outs,
            &golds,
            &ExtractOptions::default(),
            &RatingScorer::default(),
        )
        .unwrap();
        assert_eq!(t.rows[0].values, vec![1.5, (9.0f64 / 2.0).sqrt()]);
        assert_eq!(t.rows[0].unparsed, 1);
        assert_eq!(t.to_csv(), "mode_k,MAE,RMSE\nboth_k1,1.5,2.121\n");
        assert!(
            t.to_markdown()
                .contains("| both_k1 | 2 | 1.500 | 2.121 | 1 |")
        );
    }

    #[test]
    fn csv_value_like_python() {
        assert_eq!(csv_value(1.0), "1.0");
        assert_eq!(csv_value(0.12345), "0.123");
        assert_eq!(csv_value(0.1), "0.1");
        assert_eq!(csv_value(12.0004), "12.0");
        assert_eq!(csv_value(f64::INFINITY), "inf");
        // CPython 3.11's `repr(round(x, 3))` of each (rounded as the float is stored: 2.3975 is
        // 2.39749999…, 2.6745 is 2.67450000…1, 0.0625 is an exact tie, to even).
        for (x, want) in [
            (2.3975, "2.397"),
            (2.6745, "2.675"),
            (0.0625, "0.062"),
            (0.0005, "0.001"),
            (1.0005, "1.0"),
            (2.8345, "2.834"),
            (0.1235, "0.123"),
        ] {
            assert_eq!(csv_value(x), want, "{x:?}");
        }
    }

    /// A value on a half-thousandth, like the committed amazon and gap rating MAEs that the two
    /// writers once rounded differently (Markdown 2.397 / 2.736 / 2.834, CSV 2.398 / 2.737 /
    /// 2.835): both writers now give the digits of Python's `round(x, 3)`.
    #[test]
    fn half_thousandths_round_one_way() {
        let x = 479.5 / 200.0; // 2.3975, stored as 2.39749999…
        // The old CSV rule scaled first, and the product rounds up to 2397.5:
        assert_eq!((x * 1000.0f64).round() / 1000.0, 2.398);
        assert_eq!(markdown_value(x), "2.397");
        assert_eq!(csv_value(x), "2.397");
        assert_eq!(table_value(x), pgraphrag_text::py::round(x, 3));
    }

    /// Every Markdown cell of a table and the CSV cell of the same row and column name one number,
    /// digit for digit (the Markdown pads to three decimals; the CSV, as Python, drops trailing zeros).
    fn assert_markdown_matches_csv(t: &ResultsTable) {
        let md = t.to_markdown();
        let csv = t.to_csv();
        let mut md_rows = md
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| mode_k"))
            .map(|l| {
                l.trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_string())
                    .collect::<Vec<_>>()
            });
        let mut csv_lines = csv.lines();
        let header: Vec<&str> = csv_lines.next().unwrap().split(',').collect();
        assert_eq!(
            header[1..],
            t.columns.iter().map(String::as_str).collect::<Vec<_>>()[..]
        );
        let mut n = 0;
        for line in csv_lines {
            let cells: Vec<&str> = line.split(',').collect();
            let md_cells = md_rows.next().expect("a Markdown row per CSV row");
            assert_eq!(md_cells[0], cells[0]);
            for (j, c) in cells[1..].iter().enumerate() {
                // Markdown: mode_k, n, then the columns.
                let m = &md_cells[2 + j];
                if *c == "NaN" {
                    assert_eq!(m, "missing");
                    continue;
                }
                let (int, frac) = c.split_once('.').expect("a decimal point");
                let padded = format!("{int}.{frac:0<3}");
                assert_eq!(
                    m,
                    &padded,
                    "row {} column {}: md {m} csv {c}",
                    cells[0],
                    header[1 + j]
                );
                n += 1;
            }
        }
        assert!(
            md_rows.next().is_none(),
            "no Markdown row without a CSV row"
        );
        assert!(n > 0);
    }

    #[test]
    fn markdown_and_csv_agree_digit_for_digit() {
        // Values at rounding edges, among them the half-thousandths of the committed amazon and
        // gap rating tables' none_k1 / neighbor_k1 / user_k* MAE.
        let mut values: Vec<f64> = vec![
            2.3975,
            2.7365,
            2.8345,
            2.24,
            1.0,
            0.0625,
            0.1,
            2.675,
            f64::NAN,
            0.0,
            3.0 - 1e-12,
            1.0 / 3.0,
        ];
        // A sweep over many half-thousandths, stored on both sides.
        for i in 0..2000 {
            let x = (i as f64 + 0.5) / 1000.0;
            values.extend([x, x * (1.0 + 1e-15), x * (1.0 - 1e-15)]);
        }
        let rows = values
            .chunks(3)
            .enumerate()
            .map(|(i, c)| {
                let mut v = c.to_vec();
                v.resize(3, 0.5);
                ResultRow {
                    config: format!("row{i}"),
                    n: 1,
                    values: v,
                    unparsed: 0,
                }
            })
            .collect();
        let t = ResultsTable {
            title: "t".into(),
            columns: vec!["ROUGE-1".into(), "ROUGE-L".into(), "METEOR".into()],
            rows,
        };
        assert_markdown_matches_csv(&t);
    }
}
