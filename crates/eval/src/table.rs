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

impl Scorer for TextScorer {
    fn columns(&self) -> Vec<String> {
        vec!["ROUGE-1".into(), "ROUGE-L".into(), "METEOR".into()]
    }

    fn score(&self, predictions: &[String], references: &[String]) -> Result<Vec<f64>> {
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

    /// A Markdown table: `| mode_k | n | <columns> |` (+ `unparsed` for ratings), values to
    /// three decimals as `master_eval.py` rounds them.
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
                if v.is_nan() {
                    s.push_str(" missing |");
                } else {
                    s.push_str(&format!(" {v:.3} |"));
                }
            }
            if rating {
                s.push_str(&format!(" {} |", r.unparsed));
            }
            s.push('\n');
        }
        s
    }

    /// CSV with `master_eval.py`'s header (`mode_k,ROUGE-1,ROUGE-L,METEOR`, or
    /// `mode_k,MAE,RMSE`) and values rounded to three decimals.
    pub fn to_csv(&self) -> String {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        let header = std::iter::once("mode_k").chain(self.columns.iter().map(String::as_str));
        // Writing to a Vec cannot fail.
        let _ = w.write_record(header);
        for r in &self.rows {
            let cells =
                std::iter::once(r.config.clone()).chain(r.values.iter().map(|v| round3(*v)));
            let _ = w.write_record(cells);
        }
        let bytes = w.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// Python's `round(x, 3)` printed as Python prints the float (`0.5`, `0.123`).
fn round3(x: f64) -> String {
    let r = (x * 1000.0).round() / 1000.0;
    let s = format!("{r}");
    if s.contains('.') || !r.is_finite() {
        s
    } else {
        format!("{s}.0")
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
    fn round3_like_python() {
        assert_eq!(round3(1.0), "1.0");
        assert_eq!(round3(0.12345), "0.123");
    }
}
