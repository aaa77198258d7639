//! `pgraphrag multistage export`: the multistage paper's training data from a
//! `multistage build` examples file (`pgraphrag_runs::multistage::ExportSpec` does the
//! work): for every TRAIN example the summary weak label (MiniLM cosine), the synthesis weak
//! label (WordNet synonyms) and the generation record over the named ranker, then
//! author-distinction pairs 1:1, as `{"id","task","prompt","target"}` JSON lines. Prints a
//! `stats {...}` line with the counts and the seconds per stage. See `docs/multistage.md`,
//! "Export".
use std::path::PathBuf;

use anyhow::Context;
use pgraphrag_runs::multistage::ExportSpec;

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
    let wordnet = match &a.wordnet {
        Some(d) => d.clone(),
        None => crate::wordnet::locate()
            .context("the synthesis weak label needs WordNet 3.0 (scripts/fetch-wordnet.sh, or --wordnet DIR)")
            .or_usage()?,
    };
    let spec = ExportSpec {
        examples: a.examples.clone(),
        out: a.out.clone(),
        ranker: a.ranker.parse().or_usage()?,
        encoder: a.encoder.clone(),
        encoder_precision: a.encoder_precision,
        wordnet,
        with_keywords: a.with_keywords,
        author_pairs: !a.no_author_pairs,
        seed: a.seed,
        embedding_cache: a.embedding_cache.clone(),
    };
    let report = spec.run(&Bar::new(a.quiet))?;
    println!("stats {}", serde_json::to_string(&report.stats)?);
    if !a.quiet {
        eprintln!(
            "wrote {} records of {} train examples to {}",
            report.records,
            report.train_examples,
            a.out.display()
        );
    }
    Ok(())
}
