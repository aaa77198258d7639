//! One cell's scores against the targets, as Table 2 scores it (l.212–214): sacreBLEU and
//! rouge-score per example, and the corpus BLEU.
use pgraphrag_metrics::bleu::{BleuStats, compute_bleu, segment_stats};
use pgraphrag_metrics::{Rouge, RougeOptions};

/// One cell's scores per example.
#[derive(Debug, Clone, PartialEq)]
pub struct CellScores {
    /// sacreBLEU's `sentence_bleu` per example (0–100): what the BLEU t-tests compare.
    pub sentence_bleu: Vec<f64>,
    /// rouge-score's ROUGE-1 F-measure per example (0–1).
    pub rouge1: Vec<f64>,
    /// ROUGE-2 F-measure per example.
    pub rouge2: Vec<f64>,
    /// ROUGE-L F-measure per example.
    pub rouge_l: Vec<f64>,
    /// BLEU statistics per example (their sum gives the corpus BLEU).
    pub bleu_stats: Vec<BleuStats>,
    /// sacreBLEU's `corpus_bleu` over the examples (0–100): the headline BLEU.
    pub corpus_bleu: f64,
}

impl CellScores {
    /// The mean ROUGE-1 F-measure (NaN for no examples): what picks the best ranker and summary.
    pub fn rouge1_mean(&self) -> f64 {
        pgraphrag_metrics::stats::mean(&self.rouge1)
    }
}

/// Scores `predictions` against `targets` (one each, in order): sacreBLEU (13a tokens,
/// exponential smoothing for sentence BLEU) and rouge-score without stemming (the paper names
/// no options).
///
/// ```
/// let s = pgraphrag_eval::multistage::score_cell(&["the cat sat on the mat".to_string()], &["the cat sat on the mat"]);
/// assert!((s.corpus_bleu - 100.0).abs() < 1e-9 && s.rouge1[0] == 1.0);
/// ```
pub fn score_cell(predictions: &[String], targets: &[&str]) -> CellScores {
    let rouge = Rouge::new(RougeOptions::default());
    let n = predictions.len().min(targets.len());
    let mut s = CellScores {
        sentence_bleu: Vec::with_capacity(n),
        rouge1: Vec::with_capacity(n),
        rouge2: Vec::with_capacity(n),
        rouge_l: Vec::with_capacity(n),
        bleu_stats: Vec::with_capacity(n),
        corpus_bleu: 0.0,
    };
    let mut total = BleuStats::default();
    for (p, t) in predictions.iter().zip(targets) {
        let st = segment_stats(p, &[*t]);
        total += st;
        s.bleu_stats.push(st);
        s.sentence_bleu.push(compute_bleu(st, true).score);
        let r = rouge.score(p, t);
        s.rouge1.push(r.rouge1.fmeasure);
        s.rouge2.push(r.rouge2.fmeasure);
        s.rouge_l.push(r.rouge_l.fmeasure);
    }
    s.corpus_bleu = compute_bleu(total, false).score;
    s
}
