//! `pgraphrag lamp prompts`: LaMP's retrieval-augmented prompts for one questions file, exact
//! to `LaMP/prompts/prompts.py` (BM25 over `str.split()`, rank_bm25's tie order, the token
//! budget and its 0.6-factor retries), optionally with user summaries (summary-augmented LaMP).
//!
//! The run is `pgraphrag_runs::lamp::PromptsSpec` (the recipe: `pgraphrag_eval::lamp`), which
//! writes one JSON line per question: `{"task", "id", "k", "max_length", "query", "ranked_ids",
//! "prompt"}`. The summary on stdout counts the prompts and the inputs returned unchanged, by
//! reason. See `docs/lamp.md`.
use std::path::PathBuf;

use pgraphrag_core::LampTask;
use pgraphrag_runs::lamp::PromptsSpec;

use crate::common::lamp::PlacementArg;

/// Arguments of `pgraphrag lamp`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: LampCommand,
}

#[derive(clap::Subcommand, Debug)]
enum LampCommand {
    /// Build LaMP's prompts (BM25 top-k, token budget) for every question of a questions file.
    Prompts(PromptsArgs),
    /// Run the summary-augmented paper's Table 3 grid (base_k0/1/4, sum_k0/1) with a local model.
    Grid(crate::lamp_grid_cmd::GridArgs),
    /// Trivial baselines (no model) on a grid's questions, scored as the grid scores, and the
    /// strongest against the grid's best cell, paired per question.
    Baselines(crate::lamp_baselines_cmd::BaselinesArgs),
    /// Recompute a grid's table from its predictions files (no model).
    Rescore(crate::lamp_rescore_cmd::RescoreArgs),
}

#[derive(clap::Args, Debug)]
struct PromptsArgs {
    /// A LaMP questions file (`*_questions.json`, or the Avocado builder's wrapped form).
    #[arg(long)]
    questions: PathBuf,
    /// The task: LaMP-1, LaMP-2, LaMP-2-old, LaMP-3, LaMP-4, LaMP-5, LaMP-6 or LaMP-7.
    #[arg(long, value_parser = crate::args::lamp_task)]
    task: LampTask,
    /// How many profile items to retrieve.
    #[arg(long)]
    k: usize,
    /// The Hugging Face `tokenizer.json` of the downstream model (budgets are in its tokens).
    #[arg(long)]
    tokenizer: PathBuf,
    /// The downstream model's input length in tokens (LaMP uses 512).
    #[arg(long, allow_negative_numbers = true)]
    max_length: i64,
    /// User summaries as JSON lines `{"id": user, "summary": text}` (`pgraphrag summarize
    /// --export`); the user is the question's `user_id`, else its `id`.
    #[arg(long)]
    summaries: Option<PathBuf>,
    /// Where a summary goes.
    #[arg(long, value_enum, default_value = "prefix")]
    summary_placement: PlacementArg,
    /// Summaries per `user` (`user_id`, else the question id; LaMP's one question per user) or
    /// per `question` (several questions per user, each with its own time-ordered profile).
    #[arg(long, default_value = "user", value_parser = crate::args::summary_scope)]
    summary_scope: pgraphrag_core::SummaryScope,
    /// Turn off transformers' `clean_up_tokenization` in decoding (on in transformers 4.27.1,
    /// LaMP's pin; a tokenizer_config.json may turn it off).
    #[arg(long)]
    no_clean_up_tokenization_spaces: bool,
    /// The output JSON Lines file (written atomically).
    #[arg(long)]
    out: PathBuf,
}

/// Runs `pgraphrag lamp ...`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        LampCommand::Prompts(a) => prompts(a),
        LampCommand::Grid(a) => crate::lamp_grid_cmd::run(a),
        LampCommand::Baselines(a) => crate::lamp_baselines_cmd::run(a),
        LampCommand::Rescore(a) => crate::lamp_rescore_cmd::run(a),
    }
}

fn prompts(a: PromptsArgs) -> anyhow::Result<()> {
    let mut inputs = vec![
        ("--questions", a.questions.as_path()),
        ("--tokenizer", &a.tokenizer),
    ];
    if let Some(p) = &a.summaries {
        inputs.push(("--summaries", p));
    }
    crate::output::file("--out", &a.out, &inputs)?;
    let spec = PromptsSpec {
        questions: a.questions.clone(),
        task: a.task,
        tokenizer: a.tokenizer.clone(),
        clean_up_tokenization_spaces: !a.no_clean_up_tokenization_spaces,
        k: a.k,
        max_length: a.max_length,
        summaries: a.summaries.clone(),
        summary_placement: a.summary_placement.into(),
        summary_scope: a.summary_scope,
        out: a.out.clone(),
    };
    let stats = spec.run()?;
    println!(
        "{} questions, {} prompts built ({} after a smaller budget factor, {} with a summary), {} inputs returned unchanged: {} empty profile, {} every BM25 document empty, {} no query, {} missing field, {} no prompt fits max_length -> {}",
        stats.questions,
        stats.built,
        stats.retried,
        stats.with_summary,
        stats.unchanged(),
        stats.empty_profile,
        stats.empty_documents,
        stats.no_query,
        stats.missing_field,
        stats.budget,
        a.out.display()
    );
    Ok(())
}
