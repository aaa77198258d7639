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

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::ValueEnum;
use pgraphrag_core::{Progress, RankedProfile};
use pgraphrag_data::{IdPolicy, RankingRecord, Split, write_rankings};
use pgraphrag_eval::rank::Candidates;
use pgraphrag_eval::{RankingSummary, Recipe, rank_all, ranking_file_name};
use pgraphrag_graph::UserItemGraph;
use pgraphrag_retrieval::profile::{
    ProfileOptions, ProfileRanker, RandomReview, Task, WithRetriever,
};
use pgraphrag_retrieval::sparse::{
    Bm25Builder, Bm25Lucene, NoRetriever, PgraphragTokenizer, RandomRetriever,
};

use crate::args::BackendArg;
use crate::common::profile_store::open_store;
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
    let mut tasks = args.task.clone();
    tasks.dedup();
    check_outputs(&args, &tasks)?;
    if tasks.len() > 1 {
        std::fs::create_dir_all(&args.out).with_context(|| {
            format!(
                "creating the output folder {} (with several tasks --out is a folder)",
                args.out.display()
            )
        })?;
    } else if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(usage(format!(
            "the folder of --out does not exist: {} (create it first)",
            dir.display()
        )));
    }
    let t0 = Instant::now();
    let recipe = if args.clean {
        Recipe::Clean
    } else {
        Recipe::ReleasedCode
    };
    let policy = recipe.id_policy();
    let (split, source) = open_source(&args, recipe)?;
    let mut split = split;
    if let Some(n) = args.limit {
        split.users.truncate(n);
    }
    let mut popts = recipe.profile_options();
    popts.k = args.top;
    popts.random = if args.no_random {
        RandomReview::Off
    } else {
        RandomReview::Python { seed: args.seed }
    };
    let bar = Bar::new(args.quiet);
    if tasks.len() > 1 {
        let outs: Vec<(Task, PathBuf)> = tasks
            .iter()
            .map(|&t| (t, args.out.join(task_file(&args, t))))
            .collect();
        if let (RetrieverArg::Bm25, Candidates::Graph(graph)) = (args.retriever, &source) {
            // Tokenize every review once, then rank the tasks in parallel, each with its own
            // copy of the token cache and its own random stream (as separate runs would).
            // Parallel tasks report no progress (one bar cannot show several runs).
            let mut warm = recipe.bm25();
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            let graph: &UserItemGraph = graph;
            warm.warm_parallel(graph, threads);
            let (split, warm) = (&split, &warm);
            let described = &describe(&source);
            std::thread::scope(|sc| -> anyhow::Result<()> {
                let handles: Vec<_> = outs
                    .iter()
                    .map(|(task, out)| {
                        sc.spawn(move || -> anyhow::Result<()> {
                            let ranker = ProfileRanker::new(warm.clone(), popts);
                            let records = rank_all(split, graph, policy, *task, ranker, &())?;
                            finish(records, described, out, t0)
                        })
                    })
                    .collect();
                for h in handles {
                    match h.join() {
                        Ok(r) => r?,
                        Err(e) => std::panic::resume_unwind(e),
                    }
                }
                Ok(())
            })?;
        } else {
            for (task, out) in &outs {
                let records = rank_task(&args, &split, &source, recipe, *task, popts, &bar)?;
                finish(records, &describe(&source), out, t0)?;
            }
        }
        return Ok(());
    }
    let task: Task = tasks[0];
    let records = rank_task(&args, &split, &source, recipe, task, popts, &bar)?;
    finish(records, &describe(&source), &args.out, t0)
}

/// The ranking file of `task` in the --out folder of a run over several tasks:
/// `RANKING-<split file stem>_<task>_<retriever>.json`.
fn task_file(args: &Args, task: Task) -> String {
    let retriever = args
        .retriever
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    ranking_file_name(&stem(args), task.notebook_name(), &retriever)
}

/// Refuses, before anything is read, an --out (or a ranking file in the --out folder) that is
/// an input, a link or not a regular file.
fn check_outputs(args: &Args, tasks: &[Task]) -> anyhow::Result<()> {
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
    if tasks.len() > 1 {
        let files: Vec<String> = tasks.iter().map(|&t| task_file(args, t)).collect();
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        crate::output::folder("--out", &args.out, &files, &inputs)
    } else {
        crate::output::file("--out", &args.out, &inputs)
    }
}

/// The summary line's account of where the candidates came from.
fn describe(source: &Candidates) -> String {
    match source {
        Candidates::Graph(g) => format!(
            "{} reviews in the graph, {} overwritten",
            g.num_reviews(),
            g.num_overwritten()
        ),
        #[cfg(feature = "postgres")]
        Candidates::Store(p) => format!(
            "{} reviews in store dataset {}",
            p.info().reviews,
            p.info().name
        ),
    }
}

/// The targets and the candidate source: the split file and its graph, or the store.
fn open_source(args: &Args, recipe: Recipe) -> anyhow::Result<(Split, Candidates)> {
    if let Some(url) = &args.store {
        return open_store(url, &dataset_name(args), recipe);
    }
    let Some(path) = &args.split else {
        return Err(usage(
            "--split FILE is needed (or --store URL with --dataset NAME)",
        ));
    };
    let split = crate::args::load_split(path)?;
    let graph = recipe.graph(&split);
    Ok((split, Candidates::Graph(Box::new(graph))))
}

/// The dataset named by --dataset, or the --split file's stem.
fn dataset_name(args: &Args) -> String {
    args.dataset.clone().unwrap_or_else(|| stem(args))
}

/// The --split file's stem (`split` without one), or the --dataset name.
fn stem(args: &Args) -> String {
    match (&args.split, &args.dataset) {
        (Some(p), _) => p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "split".into()),
        (None, Some(d)) => d.clone(),
        (None, None) => "split".into(),
    }
}

/// Writes one ranking file and prints its summary line.
fn finish(
    profiles: Vec<RankedProfile>,
    source: &str,
    out: &Path,
    t0: Instant,
) -> anyhow::Result<()> {
    let s = RankingSummary::of(&profiles);
    let records: Vec<RankingRecord> = profiles.into_iter().map(RankingRecord::from).collect();
    write_rankings(out, &records).with_context(|| format!("writing {}", out.display()))?;
    eprintln!(
        "ranked {} users ({source}) in {:.2}s: mean {:.2} user / {:.2} neighbour entries; wrote {}",
        s.users,
        t0.elapsed().as_secs_f64(),
        s.mean_user,
        s.mean_neighbors,
        out.display()
    );
    Ok(())
}

/// Ranks one task with the chosen retriever.
fn rank_task(
    args: &Args,
    split: &Split,
    source: &Candidates,
    recipe: Recipe,
    task: Task,
    mut popts: ProfileOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<RankedProfile>> {
    let policy: IdPolicy = recipe.id_policy();
    let records = match args.retriever {
        RetrieverArg::Bm25 => {
            let r = recipe.bm25();
            source.rank_all(split, policy, task, ProfileRanker::new(r, popts), progress)?
        }
        RetrieverArg::Bm25Lucene => {
            let r = WithRetriever(
                Bm25Lucene::new(PgraphragTokenizer).with_tie_order(recipe.tie_order()),
            );
            source.rank_all(split, policy, task, ProfileRanker::new(r, popts), progress)?
        }
        RetrieverArg::Random => {
            // The notebook has no random ranker: draw the random review over graph order.
            popts.random_via_ranker = false;
            let r = WithRetriever(RandomRetriever::new(args.seed));
            source.rank_all(split, policy, task, ProfileRanker::new(r, popts), progress)?
        }
        RetrieverArg::None => {
            // Nothing is ranked; the random review is drawn over graph order.
            popts.random_via_ranker = false;
            let r = WithRetriever(NoRetriever);
            source.rank_all(split, policy, task, ProfileRanker::new(r, popts), progress)?
        }
        RetrieverArg::Contriever => {
            // The notebook runs Contriever without the BM25 path, so nothing is dropped.
            let dense = recipe.dense_profile_options();
            popts.empty_docs = dense.empty_docs;
            popts.duplicate_texts = dense.duplicate_texts;
            popts.single_neighbor = dense.single_neighbor;
            let queries: Vec<String> = split
                .users
                .iter()
                .filter_map(|u| u.profile.first())
                .map(|t| task.query(t.title.as_deref(), t.text.as_deref()))
                .collect();
            let Some(graph) = source.graph() else {
                return Err(usage(
                    "--retriever contriever embeds every review of the graph: it runs on --split, not --store",
                ));
            };
            let r = dense_retriever(args, graph, &queries, progress)?;
            source.rank_all(
                split,
                policy,
                task,
                ProfileRanker::new(WithRetriever(r), popts),
                progress,
            )?
        }
    };
    Ok(records)
}

fn dense_retriever(
    args: &Args,
    graph: &UserItemGraph,
    queries: &[String],
    progress: &dyn Progress,
) -> anyhow::Result<pgraphrag_retrieval::dense::DenseRetriever> {
    use pgraphrag_retrieval::dense::{ContrieverOptions, DenseRetriever};
    let Some(model) = args.model.as_deref() else {
        return Err(usage(
            "--retriever contriever needs --model DIR: a BERT folder with config.json, tokenizer.json and \
             model.safetensors (see MODELS.md for facebook/contriever or all-MiniLM-L6-v2)",
        ));
    };
    if !model.is_dir() {
        return Err(usage(format!(
            "--model {}: not a folder (expected config.json, tokenizer.json, model.safetensors)",
            model.display()
        )));
    }
    let cache = args
        .embedding_cache
        .clone()
        .unwrap_or_else(|| default_cache(&args.out));
    let recipe = match args.doc_pooling {
        PoolingArg::Mean => ContrieverOptions::paper(),
        PoolingArg::Pooler => ContrieverOptions::notebook(),
    };
    let r = DenseRetriever::contriever(model, recipe.backend(args.backend.into()).cache(&cache))
        .with_context(|| format!("loading the dense model {}", model.display()))?;
    let docs: Vec<String> = graph
        .reviews()
        .iter()
        .map(|r| r.entry.title_text())
        .collect();
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let t = Instant::now();
    r.warm(&refs, progress)
        .context("embedding the split's documents")?;
    let t_docs = t.elapsed().as_secs_f64();
    // All queries in length-sorted batches up front (not one forward pass per user).
    let q: Vec<&str> = queries.iter().map(String::as_str).collect();
    r.warm_queries(&q, progress)
        .context("embedding the queries")?;
    eprintln!(
        "dense: {} documents in {t_docs:.1}s, {} queries in {:.1}s (embedding cache {})",
        refs.len(),
        q.len(),
        t.elapsed().as_secs_f64() - t_docs,
        cache.display()
    );
    Ok(r)
}

fn default_cache(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".emb.sqlite");
    PathBuf::from(s)
}
