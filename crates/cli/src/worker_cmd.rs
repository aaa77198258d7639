//! `pgraphrag worker` and `pgraphrag queue submit|status|export`: the offline jobs on a
//! JetStream work queue (feature `jetstream`).
//!
//! `queue submit rank|embed|summarize` plans a job into units (`pgraphrag_runs::jobs::plan`),
//! registers it in the result store and publishes one message per unit (dedup ids: submitting
//! again is harmless). Any number of `pgraphrag worker` processes pull units, run them
//! (`pgraphrag_runs::jobs::JobRunner`, results committed to the store named in the unit) and
//! acknowledge them. `queue status` reads the queue and, with `--store`, each job's progress
//! from the store; `queue export` writes a finished ranking job as a ranking file. See
//! `docs/queue.md`.
use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use pgraphrag_core::Task;
use pgraphrag_runs::jobs::{self, JobRunner, JobSpec, JobStore, RankSpec, ResultSink, UnitOutcome};
use pgraphrag_store::queue::{self, Delivery, Event, Failure, Outcome, WorkerOptions};

use crate::error::{OrUsage, usage};

mod bench;
mod nats;
mod summarize;

use nats::{NatsArgs, absolute, runtime, submit};

/// Arguments of `pgraphrag worker`.
#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// The worker's name in the store and the dead letters (default: worker-<pid>).
    #[arg(long)]
    pub name: Option<String>,
    /// Exit when the queue is drained (nothing waiting, nothing awaiting an ack) instead of
    /// waiting for more units. The exit code is 1 when units were given up (dead letters) in
    /// this run.
    #[arg(long)]
    pub drain: bool,
    /// Exit after this many units.
    #[arg(long)]
    pub max_units: Option<usize>,
    /// Give up after this many seconds without reaching the queue.
    #[arg(long, default_value_t = 120.0, value_parser = crate::args::positive)]
    pub give_up_after: f64,
    /// No line per unit.
    #[arg(long)]
    pub quiet: bool,
}

/// Arguments of `pgraphrag queue`.
#[derive(clap::Args, Debug)]
pub struct QueueArgs {
    #[command(subcommand)]
    pub command: QueueCommand,
}

/// The `queue` subcommands.
#[derive(Subcommand, Debug)]
pub enum QueueCommand {
    /// Split a job into units and publish them (idempotent: units are deduplicated by id).
    Submit(SubmitArgs),
    /// Units waiting, in flight and given up; with --store, each job's progress from the store.
    Status(StatusArgs),
    /// Write a finished ranking job as a ranking file (the bytes `pgraphrag rank` writes).
    Export(ExportArgs),
}

/// Arguments of `pgraphrag queue submit`.
#[derive(clap::Args, Debug)]
pub struct SubmitArgs {
    /// The job kind.
    #[command(subcommand)]
    pub job: SubmitJob,
}

/// The job kinds.
#[derive(Subcommand, Debug)]
pub enum SubmitJob {
    /// Rank every user of a split (BM25, as `pgraphrag rank --retriever bm25`).
    Rank(SubmitRankArgs),
    /// Encode a corpus (JSON lines {"id", "text"}) into an embedding cache, which
    /// `pgraphrag embed --cache` then reads instead of encoding.
    Embed(SubmitEmbedArgs),
    /// Summarise every user of a LaMP questions file into a summary store (the summaries
    /// `pgraphrag summarize` writes; it then finds them all done, and `--export` writes them).
    Summarize(summarize::SubmitSummarizeArgs),
    /// Answer PGraphRAG's generation grid (the options of `pgraphrag bench`) into its
    /// generation cache; `pgraphrag bench` with the same options then only scores.
    Bench(Box<bench::SubmitBenchArgs>),
}

/// Arguments of `pgraphrag queue submit embed`.
#[derive(clap::Args, Debug)]
pub struct SubmitEmbedArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// Input JSON lines, each {"id": ..., "text": "..."}.
    #[arg(long)]
    pub texts: PathBuf,
    /// Model folder (config.json, model.safetensors, tokenizer.json).
    #[arg(long)]
    pub model: PathBuf,
    /// The embedding cache (SQLite) the vectors go to.
    #[arg(long)]
    pub cache: PathBuf,
    /// The job store (SQLite) that records finished units.
    #[arg(long)]
    pub store: PathBuf,
    /// Pooling.
    #[arg(long, value_enum, default_value = "mean")]
    pub pooling: crate::args::PoolingArg,
    /// Truncation length in tokens (default: the model's limit).
    #[arg(long)]
    pub max_length: Option<usize>,
    /// Texts per forward pass.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Texts per unit.
    #[arg(long, default_value_t = 256)]
    pub chunk: usize,
}

/// Arguments of `pgraphrag queue submit rank`.
#[derive(clap::Args, Debug)]
pub struct SubmitRankArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// The PGraphRAG split (or --profiles and --dataset).
    #[arg(long, required_unless_present = "profiles")]
    pub split: Option<PathBuf>,
    /// Rank a dataset of the PostgreSQL profile store at this URL instead of a split file
    /// (the workers read targets and profiles from it; they need the feature `postgres`).
    #[arg(long, requires = "dataset", conflicts_with = "split")]
    pub profiles: Option<String>,
    /// The dataset of --profiles (`pgraphrag store list`).
    #[arg(long, requires = "profiles")]
    pub dataset: Option<String>,
    /// The task: text, title or rating.
    #[arg(long, value_parser = crate::args::task())]
    pub task: Task,
    /// The result store (SQLite; shared by the workers of one machine).
    #[arg(long)]
    pub store: PathBuf,
    /// Users per unit.
    #[arg(long, default_value_t = 100)]
    pub chunk: usize,
    /// Rank only the first N users.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Reviews kept per list.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Seed of the random review.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// No random review.
    #[arg(long)]
    pub no_random: bool,
    /// The library's clean semantics (as `pgraphrag rank --clean`).
    #[arg(long)]
    pub clean: bool,
}

/// Arguments of `pgraphrag queue status`.
#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// Also read each job's progress from this result store.
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Print JSON instead of lines.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `pgraphrag queue export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The result store.
    #[arg(long)]
    pub store: PathBuf,
    /// The job id (printed by `queue submit` and `queue status --store`).
    #[arg(long)]
    pub job: String,
    /// The ranking file to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs `pgraphrag worker`.
pub fn run_worker(args: WorkerArgs) -> anyhow::Result<()> {
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("worker-{}", std::process::id()));
    let opts = WorkerOptions {
        name: name.clone(),
        drain: args.drain,
        max_units: args.max_units,
        give_up_after: Duration::from_secs_f64(args.give_up_after),
        ..Default::default()
    };
    let mut runner = JobRunner::sqlite(name.clone());
    let handler = move |unit: &Delivery| match runner.run(&unit.payload) {
        Ok(UnitOutcome::Stored { .. }) => Ok(Outcome::Stored),
        Ok(UnitOutcome::AlreadyDone) => Ok(Outcome::AlreadyDone),
        Err(e) => Err(Failure::Retry(Box::new(e))),
    };
    let quiet = args.quiet;
    let mut on_event = move |e: &Event| {
        if quiet {
            return;
        }
        match e {
            Event::Done {
                id,
                outcome,
                seconds,
                acked,
            } => {
                let what = match outcome {
                    Outcome::Stored => "stored",
                    Outcome::AlreadyDone => "already done",
                };
                let ack = if *acked { "" } else { " (ack unconfirmed)" };
                eprintln!("{id}: {what} in {seconds:.3}s{ack}");
            }
            Event::Failed {
                id,
                error,
                delivered,
                dead,
            } => {
                let then = if *dead { "given up" } else { "will retry" };
                eprintln!("{id}: failed on delivery {delivered} ({then}): {error}");
            }
            Event::Retrying { error } => eprintln!("queue unavailable, retrying: {error}"),
        }
    };
    let report = runtime()?.block_on(async {
        let q = args.nats.connect(&name).await?;
        anyhow::Ok(queue::run_worker(&q, handler, &opts, &mut on_event).await?)
    })?;
    println!(
        "{}",
        serde_json::json!({ "worker": name, "report": report })
    );
    dead_letters(report.dead)
}

/// A worker's exit: a failure (exit code 1) when it gave up units in its run, so a script that
/// drains the queue learns that part of the job is missing.
fn dead_letters(dead: usize) -> anyhow::Result<()> {
    match dead {
        0 => Ok(()),
        n => Err(anyhow::anyhow!(
            "{n} unit{} given up in this run (dead letters): their results are missing; \
             `pgraphrag queue status` lists them with their errors",
            if n == 1 { " was" } else { "s were" }
        )),
    }
}

/// Runs `pgraphrag queue ...`.
pub fn run_queue(args: QueueArgs) -> anyhow::Result<()> {
    match args.command {
        QueueCommand::Submit(SubmitArgs {
            job: SubmitJob::Rank(a),
        }) => submit_rank(a),
        QueueCommand::Submit(SubmitArgs {
            job: SubmitJob::Embed(a),
        }) => submit_embed(a),
        QueueCommand::Submit(SubmitArgs {
            job: SubmitJob::Summarize(a),
        }) => summarize::submit(a),
        QueueCommand::Submit(SubmitArgs {
            job: SubmitJob::Bench(a),
        }) => bench::submit(*a),
        QueueCommand::Status(a) => status(a),
        QueueCommand::Export(a) => export(a),
    }
}

fn submit_rank(a: SubmitRankArgs) -> anyhow::Result<()> {
    if a.top == 0 || a.chunk == 0 {
        return Err(usage("--top and --chunk must be at least 1"));
    }
    let (mut spec, available, what) = match (&a.split, &a.profiles, &a.dataset) {
        (Some(split), _, _) => {
            let split_path = absolute(split)?;
            let n = pgraphrag_runs::pgraphrag::load_split(&split_path)?
                .users
                .len();
            let what = split.display().to_string();
            (RankSpec::new(&split_path, a.task, n), n, what)
        }
        (None, Some(url), Some(dataset)) => store_targets(url, dataset, a.task, a.clean)?,
        _ => return Err(usage("give --split, or --profiles and --dataset")),
    };
    let users = a.limit.map_or(available, |n| n.min(available));
    if users == 0 {
        return Err(usage(format!("{what}: no users to rank")));
    }
    spec.users = users;
    spec.clean = a.clean;
    spec.top = a.top;
    spec.random_seed = (!a.no_random).then_some(a.seed);
    let spec = JobSpec::Rank(spec);
    submit(&a.nats, &spec, &a.store, a.chunk)
}

/// A ranking job over a dataset of the PostgreSQL profile store, checked here first (the
/// dataset exists, holds the recipe's graph), with its number of targets.
#[cfg(feature = "postgres")]
fn store_targets(
    url: &str,
    dataset: &str,
    task: Task,
    clean: bool,
) -> anyhow::Result<(RankSpec, usize, String)> {
    let recipe = pgraphrag_eval::Recipe::from_clean(clean);
    let (targets, _) = crate::common::profile_store::open_for_ranking(url, dataset, recipe)?;
    let n = targets.users.len();
    Ok((
        RankSpec::from_store(url, dataset, task, n),
        n,
        format!("dataset {dataset}"),
    ))
}

#[cfg(not(feature = "postgres"))]
fn store_targets(
    _url: &str,
    _dataset: &str,
    _task: Task,
    _clean: bool,
) -> anyhow::Result<(RankSpec, usize, String)> {
    Err(usage(
        "--profiles needs the PostgreSQL store: build pgraphrag-cli with --features postgres",
    ))
}

fn submit_embed(a: SubmitEmbedArgs) -> anyhow::Result<()> {
    if a.chunk == 0 || a.batch == 0 {
        return Err(usage("--chunk and --batch must be at least 1"));
    }
    if !a.model.is_dir() {
        return Err(usage(format!(
            "--model {}: not a folder (expected config.json, tokenizer.json, model.safetensors)",
            a.model.display()
        )));
    }
    let texts = absolute(&a.texts)?;
    let count = jobs::count_texts(&texts).or_usage()?;
    let pooling = pgraphrag_retrieval::dense::Pooling::from(a.pooling).name();
    let spec = JobSpec::Embed(jobs::EmbedSpec {
        texts,
        model: absolute(&a.model)?,
        pooling: pooling.into(),
        max_length: a.max_length,
        batch: a.batch,
        cache: absolute(&a.cache)?,
        texts_count: count,
    });
    submit(&a.nats, &spec, &a.store, a.chunk)
}

fn status(a: StatusArgs) -> anyhow::Result<()> {
    let s = runtime()?.block_on(async {
        let q = a.nats.connect("pgraphrag-status").await?;
        anyhow::Ok(q.status().await?)
    })?;
    let jobs = match &a.store {
        Some(p) => {
            if !p.is_file() {
                return Err(usage(format!("--store {}: no such file", p.display())));
            }
            JobStore::open(p).or_usage()?.jobs()?
        }
        None => Vec::new(),
    };
    if a.json {
        println!("{}", serde_json::json!({ "queue": s, "jobs": jobs }));
        return Ok(());
    }
    println!(
        "stream {} ({} replica(s), leader {}): {} units in the stream, {} waiting, {} in flight, {} redelivered, {} given up, {} workers polling",
        s.stream,
        s.replicas,
        s.leader.as_deref().unwrap_or("-"),
        s.messages,
        s.pending,
        s.in_flight,
        s.redelivered,
        s.dead.len(),
        s.waiting_workers
    );
    for d in &s.dead {
        println!(
            "  given up: {} (stream seq {}, {} deliveries){}",
            d.id.as_deref().unwrap_or("?"),
            d.stream_sequence,
            d.deliveries,
            d.error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        );
    }
    for j in &jobs {
        let workers: Vec<String> = j.workers.iter().map(|(w, n)| format!("{w} {n}")).collect();
        let records = if j.job.kind == "rank" {
            format!(", {}/{} records", j.records, j.job.items)
        } else {
            format!(" ({} items)", j.job.items)
        };
        println!(
            "job {} ({}): {}/{} units{records}, {} stores, {:.2}s computed; by worker: {}",
            j.job.id,
            j.job.kind,
            j.units_done,
            j.job.units,
            j.stores,
            j.seconds,
            workers.join(", ")
        );
    }
    Ok(())
}

fn export(a: ExportArgs) -> anyhow::Result<()> {
    crate::output::file("--out", &a.out, &[("--store", &a.store)])?;
    if !a.store.is_file() {
        return Err(usage(format!(
            "--store {}: no such file",
            a.store.display()
        )));
    }
    let store = JobStore::open(&a.store).or_usage()?;
    if !store.jobs()?.iter().any(|j| j.job.id == a.job) {
        return Err(usage(format!(
            "--job {}: no such job in {} (`pgraphrag queue status --store` lists them)",
            a.job,
            a.store.display()
        )));
    }
    let n = jobs::export_ranking(&store, &a.job, &a.out)?;
    eprintln!("wrote {n} records of job {} to {}", a.job, a.out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_letters_fail_the_run_and_say_how_many() {
        assert!(dead_letters(0).is_ok());
        let e = dead_letters(3).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 1);
        assert!(e.to_string().starts_with("3 units were given up"), "{e}");
        assert!(
            dead_letters(1)
                .unwrap_err()
                .to_string()
                .starts_with("1 unit was given up")
        );
    }

    #[test]
    fn non_finite_numbers_are_refused_when_parsing() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            w: WorkerArgs,
        }
        for (flag, v) in [
            ("--ack-wait", "NaN"),
            ("--give-up-after", "inf"),
            ("--ack-wait", "0"),
        ] {
            let e = Cli::try_parse_from(["x", flag, v]).err().unwrap();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(flag), "{e}");
        }
    }
}
