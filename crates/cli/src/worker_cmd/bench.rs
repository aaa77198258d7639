//! `pgraphrag queue submit bench`: PGraphRAG's generation grid as a job
//! (`pgraphrag_runs::jobs::BenchSpec`): the workers rank chunks of users and answer their grid
//! prompts into the generation cache, after which `pgraphrag bench` with the same options finds
//! every answer there and only scores. See `docs/queue.md`.
use std::path::{Path, PathBuf};

use pgraphrag_runs::jobs::{BenchSpec, JobSpec, RankSpec};

use super::nats::{self, NatsArgs, absolute};
use crate::bench_args;
use crate::error::{OrUsage, usage};

/// Arguments of `pgraphrag queue submit bench`: those of `pgraphrag bench` (the job store is
/// --jobs, since --store is the bench's PostgreSQL profile store).
#[derive(clap::Args, Debug)]
pub struct SubmitBenchArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// The job store (SQLite) that records finished units.
    #[arg(long)]
    pub jobs: PathBuf,
    /// Users per unit.
    #[arg(long, default_value_t = 25)]
    pub chunk: usize,
    #[command(flatten)]
    pub bench: bench_args::Args,
}

/// Runs `pgraphrag queue submit bench`.
pub(super) fn submit(a: SubmitBenchArgs) -> anyhow::Result<()> {
    let b = &a.bench;
    if a.chunk == 0 {
        return Err(usage("--chunk must be at least 1"));
    }
    if b.openai_url.is_some() {
        return Err(usage(
            "a bench job runs a local GGUF model on the workers: drop --openai-url",
        ));
    }
    if b.item_summaries.is_some()
        || b.journal.is_some()
        || b.adapter.is_some()
        || b.export_prompts.is_some()
        || b.skip != 0
    {
        return Err(usage(
            "--item-summaries, --journal, --adapter, --export-prompts and --skip are not part of a \
             bench job: run `pgraphrag bench` for them",
        ));
    }
    let bench = bench_args::grid(b)?;
    let split_path = absolute(&b.split)?;
    let available = pgraphrag_runs::pgraphrag::load_split(&split_path)?
        .users
        .len();
    let users = b.limit.map_or(available, |n| n.min(available));
    if users == 0 {
        return Err(usage(format!("{}: no users to run", b.split.display())));
    }
    let rank = match &b.store {
        Some(url) => {
            let (dataset, split) = bench_args::names(&b.split);
            RankSpec::from_store(url, &format!("{dataset}_{split}"), b.task, users)
        }
        None => RankSpec::new(&split_path, b.task, users),
    };
    let cache = b
        .cache
        .clone()
        .unwrap_or_else(|| b.out.join("cache.sqlite"));
    let cache = match cache.to_str() {
        Some(url) if pgraphrag_store::is_postgres_url(url) => url.to_string(),
        _ => absolute(&cache)?
            .to_str()
            .ok_or_else(|| usage("--cache must be a UTF-8 path"))?
            .to_string(),
    };
    if !pgraphrag_store::is_postgres_url(&cache)
        && let Some(dir) = Path::new(&cache).parent()
    {
        std::fs::create_dir_all(dir).or_usage()?;
    }
    let model = absolute(&bench_args::model_file(b)?)?;
    let options = bench_args::gguf_options(b);
    let mut spec = BenchSpec::new(rank, bench, model, cache);
    spec.weights = options.weights;
    spec.engine = options.engine;
    spec.activations = options.activations;
    spec.prefill = options.prefill;
    // Load the model and open the cache once here, so a bad model or cache is a usage error
    // now rather than a dead letter per unit.
    let model_id = spec.check().or_usage()?;
    eprintln!(
        "bench: {users} users, {} cells, model {model_id}, cache {}",
        spec.bench.configs.len(),
        pgraphrag_runs::describe_location(Path::new(&spec.cache))
    );
    nats::submit(&a.nats, &JobSpec::Bench(Box::new(spec)), &a.jobs, a.chunk)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        a: super::SubmitBenchArgs,
    }

    #[test]
    fn the_bench_options_parse_beside_the_queue_ones() {
        let c = Cli::try_parse_from([
            "x", "--jobs", "j.sqlite", "--split", "s.json", "--task", "rating", "--out", "o",
            "--ks", "1,2", "--chunk", "10", "--stream", "S",
        ])
        .unwrap();
        assert_eq!((c.a.chunk, c.a.bench.ks.as_slice()), (10, &[1, 2][..]));
        assert_eq!(c.a.nats.stream, "S");
    }
}
