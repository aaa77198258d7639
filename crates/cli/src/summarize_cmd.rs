//! `pgraphrag summarize`: the offline user summaries of summary-augmented LaMP (Richardson et
//! al.) for one LaMP questions file, with a local GGUF model, into a resumable summary store.
//!
//! The recipe is `pgraphrag_stages::SummarizeJob`; this module turns flags into its inputs:
//! read the questions (fields checked for the task) → load the model → the task's Table 2
//! prompt, the fitting budget (`--context`, `--max-new-tokens`, and the chat template's own
//! tokens measured on the model) → summarise every user the store lacks, each committed as it
//! finishes → `stats {...}` on stdout, optional JSONL export. See `docs/stages.md`.
use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Context;
use pgraphrag_core::{LampTask, TokenCounter};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_stages::{LlmSummarizer, SummarizeJob, SummaryPrompt};
use serde::Serialize;

use crate::common::summarizer::SummarizerArgs;
use crate::error::{OrUsage, job_error, usage};
use crate::progress::Bar;
use pgraphrag_runs::summary_budget;

/// Arguments of `pgraphrag summarize`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A LaMP questions file (`*_questions.json`); every profile item must have the task's fields.
    #[arg(long)]
    pub input: PathBuf,
    /// The LaMP task: LaMP-1, LaMP-2 (movies; an adapted prompt), LaMP-2-old (news), LaMP-3,
    /// LaMP-4, LaMP-5, LaMP-6 or LaMP-7 (LaMP-2 movies and LaMP-6 email: our adaptations of the paper's prompts).
    #[arg(long, value_parser = crate::args::lamp_task)]
    pub task: LampTask,
    /// The GGUF model that writes the summaries (e.g. models/SmolLM2-135M-Instruct.Q4_1.gguf).
    #[arg(long)]
    pub model: PathBuf,
    /// The summary store: a SQLite file (created if missing) or a PostgreSQL database
    /// (postgres://..., `--features postgres`). A rerun computes only what is missing.
    #[arg(long)]
    pub store: PathBuf,
    /// Also write this run's (model, prompt version) summaries as JSON lines `{id, summary}`.
    #[arg(long)]
    pub export: Option<PathBuf>,
    #[command(flatten)]
    pub summarizer: SummarizerArgs,
    /// Append `stored <user>` to this file right after each summary is committed.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// The `stats` line: the job's counts and the speed of this run.
#[derive(Serialize)]
struct Stats<'a> {
    #[serde(flatten)]
    report: &'a pgraphrag_stages::JobReport,
    model: String,
    version: String,
    /// Tokens of the computed summaries, re-tokenized (the end-of-turn token not counted).
    generated_tokens: usize,
    summaries_per_s: f64,
    generated_tokens_per_s: f64,
}

/// Runs `pgraphrag summarize`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let inputs = [
        ("--input", args.input.as_path()),
        ("--model", &args.model),
        ("--store", &args.store),
    ];
    crate::output::optional("--export", args.export.as_deref(), &inputs)?;
    let mut journal_inputs = inputs.to_vec();
    if let Some(p) = &args.export {
        journal_inputs.push(("--export", p));
    }
    crate::output::optional("--journal", args.journal.as_deref(), &journal_inputs)?;
    let Some(prompt) = SummaryPrompt::table2(args.task) else {
        return Err(usage(format!(
            "no summary prompt for {}; pick LaMP-1, 2, 2-old, 3, 4, 5, 6 or 7",
            args.task
        )));
    };
    let questions = pgraphrag_data::lamp::read_questions_for(&args.input, args.task)
        .with_context(|| format!("reading the {} questions file", args.task))
        .or_usage()?;
    if !args.model.is_file() {
        return Err(usage(format!(
            "model file {} not found (scripts/fetch-llms.sh --smollm-only fetches SmolLM2)",
            args.model.display()
        )));
    }
    let model = GgufModel::load(&args.model, GgufOptions::default())
        .with_context(|| format!("loading the GGUF model {}", args.model.display()))?;
    let budget = summary_budget(
        &model,
        args.summarizer.context,
        args.summarizer.max_new_tokens,
    )?;
    let summarizer = LlmSummarizer::new(&model, prompt, model.tokenizer(), budget);
    let (model_id, version) = (model.cache_id(), summarizer.version());
    let store = crate::artifacts::summary_store(&args.store, "--store")?;

    let mut job = SummarizeJob::new(args.task, model_id.as_str(), version.as_str())
        .batch(args.summarizer.batch)
        .limit(args.summarizer.limit)
        .allow_new_config(args.summarizer.new_config)
        .scope(args.summarizer.summary_scope);
    if let Some(path) = &args.journal {
        job = job.on_stored(pgraphrag_eval::Journal::open(path)?.into_hook());
    }
    eprintln!(
        "summarize: {} questions of {}, task {}, model {model_id}, version {version}, store {}",
        questions.len(),
        args.input.display(),
        args.task,
        args.store.display()
    );
    let bar = Bar::new(args.quiet);
    let report = job
        .run(&questions, &summarizer, &store, &bar)
        .map_err(job_error)?;

    let computed: HashSet<&str> = report.stored.iter().map(String::as_str).collect();
    let mut generated_tokens = 0;
    for (user, summary) in store.summaries(&model_id, &version)? {
        if computed.contains(user.as_str()) {
            generated_tokens += model.tokenizer().count(&summary)?;
        }
    }
    let secs = report.seconds.max(1e-9);
    let stats = Stats {
        report: &report,
        model: model_id.clone(),
        version: version.clone(),
        generated_tokens,
        summaries_per_s: report.computed as f64 / secs,
        generated_tokens_per_s: generated_tokens as f64 / secs,
    };
    println!("stats {}", serde_json::to_string(&stats)?);
    eprintln!(
        "{} users: {} done before, {} computed ({} because the profile changed) in {:.1}s, {} with an empty profile skipped, {} failed",
        report.users,
        report.done_before,
        report.computed,
        report.resummarised,
        report.seconds,
        report.skipped_empty,
        report.failed
    );
    if let Some(path) = &args.export {
        let n = store.export_jsonl(path, &model_id, &version)?;
        eprintln!("wrote {n} summaries to {}", path.display());
    }
    if !report.failures.is_empty() {
        for f in &report.failures {
            eprintln!("failed: {f}");
        }
        anyhow::bail!(
            "{} of {} summaries failed; a rerun retries only those",
            report.failed,
            report.users
        );
    }
    Ok(())
}
