//! `pgraphrag lamp grid`: the summary-augmented paper's Table 3 grid on one LaMP questions
//! file with a local GGUF model (`pgraphrag_eval::lamp_grid` does the work): prompts for every
//! cell, generation through the resumable cache, LaMP's scores, bootstrap intervals, paired
//! t-tests against `base_k4`, and `results.md`, `results.csv`, `results.svg` and one LaMP
//! predictions file per cell and seed in `--out`.
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use pgraphrag_core::{LampGold, LampTask};
use pgraphrag_eval::lamp_grid::{LampConfig, LampGrid, table3_configs};
use pgraphrag_eval::{CachedGenerator, GenerationCache};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_prompt::lamp::{HfTokenizer, LampTokenizer};

use crate::common::lamp::{PlacementArg, ReadingArg, read_summaries};
use crate::error::{OrUsage, usage};
use crate::progress::Bar;

/// Arguments of `pgraphrag lamp grid`.
#[derive(clap::Args, Debug)]
pub struct GridArgs {
    /// A LaMP questions file.
    #[arg(long)]
    questions: PathBuf,
    /// Its outputs file (`{"task", "golds": [{id, output}]}`).
    #[arg(long)]
    outputs: PathBuf,
    /// The task: LaMP-1 … LaMP-7 or LaMP-2-old.
    #[arg(long, value_parser = crate::args::lamp_task)]
    task: LampTask,
    /// The local GGUF model answering the prompts.
    #[arg(long)]
    model: PathBuf,
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
    #[arg(long)]
    out: PathBuf,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Runs `pgraphrag lamp grid`.
pub fn run(a: GridArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let configs: Vec<LampConfig> = match &a.configs {
        None => table3_configs(),
        Some(names) => names
            .iter()
            .map(|n| n.parse::<LampConfig>())
            .collect::<Result<_, _>>()
            .or_usage()?,
    };
    check_outputs(&a, &configs)?;
    let mut questions = pgraphrag_data::lamp::read_questions_for(&a.questions, a.task)
        .with_context(|| format!("reading the {} questions file", a.task))
        .or_usage()?;
    if questions.is_empty() {
        return Err(usage(format!(
            "{}: no questions (an empty list); there is nothing to score",
            a.questions.display()
        )));
    }
    if let Some(n) = a.limit {
        questions.truncate(n);
    }
    let golds = pgraphrag_data::lamp::read_outputs_for(&a.outputs, a.task)
        .context("reading the outputs file")
        .or_usage()?;
    let gold_ids: std::collections::HashSet<&str> = golds.iter().map(|g| g.id.as_str()).collect();
    if let Some(q) = questions.iter().find(|q| !gold_ids.contains(q.id.as_str())) {
        return Err(usage(format!(
            "question {:?} of {} has no gold in {}",
            q.id,
            a.questions.display(),
            a.outputs.display()
        )));
    }
    let summaries: Option<HashMap<String, String>> = match &a.summaries {
        Some(p) => Some(read_summaries(p).or_usage()?),
        None => None,
    };
    if !a.model.is_file() {
        return Err(usage(format!(
            "model file {} not found (scripts/fetch-llms.sh --smollm-only fetches SmolLM2)",
            a.model.display()
        )));
    }
    // A tokenizer of its own is read before the model loads (a bad one is found in a moment).
    let own_tok = match &a.tokenizer {
        Some(p) => Some(
            HfTokenizer::from_file(p)
                .with_context(|| format!("loading {}", p.display()))
                .or_usage()?,
        ),
        None => None,
    };
    let model = GgufModel::load(&a.model, GgufOptions::default())
        .with_context(|| format!("loading the GGUF model {}", a.model.display()))?;
    let tok: HfTokenizer = match own_tok {
        Some(t) => t,
        // Byte-level BPE decodes exactly: no transformers clean-up.
        None => HfTokenizer::from_tokenizer(model.tokenizer().inner().clone())
            .with_clean_up_tokenization_spaces(false),
    };

    let mut grid = LampGrid::new(a.task, configs);
    grid.max_length = a.max_length;
    grid.placement = a.summary_placement.into();
    grid.scope = a.summary_scope;
    grid.batch = a.batch;
    grid.params.temperature = a.temperature;
    if let Some(n) = a.max_new_tokens {
        grid.params.max_tokens = n;
    }
    grid.reading = a.reading.into();
    let plan = grid
        .plan(&questions, &tok as &dyn LampTokenizer, summaries.as_ref())
        .or_usage()?;
    for (config, _, s) in &plan.cells {
        eprintln!(
            "{config}: {} prompts built, {} with a summary, {} inputs returned unchanged",
            s.built,
            s.with_summary,
            s.unchanged()
        );
    }

    if let Some(dir) = a.cache.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let model_id = model.cache_id();
    let cache = GenerationCache::open(&a.cache).or_usage()?;
    let generator = CachedGenerator::new(model, model_id, cache);
    let bar = Bar::new(a.quiet);
    let runs = grid.run(&plan, &generator, &a.seeds, &bar)?;
    let stats = generator.stats();

    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let stem = a
        .questions
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    for r in &runs {
        let preds: Vec<LampGold> = plan
            .ids
            .iter()
            .zip(&r.outputs)
            .map(|(id, o)| LampGold {
                id: id.clone(),
                output: o.clone(),
            })
            .collect();
        let path = a
            .out
            .join(format!("{}-seed{}_outputs.json", r.config, r.seed));
        pgraphrag_data::lamp::write_outputs(&path, a.task, &preds)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let title = format!("{} {stem} ({} questions)", a.task, questions.len());
    let table = grid.results(&title, &plan, &runs, &golds)?;
    let md = table.to_markdown();
    let rt = table.to_results_table();
    pgraphrag_eval::RunDir::new(&a.out).write_results(&md, &rt)?;
    println!("{md}");
    eprintln!(
        "{} answers ({} cached, {} generated) in {:.0}s; wrote {}",
        runs.iter().map(|r| r.outputs.len()).sum::<usize>(),
        stats.hits,
        stats.generated,
        t0.elapsed().as_secs_f64(),
        a.out.display()
    );
    Ok(())
}

/// Refuses, before the model loads, an --out folder whose files (`results.*`, each cell's and
/// seed's outputs file) would be an input, a link or not a regular file.
fn check_outputs(a: &GridArgs, configs: &[LampConfig]) -> anyhow::Result<()> {
    let mut inputs = vec![
        ("--questions", a.questions.as_path()),
        ("--outputs", &a.outputs),
        ("--model", &a.model),
        ("--cache", &a.cache),
    ];
    for (flag, p) in [("--tokenizer", &a.tokenizer), ("--summaries", &a.summaries)] {
        if let Some(p) = p {
            inputs.push((flag, p));
        }
    }
    let mut files: Vec<String> = pgraphrag_eval::RunDir::RESULTS.map(String::from).to_vec();
    for c in configs {
        for s in &a.seeds {
            files.push(format!("{c}-seed{s}_outputs.json"));
        }
    }
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    crate::output::folder("--out", &a.out, &files, &inputs)
}
