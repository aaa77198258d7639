//! The multistage paper's training data from an examples file: for every TRAIN example the
//! summary weak label (MiniLM cosine), the synthesis weak label (WordNet synonyms) and the
//! generation record over the named ranker, then author-distinction pairs 1:1, as
//! `{"id","task","prompt","target"}` JSON lines.
use std::path::PathBuf;
use std::time::Instant;

use pgraphrag_core::Progress;
use pgraphrag_eval::multistage::{
    ExportOptions, Preparer, RankerName, SummaryLabeler, SynthesisLabeler, export_records,
    train_documents, train_idf,
};
use pgraphrag_retrieval::dense::Precision;
use pgraphrag_stages::multistage::{
    DenseSimilarity, Keywords, WordFilter, WordMatcher, write_jsonl,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::setup::{Rankers, Warm, load_dense, load_examples, load_wordnet, warm_dense};
use crate::{Error, Result};

/// Exports the training records (`pgraphrag multistage export`).
///
/// ```
/// use pgraphrag_eval::multistage::RankerName;
/// use pgraphrag_runs::multistage::ExportSpec;
/// let spec = ExportSpec::paper("runs/mail/examples.jsonl", "models/minilm", "/usr/share/wordnet", "runs/train.jsonl");
/// assert_eq!((spec.ranker, spec.author_pairs, spec.seed), (RankerName::RankDocBM25, true, 42));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportSpec {
    /// The examples file of `pgraphrag multistage build`.
    pub examples: PathBuf,
    /// The training records (JSON lines), written atomically.
    pub out: PathBuf,
    /// The ranker of the generation input's past passages and of both weak labels.
    #[serde(with = "crate::names")]
    pub ranker: RankerName,
    /// The dense encoder of the summary weak label's similarity (and of a dense ranker).
    pub encoder: PathBuf,
    /// The encoder's linear layers.
    #[serde(with = "crate::names")]
    pub encoder_precision: Precision,
    /// WordNet 3.0 for the synthesis weak label.
    pub wordnet: PathBuf,
    /// Also the context-independent keywords as the generation input's important words.
    pub with_keywords: bool,
    /// Author-distinction records.
    pub author_pairs: bool,
    /// Seed of the author pairs.
    pub seed: u64,
    /// An embedding cache (SQLite) for the encoder: a rerun encodes nothing twice.
    pub embedding_cache: Option<PathBuf>,
}

/// What an [`ExportSpec`] run wrote.
#[derive(Debug, Clone)]
pub struct ExportReport {
    /// Records written.
    pub records: usize,
    /// Training examples exported.
    pub train_examples: usize,
    /// Counts and seconds per stage.
    pub stats: serde_json::Value,
}

impl ExportSpec {
    /// The paper's export: BM25-ranked passages, no keywords in the generation input, author
    /// pairs with seed 42, f32 encoder.
    pub fn paper(
        examples: impl Into<PathBuf>,
        encoder: impl Into<PathBuf>,
        wordnet: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
    ) -> ExportSpec {
        ExportSpec {
            examples: examples.into(),
            out: out.into(),
            ranker: RankerName::RankDocBM25,
            encoder: encoder.into(),
            encoder_precision: Precision::F32,
            wordnet: wordnet.into(),
            with_keywords: false,
            author_pairs: true,
            seed: 42,
            embedding_cache: None,
        }
    }

    /// Labels, ranks and writes the records.
    pub fn run(&self, progress: &dyn Progress) -> Result<ExportReport> {
        let t0 = Instant::now();
        let examples = load_examples(&self.examples)?;
        let ranker = self.ranker;
        let load_seconds = t0.elapsed().as_secs_f64();

        let t = Instant::now();
        let dense = load_dense(
            &self.encoder,
            self.encoder_precision,
            self.embedding_cache.as_deref(),
        )?;
        let train: Vec<_> = examples
            .iter()
            .filter(|e| e.split == pgraphrag_corpora::lamp::SplitName::Train)
            .cloned()
            .collect();
        warm_dense(&dense, &train, Warm::for_stages(&[ranker], true), progress)?;
        let encoder_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let wordnet = load_wordnet(&self.wordnet)?;
        let wordnet_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let idf = train_idf(&examples).map_err(Error::invalid)?;
        let idf_seconds = t.elapsed().as_secs_f64();

        let rankers = Rankers::new(Some(&dense));
        let similarity = DenseSimilarity(&dense);
        let mut preparer = Preparer::new(rankers.pick(&[ranker])?)
            .with_summary_label(SummaryLabeler::new(ranker, &similarity))
            .with_synthesis_label(SynthesisLabeler::new(
                ranker,
                WordFilter::paper(&idf),
                WordMatcher::new().synonyms(wordnet),
            ));
        if self.with_keywords {
            preparer = preparer.with_keywords(Keywords::new(WordFilter::paper(&idf)));
        }
        let options = ExportOptions {
            ranker,
            keywords_in_generation: self.with_keywords,
            author_pairs: self.author_pairs,
            seed: self.seed,
        };
        let out =
            export_records(&examples, &preparer, &options, progress).map_err(Error::invalid)?;
        let t = Instant::now();
        write_jsonl(&self.out, &out.records)?;
        let write_seconds = t.elapsed().as_secs_f64();
        let s = &out.stats;
        let stats = json!({
            "train_examples": s.train_examples,
            "other_examples": s.other_examples,
            "records": s.records,
            "idf_documents": idf.documents(),
            "train_documents": train_documents(&examples).len(),
            "author_docs": s.author_docs,
            "author_authors": s.author_authors,
            "ranker": ranker.name(),
            "encoder_precision": self.encoder_precision.name(),
            "seconds": {
                "load": load_seconds,
                "encoder": encoder_seconds,
                "wordnet": wordnet_seconds,
                "idf": idf_seconds,
                "ranking": s.stages.ranking,
                "keywords": s.stages.keywords,
                "summary_label": s.stages.summary_label,
                "synthesis_label": s.stages.synthesis_label,
                "author_pairs": s.author_pairs_seconds,
                "write": write_seconds,
                "total": t0.elapsed().as_secs_f64(),
            },
        });
        Ok(ExportReport {
            records: out.records.len(),
            train_examples: s.train_examples,
            stats,
        })
    }
}
