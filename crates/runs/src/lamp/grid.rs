//! The summary-augmented paper's Table 3 grid on one LaMP questions file: prompts for every
//! cell, generation through the resumable cache, LaMP's scores, bootstrap intervals, paired
//! t-tests against `base_k4`.
use std::path::PathBuf;

use pgraphrag_core::{LampGold, LampTask, Progress, SummaryScope};
use pgraphrag_eval::lamp_grid::{AnswerReading, LampConfig, LampGrid, table3_configs};
use pgraphrag_eval::{CachedGenerator, GenerationCache, RunDir};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_prompt::lamp::{HfTokenizer, LampTokenizer, SummaryPlacement};
use serde::{Deserialize, Serialize};

use super::files::{read_questions, read_summaries};
use crate::{Error, Result};

/// The grid (`pgraphrag lamp grid`). Writes `results.md`, `results.csv`, `results.svg` and one
/// LaMP predictions file per cell and seed (`<cell>-seed<s>_outputs.json`) into
/// [`GridSpec::out`]; a rerun generates only what the cache lacks.
///
/// ```
/// use pgraphrag_core::LampTask;
/// use pgraphrag_runs::lamp::GridSpec;
/// let spec = GridSpec::paper(LampTask::Lamp4, "q.json", "o.json", "models/llm.gguf", "runs/cache.sqlite", "runs/lamp4");
/// assert_eq!((spec.max_length, spec.seeds.as_slice()), (512, &[0u64][..]));
/// assert_eq!(spec.output_files().len(), 3 + 5); // results.*, and each Table 3 cell at seed 0
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridSpec {
    /// A LaMP questions file.
    pub questions: PathBuf,
    /// Its outputs file (`{"task", "golds": [{id, output}]}`).
    pub outputs: PathBuf,
    /// The task.
    pub task: LampTask,
    /// The local GGUF model answering the prompts.
    pub model: PathBuf,
    /// A LoRA adapter trained on [`GridSpec::model`] (`pgraphrag train lora`), added to it
    /// (the fine-tuned regime); part of the generation cache's key.
    #[serde(default)]
    pub adapter: Option<PathBuf>,
    /// The `tokenizer.json` the token budget counts in (`None`: the model's own tokenizer).
    pub tokenizer: Option<PathBuf>,
    /// User summaries as JSON lines `{"id", "summary"}`; needed by the `sum_*` cells.
    pub summaries: Option<PathBuf>,
    /// The cells (`None`: the paper's Table 3).
    pub configs: Option<Vec<LampConfig>>,
    /// The prompt's budget in tokens (the paper's FlanT5: 512).
    pub max_length: i64,
    /// Where a summary goes.
    #[serde(with = "crate::names")]
    pub summary_placement: SummaryPlacement,
    /// Summaries per user or per question.
    pub summary_scope: SummaryScope,
    /// Only the first N questions.
    pub limit: Option<usize>,
    /// Sampler seeds (with temperature 0 every seed gives the same answers).
    pub seeds: Vec<u64>,
    /// Sampling temperature (0 = greedy).
    pub temperature: f64,
    /// New tokens per answer (`None`: 8 for labels, 32 for headlines and subjects, 96 for
    /// tweets).
    pub max_new_tokens: Option<usize>,
    /// How answers are read before scoring.
    pub reading: AnswerReading,
    /// Distinct prompts per generation batch.
    pub batch: usize,
    /// The generation cache (SQLite).
    pub cache: PathBuf,
    /// The output folder.
    pub out: PathBuf,
}

/// What [`GridSpec::run`] and [`GridSpec::export_training`] start from.
struct Prepared {
    questions: Vec<pgraphrag_core::LampQuestion>,
    golds: Vec<LampGold>,
    model: GgufModel,
    grid: LampGrid,
    plan: pgraphrag_eval::lamp_grid::LampPlan,
}

/// What a [`GridSpec`] run did (its files are in [`GridSpec::out`]).
#[derive(Debug, Clone)]
pub struct GridReport {
    /// The results table's Markdown (`results.md`).
    pub markdown: String,
    /// Answers scored (cells × seeds × questions).
    pub answers: usize,
    /// Of them, from the cache.
    pub cached: usize,
    /// Of them, generated.
    pub generated: usize,
}

impl GridSpec {
    /// The paper's Table 3: its cells, a 512-token prompt, summaries as a prefix, one per
    /// user, greedy at seed 0, answers read strictly as LaMP's `evaluation.py`.
    pub fn paper(
        task: LampTask,
        questions: impl Into<PathBuf>,
        outputs: impl Into<PathBuf>,
        model: impl Into<PathBuf>,
        cache: impl Into<PathBuf>,
        out: impl Into<PathBuf>,
    ) -> GridSpec {
        GridSpec {
            questions: questions.into(),
            outputs: outputs.into(),
            task,
            model: model.into(),
            adapter: None,
            tokenizer: None,
            summaries: None,
            configs: None,
            max_length: 512,
            summary_placement: SummaryPlacement::Prefix,
            summary_scope: SummaryScope::default(),
            limit: None,
            seeds: vec![0],
            temperature: 0.0,
            max_new_tokens: None,
            reading: AnswerReading::Strict,
            batch: 8,
            cache: cache.into(),
            out: out.into(),
        }
    }

    /// The cells run: [`GridSpec::configs`], or Table 3's.
    pub fn cells(&self) -> Vec<LampConfig> {
        self.configs.clone().unwrap_or_else(table3_configs)
    }

    /// The files a run writes into [`GridSpec::out`]: `results.*` and each cell's and seed's
    /// outputs file.
    pub fn output_files(&self) -> Vec<String> {
        let mut files: Vec<String> = RunDir::RESULTS.map(String::from).to_vec();
        for c in self.cells() {
            for s in &self.seeds {
                files.push(format!("{c}-seed{s}_outputs.json"));
            }
        }
        files
    }

    /// The questions, their golds, the model (with its adapter), the grid and its prompts.
    fn prepare(&self, progress: &dyn Progress) -> Result<Prepared> {
        let task = self.task;
        let mut questions = read_questions(&self.questions, task, "; there is nothing to score")?;
        if let Some(n) = self.limit {
            questions.truncate(n);
        }
        let golds = pgraphrag_data::lamp::read_outputs_for(&self.outputs, task)
            .map_err(Error::input("reading the outputs file"))?;
        let gold_ids: std::collections::HashSet<&str> =
            golds.iter().map(|g| g.id.as_str()).collect();
        if let Some(q) = questions.iter().find(|q| !gold_ids.contains(q.id.as_str())) {
            return Err(Error::invalid(format!(
                "question {:?} of {} has no gold in {}",
                q.id,
                self.questions.display(),
                self.outputs.display()
            )));
        }
        let summaries = self.summaries.as_deref().map(read_summaries).transpose()?;
        if !self.model.is_file() {
            return Err(Error::Setting(format!(
                "model file {} not found (scripts/fetch-llms.sh --smollm-only fetches SmolLM2)",
                self.model.display()
            )));
        }
        // A tokenizer of its own is read before the model loads (a bad one is found at once).
        let own_tok = match &self.tokenizer {
            Some(p) => Some(
                HfTokenizer::from_file(p)
                    .map_err(Error::input(format!("loading {}", p.display())))?,
            ),
            None => None,
        };
        let mut model = GgufModel::load(&self.model, GgufOptions::default()).map_err(
            Error::work(format!("loading the GGUF model {}", self.model.display())),
        )?;
        if let Some(adapter) = &self.adapter {
            crate::lora::apply_adapter(&mut model, &self.model, adapter, progress)?;
        }
        let tok: HfTokenizer = match own_tok {
            Some(t) => t,
            // Byte-level BPE decodes exactly: no transformers clean-up.
            None => HfTokenizer::from_tokenizer(model.tokenizer().inner().clone())
                .with_clean_up_tokenization_spaces(false),
        };

        let mut grid = LampGrid::new(task, self.cells());
        grid.max_length = self.max_length;
        grid.placement = self.summary_placement;
        grid.scope = self.summary_scope;
        grid.batch = self.batch;
        grid.params.temperature = self.temperature;
        if let Some(n) = self.max_new_tokens {
            grid.params.max_tokens = n;
        }
        grid.reading = self.reading;
        let plan = grid
            .plan(&questions, &tok as &dyn LampTokenizer, summaries.as_ref())
            .map_err(Error::invalid)?;
        for (config, _, s) in &plan.cells {
            progress.note(&format!(
                "{config}: {} prompts built, {} with a summary, {} inputs returned unchanged",
                s.built,
                s.with_summary,
                s.unchanged()
            ));
        }
        Ok(Prepared {
            questions,
            golds,
            model,
            grid,
            plan,
        })
    }

    /// Writes the grid's supervised examples for fine-tuning to `out` (JSON lines of
    /// [`pgraphrag_data::PromptRecord`]: one per cell and question, the prompt as the grid
    /// sends it, the gold output as the target; `pgraphrag train lora --data` reads them) and
    /// returns how many. Nothing is generated. Build it from the training questions, and
    /// evaluate the adapter ([`GridSpec::adapter`]) on another questions file.
    pub fn export_training(&self, out: &std::path::Path, progress: &dyn Progress) -> Result<usize> {
        let p = self.prepare(progress)?;
        let records = p.grid.training_records(&p.plan, &p.golds)?;
        pgraphrag_eval::write_prompt_records(out, &records)?;
        Ok(records.len())
    }

    /// Runs the grid and writes its files.
    pub fn run(&self, progress: &dyn Progress) -> Result<GridReport> {
        let task = self.task;
        let Prepared {
            questions,
            golds,
            model,
            grid,
            plan,
        } = self.prepare(progress)?;
        if let Some(dir) = self.cache.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(Error::work(format!("creating {}", dir.display())))?;
        }
        let model_id = model.cache_id();
        let cache = GenerationCache::open(&self.cache).map_err(Error::invalid)?;
        let generator = CachedGenerator::new(model, model_id, cache);
        let runs = grid.run(&plan, &generator, &self.seeds, progress)?;
        let stats = generator.stats();

        std::fs::create_dir_all(&self.out)
            .map_err(Error::work(format!("creating {}", self.out.display())))?;
        let stem = self
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
            let path = self
                .out
                .join(format!("{}-seed{}_outputs.json", r.config, r.seed));
            pgraphrag_data::lamp::write_outputs(&path, task, &preds)
                .map_err(Error::work(format!("writing {}", path.display())))?;
        }
        let title = format!("{task} {stem} ({} questions)", questions.len());
        let table = grid.results(&title, &plan, &runs, &golds)?;
        let markdown = table.to_markdown();
        RunDir::new(&self.out).write_results(&markdown, &table.to_results_table())?;
        Ok(GridReport {
            markdown,
            answers: runs.iter().map(|r| r.outputs.len()).sum(),
            cached: stats.hits,
            generated: stats.generated,
        })
    }
}
