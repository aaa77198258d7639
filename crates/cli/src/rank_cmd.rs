//! `pgraphrag rank`: rank every user's profile of a PGraphRAG split and write a ranking file.
//!
//! One record per user, in file order, in the released notebook's format
//! (`pgraphrag_data::RankingRecord`) plus a `score` on every ranked entry. By default the
//! graph and ranking semantics are the released code's (drop-in comparable files); `--clean`
//! switches to the library's cleaner choices. See `docs/ranking.md`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use pgraphrag_data::{
    IdPolicy, NeighborRating, RankingRecord, Split, UserRating, load_split, write_rankings,
};
use pgraphrag_graph::{Duplicates, GraphOptions, UserItemGraph};
use pgraphrag_retrieval::profile::{
    CachedBm25, CandidateRanker, DuplicateTexts, EmptyDocs, ProfileOptions, ProfileRanker,
    RandomReview, SingleNeighbor, Task, WithRetriever,
};
use pgraphrag_retrieval::sparse::{
    Bm25Lucene, NoRetriever, PgraphragTokenizer, RandomRetriever, TieOrder,
};

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
    /// The PGraphRAG split (e.g. $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json).
    #[arg(long)]
    pub split: PathBuf,
    /// The task: text, title or rating (reviewText, reviewTitle, reviewRating also accepted).
    /// Several tasks (comma-separated or repeated) rank the split once per task in one run,
    /// sharing the loaded split, the graph and the tokens (BM25 tasks run in parallel); --out
    /// is then a folder that receives `RANKING-<split file stem>_<task>_<retriever>.json` per
    /// task (task as the notebook names it: reviewText, reviewTitle, reviewRating).
    #[arg(long, value_delimiter = ',', required = true)]
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
    /// Forward pass for --retriever contriever: native (padding-free CPU pass, the default) or
    /// candle.
    #[arg(long, default_value = "native")]
    pub backend: String,
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
}

/// Runs `pgraphrag rank`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.top == 0 {
        bail!("--top must be at least 1 (the notebook uses 5)");
    }
    let mut tasks = args.task.clone();
    tasks.dedup();
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
        bail!(
            "the folder of --out does not exist: {} (create it first)",
            dir.display()
        );
    }
    let t0 = Instant::now();
    let split = load_split(&args.split).with_context(|| {
        format!(
            "loading the split {} (pass a PGraphRAG split such as $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json)",
            args.split.display()
        )
    })?;
    let (gopts, policy) = if args.clean {
        (
            GraphOptions {
                duplicates: Duplicates::KeepAll,
            },
            IdPolicy::Normalize,
        )
    } else {
        (GraphOptions::notebook(), IdPolicy::KeepJsonType)
    };
    let graph = split.to_graph(gopts, policy);
    let mut split = split;
    if let Some(n) = args.limit {
        split.users.truncate(n);
    }
    let mut popts = if args.clean {
        ProfileOptions::default()
    } else {
        ProfileOptions::notebook()
    };
    popts.k = args.top;
    popts.random = if args.no_random {
        RandomReview::Off
    } else {
        RandomReview::Python { seed: args.seed }
    };
    let ties = if args.clean {
        TieOrder::InputOrder
    } else {
        TieOrder::NumpyReversedArgsort
    };
    if tasks.len() > 1 {
        let stem = args
            .split
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "split".into());
        let retriever = args
            .retriever
            .to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        let outs: Vec<(Task, PathBuf)> = tasks
            .iter()
            .map(|&t| {
                let name = format!("RANKING-{stem}_{}_{retriever}.json", t.notebook_name());
                (t, args.out.join(name))
            })
            .collect();
        if args.retriever == RetrieverArg::Bm25 {
            // Tokenize every review once, then rank the tasks in parallel, each with its own
            // copy of the token cache and its own random stream (as separate runs would).
            let mut warm = CachedBm25::pgraphrag().with_tie_order(ties);
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            warm.warm_parallel(&graph, threads);
            let (split, graph, warm) = (&split, &graph, &warm);
            std::thread::scope(|sc| -> anyhow::Result<()> {
                let handles: Vec<_> = outs
                    .iter()
                    .map(|(task, out)| {
                        sc.spawn(move || -> anyhow::Result<()> {
                            let ranker = ProfileRanker::new(warm.clone(), popts);
                            let records = rank_all(split, graph, policy, *task, ranker)?;
                            finish(&records, graph, out, t0)
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
                let records = rank_task(&args, &split, &graph, policy, *task, popts, ties)?;
                finish(&records, &graph, out, t0)?;
            }
        }
        return Ok(());
    }
    let task: Task = tasks[0];
    let records = rank_task(&args, &split, &graph, policy, task, popts, ties)?;
    finish(&records, &graph, &args.out, t0)
}

/// Writes one ranking file and prints its summary line.
fn finish(
    records: &[RankingRecord],
    graph: &UserItemGraph,
    out: &Path,
    t0: Instant,
) -> anyhow::Result<()> {
    write_rankings(out, records).with_context(|| format!("writing {}", out.display()))?;
    let n = records.len().max(1) as f64;
    let mean_u = records.iter().map(|r| r.user_ratings.len()).sum::<usize>() as f64 / n;
    let mean_n = records
        .iter()
        .map(|r| r.neighbor_ratings.len())
        .sum::<usize>() as f64
        / n;
    eprintln!(
        "ranked {} users ({} reviews in the graph, {} overwritten) in {:.2}s: mean {:.2} user / {:.2} neighbour entries; wrote {}",
        records.len(),
        graph.num_reviews(),
        graph.num_overwritten(),
        t0.elapsed().as_secs_f64(),
        mean_u,
        mean_n,
        out.display()
    );
    Ok(())
}

/// Ranks one task with the chosen retriever.
fn rank_task(
    args: &Args,
    split: &Split,
    graph: &UserItemGraph,
    policy: IdPolicy,
    task: Task,
    mut popts: ProfileOptions,
    ties: TieOrder,
) -> anyhow::Result<Vec<RankingRecord>> {
    let records = match args.retriever {
        RetrieverArg::Bm25 => {
            let r = CachedBm25::pgraphrag().with_tie_order(ties);
            rank_all(split, graph, policy, task, ProfileRanker::new(r, popts))?
        }
        RetrieverArg::Bm25Lucene => {
            let r = WithRetriever(Bm25Lucene::new(PgraphragTokenizer).with_tie_order(ties));
            rank_all(split, graph, policy, task, ProfileRanker::new(r, popts))?
        }
        RetrieverArg::Random => {
            // The notebook has no random ranker: draw the random review over graph order.
            popts.random_via_ranker = false;
            let r = WithRetriever(RandomRetriever::new(args.seed));
            rank_all(split, graph, policy, task, ProfileRanker::new(r, popts))?
        }
        RetrieverArg::None => {
            // Nothing is ranked; the random review is drawn over graph order.
            popts.random_via_ranker = false;
            let r = WithRetriever(NoRetriever);
            rank_all(split, graph, policy, task, ProfileRanker::new(r, popts))?
        }
        RetrieverArg::Contriever => {
            // The notebook runs Contriever without the BM25 path, so nothing is dropped.
            popts.empty_docs = if args.clean {
                EmptyDocs::Drop
            } else {
                EmptyDocs::Keep
            };
            popts.duplicate_texts = DuplicateTexts::Distinct;
            popts.single_neighbor = if args.clean {
                SingleNeighbor::Rank
            } else {
                SingleNeighbor::Unranked
            };
            let queries: Vec<String> = split
                .users
                .iter()
                .filter_map(|u| u.profile.first())
                .map(|t| task.query(t.title.as_deref(), t.text.as_deref()))
                .collect();
            let r = dense(args, graph, &queries)?;
            rank_all(
                split,
                graph,
                policy,
                task,
                ProfileRanker::new(WithRetriever(r), popts),
            )?
        }
    };
    Ok(records)
}

fn dense(
    args: &Args,
    graph: &UserItemGraph,
    queries: &[String],
) -> anyhow::Result<pgraphrag_retrieval::dense::DenseRetriever> {
    use pgraphrag_retrieval::dense::{DenseRetriever, Pooling};
    let Some(model) = args.model.as_deref() else {
        bail!(
            "--retriever contriever needs --model DIR: a BERT folder with config.json, tokenizer.json and \
             model.safetensors (see MODELS.md for facebook/contriever or all-MiniLM-L6-v2)"
        );
    };
    if !model.is_dir() {
        bail!(
            "--model {}: not a folder (expected config.json, tokenizer.json, model.safetensors)",
            model.display()
        );
    }
    let cache = args
        .embedding_cache
        .clone()
        .unwrap_or_else(|| default_cache(&args.out));
    let pooling = match args.doc_pooling {
        PoolingArg::Mean => Pooling::Mean,
        PoolingArg::Pooler => Pooling::Pooler,
    };
    let backend: pgraphrag_retrieval::dense::EncoderBackend =
        args.backend.parse().context("--backend")?;
    let r = DenseRetriever::builder(model)
        .doc_pooling(pooling)
        .backend(backend)
        .cache(&cache)
        .build()
        .with_context(|| format!("loading the dense model {}", model.display()))?;
    let docs: Vec<String> = graph
        .reviews()
        .iter()
        .map(|r| r.entry.title_text())
        .collect();
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let t = Instant::now();
    r.warm(&refs, std::io::stderr().is_terminal())
        .context("embedding the split's documents")?;
    let t_docs = t.elapsed().as_secs_f64();
    // All queries in length-sorted batches up front (not one forward pass per user).
    let q: Vec<&str> = queries.iter().map(String::as_str).collect();
    r.warm_queries(&q, std::io::stderr().is_terminal())
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

fn progress(n: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(n as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} ranking {pos}/{len} users [{elapsed_precise}<{eta_precise}] {wide_bar}",
    ) {
        pb.set_style(style);
    }
    pb
}

/// Ranks every user of `split` (in file order) and builds the ranking records.
pub fn rank_all<R: CandidateRanker>(
    split: &Split,
    graph: &UserItemGraph,
    policy: IdPolicy,
    task: Task,
    mut ranker: ProfileRanker<R>,
) -> anyhow::Result<Vec<RankingRecord>> {
    let pb = progress(split.users.len());
    let mut out = Vec::with_capacity(split.users.len());
    for (i, user) in split.users.iter().enumerate() {
        let Some(mut rec) = RankingRecord::for_user(user) else {
            bail!("record {i} (user {:?}) has an empty profile", user.id);
        };
        let target = &user.profile[0];
        let item = policy.apply(&target.pid);
        let query = task.query(target.title.as_deref(), target.text.as_deref());
        let p = ranker
            .rank(graph, &user.id, &item, &query)
            .with_context(|| format!("ranking record {i} (user {:?})", user.id))?;
        rec.user_ratings = p
            .user
            .iter()
            .map(|h| UserRating::from_review(graph.review(h.review), h.score))
            .collect();
        rec.neighbor_ratings = p
            .neighbors
            .iter()
            .map(|h| NeighborRating::from_review(graph.review(h.review), h.score))
            .collect();
        rec.random_review = p
            .random
            .map(|r| UserRating::from_review(graph.review(r), None));
        out.push(rec);
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(out)
}
