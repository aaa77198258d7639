//! `pgraphrag multistage export`: the multistage paper's training data from a
//! `multistage build` examples file (`pgraphrag_eval::multistage::export_records` does the
//! work): for every TRAIN example the summary weak label (MiniLM cosine), the synthesis weak
//! label (WordNet synonyms) and the generation record over the named ranker, then
//! author-distinction pairs 1:1, as `{"id","task","prompt","target"}` JSON lines. Prints a
//! `stats {...}` line with the counts and the seconds per stage. See `docs/multistage.md`,
//! "Export".
use std::path::PathBuf;
use std::time::Instant;

use pgraphrag_eval::multistage::{
    ExportOptions, Preparer, RankerName, SummaryLabeler, SynthesisLabeler, export_records,
    train_documents, train_idf,
};
use pgraphrag_stages::multistage::{
    DenseSimilarity, Keywords, WordFilter, WordMatcher, write_jsonl,
};
use serde_json::json;

use crate::common::multistage::{
    Rankers, Warm, load_dense, load_examples, load_wordnet, warm_dense,
};
use crate::error::OrUsage;
use crate::progress::Bar;

/// Arguments of `pgraphrag multistage export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The examples file of `pgraphrag multistage build` (DIR/examples.jsonl).
    #[arg(long)]
    pub examples: PathBuf,
    /// The training records (JSON lines), written atomically.
    #[arg(long)]
    pub out: PathBuf,
    /// The ranker of the generation input's past passages and of both weak labels.
    #[arg(long, default_value = "RankDocBM25")]
    pub ranker: String,
    /// The dense encoder of the summary weak label's similarity (and of a dense --ranker).
    #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
    pub encoder: PathBuf,
    /// The encoder's linear layers: f32, or int8 (quantized at load; about twice as fast with
    /// AVX-512 VNNI, mean cosine 0.999 to f32; its embeddings are cached apart; docs/dense.md).
    #[arg(long, default_value = "f32")]
    pub encoder_precision: pgraphrag_retrieval::dense::Precision,
    /// WordNet 3.0 for the synthesis weak label (default: the METEOR search list).
    #[arg(long)]
    pub wordnet: Option<PathBuf>,
    /// Also the context-independent keywords as the generation input's important words.
    #[arg(long)]
    pub with_keywords: bool,
    /// No author-distinction records.
    #[arg(long)]
    pub no_author_pairs: bool,
    /// Seed of the author pairs.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// An embedding cache (SQLite) for the encoder: a rerun encodes nothing twice.
    #[arg(long)]
    pub embedding_cache: Option<PathBuf>,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `pgraphrag multistage export`.
pub fn run(a: ExportArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let mut inputs = vec![
        ("--examples", a.examples.as_path()),
        ("--encoder", &a.encoder),
    ];
    for (flag, p) in [
        ("--wordnet", &a.wordnet),
        ("--embedding-cache", &a.embedding_cache),
    ] {
        if let Some(p) = p {
            inputs.push((flag, p));
        }
    }
    crate::output::file("--out", &a.out, &inputs)?;
    let examples = load_examples(&a.examples)?;
    let ranker: RankerName = a.ranker.parse().or_usage()?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let bar = Bar::new(a.quiet);

    let t = Instant::now();
    let dense = load_dense(
        &a.encoder,
        a.encoder_precision,
        a.embedding_cache.as_deref(),
    )?;
    let train: Vec<_> = examples
        .iter()
        .filter(|e| e.split == pgraphrag_corpora::lamp::SplitName::Train)
        .cloned()
        .collect();
    warm_dense(&dense, &train, Warm::for_stages(&[ranker], true), &bar)?;
    let encoder_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let wordnet = load_wordnet(a.wordnet.as_deref())?;
    let wordnet_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let idf = train_idf(&examples).or_usage()?;
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
    if a.with_keywords {
        preparer = preparer.with_keywords(Keywords::new(WordFilter::paper(&idf)));
    }
    let options = ExportOptions {
        ranker,
        keywords_in_generation: a.with_keywords,
        author_pairs: !a.no_author_pairs,
        seed: a.seed,
    };
    let out = export_records(&examples, &preparer, &options, &bar).or_usage()?;
    let t = Instant::now();
    write_jsonl(&a.out, &out.records)?;
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
        "encoder_precision": a.encoder_precision.name(),
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
    println!("stats {}", serde_json::to_string(&stats)?);
    if !a.quiet {
        eprintln!(
            "wrote {} records of {} train examples to {}",
            out.records.len(),
            s.train_examples,
            a.out.display()
        );
    }
    Ok(())
}
