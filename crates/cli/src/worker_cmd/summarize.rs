//! `pgraphrag queue submit summarize`: a summary job (`pgraphrag_runs::jobs::SummarizeSpec`),
//! every user of a LaMP questions file summarised by the workers into a summary store, as
//! `pgraphrag summarize` does. See `docs/queue.md`.
use std::path::{Path, PathBuf};

use pgraphrag_runs::jobs::{self, JobSpec};

use super::nats::{self, NatsArgs, absolute};
use crate::error::{OrUsage, usage};

/// Arguments of `pgraphrag queue submit summarize` (those of `pgraphrag summarize`, with the
/// summary store as --summaries).
#[derive(clap::Args, Debug)]
pub struct SubmitSummarizeArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// A LaMP questions file (`*_questions.json`); every profile item must have the task's fields.
    #[arg(long)]
    pub input: PathBuf,
    /// The LaMP task (as `pgraphrag summarize --task`).
    #[arg(long, value_parser = crate::args::lamp_task)]
    pub task: pgraphrag_core::LampTask,
    /// The GGUF model that writes the summaries (every worker reads it at this path).
    #[arg(long)]
    pub model: PathBuf,
    /// The summary store: a SQLite file or a PostgreSQL URL (postgres://..., workers built
    /// with --features postgres); `pgraphrag summarize --store`.
    #[arg(long)]
    pub summaries: String,
    /// The job store (SQLite) that records finished units.
    #[arg(long)]
    pub store: PathBuf,
    #[command(flatten)]
    pub summarizer: crate::common::summarizer::SummarizerArgs,
    /// Users per unit.
    #[arg(long, default_value_t = 16)]
    pub chunk: usize,
}

/// Runs `pgraphrag queue submit summarize`.
pub(super) fn submit(a: SubmitSummarizeArgs) -> anyhow::Result<()> {
    let o = &a.summarizer;
    if a.chunk == 0 || o.batch == 0 {
        return Err(usage("--chunk and --batch must be at least 1"));
    }
    let input = absolute(&a.input)?;
    let available = jobs::count_users(&input, a.task, o.summary_scope).or_usage()?;
    let users = o.limit.map_or(available, |n| n.min(available));
    if users == 0 {
        return Err(usage(format!(
            "{}: no users to summarise",
            a.input.display()
        )));
    }
    let is_url = pgraphrag_store::is_postgres_url(&a.summaries);
    let summaries = if is_url {
        a.summaries.clone()
    } else {
        absolute(Path::new(&a.summaries))?
            .to_str()
            .ok_or_else(|| usage("--summaries must be a UTF-8 path"))?
            .to_string()
    };
    let mut spec = jobs::SummarizeSpec::new(input, a.task, absolute(&a.model)?, summaries, users);
    spec.batch = o.batch;
    spec.max_new_tokens = o.max_new_tokens;
    spec.context = o.context;
    spec.new_config = o.new_config;
    spec.scope = o.summary_scope;
    // Load the model and open the store once here, so a bad model, context or store is a
    // usage error now rather than a dead letter per unit.
    let (model, version) = spec.check().or_usage()?;
    eprintln!("summarize: {users} users, model {model}, version {version}");
    nats::submit(&a.nats, &JobSpec::Summarize(spec), &a.store, a.chunk)
}
