//! Classification and ranking metrics: accuracy and macro-F1 (LaMP-1/2) and ACC / Recall@k over a
//! candidate set (K-RagRec).
//!
//! LaMP maps each prediction and gold to its index in the task's label list, or -1 when it is not
//! a label, then calls HF `evaluate`'s `accuracy` and `f1(average="macro",
//! labels=list(range(len(all_labels))))`, i.e. sklearn's macro-F1 over **all** labels of the task
//! (a label never predicted nor gold counts as F1 = 0; -1 is not a label but its predictions
//! count as false negatives of the gold's label). [`macro_f1`] with [`F1Labels::Present`] is
//! sklearn's default instead (the sorted union of the labels that occur, -1 included).
//!
//! ```
//! use pgraphrag_metrics::classify::{lamp_classification, recall_at_k};
//! let labels = ["[1]", "[2]"];
//! let r = lamp_classification(&["[1]", "nonsense", "[2]"], &["[1]", "[2]", "[2]"], &labels).unwrap();
//! assert!((r.accuracy - 2.0 / 3.0).abs() < 1e-12);
//! let rec = recall_at_k(&[vec!["B", "A"], vec!["C", "A"]], &["A", "A"], 1).unwrap();
//! assert_eq!(rec, 0.0);
//! ```
use crate::error::{Error, Result};
use pgraphrag_text::py;

/// Which labels macro-F1 averages over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F1Labels<'a> {
    /// sklearn's default: the sorted union of the labels in predictions and golds.
    Present,
    /// An explicit label list (LaMP passes `range(len(all_labels))`).
    Given(&'a [i64]),
}

fn check<A, B>(what: &'static str, a: &[A], b: &[B]) -> Result<()> {
    if a.len() != b.len() {
        return Err(Error::LengthMismatch {
            what,
            left: a.len(),
            right: b.len(),
        });
    }
    if a.is_empty() {
        return Err(Error::InvalidArgument(format!("{what}: no examples")));
    }
    Ok(())
}

/// Share of positions where prediction equals gold.
pub fn accuracy<T: PartialEq>(predictions: &[T], golds: &[T]) -> Result<f64> {
    check("accuracy predictions and golds", predictions, golds)?;
    let hits = predictions
        .iter()
        .zip(golds)
        .filter(|(p, g)| p == g)
        .count();
    Ok(hits as f64 / predictions.len() as f64)
}

/// sklearn's `f1_score(golds, predictions, average="macro", labels=...)` (zero_division = 0).
pub fn macro_f1(predictions: &[i64], golds: &[i64], labels: F1Labels<'_>) -> Result<f64> {
    check("macro_f1 predictions and golds", predictions, golds)?;
    let labels: Vec<i64> = match labels {
        F1Labels::Given(l) => l.to_vec(),
        F1Labels::Present => {
            let mut l: Vec<i64> = predictions.iter().chain(golds).copied().collect();
            l.sort_unstable();
            l.dedup();
            l
        }
    };
    if labels.is_empty() {
        return Err(Error::InvalidArgument("macro_f1 with no labels".into()));
    }
    let mut sum = 0.0;
    for &l in &labels {
        let tp = predictions
            .iter()
            .zip(golds)
            .filter(|(p, g)| **p == l && **g == l)
            .count() as f64;
        let fp = predictions
            .iter()
            .zip(golds)
            .filter(|(p, g)| **p == l && **g != l)
            .count() as f64;
        let fn_ = predictions
            .iter()
            .zip(golds)
            .filter(|(p, g)| **p != l && **g == l)
            .count() as f64;
        let denom = 2.0 * tp + fp + fn_;
        sum += if denom > 0.0 { 2.0 * tp / denom } else { 0.0 };
    }
    Ok(sum / labels.len() as f64)
}

/// Accuracy and macro-F1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassificationScores {
    /// Accuracy.
    pub accuracy: f64,
    /// Macro-F1 over all labels of the task.
    pub macro_f1: f64,
    /// Predictions that were not a label (mapped to -1).
    pub invalid: usize,
}

/// LaMP's index of `x` (stripped) in `labels`, or -1.
pub fn label_index<L: AsRef<str>>(x: &str, labels: &[L]) -> i64 {
    let x = py::strip(x);
    labels
        .iter()
        .position(|l| l.as_ref() == x)
        .map_or(-1, |i| i as i64)
}

/// LaMP-1/2's evaluation of prediction strings against gold strings over the task's labels.
pub fn lamp_classification<P: AsRef<str>, G: AsRef<str>, L: AsRef<str>>(
    predictions: &[P],
    golds: &[G],
    all_labels: &[L],
) -> Result<ClassificationScores> {
    check(
        "lamp_classification predictions and golds",
        predictions,
        golds,
    )?;
    let p: Vec<i64> = predictions
        .iter()
        .map(|x| label_index(x.as_ref(), all_labels))
        .collect();
    let g: Vec<i64> = golds
        .iter()
        .map(|x| label_index(x.as_ref(), all_labels))
        .collect();
    let labels: Vec<i64> = (0..all_labels.len() as i64).collect();
    Ok(ClassificationScores {
        accuracy: accuracy(&p, &g)?,
        macro_f1: macro_f1(&p, &g, F1Labels::Given(&labels))?,
        invalid: p.iter().filter(|&&x| x < 0).count(),
    })
}

/// Whether `gold` is among the first `k` entries of `ranking`.
pub fn hit_at_k<T: PartialEq>(ranking: &[T], gold: &T, k: usize) -> bool {
    ranking.iter().take(k).any(|x| x == gold)
}

/// Recall@k over a candidate set with one relevant item per example (K-RagRec): the share of
/// examples whose gold is in the top `k` of the ranking. ACC is `recall_at_k(.., 1)`.
pub fn recall_at_k<T: PartialEq>(rankings: &[Vec<T>], golds: &[T], k: usize) -> Result<f64> {
    check("recall_at_k rankings and golds", rankings, golds)?;
    let hits = rankings
        .iter()
        .zip(golds)
        .filter(|(r, g)| hit_at_k(r, g, k))
        .count();
    Ok(hits as f64 / rankings.len() as f64)
}
