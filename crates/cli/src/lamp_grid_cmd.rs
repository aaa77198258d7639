//! `pgraphrag lamp grid`: the summary-augmented paper's Table 3 grid on one LaMP questions
//! file with a local GGUF model (`pgraphrag_runs::lamp::GridSpec` does the work): prompts for every
//! cell, generation through the resumable cache, LaMP's scores, bootstrap intervals, paired
//! t-tests against `base_k4`, and `results.md`, `results.csv`, `results.svg` and one LaMP
//! predictions file per cell and seed in `--out`.
use std::path::PathBuf;
use std::time::Instant;

use pgraphrag_runs::lamp::GridSpec;

use crate::common::lamp::{PlacementArg, ReadingArg};
use crate::progress::Bar;

/// Arguments of `pgraphrag lamp grid`.
#[derive(clap::Args, Debug)]
pub struct GridArgs {
    #[command(flatten)]
    rows: crate::common::lamp::RowsArgs,
    /// The local GGUF model answering the prompts.
    #[arg(long)]
    model: PathBuf,
    /// A LoRA adapter trained on --model (`pgraphrag train lora` on `pgraphrag lamp prompts`'
    /// training file): the fine-tuned regime. Part of the cache key.
    #[arg(long)]
    adapter: Option<PathBuf>,
    /// The `tokenizer.json` the token budget counts in (default: the model's own tokenizer).
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    /// User summaries as JSON lines `{"id", "summary"}` (`pgraphrag summarize --export`);
    /// needed by the `sum_*` cells.
    #[arg(long)]
    summaries: Option<PathBuf>,
    /// Comma-separated cells (`base_k<k>`, `sum_k<k>`); default: the paper's Table 3.
    #[arg(long, value_delimiter = ',')]
    configs: Option<Vec<String>>,
    /// The prompt's budget in tokens (the paper's FlanT5: 512).
    #[arg(long, default_value_t = 512)]
    max_length: i64,
    /// Where a summary goes.
    #[arg(long, value_enum, default_value = "prefix")]
    summary_placement: PlacementArg,
    /// Summaries per `user` (`user_id`, else the question id; LaMP's one question per user) or
    /// per `question` (several questions per user, each with its own time-ordered profile).
    #[arg(long, default_value = "user", value_parser = crate::args::summary_scope)]
    summary_scope: pgraphrag_core::SummaryScope,
    /// Only the first N questions.
    #[arg(long, value_parser = crate::args::at_least_one)]
    limit: Option<usize>,
    /// Comma-separated sampler seeds (with --temperature 0 every seed gives the same answers).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    seeds: Vec<u64>,
    /// Sampling temperature (0 = greedy).
    #[arg(long, default_value_t = 0.0, value_parser = crate::args::non_negative)]
    temperature: f64,
    /// New tokens per answer (default: 8 for labels, 32 for headlines and subjects, 96 for tweets).
    #[arg(long, value_parser = crate::args::at_least_one)]
    max_new_tokens: Option<usize>,
    /// How answers are read before scoring.
    #[arg(long, value_enum, default_value = "strict")]
    reading: ReadingArg,
    /// Distinct prompts per generation batch.
    #[arg(long, default_value_t = 8, value_parser = crate::args::at_least_one)]
    batch: usize,
    /// The generation cache (SQLite; a rerun generates only what is missing).
    #[arg(long, default_value = "runs/lamp-cache.sqlite")]
    cache: PathBuf,
    /// Output folder.
    #[arg(long, required_unless_present = "export_training")]
    out: Option<PathBuf>,
    /// Write the grid's supervised examples for fine-tuning to this file instead (JSON lines
    /// `{"id", "config", "prompt", "target"}`: every cell's prompt of every question, with its
    /// gold output; `pgraphrag train lora --data` reads them) and generate nothing. Export from
    /// the training questions; evaluate the adapter (--adapter) on other questions.
    #[arg(long, conflicts_with_all = ["out", "adapter"])]
    export_training: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Runs `pgraphrag lamp grid`.
pub fn run(a: GridArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let configs = crate::common::lamp::configs(a.configs.as_deref())?;
    let spec = GridSpec {
        questions: a.rows.questions.clone(),
        outputs: a.rows.outputs.clone(),
        task: a.rows.task,
        model: a.model.clone(),
        adapter: a.adapter.clone(),
        tokenizer: a.tokenizer.clone(),
        summaries: a.summaries.clone(),
        configs,
        max_length: a.max_length,
        summary_placement: a.summary_placement.into(),
        summary_scope: a.summary_scope,
        limit: a.limit,
        seeds: a.seeds.clone(),
        temperature: a.temperature,
        max_new_tokens: a.max_new_tokens,
        reading: a.reading.into(),
        batch: a.batch,
        cache: a.cache.clone(),
        out: a.out.clone().unwrap_or_default(),
    };
    if let Some(path) = &a.export_training {
        crate::output::file("--export-training", path, &inputs(&a))?;
        let n = spec.export_training(path, &Bar::new(a.quiet))?;
        eprintln!("wrote {n} training examples to {}", path.display());
        return Ok(());
    }
    check_outputs(&a, &spec)?;
    let report = spec.run(&Bar::new(a.quiet))?;
    println!("{}", report.markdown);
    eprintln!(
        "{} answers ({} cached, {} generated) in {:.0}s; wrote {}",
        report.answers,
        report.cached,
        report.generated,
        t0.elapsed().as_secs_f64(),
        spec.out.display()
    );
    Ok(())
}

/// The input files, with their flags, that no output may be.
fn inputs(a: &GridArgs) -> Vec<crate::output::Input<'_>> {
    let mut inputs = vec![
        ("--questions", a.rows.questions.as_path()),
        ("--outputs", &a.rows.outputs),
        ("--model", &a.model),
        ("--cache", &a.cache),
    ];
    for (flag, p) in [
        ("--adapter", &a.adapter),
        ("--tokenizer", &a.tokenizer),
        ("--summaries", &a.summaries),
    ] {
        if let Some(p) = p {
            inputs.push((flag, p));
        }
    }
    inputs
}

/// Refuses, before the model loads, an --out folder whose files (`results.*`, each cell's and
/// seed's outputs file) would be an input, a link or not a regular file.
fn check_outputs(a: &GridArgs, spec: &GridSpec) -> anyhow::Result<()> {
    let files = spec.output_files();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    crate::output::folder("--out", &spec.out, &files, &inputs(a))
}
