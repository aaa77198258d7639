//! `pgraphrag summarize`: the offline user summaries of summary-augmented LaMP (Richardson et
//! al.) for one LaMP questions file, with a local GGUF model, into a resumable summary store.
//!
//! The run is `pgraphrag_runs::lamp::SummarizeSpec` (the task's Table 2 prompt, the fitting
//! budget, every user the store lacks summarised and committed as it finishes); this module
//! maps the flags and prints `stats {...}` on stdout. See `docs/stages.md`.
use std::path::PathBuf;

use pgraphrag_core::LampTask;
use pgraphrag_runs::lamp::SummarizeSpec;

use crate::common::summarizer::SummarizerArgs;
use crate::progress::Bar;

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
    let o = &args.summarizer;
    let spec = SummarizeSpec {
        input: args.input.clone(),
        task: args.task,
        model: args.model.clone(),
        store: args.store.clone(),
        export: args.export.clone(),
        limit: o.limit,
        batch: o.batch,
        max_new_tokens: o.max_new_tokens,
        context: o.context,
        new_config: o.new_config,
        scope: o.summary_scope,
        journal: args.journal.clone(),
    };
    let report = spec.run(&Bar::new(args.quiet))?;
    println!("stats {}", serde_json::to_string(&report)?);
    Ok(report.complete()?)
}
