//! `pgraphrag rank`: rank every user's profile of a PGraphRAG split and write a ranking file.
//!
//! One record per user, in file order, in the released notebook's format
//! (`pgraphrag_data::RankingRecord`) plus a `score` on every ranked entry. By default the
//! graph and ranking semantics are the released code's (drop-in comparable files); `--clean`
//! switches to the library's cleaner choices. See `docs/ranking.md`.
//!
//! With `--store postgres://...` (a build with `--features postgres`) the targets and every
//! candidate come from a dataset of the PostgreSQL profile store (`pgraphrag store load`)
//! instead of the split file; the files written are byte-identical (`docs/store.md`).

use std::path::PathBuf;

use clap::ValueEnum;
use pgraphrag_retrieval::profile::Task;
use pgraphrag_runs::pgraphrag::{Profiles, RankSpec, Ranker};

use crate::args::BackendArg;
use crate::error::usage;
use crate::progress::Bar;

/// The retriever.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RetrieverArg {
    /// BM25Okapi (rank_bm25 parity) over nltk.word_tokenize(text.lower()), fitted per candidate list.
    Bm25,
    /// Lucene-weighted BM25 (k1 = 1.2) over the same tokens.
    #[value(name = "bm25-lucene")]
    Bm25Lucene,
    /// Seeded random scores.
    Random,
    /// No retrieval: empty user and neighbour lists (the random review is still drawn).
    None,
    /// Dense retrieval (Contriever recipe, cosine); needs --model.
    Contriever,
}

/// Document pooling for `--retriever contriever`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PoolingArg {
    /// Masked mean pooling (the paper text, Contriever).
    Mean,
    /// BERT's pooler_output (the released notebook; needs a checkpoint with pooler weights).
    Pooler,
}

/// Arguments of `pgraphrag rank`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PGraphRAG split (e.g. $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json). With --store it
    /// is not read: it only names the dataset (its file stem) unless --dataset does.
    #[arg(long, required_unless_present = "dataset")]
    pub split: Option<PathBuf>,
    /// Read the targets and candidates from this PostgreSQL profile store
    /// (postgres://USER@HOST:PORT/DATABASE, loaded with `pgraphrag store load`) instead of the
    /// split file. Needs a build with `--features postgres`. Retrievers: all but contriever.
    #[arg(long)]
    pub store: Option<String>,
    /// The dataset in --store (default: the --split file's stem, e.g. amazon_dev).
    #[arg(long, requires = "store")]
    pub dataset: Option<String>,
    /// The task: text, title or rating (reviewText, reviewTitle, reviewRating also accepted).
    /// Several tasks (comma-separated or repeated) rank the split once per task in one run,
    /// sharing the loaded split, the graph and the tokens (BM25 tasks run in parallel); --out
    /// is then a folder that receives `RANKING-<split file stem>_<task>_<retriever>.json` per
    /// task (task as the notebook names it: reviewText, reviewTitle, reviewRating).
    #[arg(long, value_delimiter = ',', required = true, value_parser = crate::args::task())]
    pub task: Vec<Task>,
    /// The retriever.
    #[arg(long, value_enum, default_value = "bm25")]
    pub retriever: RetrieverArg,
    /// Model folder for --retriever contriever (config.json, tokenizer.json, model.safetensors).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Document pooling for --retriever contriever.
    #[arg(long, value_enum, default_value = "mean")]
    pub doc_pooling: PoolingArg,
    /// Forward pass for --retriever contriever.
    #[arg(long, value_enum, default_value = "native")]
    pub backend: BackendArg,
    /// Embedding cache (SQLite) for --retriever contriever; default: none (embeddings are
    /// computed once per run and kept in memory through a cache next to --out).
    #[arg(long)]
    pub embedding_cache: Option<PathBuf>,
    /// How many reviews to keep per list.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Seed of the random review (Python's random.seed) and of --retriever random.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Do not draw a random review (random_review is null).
    #[arg(long)]
    pub no_random: bool,
    /// Use the library's clean semantics instead of the released notebook's: all reviews kept,
    /// product ids as strings, empty documents dropped without index misalignment, duplicate
    /// texts distinct, a single neighbour ranked, ties in input order.
    #[arg(long)]
    pub clean: bool,
    /// Rank only the first N users of the split (the graph still holds the whole split).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Where to write the ranking file (JSON); with several tasks, the folder for the files.
    #[arg(long)]
    pub out: PathBuf,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `pgraphrag rank`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.top == 0 {
        return Err(usage("--top must be at least 1 (the notebook uses 5)"));
    }
    if args.split.is_none() && args.store.is_none() {
        return Err(usage(
            "--split FILE is needed (or --store URL with --dataset NAME)",
        ));
    }
    let ranker = match args.retriever {
        RetrieverArg::Bm25 => Ranker::Bm25,
        RetrieverArg::Bm25Lucene => Ranker::Bm25Lucene,
        RetrieverArg::Random => Ranker::Random,
        RetrieverArg::None => Ranker::None,
        RetrieverArg::Contriever => {
            let Some(model) = args.model.clone() else {
                return Err(usage(
                    "--retriever contriever needs --model DIR: a BERT folder with config.json, tokenizer.json and \
                     model.safetensors (see MODELS.md for facebook/contriever or all-MiniLM-L6-v2)",
                ));
            };
            Ranker::Contriever {
                model,
                pooler: args.doc_pooling == PoolingArg::Pooler,
                backend: args.backend.into(),
                embedding_cache: args.embedding_cache.clone(),
            }
        }
    };
    let mut spec = RankSpec {
        split: args.split.clone(),
        profiles: None,
        tasks: args.task.clone(),
        ranker,
        top: args.top,
        seed: args.seed,
        random_review: !args.no_random,
        clean: args.clean,
        limit: args.limit,
        out: args.out.clone(),
    };
    if let Some(url) = &args.store {
        spec.profiles = Some(Profiles {
            url: url.clone(),
            dataset: args.dataset.clone().unwrap_or_else(|| spec.stem()),
        });
    }
    check_outputs(&args, &spec)?;
    let report = spec.run(&Bar::new(args.quiet))?;
    for f in &report.files {
        eprintln!(
            "ranked {} users ({}) in {:.2}s: mean {:.2} user / {:.2} neighbour entries; wrote {}",
            f.summary.users,
            report.source,
            f.seconds,
            f.summary.mean_user,
            f.summary.mean_neighbors,
            f.path.display()
        );
    }
    Ok(())
}

/// Refuses, before anything is read, an output that is an input, a link or not a regular file.
fn check_outputs(args: &Args, spec: &RankSpec) -> anyhow::Result<()> {
    let mut inputs: Vec<crate::output::Input> = Vec::new();
    if let Some(p) = &args.split {
        inputs.push(("--split", p));
    }
    if let Some(p) = &args.embedding_cache {
        inputs.push(("--embedding-cache", p));
    }
    if let Some(p) = &args.model {
        inputs.push(("--model", p));
    }
    let tasks = spec.distinct_tasks();
    if tasks.len() > 1 {
        let files: Vec<String> = tasks.iter().map(|&t| spec.file_name(t)).collect();
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        crate::output::folder("--out", &args.out, &files, &inputs)
    } else {
        crate::output::file("--out", &args.out, &inputs)
    }
}
