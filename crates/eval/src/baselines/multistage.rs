//! The multistage writing grid's rows (`pgraphrag multistage run`) as [`Example`]s, and its
//! baselines: the passage start alone, the author's latest or most similar earlier document,
//! and the start followed by that document. Score them with [`MultistageScorer`], the grid's
//! own metrics.
use pgraphrag_corpora::multistage::Example as MultistageExample;
use pgraphrag_metrics::bleu::compute_bleu;

use super::predict::{Bm25Rule, Earlier, Example, MatchOn, NamedBaseline, Pool, Predictor};
use crate::multistage::{document_start, score_cell};
use crate::{Result, Scorer};

/// The [`Example`] of a multistage example: the input is the passage start, the part of the
/// current document the grid's prompt shows ([`document_start`] of the immediate context:
/// the body's start without the title); the history is the author's earlier documents (each
/// its own input, output and document, dated by the example's `time`). The golds are the
/// examples' `target`s.
///
/// ```
/// use pgraphrag_corpora::{lamp::SplitName, multistage::{ContextDoc, Example}};
/// use pgraphrag_eval::baselines::{Predictor, multistage_example};
/// let doc = |id: &str, time, text: &str| ContextDoc { doc_id: id.into(), time, text: text.into() };
/// let e = Example { id: "m3".into(), author: "kim".into(), split: SplitName::Test, time: 9,
///     immediate_context: "Lunch\nThe team lunch mo".into(), target: "The team lunch moves to Friday.".into(),
///     context: vec![doc("m1", 3, "Old\nFirst mail"), doc("m2", 5, "Newer\nSecond mail")] };
/// let ex = multistage_example(&e);
/// assert_eq!(ex.input, "The team lunch mo");
/// assert_eq!(Predictor::Latest.predict(&ex).unwrap().as_deref(), Some("Newer\nSecond mail"));
/// ```
pub fn multistage_example(e: &MultistageExample) -> Example {
    let history = e
        .context
        .iter()
        .map(|d| Earlier {
            input: d.text.clone(),
            output: (!d.text.trim().is_empty()).then(|| d.text.clone()),
            document: d.text.clone(),
            time: Some(d.time),
        })
        .collect();
    Example {
        id: e.id.clone(),
        input: document_start(&e.immediate_context, &e.target).to_string(),
        history,
        neighbors: Vec::new(),
    }
}

/// The multistage baselines, in table order:
///
/// * `passage_start`: the passage start alone (what every cell is given of the current
///   document; the cells that prepend it score at least its words);
/// * `author_latest`: the author's latest earlier document, whole;
/// * `author_bm25`: the earlier document most similar to the passage start by BM25 (LaMP's
///   `str.split()` rule; the grid's `RankDocBM25` ranks against the whole immediate context,
///   title included, with its own tokenization);
/// * `start+author_bm25`: the passage start, a space, then that document: the no-model
///   counterpart of a cell with the start prepended.
///
/// Where the start is empty (a title filling the 150 characters), `passage_start` answers
/// nothing and `start+author_bm25` the document alone; an author always has two earlier
/// documents (the builder's rule).
///
/// ```
/// let b = pgraphrag_eval::baselines::multistage_baselines();
/// let names: Vec<&str> = b.iter().map(|b| b.name.as_str()).collect();
/// assert_eq!(names, ["passage_start", "author_latest", "author_bm25", "start+author_bm25"]);
/// ```
pub fn multistage_baselines() -> Vec<NamedBaseline> {
    let similar = Predictor::MostSimilar {
        pool: Pool::User,
        on: MatchOn::Document,
        rule: Bm25Rule::Lamp,
    };
    vec![
        NamedBaseline::new("passage_start", Predictor::Input),
        NamedBaseline::new("author_latest", Predictor::Latest),
        NamedBaseline::new("author_bm25", similar.clone()),
        NamedBaseline::new(
            "start+author_bm25",
            Predictor::InputPlus {
                pool: Pool::User,
                on: MatchOn::Document,
                rule: Bm25Rule::Lamp,
            },
        )
        .or(similar),
    ]
}

/// The multistage grid's metrics as a [`Scorer`], in %: sacreBLEU's corpus BLEU and the mean
/// rouge-score ROUGE-1, ROUGE-2 and ROUGE-L F-measures ([`score_cell`], the grid's own). On
/// one pair, BLEU is that pair's sentence BLEU with exponential smoothing, as the grid's
/// t-tests compare it.
///
/// ```
/// use pgraphrag_eval::{Scorer, baselines::MultistageScorer};
/// let s = MultistageScorer.score(&["the cat sat".into()], &["the cat sat".into()]).unwrap();
/// assert!(s.iter().all(|v| (v - 100.0).abs() < 1e-9), "{s:?}"); // BLEU, ROUGE-1, -2, -L
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct MultistageScorer;

impl Scorer for MultistageScorer {
    fn columns(&self) -> Vec<String> {
        ["BLEU", "ROUGE-1", "ROUGE-2", "ROUGE-L"]
            .map(String::from)
            .to_vec()
    }

    fn score(&self, predictions: &[String], references: &[String]) -> Result<Vec<f64>> {
        crate::table::check_pairs(predictions, references)?;
        let refs: Vec<&str> = references.iter().map(String::as_str).collect();
        let s = score_cell(predictions, &refs);
        let bleu = match s.bleu_stats.as_slice() {
            [one] => compute_bleu(*one, true).score,
            _ => s.corpus_bleu,
        };
        let mean = |v: &[f64]| 100.0 * pgraphrag_metrics::stats::mean(v);
        Ok(vec![
            bleu,
            mean(&s.rouge1),
            mean(&s.rouge2),
            mean(&s.rouge_l),
        ])
    }
}
