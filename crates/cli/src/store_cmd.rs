//! `pgraphrag store` (feature `postgres`): the PostgreSQL profile store. `load` copies a split
//! (and review JSONL) into a database (a single server, or a coordinator with shard servers),
//! `list` and `drop` manage datasets, `bench` measures profile fetches and whole-split
//! ranking against the in-memory graph and checks that both agree. See `docs/store.md`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use pgraphrag_data::Split;
use pgraphrag_eval::{Recipe, rank_all, rank_all_from};
use pgraphrag_graph::{ProfileSource, Scope};
use pgraphrag_retrieval::profile::{ProfileRanker, Task};
use pgraphrag_store::postgres::{self as pg, LoadOptions, PgStore};

use crate::common::profile_store::open_for_ranking;
use crate::error::usage;
use crate::progress::Bar;

/// Arguments of `pgraphrag store`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(clap::Subcommand, Debug)]
enum StoreCommand {
    /// Load a split (and review JSONL) as a dataset: the graph of the in-memory path, copied
    /// with binary COPY into tables hash-partitioned by user and by item.
    Load(LoadArgs),
    /// List the datasets of a database.
    List(UrlArgs),
    /// Drop a dataset (on the coordinator and on its shard servers).
    Drop(DropArgs),
    /// Time profile fetches (p50/p99) and whole-split ranking against the in-memory graph,
    /// and check that both give the same profiles and rankings.
    Bench(BenchArgs),
}

#[derive(clap::Args, Debug)]
struct UrlArgs {
    /// The database: postgres://USER@HOST:PORT/DATABASE.
    #[arg(long)]
    url: String,
}

#[derive(clap::Args, Debug)]
struct DropArgs {
    /// The database: postgres://USER@HOST:PORT/DATABASE.
    #[arg(long)]
    url: String,
    /// The dataset to drop.
    #[arg(long)]
    dataset: String,
}

#[derive(clap::Args, Debug)]
struct LoadArgs {
    /// The database: postgres://USER@HOST:PORT/DATABASE (a coordinator with pgraphrag_shard*
    /// foreign servers spreads the partitions over them).
    #[arg(long)]
    url: String,
    /// The PGraphRAG split: its reviews and its targets (each record's profile[0]).
    #[arg(long, required_unless_present = "jsonl")]
    split: Option<PathBuf>,
    /// Review JSONL files appended after the split's reviews, one review a line:
    /// {"user", "item", "title", "text", "rating", "time"} (user and item required).
    #[arg(long)]
    jsonl: Vec<PathBuf>,
    /// The dataset name (default: the split file's stem, e.g. amazon_dev).
    #[arg(long)]
    dataset: Option<String>,
    /// The library's clean graph (all reviews kept, ids as strings) instead of the released
    /// notebook's; rank with `pgraphrag rank --clean` then.
    #[arg(long)]
    clean: bool,
    /// Hash partitions per review table.
    #[arg(long, default_value_t = 8)]
    partitions: usize,
    /// Drop and reload the dataset if it exists.
    #[arg(long)]
    replace: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// The database holding the dataset.
    #[arg(long)]
    url: String,
    /// The split the dataset was loaded from (the in-memory side of the comparison).
    #[arg(long)]
    split: PathBuf,
    /// The dataset (default: the split file's stem).
    #[arg(long)]
    dataset: Option<String>,
    /// The task whose ranking is timed.
    #[arg(long, default_value = "text", value_parser = crate::args::task())]
    task: Task,
    /// The dataset was loaded with --clean.
    #[arg(long)]
    clean: bool,
    /// How many targets to time single profile fetches on.
    #[arg(long, default_value_t = 1000)]
    fetches: usize,
    /// Rank only the first N targets (default: all).
    #[arg(long)]
    limit: Option<usize>,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
}

/// Runs `pgraphrag store`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        StoreCommand::Load(a) => load(a),
        StoreCommand::List(a) => {
            let mut store = PgStore::connect(&a.url)?;
            for d in store.datasets()? {
                println!(
                    "{}\t{} reviews\t{} users\t{} targets\t{} partitions\t{} / {}\t{}",
                    d.name,
                    d.reviews,
                    d.users,
                    d.targets,
                    d.partitions,
                    d.duplicates,
                    d.ids,
                    if d.servers.is_empty() {
                        "local".to_string()
                    } else {
                        d.servers.join(",")
                    }
                );
            }
            Ok(())
        }
        StoreCommand::Drop(a) => {
            let mut store = PgStore::connect(&a.url)?;
            store.drop_dataset(&a.dataset)?;
            eprintln!("dropped dataset {}", a.dataset);
            Ok(())
        }
        StoreCommand::Bench(a) => bench(a),
    }
}

fn recipe_of(clean: bool) -> Recipe {
    if clean {
        Recipe::Clean
    } else {
        Recipe::ReleasedCode
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn load(a: LoadArgs) -> anyhow::Result<()> {
    let dataset = match (&a.dataset, &a.split) {
        (Some(d), _) => d.clone(),
        (None, Some(p)) => stem(p),
        (None, None) => {
            return Err(usage(
                "name the dataset with --dataset (no --split to name it)",
            ));
        }
    };
    pg::validate_dataset_name(&dataset)?;
    if a.partitions == 0 {
        return Err(usage("--partitions must be at least 1"));
    }
    let t0 = Instant::now();
    let split = match &a.split {
        Some(p) => pgraphrag_runs::pgraphrag::load_split(p)?,
        None => Split::default(),
    };
    let t_read = t0.elapsed();
    let recipe = recipe_of(a.clean);
    let opts = LoadOptions {
        graph: recipe.graph_options(),
        ids: recipe.id_policy(),
        partitions: a.partitions,
        replace: a.replace,
    };
    let mut store = PgStore::connect(&a.url)?;
    let layout = match store.layout()? {
        pg::Layout::Single => "one server".to_string(),
        pg::Layout::Sharded(shards) => {
            let names: Vec<&str> = shards.iter().map(|s| s.server.as_str()).collect();
            format!("shards {}", names.join(", "))
        }
    };
    let bar = Bar::new(a.quiet);
    let t1 = Instant::now();
    let s = store
        .load(&dataset, &split, &a.jsonl, &opts, &bar)
        .with_context(|| format!("loading dataset {dataset}"))?;
    eprintln!(
        "loaded dataset {dataset}: {} reviews ({} from JSONL, {} overwritten), {} users, {} targets \
         into {} partitions ({layout}) in {:.2}s (reading the split {:.2}s)",
        s.reviews,
        s.jsonl_reviews,
        s.overwritten,
        s.users,
        s.targets,
        a.partitions,
        t1.elapsed().as_secs_f64(),
        t_read.as_secs_f64()
    );
    Ok(())
}

fn percentile(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn bench(a: BenchArgs) -> anyhow::Result<()> {
    let dataset = a.dataset.clone().unwrap_or_else(|| stem(&a.split));
    let recipe = recipe_of(a.clean);
    let policy = recipe.id_policy();
    let t0 = Instant::now();
    let split = pgraphrag_runs::pgraphrag::load_split(&a.split)?;
    let graph = recipe.graph(&split);
    let t_graph = t0.elapsed().as_secs_f64();
    let (targets, store) = open_for_ranking(&a.url, &dataset, recipe)?;
    if targets.users.len() != split.users.len() {
        return Err(usage(format!(
            "dataset {dataset} has {} targets but {} has {} records: load that split",
            targets.users.len(),
            a.split.display(),
            split.users.len()
        )));
    }
    // Single profile fetches (scope both), both sides through ProfileSource.
    let mut mem = Vec::new();
    let mut db = Vec::new();
    for u in split.users.iter().take(a.fetches) {
        let Some(t) = u.target() else { continue };
        let item = policy.apply(&t.pid);
        let t = Instant::now();
        let want = ProfileSource::profile(&graph, &u.id, &item, Scope::Both)?;
        mem.push(t.elapsed());
        let t = Instant::now();
        let got = store.profile(&u.id, &item, Scope::Both)?;
        db.push(t.elapsed());
        if got != want {
            anyhow::bail!(
                "profile of user {} differs between the store and the graph",
                u.id
            );
        }
    }
    mem.sort_unstable();
    db.sort_unstable();
    let mut ranked = split.clone();
    if let Some(n) = a.limit {
        ranked.users.truncate(n);
    }
    let bar = Bar::new(a.quiet);
    let ranker = || ProfileRanker::new(recipe.bm25(), recipe.profile_options());
    let t = Instant::now();
    let want = rank_all(&ranked, &graph, policy, a.task, ranker(), &bar)?;
    let t_mem = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let got = rank_all_from(
        &ranked,
        &store,
        policy,
        a.task,
        ranker(),
        &bar,
        pgraphrag_eval::rank::FETCH_BATCH,
    )?;
    let t_db = t.elapsed().as_secs_f64();
    let same = got == want;
    let n = ranked.users.len() as f64;
    println!(
        "dataset {dataset}: {} reviews, {} users; in-memory graph built in {t_graph:.2}s",
        graph.num_reviews(),
        graph.num_users()
    );
    println!(
        "profile fetch (scope both, {} targets): in-memory p50 {:.4} ms p99 {:.4} ms; PostgreSQL p50 {:.3} ms p99 {:.3} ms (p50 ratio {:.0}x)",
        mem.len(),
        percentile(&mem, 0.5),
        percentile(&mem, 0.99),
        percentile(&db, 0.5),
        percentile(&db, 0.99),
        percentile(&db, 0.5) / percentile(&mem, 0.5).max(1e-9)
    );
    println!(
        "ranking {} targets ({:?}, bm25): in-memory {t_mem:.2}s ({:.0} users/s); PostgreSQL {t_db:.2}s ({:.0} users/s); ratio {:.2}x; identical: {same}",
        ranked.users.len(),
        a.task,
        n / t_mem.max(1e-9),
        n / t_db.max(1e-9),
        t_db / t_mem.max(1e-9)
    );
    if !same {
        anyhow::bail!("the rankings differ between the store and the graph");
    }
    Ok(())
}
