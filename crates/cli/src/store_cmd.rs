//! `pgraphrag store` (feature `postgres`): the PostgreSQL profile store. `load` copies a split
//! (and review JSONL) into a database (a single server, or a coordinator with shard servers),
//! `list` and `drop` manage datasets, `bench` measures profile fetches and whole-split
//! ranking against the in-memory graph and checks that both agree. See `docs/store.md`.

use std::path::PathBuf;

use pgraphrag_core::Task;
use pgraphrag_runs::store::{BenchSpec, LoadSpec};
use pgraphrag_store::postgres::PgStore;

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

fn load(a: LoadArgs) -> anyhow::Result<()> {
    let spec = LoadSpec {
        url: a.url,
        split: a.split,
        jsonl: a.jsonl,
        dataset: a.dataset,
        clean: a.clean,
        partitions: a.partitions,
        replace: a.replace,
    };
    eprintln!("{}", spec.run(&Bar::new(a.quiet))?);
    Ok(())
}

fn bench(a: BenchArgs) -> anyhow::Result<()> {
    let spec = BenchSpec {
        url: a.url,
        split: a.split,
        dataset: a.dataset,
        task: a.task,
        clean: a.clean,
        fetches: a.fetches,
        limit: a.limit,
    };
    println!("{}", spec.run(&Bar::new(a.quiet))?);
    Ok(())
}
