//! Training data out: the `{prompt, target}` records of every training example and the
//! author-distinction pairs, for any trainer (the paper fine-tunes T5-11B on them, l.106, 132,
//! 138, 182).
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use pgraphrag_core::Progress;
use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_corpora::multistage::Example;
use pgraphrag_stages::multistage::{
    PaperFormat, RecordTask, Sections, TrainingInputs, TrainingRecord, author_pairs, author_record,
    join_words, training_records,
};
use serde::Serialize;

use super::RankerName;
use super::prepare::{Preparer, StageTimes, train_documents};
use crate::{Error, Result};

/// What [`export_records`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The ranker whose entries are the generation input's `past passages` (the paper's best
    /// in Table 2: `RankDocBM25`); the weak labels read the rankers their labelers name.
    pub ranker: RankerName,
    /// Also the context-independent keywords as the generation input's `important words`
    /// (`SynCtxInd`'s input; needs [`Preparer::with_keywords`]). Off by default: the summary
    /// and synthesis sections of the paper's best input are the outputs of the stage models,
    /// which are trained on these records first (l.108).
    pub keywords_in_generation: bool,
    /// Author-distinction pairs, as many as generation records (the 1:1 mix, l.182).
    pub author_pairs: bool,
    /// The pairs' seed (CPython's `random.Random(seed)`).
    pub seed: u64,
}

impl Default for ExportOptions {
    /// `RankDocBM25`, no keywords, author pairs, seed 42.
    fn default() -> Self {
        ExportOptions {
            ranker: RankerName::RankDocBM25,
            keywords_in_generation: false,
            author_pairs: true,
            seed: 42,
        }
    }
}

/// Counts and seconds of an export.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExportStats {
    /// Training examples exported.
    pub train_examples: usize,
    /// Examples of the other splits (never exported).
    pub other_examples: usize,
    /// Records per task (`summary`, `synthesis`, `generation`, `author_distinction`).
    pub records: BTreeMap<String, usize>,
    /// Documents the author pairs were drawn from (train authors' distinct documents).
    pub author_docs: usize,
    /// Their authors.
    pub author_authors: usize,
    /// The non-generation stages' seconds.
    pub stages: StageTimes,
    /// Seconds drawing the author pairs.
    pub author_pairs_seconds: f64,
}

/// The records and what went into them.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    /// Per training example its summary, synthesis and generation records (those the
    /// preparer labels), then the author-distinction records.
    pub records: Vec<TrainingRecord>,
    /// Counts and seconds.
    pub stats: ExportStats,
}

/// The training records of every TRAIN example of `examples` (validation and test data never
/// enter, l.110, 150), through `preparer` (its summary and synthesis labelers make the summary
/// and synthesis records; without one, that kind is left out): `training_records` with
/// [`PaperFormat`] — summary and synthesis prompts as the zero-shot stages see them, the
/// generation prompt with `passage start` and the ranked entries of [`ExportOptions::ranker`]
/// (and the keywords, if asked), the gold document as target. Then, if asked, as many author
/// pairs as generation records, drawn by `author_pairs` from the train authors' distinct
/// documents ([`train_documents`]) with every dev and test author excluded. Which records
/// train which model, and in what order (shuffle them), is the trainer's choice; the paper
/// trains the summary and synthesis models on half of the generation training examples
/// (l.108, 134).
///
/// ```
/// use pgraphrag_corpora::{lamp::SplitName, multistage::{ContextDoc, Example}};
/// use pgraphrag_eval::multistage::{ExportOptions, Preparer, RankerName, SummaryLabeler, export_records};
/// use pgraphrag_stages::multistage::{ContextRanker, RankDocBM25};
/// let ex = |id: &str, author: &str, split| Example { id: id.into(), author: author.into(), split, time: 9,
///     immediate_context: "Hi".into(), target: format!("Hi from {id}."),
///     context: vec![ContextDoc { doc_id: format!("{id}-0"), time: 1, text: format!("Old {id}. Older.") },
///                   ContextDoc { doc_id: format!("{id}-1"), time: 2, text: "Hi again.".into() }] };
/// let examples = [ex("a1", "ann", SplitName::Train), ex("b1", "bob", SplitName::Train), ex("c1", "cy", SplitName::Test)];
/// let bm25 = RankDocBM25::bm25();
/// let same = |a: &str, b: &str| if a == b { 1.0 } else { 0.0 };
/// let preparer = Preparer::new(vec![(RankerName::RankDocBM25, &bm25 as &dyn ContextRanker)])
///     .with_summary_label(SummaryLabeler::new(RankerName::RankDocBM25, &same));
/// let out = export_records(&examples, &preparer, &ExportOptions::default(), &()).unwrap();
/// assert_eq!(out.stats.records["summary"], 2);
/// assert_eq!(out.stats.records["generation"], 2);
/// assert_eq!(out.stats.records["author_distinction"], 2); // 1:1 with generation
/// assert!(!out.stats.records.contains_key("synthesis"));   // no synthesis labeler
/// assert!(out.records.iter().all(|r| !r.id.starts_with("c1")));
/// ```
pub fn export_records(
    examples: &[Example],
    preparer: &Preparer<'_>,
    options: &ExportOptions,
    progress: &dyn Progress,
) -> Result<Export> {
    if !preparer.rankers.iter().any(|(r, _)| *r == options.ranker) {
        return Err(Error::InvalidInput(format!(
            "the generation records read the entries of {}, which is not among the rankers",
            options.ranker
        )));
    }
    if options.keywords_in_generation && preparer.keywords.is_none() {
        return Err(Error::InvalidInput(
            "keywords in the generation input need a preparer with keywords".into(),
        ));
    }
    let train: Vec<Example> = examples
        .iter()
        .filter(|e| e.split == SplitName::Train)
        .cloned()
        .collect();
    let (prepared, times) = preparer.prepare_all(&train, progress)?;
    let mut records = Vec::new();
    for (ex, p) in train.iter().zip(&prepared) {
        let ranked = p.ranked(options.ranker).expect("checked: the ranker ran");
        let words = p
            .keywords
            .as_deref()
            .filter(|_| options.keywords_in_generation)
            .map(join_words);
        let inputs = TrainingInputs {
            id: &ex.id,
            immediate_context: &ex.immediate_context,
            ranked: &ranked.text,
            target: &ex.target,
            summary_label: p.summary_label.as_ref().map(|l| l.text.as_str()),
            synthesis_label: p.synthesis_label.as_ref().map(|l| l.text.as_str()),
            generation: Some(Sections {
                passage_start: Some(&ex.immediate_context),
                important_words: words.as_deref(),
                past_passages: Some(&ranked.text),
                ..Sections::default()
            }),
        };
        records.extend(training_records(&inputs, &PaperFormat));
    }
    let generation = records
        .iter()
        .filter(|r| r.task == RecordTask::Generation)
        .count();
    let mut stats = ExportStats {
        train_examples: train.len(),
        other_examples: examples.len() - train.len(),
        stages: times,
        ..ExportStats::default()
    };
    if options.author_pairs && generation > 0 {
        let started = Instant::now();
        let docs = train_documents(examples);
        let excluded: BTreeSet<&str> = examples
            .iter()
            .filter(|e| e.split != SplitName::Train)
            .map(|e| e.author.as_str())
            .collect();
        let excluded: Vec<&str> = excluded.into_iter().collect();
        let pairs =
            author_pairs(&docs, &excluded, generation, options.seed).map_err(author_error)?;
        for pair in &pairs.pairs {
            records.push(author_record(pair, &docs, &PaperFormat).map_err(author_error)?);
        }
        stats.author_docs = pairs.eligible_docs;
        stats.author_authors = pairs.eligible_authors;
        stats.author_pairs_seconds = started.elapsed().as_secs_f64();
    }
    for r in &records {
        let task = serde_json::to_value(r.task)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        *stats.records.entry(task).or_insert(0) += 1;
    }
    Ok(Export { records, stats })
}

fn author_error(e: pgraphrag_stages::Error) -> Error {
    Error::InvalidInput(pgraphrag_core::error_chain(&e))
}
