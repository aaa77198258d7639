//! Running baselines over rows and scoring them with the grids' own scorers and table.
use pgraphrag_prompt::extract::parse_rating;
use serde::Serialize;

use super::predict::{Example, NamedBaseline, Pool, Predictor};
use crate::{Error, Result, ResultRow, ResultsTable, Scorer};

/// What the answers are, for the table's `unparsed` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AnswerKind {
    /// Titles, review text, headlines, subjects (no `unparsed` column).
    Text,
    /// Ratings: an answer the grid's rating parser cannot read counts as `unparsed`.
    Rating,
}

/// One baseline's answers and scores on every row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineResult {
    /// The baseline's table name.
    pub name: String,
    /// Its answer per row.
    pub answers: Vec<String>,
    /// Per row: whether the predictor had nothing to go on (the answer is its fallback's, or
    /// empty).
    pub fell_back: Vec<bool>,
    /// Per scorer column, per row: the answer scored alone (for MAE and RMSE both the absolute
    /// error), for paired tests over rows.
    pub scores: Vec<Vec<f64>>,
}

/// The baselines on a set of rows: their answers, per-row scores and the results table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineReport {
    /// The rows' ids, in order.
    pub ids: Vec<String>,
    /// The rows' gold answers.
    pub golds: Vec<String>,
    /// The baselines, in table order.
    pub baselines: Vec<NamedBaseline>,
    /// Their results, in the same order.
    pub results: Vec<BaselineResult>,
    /// The table: one row per baseline, each value the scorer over all rows at once (what
    /// [`ResultsTable::score`] computes for a grid cell).
    pub table: ResultsTable,
}

/// Answers every row of `examples` with every baseline and scores the answers against `golds`
/// with `scorer` (the grids' [`crate::TextScorer`] or [`crate::RatingScorer`]): per row, and
/// over all rows into a [`ResultsTable`] titled `title`.
///
/// ```
/// use pgraphrag_eval::RatingScorer;
/// use pgraphrag_eval::baselines::{AnswerKind, Example, NamedBaseline, Predictor, run_baselines};
/// let rows = [Example::default(), Example::default()];
/// let golds = ["5".to_string(), "3".to_string()];
/// let b = [NamedBaseline::new("always_4", Predictor::Constant("4".into()))];
/// let r = run_baselines("t", AnswerKind::Rating, &rows, &golds, &b, &RatingScorer::default()).unwrap();
/// assert_eq!(r.table.rows[0].values[0], 1.0); // MAE
/// assert_eq!(r.results[0].scores[0], vec![1.0, 1.0]); // per row
/// ```
pub fn run_baselines(
    title: impl Into<String>,
    kind: AnswerKind,
    examples: &[Example],
    golds: &[String],
    baselines: &[NamedBaseline],
    scorer: &dyn Scorer,
) -> Result<BaselineReport> {
    if examples.len() != golds.len() || examples.is_empty() {
        return Err(Error::InvalidInput(format!(
            "{} baseline rows for {} golds",
            examples.len(),
            golds.len()
        )));
    }
    let columns = scorer.columns();
    let mut results = Vec::with_capacity(baselines.len());
    let mut rows = Vec::with_capacity(baselines.len());
    for b in baselines {
        let (answers, fell_back): (Vec<String>, Vec<bool>) = examples
            .iter()
            .map(|e| b.answer(e))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        let named = |e: Error| match e {
            Error::Scoring { message, .. } => Error::Scoring {
                config: b.name.clone(),
                message,
            },
            other => other,
        };
        let values = scorer.score(&answers, golds).map_err(named)?;
        let mut scores = vec![Vec::with_capacity(golds.len()); columns.len()];
        for (a, g) in answers.iter().zip(golds) {
            let one = scorer
                .score(std::slice::from_ref(a), std::slice::from_ref(g))
                .map_err(named)?;
            for (col, v) in scores.iter_mut().zip(one) {
                col.push(v);
            }
        }
        let unparsed = match kind {
            AnswerKind::Rating => answers.iter().filter(|a| parse_rating(a).is_none()).count(),
            AnswerKind::Text => 0,
        };
        rows.push(ResultRow {
            config: b.name.clone(),
            n: answers.len(),
            values,
            unparsed,
        });
        results.push(BaselineResult {
            name: b.name.clone(),
            answers,
            fell_back,
            scores,
        });
    }
    Ok(BaselineReport {
        ids: examples.iter().map(|e| e.id.clone()).collect(),
        golds: golds.to_vec(),
        baselines: baselines.to_vec(),
        results,
        table: ResultsTable {
            title: title.into(),
            columns,
            rows,
        },
    })
}

/// Why a predictor may have nothing to go on, in the notes under the table.
fn lacking(p: &Predictor) -> &'static str {
    match p {
        Predictor::MostSimilar {
            pool: Pool::Neighbors,
            ..
        }
        | Predictor::InputPlus {
            pool: Pool::Neighbors,
            ..
        }
        | Predictor::MeanRating(Pool::Neighbors)
        | Predictor::MeanLabel(Pool::Neighbors)
        | Predictor::ModeRating(Pool::Neighbors) => "no other user reviewed the item",
        Predictor::Latest
        | Predictor::MostSimilar { .. }
        | Predictor::InputPlus { .. }
        | Predictor::MeanRating(Pool::User)
        | Predictor::MeanLabel(Pool::User)
        | Predictor::ModeRating(Pool::User) => "the user has no other review to copy from",
        Predictor::FirstWords(_) | Predictor::FirstSentence(_) | Predictor::Input => {
            "the input is empty"
        }
        Predictor::Constant(_) => "never",
    }
}

/// What a fallback answers, in the notes under the table.
fn describe(p: &Predictor) -> String {
    match p {
        Predictor::Constant(c) => format!("{c:?}"),
        Predictor::Input => "the input alone".into(),
        other => format!("{other:?}"),
    }
}

/// One row of [`BaselineReport::to_jsonl`].
#[derive(Serialize)]
struct JsonRow<'a> {
    row: usize,
    id: &'a str,
    gold: &'a str,
    baselines: Vec<JsonAnswer<'a>>,
}

#[derive(Serialize)]
struct JsonAnswer<'a> {
    name: &'a str,
    answer: &'a str,
    fell_back: bool,
    scores: serde_json::Map<String, serde_json::Value>,
}

impl BaselineReport {
    /// The table ([`ResultsTable::to_markdown`]), then a note on each constant answer and on the
    /// rows where a predictor had nothing to go on.
    ///
    /// ```
    /// use pgraphrag_eval::RatingScorer;
    /// use pgraphrag_eval::baselines::{AnswerKind, Example, NamedBaseline, Pool, Predictor, run_baselines};
    /// let b = [NamedBaseline::new("user_mean", Predictor::MeanRating(Pool::User)).or(Predictor::Constant("4".into()))];
    /// let r = run_baselines("t", AnswerKind::Rating, &[Example::default()], &["5".into()], &b, &RatingScorer::default()).unwrap();
    /// let md = r.to_markdown();
    /// assert!(md.contains("| user_mean | 1 | 1.000 | 1.000 | 0 |"));
    /// assert!(md.contains("`user_mean`: 1 of 1 rows answered \"4\""));
    /// ```
    pub fn to_markdown(&self) -> String {
        let mut md = self.table.to_markdown();
        let n = self.ids.len();
        let mut notes = Vec::new();
        for (b, r) in self.baselines.iter().zip(&self.results) {
            if let Predictor::Constant(c) = &b.predictor
                && !b.name.starts_with("always_")
            {
                notes.push(format!("`{}` answers {c:?} for every row.", b.name));
            }
            let missing = r.fell_back.iter().filter(|&&f| f).count();
            if missing > 0 {
                let what = b
                    .fallback
                    .as_ref()
                    .map_or_else(|| "the empty answer".into(), describe);
                notes.push(format!(
                    "`{}`: {missing} of {n} rows answered {what} ({}).",
                    b.name,
                    lacking(&b.predictor)
                ));
            }
        }
        if !notes.is_empty() {
            md.push('\n');
            for note in notes {
                md.push_str(&format!("- {note}\n"));
            }
        }
        md
    }

    /// One JSON line per row: `{"row", "id", "gold", "baselines": [{"name", "answer",
    /// "fell_back", "scores": {column: value}}]}` (a NaN score, METEOR without WordNet, is
    /// `null`).
    ///
    /// ```
    /// use pgraphrag_eval::RatingScorer;
    /// use pgraphrag_eval::baselines::{AnswerKind, Example, NamedBaseline, Predictor, run_baselines};
    /// let b = [NamedBaseline::new("always_4", Predictor::Constant("4".into()))];
    /// let ex = Example { id: "u1".into(), ..Default::default() };
    /// let r = run_baselines("t", AnswerKind::Rating, &[ex], &["5".into()], &b, &RatingScorer::default()).unwrap();
    /// let line = r.to_jsonl().unwrap();
    /// assert!(line.starts_with(r#"{"row":0,"id":"u1","gold":"5","baselines":[{"name":"always_4","answer":"4""#));
    /// ```
    pub fn to_jsonl(&self) -> Result<String> {
        let mut out = String::new();
        for (i, (id, gold)) in self.ids.iter().zip(&self.golds).enumerate() {
            let baselines = self
                .results
                .iter()
                .map(|r| JsonAnswer {
                    name: &r.name,
                    answer: &r.answers[i],
                    fell_back: r.fell_back[i],
                    scores: self
                        .table
                        .columns
                        .iter()
                        .zip(&r.scores)
                        .map(|(c, v)| (c.clone(), serde_json::json!(v[i])))
                        .collect(),
                })
                .collect();
            let row = JsonRow {
                row: i,
                id,
                gold,
                baselines,
            };
            out.push_str(
                &serde_json::to_string(&row).map_err(|e| Error::InvalidInput(e.to_string()))?,
            );
            out.push('\n');
        }
        Ok(out)
    }

    /// The per-row scores of baseline `name` in `column`, for paired tests against another
    /// baseline or a grid cell scored on the same rows.
    ///
    /// ```
    /// use pgraphrag_eval::RatingScorer;
    /// use pgraphrag_eval::baselines::{AnswerKind, Example, NamedBaseline, Predictor, run_baselines};
    /// let b = [NamedBaseline::new("always_4", Predictor::Constant("4".into()))];
    /// let r = run_baselines("t", AnswerKind::Rating, &[Example::default()], &["2".into()], &b, &RatingScorer::default()).unwrap();
    /// assert_eq!(r.per_row("always_4", "MAE"), Some(&[2.0][..]));
    /// assert_eq!(r.per_row("always_4", "ROUGE-1"), None);
    /// ```
    pub fn per_row(&self, name: &str, column: &str) -> Option<&[f64]> {
        let c = self.table.columns.iter().position(|c| c == column)?;
        let r = self.results.iter().find(|r| r.name == name)?;
        Some(&r.scores[c])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TextScorer;
    use crate::baselines::Earlier;

    #[test]
    fn text_rows_are_scored_alone_and_together() {
        let ex = |input: &str| Example {
            id: input.into(),
            input: input.into(),
            history: vec![Earlier {
                output: Some("old title".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let rows = [ex("good soap here"), ex("bad")];
        let golds = ["good soap".to_string(), "terrible".to_string()];
        let b = [
            NamedBaseline::new("first_2_words", Predictor::FirstWords(2)),
            NamedBaseline::new("user_latest", Predictor::Latest),
            NamedBaseline::new("item_mean", Predictor::MeanRating(Pool::Neighbors)),
        ];
        let r = run_baselines(
            "t",
            AnswerKind::Text,
            &rows,
            &golds,
            &b,
            &TextScorer::new(None),
        )
        .unwrap();
        assert_eq!(r.results[0].answers, vec!["good soap", "bad"]);
        assert_eq!(r.results[0].scores[0], vec![1.0, 0.0]);
        assert_eq!(r.table.rows[0].values[0], 0.5);
        assert!(r.table.rows[0].values[2].is_nan()); // no WordNet: METEOR missing
        assert_eq!(r.results[2].fell_back, vec![true, true]);
        let md = r.to_markdown();
        assert!(md.contains("| first_2_words | 2 | 0.500 |"), "{md}");
        assert!(md.contains(
            "`item_mean`: 2 of 2 rows answered the empty answer (no other user reviewed the item)"
        ));
        let lines: Vec<serde_json::Value> = r
            .to_jsonl()
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["id"], "bad");
        assert_eq!(lines[0]["baselines"][1]["answer"], "old title");
        assert!(lines[0]["baselines"][0]["scores"]["METEOR"].is_null());
        assert_eq!(lines[0]["baselines"][0]["scores"]["ROUGE-1"], 1.0);
    }

    #[test]
    fn mismatched_rows_and_golds_are_an_error() {
        let b = [NamedBaseline::new("x", Predictor::Input)];
        let s = TextScorer::new(None);
        let e = run_baselines("t", AnswerKind::Text, &[], &[], &b, &s).unwrap_err();
        assert!(e.to_string().contains("0 baseline rows"), "{e}");
    }
}
