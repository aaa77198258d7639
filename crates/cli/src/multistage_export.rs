//! `pgraphrag multistage export`: the multistage paper's training data from a
//! `multistage build` examples file (`pgraphrag_eval::multistage::export_records` does the
//! work): for every TRAIN example the summary weak label (MiniLM cosine), the synthesis weak
//! label (WordNet synonyms) and the generation record over the named ranker, then
//! author-distinction pairs 1:1, as `{"id","task","prompt","target"}` JSON lines. Prints a
//! `stats {...}` line with the counts and the seconds per stage. See `docs/multistage.md`,
//! "Export".
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use pgraphrag_core::Progress;
use pgraphrag_corpora::multistage::Example;

use pgraphrag_eval::multistage::{
    ExportOptions, Preparer, RankerName, SummaryLabeler, SynthesisLabeler, export_records,
    train_documents, train_idf,
};
use pgraphrag_retrieval::dense::DenseRetriever;
use pgraphrag_stages::multistage::{
    ContextRanker, DenseSimilarity, Keywords, RankDocBM25, RankDocBySnpt, RankDocs, RankSnippet,
    RecentDoc, WordFilter, WordMatcher, write_jsonl,
};
use serde_json::json;

use crate::error::{OrUsage, usage};
use crate::multistage_run::load_examples;
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

// Shared with `multistage run`.

/// The dense retriever over the MiniLM folder `dir` at `precision`, its embeddings cached in
/// `cache` (keyed by the encoder and its precision).
pub(crate) fn load_dense(
    dir: &Path,
    precision: pgraphrag_retrieval::dense::Precision,
    cache: Option<&Path>,
) -> anyhow::Result<DenseRetriever> {
    if !dir.join("config.json").is_file() {
        return Err(usage(format!(
            "no dense encoder at {} (scripts/fetch-minilm.sh fetches MiniLM; or pass --encoder DIR)",
            dir.display()
        )));
    }
    let mut b = DenseRetriever::builder(dir).precision(precision);
    if let Some(c) = cache {
        b = b.cache(c);
    }
    b.build()
        .with_context(|| format!("loading the dense encoder {}", dir.display()))
}

/// What the dense stages will read, encoded up front ([`warm_dense`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Warm {
    /// The past documents whole (RankDocDense).
    pub docs: bool,
    /// Their snippets (RankSnippet, RankDocBySnpt, the summary weak label's candidates).
    pub snippets: bool,
    /// The immediate contexts (the dense rankers' queries).
    pub queries: bool,
    /// The targets' snippets (the summary weak label's gold).
    pub gold: bool,
}

impl Warm {
    /// What `rankers` and (with `labels`) the summary weak label read.
    pub(crate) fn for_stages(rankers: &[RankerName], labels: bool) -> Warm {
        Warm {
            docs: rankers.contains(&RankerName::RankDocDense),
            snippets: labels
                || rankers.contains(&RankerName::RankSnippet)
                || rankers.contains(&RankerName::RankDocBySnpt),
            queries: rankers.iter().any(|r| r.is_dense()),
            gold: labels,
        }
    }
}

/// Encodes what `warm` names, in length-sorted batches, and keeps it in memory (each distinct
/// text once), so the stages only look vectors up.
pub(crate) fn warm_dense(
    dense: &DenseRetriever,
    examples: &[Example],
    warm: Warm,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let mut seen = std::collections::HashSet::new();
    let mut texts: Vec<String> = Vec::new();
    let mut push = |t: String| {
        if seen.insert(t.clone()) {
            texts.push(t);
        }
    };
    for e in examples {
        if warm.queries {
            push(e.immediate_context.clone());
        }
        for c in &e.context {
            if warm.docs {
                push(c.text.clone());
            }
            if warm.snippets {
                for s in pgraphrag_text::snippets(&c.text, 250) {
                    push(s);
                }
            }
        }
        if warm.gold {
            for s in pgraphrag_text::snippets(&e.target, 250) {
                push(s);
            }
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    dense
        .warm(&refs, progress)
        .context("encoding the past documents")?;
    Ok(())
}

/// WordNet from `--wordnet`, else from the METEOR search list; missing is bad input.
pub(crate) fn load_wordnet(
    dir: Option<&Path>,
) -> anyhow::Result<&'static pgraphrag_metrics::wordnet::WordNet> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => crate::wordnet::locate()
            .context("the synthesis weak label needs WordNet 3.0 (scripts/fetch-wordnet.sh, or --wordnet DIR)")
            .or_usage()?,
    };
    pgraphrag_metrics::wordnet::WordNet::global_in(&dir)
        .with_context(|| format!("loading WordNet from {}", dir.display()))
        .or_usage()
}

/// The three dense rankers over one retriever: RankDocDense, RankSnippet, RankDocBySnpt.
struct DenseRankers<'d> {
    docs: RankDocs<&'d DenseRetriever>,
    snippets: RankSnippet<&'d DenseRetriever>,
    by_snippets: RankDocBySnpt<&'d DenseRetriever>,
}

/// The five rankers over one dense retriever (`None`: BM25 and recency only).
pub(crate) struct Rankers<'d> {
    bm25: RankDocBM25,
    dense: Option<DenseRankers<'d>>,
}

impl<'d> Rankers<'d> {
    pub(crate) fn new(dense: Option<&'d DenseRetriever>) -> Self {
        Rankers {
            bm25: RankDocBM25::bm25(),
            dense: dense.map(|d| DenseRankers {
                docs: RankDocs::new(d),
                snippets: RankSnippet::new(d),
                by_snippets: RankDocs::by_snippets(d),
            }),
        }
    }

    /// The named rankers; a dense one without the retriever is a usage error.
    pub(crate) fn pick(
        &self,
        names: &[RankerName],
    ) -> anyhow::Result<Vec<(RankerName, &dyn ContextRanker)>> {
        names
            .iter()
            .map(|&n| {
                let r: &dyn ContextRanker = match (n, &self.dense) {
                    (RankerName::RecentDoc, _) => &RecentDoc,
                    (RankerName::RankDocBM25, _) => &self.bm25,
                    (RankerName::RankDocDense, Some(d)) => &d.docs,
                    (RankerName::RankSnippet, Some(d)) => &d.snippets,
                    (RankerName::RankDocBySnpt, Some(d)) => &d.by_snippets,
                    (n, None) => return Err(usage(format!("{n} needs the dense encoder"))),
                };
                Ok((n, r))
            })
            .collect()
    }
}
