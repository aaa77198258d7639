//! Scoring the grid as Table 2 (l.212–214, 220): corpus BLEU and ROUGE-1/2/L in %, 95%
//! bootstrap intervals over examples, paired two-sided t-tests against `ImmedCtx` and
//! `RankDocBM25`; tables as Markdown, CSV and SVG.
use pgraphrag_corpora::multistage::Example;
use pgraphrag_metrics::bleu::{BleuStats, compute_bleu};
use pgraphrag_metrics::stats::{BootstrapDraws, RandomState, paired_t_test, percentile};
use serde::Serialize;

use super::grid::GridRun;
use super::plan::{BestChoice, MultistageGrid};
use super::score::{CellScores, score_cell};
use super::{Cell, CellKind, summary_name};
use crate::{Error, Result, ResultRow, ResultsTable};

/// The significance level of Table 2's marks (l.220: "at the level of 0.01").
pub const SIGNIFICANCE: f64 = 0.01;

/// Bootstrap resamples of the intervals (seed 0, numpy's `RandomState` draws).
const RESAMPLES: usize = 1000;

/// One row of [`MultistageTable`]: a cell's scores in %.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultistageRow {
    /// The cell's name.
    pub cell: String,
    /// Examples scored.
    pub n: usize,
    /// Per column: corpus BLEU, mean ROUGE-1, ROUGE-2, ROUGE-L F-measures, in %.
    pub mean: Vec<f64>,
    /// Per column: the 95% bootstrap interval over examples (BLEU: corpus BLEU of each resample).
    pub interval: Vec<(f64, f64)>,
    /// Mean sentence BLEU in % (what the BLEU t-tests compare).
    pub sentence_bleu: f64,
    /// Per column: the paired two-sided t-test p-value against `ImmedCtx` (NaN: no such cell,
    /// the cell itself, fewer than 2 examples or no variance).
    pub p_vs_immed_ctx: Vec<f64>,
    /// Per column: the same against `RankDocBM25`.
    pub p_vs_rank_doc_bm25: Vec<f64>,
    /// Per column: `*` (better than `ImmedCtx`, p < 0.01) and `†` (better than `RankDocBM25`).
    pub marks: Vec<String>,
}

/// The grid's Table 2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultistageTable {
    /// A title line.
    pub title: String,
    /// `BLEU`, `ROUGE-1`, `ROUGE-2`, `ROUGE-L`.
    pub columns: Vec<String>,
    /// The cell the `*` tests compare with (`ImmedCtx`), if in the grid.
    pub immed_ctx: Option<String>,
    /// The cell the `†` tests compare with (`RankDocBM25`), if in the grid.
    pub rank_doc_bm25: Option<String>,
    /// How the best ranker was chosen, e.g. `RankDocBM25 (by ROUGE-1)`.
    pub best_ranker: Option<String>,
    /// How the best summary was chosen.
    pub best_summary: Option<String>,
    /// One row per cell, in grid order.
    pub rows: Vec<MultistageRow>,
}

/// One scored answer: a line of a cell's predictions file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictionRecord {
    /// The example's id.
    pub id: String,
    /// The generation input.
    pub prompt: String,
    /// The model's answer.
    pub output: String,
    /// What was scored (the answer, with the passage start when the cell prepends it).
    pub prediction: String,
    /// The gold current document.
    pub target: String,
    /// Sentence BLEU (0–100).
    pub bleu: f64,
    /// ROUGE-1 F-measure (0–1).
    pub rouge1: f64,
    /// ROUGE-2 F-measure.
    pub rouge2: f64,
    /// ROUGE-L F-measure.
    #[serde(rename = "rougeL")]
    pub rouge_l: f64,
}

fn choice(name: &str, c: BestChoice) -> String {
    match c {
        BestChoice::Given => format!("{name} (given)"),
        BestChoice::ByRouge1 { rouge1 } => {
            format!(
                "{name} (by ROUGE-1, {:.2} on these examples)",
                100.0 * rouge1
            )
        }
        BestChoice::PaperDefault => format!("{name} (the paper's best; no cell to pick from)"),
    }
}

/// The first cell of `kind` run as the paper runs it, else the first of that kind.
fn baseline(cells: &[Cell], kind: CellKind) -> Option<usize> {
    cells
        .iter()
        .position(|c| *c == Cell::paper(kind))
        .or_else(|| cells.iter().position(|c| c.kind == kind))
}

fn targets(examples: &[Example]) -> Vec<&str> {
    examples.iter().map(|e| e.target.as_str()).collect()
}

fn check_run(examples: &[Example], run: &GridRun) -> Result<()> {
    let same =
        run.ids.len() == examples.len() && run.ids.iter().zip(examples).all(|(i, e)| *i == e.id);
    if same {
        Ok(())
    } else {
        Err(Error::InvalidInput(
            "the run's examples are not these examples".into(),
        ))
    }
}

impl MultistageGrid {
    /// Scores every cell of `run` against the examples' targets: per column the score in %
    /// (corpus BLEU; mean ROUGE F-measures), its 95% bootstrap interval over examples (1,000
    /// resamples, seed 0, the same resamples for every column and cell), and paired two-sided
    /// t-tests against `ImmedCtx` and `RankDocBM25` (BLEU on sentence BLEU), marked as Table 2
    /// marks them ([`SIGNIFICANCE`], a higher mean).
    pub fn results(
        &self,
        title: &str,
        examples: &[Example],
        run: &GridRun,
    ) -> Result<MultistageTable> {
        check_run(examples, run)?;
        let gold = targets(examples);
        let n = gold.len();
        let draws = BootstrapDraws::new(n, RESAMPLES, 0).map_err(|e| Error::Scoring {
            config: "bootstrap".into(),
            message: e.to_string(),
        })?;
        let cells: Vec<Cell> = run.cells.iter().map(|c| c.cell).collect();
        let scores: Vec<CellScores> = run
            .cells
            .iter()
            .map(|c| score_cell(&c.predictions, &gold))
            .collect();
        // Per cell, per column: the tested per-example values.
        let tested = |s: &CellScores| -> [Vec<f64>; 4] {
            [
                s.sentence_bleu.clone(),
                s.rouge1.clone(),
                s.rouge2.clone(),
                s.rouge_l.clone(),
            ]
        };
        let bases = [
            baseline(&cells, CellKind::ImmedCtx),
            baseline(&cells, CellKind::RankDocBM25),
        ];
        let mut rows = Vec::with_capacity(scores.len());
        for (i, s) in scores.iter().enumerate() {
            let cols = tested(s);
            let refs: Vec<&[f64]> = cols[1..].iter().map(Vec::as_slice).collect();
            let ivs = draws.intervals(&refs, 0.95).map_err(|e| Error::Scoring {
                config: cells[i].to_string(),
                message: e.to_string(),
            })?;
            let mut mean = vec![s.corpus_bleu];
            let mut interval = vec![bleu_interval(&s.bleu_stats)];
            for (c, iv) in cols[1..].iter().zip(&ivs) {
                mean.push(100.0 * pgraphrag_metrics::stats::mean(c));
                interval.push((100.0 * iv.low, 100.0 * iv.high));
            }
            let mut p = [vec![f64::NAN; 4], vec![f64::NAN; 4]];
            let mut marks = vec![String::new(); 4];
            for (b, base) in bases.iter().enumerate() {
                let Some(base) = *base else { continue };
                if base == i {
                    continue;
                }
                let other = tested(&scores[base]);
                for m in 0..4 {
                    let pv = paired_t_test(&cols[m], &other[m]).map_or(f64::NAN, |t| t.p_value);
                    p[b][m] = pv;
                    let better = pgraphrag_metrics::stats::mean(&cols[m])
                        > pgraphrag_metrics::stats::mean(&other[m]);
                    if pv < SIGNIFICANCE && better {
                        marks[m].push(if b == 0 { '*' } else { '†' });
                    }
                }
            }
            let [p_immed, p_bm25] = p;
            rows.push(MultistageRow {
                cell: cells[i].to_string(),
                n,
                mean,
                interval,
                sentence_bleu: pgraphrag_metrics::stats::mean(&s.sentence_bleu),
                p_vs_immed_ctx: p_immed,
                p_vs_rank_doc_bm25: p_bm25,
                marks,
            });
        }
        Ok(MultistageTable {
            title: title.to_string(),
            columns: ["BLEU", "ROUGE-1", "ROUGE-2", "ROUGE-L"]
                .map(String::from)
                .to_vec(),
            immed_ctx: bases[0].map(|i| cells[i].to_string()),
            rank_doc_bm25: bases[1].map(|i| cells[i].to_string()),
            best_ranker: run.best_ranker.map(|(r, c)| choice(r.name(), c)),
            best_summary: run.best_summary.map(|(m, c)| choice(summary_name(m), c)),
            rows,
        })
    }
}

/// The 95% percentile interval of corpus BLEU over the resamples of [`BootstrapDraws`]
/// (numpy's `RandomState(0)`, `randint(n)` per resample: the same draws).
fn bleu_interval(stats: &[BleuStats]) -> (f64, f64) {
    let n = stats.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = RandomState::new(0);
    let mut idx = vec![0usize; n];
    let mut scores = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        rng.fill_randint(n as u64, &mut idx);
        let mut total = BleuStats::default();
        for &i in &idx {
            total += stats[i];
        }
        scores.push(compute_bleu(total, false).score);
    }
    (percentile(&scores, 2.5), percentile(&scores, 97.5))
}

impl GridRun {
    /// Every cell's answers with their scores, for one predictions file per cell (in grid
    /// order, named by the cell).
    pub fn predictions(
        &self,
        examples: &[Example],
    ) -> Result<Vec<(String, Vec<PredictionRecord>)>> {
        check_run(examples, self)?;
        let gold = targets(examples);
        Ok(self
            .cells
            .iter()
            .map(|c| {
                let s = score_cell(&c.predictions, &gold);
                let records = (0..gold.len())
                    .map(|j| PredictionRecord {
                        id: self.ids[j].clone(),
                        prompt: c.prompts[j].clone(),
                        output: c.outputs[j].clone(),
                        prediction: c.predictions[j].clone(),
                        target: gold[j].to_string(),
                        bleu: s.sentence_bleu[j],
                        rouge1: s.rouge1[j],
                        rouge2: s.rouge2[j],
                        rouge_l: s.rouge_l[j],
                    })
                    .collect();
                (c.cell.to_string(), records)
            })
            .collect())
    }
}

fn p_text(p: f64) -> String {
    if p.is_nan() {
        "–".into()
    } else if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

impl MultistageTable {
    /// Two Markdown tables: the scores in % with their intervals and marks, then the p-values.
    ///
    /// ```
    /// use pgraphrag_eval::multistage::{MultistageRow, MultistageTable};
    /// let row = MultistageRow { cell: "RankDocBM25".into(), n: 3, mean: vec![21.19, 37.69, 25.99, 33.07],
    ///     interval: vec![(20.0, 22.0); 4], sentence_bleu: 20.0, p_vs_immed_ctx: vec![0.001; 4],
    ///     p_vs_rank_doc_bm25: vec![f64::NAN; 4], marks: vec!["*".into(); 4] };
    /// let t = MultistageTable { title: "email".into(), columns: ["BLEU", "ROUGE-1", "ROUGE-2", "ROUGE-L"].map(String::from).to_vec(),
    ///     immed_ctx: Some("ImmedCtx".into()), rank_doc_bm25: Some("RankDocBM25".into()),
    ///     best_ranker: None, best_summary: None, rows: vec![row] };
    /// let md = t.to_markdown();
    /// assert!(md.contains("| RankDocBM25 | 3 | 21.19* [20.00, 22.00] | 37.69* [20.00, 22.00] |"), "{md}");
    /// assert!(md.contains("| RankDocBM25 | 0.001 / 0.001 / 0.001 / 0.001 | – / – / – / – |"), "{md}");
    /// ```
    pub fn to_markdown(&self) -> String {
        let or_none = |c: &Option<String>| c.clone().unwrap_or_else(|| "(not in the grid)".into());
        let mut s = format!(
            "**{}**\n\nScores in %: BLEU is sacreBLEU's corpus BLEU, ROUGE the mean rouge-score F-measure; [95% bootstrap interval over examples, {RESAMPLES} resamples]. * / †: better than {} / {} with p < {SIGNIFICANCE} in a paired two-sided t-test (BLEU tested on sentence BLEU), as Table 2.",
            self.title,
            or_none(&self.immed_ctx),
            or_none(&self.rank_doc_bm25)
        );
        if let Some(b) = &self.best_ranker {
            s.push_str(&format!(" Best ranker: {b}."));
        }
        if let Some(b) = &self.best_summary {
            s.push_str(&format!(" Best summary: {b}."));
        }
        s.push_str("\n\n| cell | n |");
        for c in &self.columns {
            s.push_str(&format!(" {c} |"));
        }
        s.push_str("\n|---|---:|");
        s.push_str(&"---:|".repeat(self.columns.len()));
        s.push('\n');
        for r in &self.rows {
            s.push_str(&format!("| {} | {} |", r.cell, r.n));
            for m in 0..self.columns.len() {
                let (lo, hi) = r.interval[m];
                s.push_str(&format!(
                    " {:.2}{} [{lo:.2}, {hi:.2}] |",
                    r.mean[m], r.marks[m]
                ));
            }
            s.push('\n');
        }
        let names = self.columns.join(" / ");
        s.push_str(&format!(
            "\n| cell | p vs {} ({names}) | p vs {} ({names}) |\n|---|---|---|\n",
            or_none(&self.immed_ctx),
            or_none(&self.rank_doc_bm25)
        ));
        for r in &self.rows {
            let join = |v: &[f64]| v.iter().map(|p| p_text(*p)).collect::<Vec<_>>().join(" / ");
            s.push_str(&format!(
                "| {} | {} | {} |\n",
                r.cell,
                join(&r.p_vs_immed_ctx),
                join(&r.p_vs_rank_doc_bm25)
            ));
        }
        s
    }

    /// The scores as a [`ResultsTable`] (one row per cell, values in %), for its CSV
    /// (`mode_k,BLEU,ROUGE-1,ROUGE-2,ROUGE-L`, read back by `pgraphrag plot`) and SVG bar charts.
    ///
    /// ```
    /// use pgraphrag_eval::multistage::{MultistageRow, MultistageTable};
    /// let row = MultistageRow { cell: "ImmedCtx".into(), n: 2, mean: vec![17.27, 32.36, 21.45, 28.58],
    ///     interval: vec![(0.0, 1.0); 4], sentence_bleu: 15.0, p_vs_immed_ctx: vec![f64::NAN; 4],
    ///     p_vs_rank_doc_bm25: vec![f64::NAN; 4], marks: vec![String::new(); 4] };
    /// let t = MultistageTable { title: "t".into(), columns: ["BLEU", "ROUGE-1", "ROUGE-2", "ROUGE-L"].map(String::from).to_vec(),
    ///     immed_ctx: None, rank_doc_bm25: None, best_ranker: None, best_summary: None, rows: vec![row] };
    /// assert_eq!(t.to_results_table().to_csv(), "mode_k,BLEU,ROUGE-1,ROUGE-2,ROUGE-L\nImmedCtx,17.27,32.36,21.45,28.58\n");
    /// ```
    pub fn to_results_table(&self) -> ResultsTable {
        ResultsTable {
            title: self.title.clone(),
            columns: self.columns.clone(),
            rows: self
                .rows
                .iter()
                .map(|r| ResultRow {
                    config: r.cell.clone(),
                    n: r.n,
                    values: r.mean.clone(),
                    unparsed: 0,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bleu_interval_uses_the_bootstrap_draws() {
        // With one example every resample is that example: the interval is the point.
        let s = score_cell(&["a b c d e".to_string()], &["a b c d e"]);
        let (lo, hi) = bleu_interval(&s.bleu_stats);
        assert!((lo - 100.0).abs() < 1e-9 && (hi - 100.0).abs() < 1e-9);
        // Two examples, one perfect and one empty: the interval spans both.
        let s = score_cell(
            &["a b c d e".to_string(), String::new()],
            &["a b c d e", "f g h i j"],
        );
        let (lo, hi) = bleu_interval(&s.bleu_stats);
        assert!(
            lo < s.corpus_bleu && s.corpus_bleu < hi,
            "{lo} {} {hi}",
            s.corpus_bleu
        );
        assert_eq!(s.sentence_bleu[1], 0.0);
    }
}
