//! Running the Table 2 grid: prompts per cell, the LLM stages and every generation through the
//! cache, phase by phase.
use std::collections::HashMap;
use std::time::Instant;

use pgraphrag_core::{Generator, Progress, Prompt};
use pgraphrag_corpora::multistage::Example;
use pgraphrag_stages::multistage::{
    ContextMode, ContextSummarizer, InputFormat, PaperFormat, join_words, parse_words,
};
use serde::Serialize;

use super::plan::{BestChoice, MultistageGrid};
use super::score::score_cell;
use super::start::{document_start, prepend_start, stage_error};
use super::{Cell, CellKind, Prepared, RankerName, SectionInputs, summary_name};
use crate::{CachedGenerator, Error, Result};

/// The zero-shot LLM stages the summary and synthesis cells need (each an
/// `LlmContextStage` over an `LlmSummarizer` whose generator is the grid's
/// [`CachedGenerator`], so every stage answer is cached and committed as it finishes).
#[derive(Clone, Copy, Default)]
pub struct LlmStages<'a> {
    /// The context-independent summary (`stage_prompt(ContextMode::Independent)`), for `SumCtxInd`.
    pub summary_independent: Option<&'a dyn ContextSummarizer>,
    /// The context-dependent summary (`stage_prompt(ContextMode::Dependent)`), for `SumCtx`.
    pub summary_dependent: Option<&'a dyn ContextSummarizer>,
    /// The context-dependent synthesis: a stage over `synthesis_prompt()` (what
    /// `LlmSynthesizer` wraps), its answer read by `parse_words`; for `SynCtx` and `LLMZeroShot`.
    pub synthesis: Option<&'a dyn ContextSummarizer>,
}

impl<'a> LlmStages<'a> {
    fn summary(&self, mode: ContextMode) -> Option<&'a dyn ContextSummarizer> {
        match mode {
            ContextMode::Independent => self.summary_independent,
            ContextMode::Dependent => self.summary_dependent,
        }
    }
}

/// One cell's prompts and answers, one per example.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRun {
    /// The cell.
    pub cell: Cell,
    /// The generation inputs (`PaperFormat`).
    pub prompts: Vec<String>,
    /// The model's answers.
    pub outputs: Vec<String>,
    /// What is scored: the answers, with the passage start prepended when the cell says so.
    pub predictions: Vec<String>,
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GridStats {
    /// Distinct generation prompts (each generated or read from the cache once).
    pub distinct_prompts: usize,
    /// Of those, answered from the cache.
    pub cached: usize,
    /// Of those, generated now.
    pub generated: usize,
    /// LLM summaries asked for (cached or not).
    pub summaries: usize,
    /// LLM syntheses asked for (cached or not).
    pub syntheses: usize,
    /// Seconds in the generation of the cells.
    pub generation_seconds: f64,
    /// Seconds in the LLM stages.
    pub stage_seconds: f64,
}

/// The grid's answers and what it chose.
#[derive(Debug, Clone, PartialEq)]
pub struct GridRun {
    /// Example ids, in order.
    pub ids: Vec<String>,
    /// One run per cell, in grid order.
    pub cells: Vec<CellRun>,
    /// The ranker under the stage cells (when there are any, or it was given).
    pub best_ranker: Option<(RankerName, BestChoice)>,
    /// The summary under the synthesis cells (when there are any, or it was given).
    pub best_summary: Option<(ContextMode, BestChoice)>,
    /// Per summary computed: one per example (`None`: empty ranked entries, nothing to
    /// summarize; the cell then leaves the `summary` section out).
    pub summaries: Vec<(ContextMode, Vec<Option<String>>)>,
    /// The LLM synthesis per example, when computed (`None` as for summaries).
    pub syntheses: Option<Vec<Option<Vec<String>>>>,
    /// Counts and seconds.
    pub stats: GridStats,
}

impl GridRun {
    /// The run of the cell named `name` (its [`Cell`] display name).
    pub fn cell(&self, name: &str) -> Option<&CellRun> {
        self.cells.iter().find(|c| c.cell.to_string() == name)
    }
}

impl MultistageGrid {
    /// Runs every cell on `examples` (with their `prepared` stages, in the same order): first
    /// `ImmedCtx` and the retrieval cells; then the summaries over the best ranker's entries
    /// and the summary cells; then the synthesis and the synthesis cells on the best summary.
    /// Each distinct prompt of a phase is generated once through `generator` (answers
    /// committed as they finish: a rerun computes nothing twice); progress is reported per
    /// phase. A needed stage missing from `stages` is an [`Error::InvalidInput`].
    pub fn run<G: Generator>(
        &self,
        examples: &[Example],
        prepared: &[Prepared],
        generator: &CachedGenerator<G>,
        stages: &LlmStages<'_>,
        progress: &dyn Progress,
    ) -> Result<GridRun> {
        self.check(examples, prepared)?;
        for m in self.summaries_needed() {
            if stages.summary(m).is_none() {
                return Err(Error::InvalidInput(format!(
                    "the grid needs the {} summary stage",
                    summary_name(m)
                )));
            }
        }
        if self.needs_synthesis() && stages.synthesis.is_none() {
            return Err(Error::InvalidInput(
                "the grid needs the synthesis stage (SynCtx, LLMZeroShot)".into(),
            ));
        }
        let mut stats = GridStats::default();
        let mut runs: Vec<Option<CellRun>> = vec![None; self.cells.len()];
        let phase = |k: CellKind| match k {
            CellKind::ImmedCtx => 0,
            k if k.ranker().is_some() => 0,
            k if k.summary().is_some() => 1,
            _ => 2,
        };
        // Phase 0: the immediate context and the rankers.
        let todo: Vec<usize> = (0..self.cells.len())
            .filter(|&i| phase(self.cells[i].kind) == 0)
            .collect();
        let inputs = |i: usize, j: usize| {
            let (ex, p) = (&examples[j], &prepared[j]);
            let kind = self.cells[i].kind;
            SectionInputs {
                passage_start: &ex.immediate_context,
                ranked: kind
                    .ranker()
                    .and_then(|r| p.ranked(r))
                    .map(|c| c.text.as_str()),
                ..SectionInputs::default()
            }
        };
        self.generate_phase(
            &todo, examples, &inputs, generator, progress, &mut stats, &mut runs,
        )?;

        let best_ranker = if self.has_stage_cells() || self.best_ranker.is_some() {
            Some(self.pick(
                &runs,
                examples,
                |k| k.ranker(),
                self.best_ranker,
                RankerName::RankDocBM25,
            ))
        } else {
            None
        };
        // Phase 1: summaries over the best ranker's entries, and the summary cells.
        let ranked_of = |j: usize| -> &str {
            best_ranker
                .and_then(|(r, _)| prepared[j].ranked(r))
                .map_or("", |c| c.text.as_str())
        };
        let started = Instant::now();
        let mut summaries: Vec<(ContextMode, Vec<Option<String>>)> = Vec::new();
        for m in self.summaries_needed() {
            let stage = stages.summary(m).expect("checked above");
            let what = format!("{} summary", summary_name(m));
            let out = self.stage_answers(stage, examples, &ranked_of, &what, progress)?;
            stats.summaries += examples.len();
            summaries.push((m, out));
        }
        stats.stage_seconds += started.elapsed().as_secs_f64();
        let summary_of = |m: ContextMode, j: usize| -> Option<&str> {
            summaries
                .iter()
                .find(|(q, _)| *q == m)
                .and_then(|(_, v)| v[j].as_deref())
        };
        let todo: Vec<usize> = (0..self.cells.len())
            .filter(|&i| phase(self.cells[i].kind) == 1)
            .collect();
        let inputs = |i: usize, j: usize| SectionInputs {
            passage_start: &examples[j].immediate_context,
            ranked: Some(ranked_of(j)),
            summary: self.cells[i].kind.summary().and_then(|m| summary_of(m, j)),
            words: None,
        };
        self.generate_phase(
            &todo, examples, &inputs, generator, progress, &mut stats, &mut runs,
        )?;

        let best_summary = if self.has_synthesis_cells() || self.best_summary.is_some() {
            Some(self.pick(
                &runs,
                examples,
                |k| k.summary(),
                self.best_summary,
                ContextMode::Dependent,
            ))
        } else {
            None
        };
        // Phase 2: the synthesis, and the synthesis cells on the best summary.
        let started = Instant::now();
        let syntheses = match stages.synthesis.filter(|_| self.needs_synthesis()) {
            Some(stage) => {
                let answers =
                    self.stage_answers(stage, examples, &ranked_of, "synthesis", progress)?;
                stats.syntheses += examples.len();
                Some(
                    answers
                        .into_iter()
                        .map(|a| a.map(|a| parse_words(&a, self.synthesis_max_words)))
                        .collect::<Vec<_>>(),
                )
            }
            None => None,
        };
        stats.stage_seconds += started.elapsed().as_secs_f64();
        let words: Vec<(Option<String>, Option<String>)> = (0..examples.len())
            .map(|j| {
                let kw = prepared[j].keywords.as_deref().map(join_words);
                let llm = syntheses
                    .as_ref()
                    .and_then(|s| s[j].as_deref())
                    .map(join_words);
                (kw, llm)
            })
            .collect();
        let todo: Vec<usize> = (0..self.cells.len())
            .filter(|&i| phase(self.cells[i].kind) == 2)
            .collect();
        let inputs = |i: usize, j: usize| SectionInputs {
            passage_start: &examples[j].immediate_context,
            ranked: Some(ranked_of(j)),
            summary: best_summary.and_then(|(m, _)| summary_of(m, j)),
            words: if self.cells[i].kind == CellKind::SynCtxInd {
                words[j].0.as_deref()
            } else {
                words[j].1.as_deref()
            },
        };
        self.generate_phase(
            &todo, examples, &inputs, generator, progress, &mut stats, &mut runs,
        )?;

        Ok(GridRun {
            ids: examples.iter().map(|e| e.id.clone()).collect(),
            cells: runs
                .into_iter()
                .map(|r| r.expect("every phase ran"))
                .collect(),
            best_ranker,
            best_summary,
            summaries,
            syntheses,
            stats,
        })
    }

    /// One stage's answer per example, over (immediate context, ranked entries); `None` where
    /// the ranked entries are empty.
    fn stage_answers<'s>(
        &self,
        stage: &dyn ContextSummarizer,
        examples: &'s [Example],
        ranked_of: &dyn Fn(usize) -> &'s str,
        what: &str,
        progress: &dyn Progress,
    ) -> Result<Vec<Option<String>>> {
        let todo: Vec<usize> = (0..examples.len())
            .filter(|&j| !pgraphrag_text::py::strip(ranked_of(j)).is_empty())
            .collect();
        let mut out: Vec<Option<String>> = vec![None; examples.len()];
        progress.start(todo.len() as u64, what);
        for chunk in todo.chunks(self.batch.max(1)) {
            let inputs: Vec<(&str, &str)> = chunk
                .iter()
                .map(|&j| (examples[j].immediate_context.as_str(), ranked_of(j)))
                .collect();
            let mut got: Vec<Option<pgraphrag_stages::Result<String>>> =
                (0..chunk.len()).map(|_| None).collect();
            stage.summarize_batch_each(&inputs, &mut |k, r| {
                if let Some(slot) = got.get_mut(k) {
                    *slot = Some(r);
                }
            });
            for (k, r) in got.into_iter().enumerate() {
                let j = chunk[k];
                let r = r.unwrap_or_else(|| {
                    Err(pgraphrag_stages::Error::InvalidInput(
                        "the stage returned no answer".into(),
                    ))
                });
                match r {
                    Ok(s) => out[j] = Some(s),
                    Err(e) => {
                        progress.finish();
                        return Err(stage_error(&examples[j].id, what, e));
                    }
                }
            }
            progress.advance(chunk.len() as u64);
        }
        progress.finish();
        Ok(out)
    }

    /// Generates the cells `todo` (their prompts from `inputs(cell, example)`), each distinct
    /// prompt once, and stores their runs.
    #[allow(clippy::too_many_arguments)]
    fn generate_phase<'s, G: Generator>(
        &self,
        todo: &[usize],
        examples: &'s [Example],
        inputs: &dyn Fn(usize, usize) -> SectionInputs<'s>,
        generator: &CachedGenerator<G>,
        progress: &dyn Progress,
        stats: &mut GridStats,
        runs: &mut [Option<CellRun>],
    ) -> Result<()> {
        if todo.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let mut unique: Vec<String> = Vec::new();
        let mut owner: Vec<(usize, usize)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut prompts: Vec<Vec<String>> = Vec::with_capacity(todo.len());
        let mut map: Vec<Vec<usize>> = Vec::with_capacity(todo.len());
        for &i in todo {
            let ps: Vec<String> = (0..examples.len())
                .map(|j| PaperFormat.generation(&self.cells[i].kind.sections(&inputs(i, j))))
                .collect();
            let ids = ps
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    *index.entry(p.clone()).or_insert_with(|| {
                        unique.push(p.clone());
                        owner.push((i, j));
                        unique.len() - 1
                    })
                })
                .collect();
            prompts.push(ps);
            map.push(ids);
        }
        progress.start(unique.len() as u64, "prompts");
        let mut answers: Vec<String> = Vec::with_capacity(unique.len());
        for chunk in unique.chunks(self.batch.max(1)) {
            let wrapped: Vec<Prompt> = chunk.iter().map(|p| self.wrapper.wrap(p.clone())).collect();
            for r in generator.generate_cached_batch(&wrapped, &self.params) {
                let (i, j) = owner[answers.len()];
                let (text, hit) = r.map_err(|e| {
                    progress.finish();
                    Error::cached(e, || examples[j].id.clone(), || self.cells[i].to_string())
                })?;
                if hit {
                    stats.cached += 1;
                } else {
                    stats.generated += 1;
                }
                answers.push(text);
            }
            progress.advance(chunk.len() as u64);
            progress.message(&format!(
                "{} cached / {} generated",
                stats.cached, stats.generated
            ));
        }
        progress.finish();
        stats.distinct_prompts += unique.len();
        for ((&i, ps), ids) in todo.iter().zip(prompts).zip(map) {
            let cell = self.cells[i];
            let outputs: Vec<String> = ids.iter().map(|&u| answers[u].clone()).collect();
            let predictions = outputs
                .iter()
                .zip(examples)
                .map(|(o, ex)| {
                    if cell.prepend_start {
                        prepend_start(document_start(&ex.immediate_context, &ex.target), o)
                    } else {
                        o.clone()
                    }
                })
                .collect();
            runs[i] = Some(CellRun {
                cell,
                prompts: ps,
                outputs,
                predictions,
            });
        }
        stats.generation_seconds += started.elapsed().as_secs_f64();
        Ok(())
    }
}

impl MultistageGrid {
    /// The best of the cells that `key` maps to a value, by mean ROUGE-1; `given` wins; with
    /// no such cell, `default`.
    pub(super) fn pick<T: Copy>(
        &self,
        runs: &[Option<CellRun>],
        examples: &[Example],
        key: impl Fn(CellKind) -> Option<T>,
        given: Option<T>,
        default: T,
    ) -> (T, BestChoice) {
        if let Some(t) = given {
            return (t, BestChoice::Given);
        }
        let targets: Vec<&str> = examples.iter().map(|e| e.target.as_str()).collect();
        let mut best: Option<(T, f64)> = None;
        for run in runs.iter().flatten() {
            let Some(t) = key(run.cell.kind) else {
                continue;
            };
            let r1 = score_cell(&run.predictions, &targets).rouge1_mean();
            if best.is_none_or(|(_, b)| r1 > b) {
                best = Some((t, r1));
            }
        }
        match best {
            Some((t, rouge1)) => (t, BestChoice::ByRouge1 { rouge1 }),
            None => (default, BestChoice::PaperDefault),
        }
    }
}
