//! The multistage writing paper's Table 2 grid on one split of an examples file with a local
//! GGUF model: the rankers (BM25, recency, MiniLM for the dense ones), keywords, the LLM
//! summaries and syntheses and every cell's answers through the resumable generation cache,
//! BLEU and ROUGE with bootstrap intervals and paired t-tests against `ImmedCtx` and
//! `RankDocBM25`.
use std::path::PathBuf;
use std::time::Instant;

use pgraphrag_core::Progress;
use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_eval::multistage::{
    GridRun, LlmStages, MultistageGrid, Prepared, Preparer, PrependStart, RankerName,
    SummaryLabeler, SynthesisLabeler, parse_cells, parse_summary, summary_name, table2_cells,
    train_idf,
};
use pgraphrag_eval::{CachedGenerator, GenerationCache, Journal, RunDir};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_retrieval::dense::Precision;
use pgraphrag_stages::LlmSummarizer;
use pgraphrag_stages::multistage::{
    ContextMode, DenseSimilarity, Keywords, LlmContextStage, WordFilter, WordMatcher, stage_prompt,
    synthesis_prompt,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::setup::{
    Rankers, Warm, load_dense, load_examples, load_wordnet, split_examples, warm_dense,
};
use crate::{Error, Result, summary_budget};

/// The grid of the paper's Table 2 on one split (`pgraphrag multistage run`). Writes
/// `results.md`, `results.csv`, `results.svg`, `results.json`, `stages.jsonl` and
/// `predictions/<cell>.jsonl` into [`RunSpec::out`]; a rerun generates only what the cache
/// lacks.
///
/// ```
/// use pgraphrag_corpora::lamp::SplitName;
/// use pgraphrag_runs::multistage::RunSpec;
/// let spec = RunSpec::paper("runs/mail/examples.jsonl", "models/llm.gguf", "models/minilm", "runs/grid");
/// assert_eq!((spec.split, spec.max_tokens, spec.summary_tokens), (SplitName::Test, 256, 128));
/// let json = serde_json::to_value(&spec)?;
/// assert_eq!(json["prepend_start"], "paper");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The examples file of `pgraphrag multistage build`.
    pub examples: PathBuf,
    /// The local GGUF model for every cell and stage.
    pub model: PathBuf,
    /// The output folder.
    pub out: PathBuf,
    /// The part of the user split evaluated.
    pub split: SplitName,
    /// Only the first N examples of the split.
    pub limit: Option<usize>,
    /// Cell names (`ImmedCtx`, …, `SynCtx`; `+start` / `-start` to prepend the passage start
    /// or not); `None`: all of Table 2.
    pub cells: Option<Vec<String>>,
    /// Which cells get the passage start prepended when a cell name does not say.
    #[serde(with = "crate::names")]
    pub prepend_start: PrependStart,
    /// The ranker under the summary and synthesis cells (`None`: the best retrieval cell by
    /// ROUGE-1).
    #[serde(with = "crate::names::option")]
    pub best_ranker: Option<RankerName>,
    /// The summary under the synthesis cells, `SumCtxInd` or `SumCtx` (`None`: the best by
    /// ROUGE-1).
    pub best_summary: Option<String>,
    /// New tokens per generated document.
    pub max_tokens: usize,
    /// Sampling temperature (0 = greedy).
    pub temperature: f64,
    /// New tokens per LLM summary.
    pub summary_tokens: usize,
    /// New tokens per LLM synthesis (a word list).
    pub synthesis_tokens: usize,
    /// The LLM stages' context in tokens (prompt and answer).
    pub stage_context: usize,
    /// Distinct prompts per model call.
    pub batch: usize,
    /// The dense encoder of RankDocDense, RankSnippet and RankDocBySnpt (and of the labels).
    pub encoder: PathBuf,
    /// The encoder's linear layers.
    #[serde(with = "crate::names")]
    pub encoder_precision: Precision,
    /// WordNet 3.0 for the synthesis weak label (needed with [`RunSpec::labels`]).
    pub wordnet: Option<PathBuf>,
    /// Also compute the summary and synthesis weak labels into `stages.jsonl`.
    pub labels: bool,
    /// The generation cache (`None`: `OUT/cache.sqlite`).
    pub cache: Option<PathBuf>,
    /// Append `stored <cache key>` to this file right after each answer is committed.
    pub journal: Option<PathBuf>,
}

/// What a [`RunSpec`] run did (its files are in [`RunSpec::out`]).
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The results table's Markdown (`results.md`).
    pub markdown: String,
    /// Counts and seconds per stage (`results.json`'s `stats`).
    pub stats: serde_json::Value,
    /// Distinct prompts of the grid.
    pub distinct_prompts: usize,
    /// Of them, answered by the cache.
    pub cached: usize,
    /// Of them, generated.
    pub generated: usize,
    /// Model calls that generated.
    pub model_calls: usize,
}

impl RunSpec {
    /// The files written into [`RunSpec::out`] besides `predictions/`.
    pub const FILES: [&'static str; 5] = [
        "results.md",
        "results.csv",
        "results.svg",
        "results.json",
        "stages.jsonl",
    ];

    /// The paper's Table 2 on the test split: every cell, the passage start prepended to
    /// `LLMZeroShot` only, 256 new tokens per document, 128 per summary, 64 per synthesis, a
    /// 2,048-token stage context, greedy, f32 encoder.
    pub fn paper(
        examples: impl Into<PathBuf>,
        model: impl Into<PathBuf>,
        encoder: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
    ) -> RunSpec {
        RunSpec {
            examples: examples.into(),
            model: model.into(),
            out: out.into(),
            split: SplitName::Test,
            limit: None,
            cells: None,
            prepend_start: PrependStart::Paper,
            best_ranker: None,
            best_summary: None,
            max_tokens: 256,
            temperature: 0.0,
            summary_tokens: 128,
            synthesis_tokens: 64,
            stage_context: 2048,
            batch: 8,
            encoder: encoder.into(),
            encoder_precision: Precision::F32,
            wordnet: None,
            labels: false,
            cache: None,
            journal: None,
        }
    }

    /// Runs the grid and writes its files.
    pub fn run(&self, progress: &dyn Progress) -> Result<RunReport> {
        let t0 = Instant::now();
        let all = load_examples(&self.examples)?;
        let split = self.split;
        let examples = split_examples(&all, &self.examples, split, self.limit)?;
        let cells = match &self.cells {
            None => table2_cells(),
            Some(names) => parse_cells(names, self.prepend_start).map_err(Error::invalid)?,
        };
        let mut grid = MultistageGrid::new(cells);
        grid.params.max_tokens = self.max_tokens;
        grid.params.temperature = self.temperature;
        grid.batch = self.batch.max(1);
        grid.best_ranker = self.best_ranker;
        grid.best_summary = self
            .best_summary
            .as_deref()
            .map(parse_summary)
            .transpose()
            .map_err(Error::invalid)?;
        if !self.model.is_file() {
            return Err(Error::Setting(format!(
                "model file {} not found (scripts/fetch-llms.sh --smollm-only fetches SmolLM2)",
                self.model.display()
            )));
        }
        let wordnet = match (self.labels, &self.wordnet) {
            (false, _) => None,
            (true, Some(dir)) => Some(dir),
            (true, None) => {
                return Err(Error::Setting(
                    "the synthesis weak label needs WordNet 3.0 (wordnet)".into(),
                ));
            }
        };
        std::fs::create_dir_all(self.out.join("predictions"))
            .map_err(Error::work(format!("creating {}", self.out.display())))?;

        // The rankers, keywords and (with labels) weak labels.
        let mut rankers = grid.rankers_needed();
        let label_ranker = grid.best_ranker.unwrap_or(RankerName::RankDocBM25);
        if self.labels && !rankers.contains(&label_ranker) {
            rankers.push(label_ranker);
        }
        let needs_dense = self.labels || rankers.iter().any(|r| r.is_dense());
        let t_load = Instant::now();
        let dense = if needs_dense {
            let d = load_dense(
                &self.encoder,
                self.encoder_precision,
                Some(&self.out.join("embeddings.sqlite")),
            )?;
            warm_dense(
                &d,
                &examples,
                Warm::for_stages(&rankers, self.labels),
                progress,
            )?;
            Some(d)
        } else {
            None
        };
        let wordnet = wordnet.map(|d| load_wordnet(d)).transpose()?;
        let idf = if self.labels || grid.needs_keywords() {
            Some(train_idf(&all).map_err(Error::invalid)?)
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
        if let (true, Some(sim), Some(idf), Some(wn)) = (self.labels, &similarity, &idf, wordnet) {
            preparer = preparer
                .with_summary_label(SummaryLabeler::new(label_ranker, sim))
                .with_synthesis_label(SynthesisLabeler::new(
                    label_ranker,
                    WordFilter::paper(idf),
                    WordMatcher::new().synonyms(wn),
                ));
        }
        let (prepared, times) = preparer.prepare_all(&examples, progress)?;

        // The model, the cache, the LLM stages.
        let t_model = Instant::now();
        let model = GgufModel::load(&self.model, GgufOptions::default()).map_err(Error::work(
            format!("loading the GGUF model {}", self.model.display()),
        ))?;
        let model_seconds = t_model.elapsed().as_secs_f64();
        let cache_path = self
            .cache
            .clone()
            .unwrap_or_else(|| self.out.join("cache.sqlite"));
        if let Some(dir) = cache_path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(Error::work(format!("creating {}", dir.display())))?;
        }
        let model_id = model.cache_id();
        let mut generator = CachedGenerator::new(
            &model,
            model_id.clone(),
            GenerationCache::open(&cache_path).map_err(Error::invalid)?,
        );
        if let Some(path) = &self.journal {
            generator = generator.with_on_stored(Journal::open(path)?.into_hook());
        }
        let tok = model.tokenizer();
        let stage = |mode: ContextMode| -> Result<_> {
            Ok(LlmContextStage::new(
                LlmSummarizer::new(
                    &generator,
                    stage_prompt(mode),
                    tok,
                    summary_budget(&model, self.stage_context, self.summary_tokens)?,
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
                    summary_budget(&model, self.stage_context, self.synthesis_tokens)?,
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
        progress.note(&format!(
            "multistage run: {} {} examples of {}, {} cells, model {model_id}, cache {}",
            examples.len(),
            split.as_str(),
            self.examples.display(),
            grid.cells.len(),
            cache_path.display()
        ));
        let run = grid.run(&examples, &prepared, &generator, &stages, progress)?;
        let calls = generator.stats();

        // Tables, predictions, stages.
        let name = self
            .examples
            .parent()
            .and_then(|p| p.file_name())
            .map_or_else(
                || "examples".to_string(),
                |s| s.to_string_lossy().into_owned(),
            );
        let model_name = self
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
        let markdown = table.to_markdown();
        let dir = RunDir::new(&self.out);
        dir.write_results(&markdown, &table.to_results_table())?;
        let stats = json!({
            "examples": examples.len(),
            "split": split.as_str(),
            "cells": grid.cells.len(),
            "encoder_precision": needs_dense.then(|| self.encoder_precision.name()),
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
        let text = serde_json::to_string_pretty(&results_json)
            .map_err(Error::work("writing results.json"))?;
        dir.write("results.json", text.as_bytes())?;
        for (cell, records) in run.predictions(&examples)? {
            let mut text = String::new();
            for r in &records {
                text.push_str(&serde_json::to_string(r).map_err(Error::work("a prediction"))?);
                text.push('\n');
            }
            dir.write(
                PathBuf::from("predictions").join(format!("{cell}.jsonl")),
                text.as_bytes(),
            )?;
        }
        dir.write("stages.jsonl", stage_lines(&run, &prepared)?.as_bytes())?;
        Ok(RunReport {
            markdown,
            stats,
            distinct_prompts: run.stats.distinct_prompts,
            cached: run.stats.cached,
            generated: run.stats.generated,
            model_calls: calls.generated,
        })
    }
}

/// One JSON line per example: its ranked entries (doc ids, `#snippet` for a snippet entry),
/// keywords, LLM summaries and synthesis, and weak labels.
fn stage_lines(run: &GridRun, prepared: &[Prepared]) -> Result<String> {
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
            .map(|(m, v)| (summary_name(*m).to_string(), json!(v[j])))
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
        out.push_str(&serde_json::to_string(&line).map_err(Error::work("a stages line"))?);
        out.push('\n');
    }
    Ok(out)
}
