//! `pgraphrag multistage run`: the multistage writing paper's Table 2 grid on one split of a
//! `multistage build` examples file with a local GGUF model (`pgraphrag_eval::multistage` does
//! the work): the rankers (BM25, recency, MiniLM for the dense ones), keywords, the LLM
//! summaries and syntheses and every cell's answers through the resumable generation cache,
//! BLEU and ROUGE with bootstrap intervals and paired t-tests against `ImmedCtx` and
//! `RankDocBM25`. Writes `results.md`, `results.csv`, `results.svg`, `results.json`,
//! `stages.jsonl` and `predictions/<cell>.jsonl` into `--out`, prints the table and a
//! `stats {...}` line. See `docs/multistage.md`, "Grid".
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::ValueEnum;
use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_corpora::multistage::Example;
use pgraphrag_eval::multistage::{
    LlmStages, MultistageGrid, Preparer, PrependStart, RankerName, SummaryLabeler,
    SynthesisLabeler, parse_cells, parse_summary, table2_cells, train_idf,
};
use pgraphrag_eval::{CachedGenerator, GenerationCache, Journal, RunDir};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_stages::multistage::{
    ContextMode, DenseSimilarity, Keywords, LlmContextStage, WordFilter, WordMatcher, stage_prompt,
    synthesis_prompt,
};
use pgraphrag_stages::{Budget, LlmSummarizer};
use serde_json::json;

use crate::common::multistage::{
    Rankers, Warm, load_dense, load_examples, load_wordnet, warm_dense,
};
use crate::common::summarizer::summary_budget;
use crate::error::{OrUsage, usage};
use crate::progress::Bar;

/// A part of the user split (`--split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SplitArg {
    /// Training users.
    Train,
    /// Validation users.
    Dev,
    /// Test users (the paper's Table 2).
    Test,
}

impl From<SplitArg> for SplitName {
    fn from(s: SplitArg) -> Self {
        match s {
            SplitArg::Train => SplitName::Train,
            SplitArg::Dev => SplitName::Dev,
            SplitArg::Test => SplitName::Test,
        }
    }
}

/// Which cells get the passage start prepended to their output (`--prepend-start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrependArg {
    /// As the paper: LLMZeroShot only.
    Paper,
    /// Every cell.
    All,
    /// No cell.
    None,
}

impl From<PrependArg> for PrependStart {
    fn from(p: PrependArg) -> Self {
        match p {
            PrependArg::Paper => PrependStart::Paper,
            PrependArg::All => PrependStart::All,
            PrependArg::None => PrependStart::None,
        }
    }
}

/// Arguments of `pgraphrag multistage run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The examples file of `pgraphrag multistage build` (DIR/examples.jsonl).
    #[arg(long)]
    pub examples: PathBuf,
    /// The local GGUF model for every cell and stage (e.g. models/SmolLM2-135M-Instruct.Q4_1.gguf).
    #[arg(long)]
    pub model: PathBuf,
    /// Output folder: results.md/csv/svg/json, stages.jsonl, predictions/<cell>.jsonl.
    #[arg(long)]
    pub out: PathBuf,
    /// The part of the user split evaluated.
    #[arg(long, value_enum, default_value = "test")]
    pub split: SplitArg,
    /// Only the first N examples of the split.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Comma-separated cells (ImmedCtx, LLMZeroShot, RecentDoc, RankDocBM25, RankDocDense,
    /// RankSnippet, RankDocBySnpt, SumCtxInd, SumCtx, SynCtxInd, SynCtx; `+start` / `-start`
    /// to prepend the passage start or not); default: all of Table 2.
    #[arg(long, value_delimiter = ',')]
    pub cells: Option<Vec<String>>,
    /// Which cells get the passage start prepended when a cell name does not say.
    #[arg(long, value_enum, default_value = "paper")]
    pub prepend_start: PrependArg,
    /// The ranker under the summary and synthesis cells (default: the best retrieval cell by ROUGE-1).
    #[arg(long)]
    pub best_ranker: Option<String>,
    /// The summary under the synthesis cells, SumCtxInd or SumCtx (default: the best by ROUGE-1).
    #[arg(long)]
    pub best_summary: Option<String>,
    /// New tokens per generated document.
    #[arg(long, default_value_t = 256, value_parser = crate::args::at_least_one)]
    pub max_tokens: usize,
    /// Sampling temperature (0 = greedy).
    #[arg(long, default_value_t = 0.0, value_parser = crate::args::non_negative)]
    pub temperature: f64,
    /// New tokens per LLM summary.
    #[arg(long, default_value_t = 128, value_parser = crate::args::at_least_one)]
    pub summary_tokens: usize,
    /// New tokens per LLM synthesis (a word list).
    #[arg(long, default_value_t = 64, value_parser = crate::args::at_least_one)]
    pub synthesis_tokens: usize,
    /// The LLM stages' context in tokens (prompt and answer; past passages that do not fit are dropped).
    #[arg(long, default_value_t = 2048, value_parser = crate::args::at_least_one)]
    pub stage_context: usize,
    /// Distinct prompts per model call.
    #[arg(long, default_value_t = 8, value_parser = crate::args::at_least_one)]
    pub batch: usize,
    /// The dense encoder of RankDocDense, RankSnippet and RankDocBySnpt (and of --labels).
    #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
    pub encoder: PathBuf,
    /// The encoder's linear layers: f32, or int8 (quantized at load; about twice as fast with
    /// AVX-512 VNNI, mean cosine 0.999 to f32; its embeddings are cached apart; docs/dense.md).
    #[arg(long, default_value = "f32")]
    pub encoder_precision: pgraphrag_retrieval::dense::Precision,
    /// WordNet 3.0 for the synthesis weak label of --labels (default: the METEOR search list).
    #[arg(long)]
    pub wordnet: Option<PathBuf>,
    /// Also compute the summary and synthesis weak labels into stages.jsonl.
    #[arg(long)]
    pub labels: bool,
    /// The generation cache (default: OUT/cache.sqlite; a rerun generates only what is missing).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Append `stored <cache key>` to this file right after each answer is committed.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `pgraphrag multistage run`.
pub fn run(a: RunArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    check_outputs(&a)?;
    let all = load_examples(&a.examples)?;
    let split: SplitName = a.split.into();
    let mut examples: Vec<Example> = all.iter().filter(|e| e.split == split).cloned().collect();
    if let Some(n) = a.limit {
        examples.truncate(n);
    }
    if examples.is_empty() {
        return Err(usage(format!(
            "{} has no {} examples",
            a.examples.display(),
            split.as_str()
        )));
    }
    let cells = match &a.cells {
        None => table2_cells(),
        Some(names) => parse_cells(names, a.prepend_start.into()).or_usage()?,
    };
    let mut grid = MultistageGrid::new(cells);
    grid.params.max_tokens = a.max_tokens;
    grid.params.temperature = a.temperature;
    grid.batch = a.batch.max(1);
    grid.best_ranker = a
        .best_ranker
        .as_deref()
        .map(str::parse)
        .transpose()
        .or_usage()?;
    grid.best_summary = a
        .best_summary
        .as_deref()
        .map(parse_summary)
        .transpose()
        .or_usage()?;
    if !a.model.is_file() {
        return Err(usage(format!(
            "model file {} not found (scripts/fetch-llms.sh --smollm-only fetches SmolLM2)",
            a.model.display()
        )));
    }
    std::fs::create_dir_all(a.out.join("predictions"))
        .with_context(|| format!("creating {}", a.out.display()))?;

    // The rankers, keywords and (with --labels) weak labels.
    let mut rankers = grid.rankers_needed();
    let label_ranker = grid.best_ranker.unwrap_or(RankerName::RankDocBM25);
    if a.labels && !rankers.contains(&label_ranker) {
        rankers.push(label_ranker);
    }
    let needs_dense = a.labels || rankers.iter().any(|r| r.is_dense());
    let bar = Bar::new(a.quiet);
    let t_load = Instant::now();
    let dense = if needs_dense {
        let d = load_dense(
            &a.encoder,
            a.encoder_precision,
            Some(&a.out.join("embeddings.sqlite")),
        )?;
        warm_dense(&d, &examples, Warm::for_stages(&rankers, a.labels), &bar)?;
        Some(d)
    } else {
        None
    };
    let wordnet = if a.labels {
        Some(load_wordnet(a.wordnet.as_deref())?)
    } else {
        None
    };
    let idf = if a.labels || grid.needs_keywords() {
        Some(train_idf(&all).or_usage()?)
    } else {
        None
    };
    let encoder_seconds = t_load.elapsed().as_secs_f64();
    let all_rankers = Rankers::new(dense.as_ref());
    let mut preparer = Preparer::new(all_rankers.pick(&rankers)?);
    if let (true, Some(idf)) = (grid.needs_keywords(), &idf) {
        preparer = preparer.with_keywords(Keywords::new(WordFilter::paper(idf)));
    }
    let similarity = dense.as_ref().map(DenseSimilarity);
    if let (true, Some(sim), Some(idf), Some(wn)) = (a.labels, &similarity, &idf, wordnet) {
        preparer = preparer
            .with_summary_label(SummaryLabeler::new(label_ranker, sim))
            .with_synthesis_label(SynthesisLabeler::new(
                label_ranker,
                WordFilter::paper(idf),
                WordMatcher::new().synonyms(wn),
            ));
    }
    let (prepared, times) = preparer.prepare_all(&examples, &bar)?;

    // The model, the cache, the LLM stages.
    let t_model = Instant::now();
    let model = GgufModel::load(&a.model, GgufOptions::default())
        .with_context(|| format!("loading the GGUF model {}", a.model.display()))?;
    let model_seconds = t_model.elapsed().as_secs_f64();
    let cache_path = a
        .cache
        .clone()
        .unwrap_or_else(|| a.out.join("cache.sqlite"));
    if let Some(dir) = cache_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let model_id = model.cache_id();
    let mut generator = CachedGenerator::new(
        &model,
        model_id.clone(),
        GenerationCache::open(&cache_path).or_usage()?,
    );
    if let Some(path) = &a.journal {
        generator = generator.with_on_stored(Journal::open(path)?.into_hook());
    }
    let tok = model.tokenizer();
    let budget =
        |n: usize| -> anyhow::Result<Budget> { summary_budget(&model, a.stage_context, n) };
    let stage = |mode: ContextMode| -> anyhow::Result<_> {
        Ok(LlmContextStage::new(
            LlmSummarizer::new(
                &generator,
                stage_prompt(mode),
                tok,
                budget(a.summary_tokens)?,
            ),
            mode,
        ))
    };
    let needed = grid.summaries_needed();
    let ind = match needed.contains(&ContextMode::Independent) {
        true => Some(stage(ContextMode::Independent)?),
        false => None,
    };
    let dep = match needed.contains(&ContextMode::Dependent) {
        true => Some(stage(ContextMode::Dependent)?),
        false => None,
    };
    let syn = match grid.needs_synthesis() {
        true => Some(LlmContextStage::new(
            LlmSummarizer::new(
                &generator,
                synthesis_prompt(),
                tok,
                budget(a.synthesis_tokens)?,
            ),
            ContextMode::Dependent,
        )),
        false => None,
    };
    let stages = LlmStages {
        summary_independent: ind.as_ref().map(|s| s as _),
        summary_dependent: dep.as_ref().map(|s| s as _),
        synthesis: syn.as_ref().map(|s| s as _),
    };
    eprintln!(
        "multistage run: {} {} examples of {}, {} cells, model {model_id}, cache {}",
        examples.len(),
        split.as_str(),
        a.examples.display(),
        grid.cells.len(),
        cache_path.display()
    );
    let run = grid.run(&examples, &prepared, &generator, &stages, &bar)?;
    let calls = generator.stats();

    // Tables, predictions, stages.
    let name = a.examples.parent().and_then(|p| p.file_name()).map_or_else(
        || "examples".to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    let model_name = a
        .model
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let title = format!(
        "{name} {} ({} examples), {model_name} zero-shot",
        split.as_str(),
        examples.len()
    );
    let table = grid.results(&title, &examples, &run)?;
    let md = table.to_markdown();
    let rt = table.to_results_table();
    RunDir::new(&a.out).write_results(&md, &rt)?;
    let stats = json!({
        "examples": examples.len(),
        "split": split.as_str(),
        "cells": grid.cells.len(),
        "encoder_precision": needs_dense.then(|| a.encoder_precision.name()),
        "grid": run.stats,
        "model_calls": calls,
        "seconds": {
            "encoder": encoder_seconds,
            "prepare": times,
            "model_load": model_seconds,
            "generation": run.stats.generation_seconds,
            "stages": run.stats.stage_seconds,
            "total": t0.elapsed().as_secs_f64(),
        },
    });
    let results_json = json!({ "table": table, "stats": stats });
    crate::output::write(
        &a.out.join("results.json"),
        serde_json::to_string_pretty(&results_json)?.as_bytes(),
    )?;
    for (cell, records) in run.predictions(&examples)? {
        let mut text = String::new();
        for r in &records {
            text.push_str(&serde_json::to_string(r)?);
            text.push('\n');
        }
        crate::output::write(
            &a.out.join("predictions").join(format!("{cell}.jsonl")),
            text.as_bytes(),
        )?;
    }
    crate::output::write(
        &a.out.join("stages.jsonl"),
        stage_lines(&run, &prepared)?.as_bytes(),
    )?;
    println!("{md}");
    println!("stats {}", serde_json::to_string(&stats)?);
    eprintln!(
        "{} distinct prompts ({} cached, {} generated), {} model calls generated in {:.0}s; wrote {}",
        run.stats.distinct_prompts,
        run.stats.cached,
        run.stats.generated,
        calls.generated,
        t0.elapsed().as_secs_f64(),
        a.out.display()
    );
    Ok(())
}

/// Refuses, before anything is read or loaded, an --out folder whose result files would be an
/// input, a link or not a regular file, and such a --journal.
fn check_outputs(a: &RunArgs) -> anyhow::Result<()> {
    let mut inputs = vec![
        ("--examples", a.examples.as_path()),
        ("--model", &a.model),
        ("--encoder", &a.encoder),
    ];
    for (flag, p) in [("--wordnet", &a.wordnet), ("--cache", &a.cache)] {
        if let Some(p) = p {
            inputs.push((flag, p));
        }
    }
    let files = [
        "results.md",
        "results.csv",
        "results.svg",
        "results.json",
        "stages.jsonl",
    ];
    crate::output::folder("--out", &a.out, &files, &inputs)?;
    crate::output::optional("--journal", a.journal.as_deref(), &inputs)
}

/// One JSON line per example: its ranked entries (doc ids, `#snippet` for a snippet entry),
/// keywords, LLM summaries and synthesis, and weak labels.
fn stage_lines(
    run: &pgraphrag_eval::multistage::GridRun,
    prepared: &[pgraphrag_eval::multistage::Prepared],
) -> anyhow::Result<String> {
    let mut out = String::new();
    for (j, p) in prepared.iter().enumerate() {
        let ranked: serde_json::Map<String, serde_json::Value> = p
            .ranked
            .iter()
            .map(|(r, c)| {
                let ids: Vec<String> = c
                    .entries
                    .iter()
                    .map(|e| match e.snippet {
                        Some(s) => format!("{}#{s}", p.past[e.doc].doc_id),
                        None => p.past[e.doc].doc_id.clone(),
                    })
                    .collect();
                (r.name().to_string(), json!(ids))
            })
            .collect();
        let summaries: serde_json::Map<String, serde_json::Value> = run
            .summaries
            .iter()
            .map(|(m, v)| {
                (
                    pgraphrag_eval::multistage::summary_name(*m).to_string(),
                    json!(v[j]),
                )
            })
            .collect();
        let line = json!({
            "id": p.id,
            "ranked": ranked,
            "keywords": p.keywords,
            "summaries": summaries,
            "synthesis": run.syntheses.as_ref().map(|s| s[j].clone()),
            "summary_label": p.summary_label.as_ref().map(|l| l.text.clone()),
            "synthesis_label": p.synthesis_label.as_ref().map(|l| l.text.clone()),
        });
        out.push_str(&serde_json::to_string(&line)?);
        out.push('\n');
    }
    Ok(out)
}
