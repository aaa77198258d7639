//! PGraphRAG's generation grid (`master_generation.py`) and evaluation (`master_eval.py`) on one
//! split and task (`pgraphrag bench`), with a local GGUF model or an OpenAI-compatible server.
//!
//! Load the split → build the user-item graph of the whole split → rank the users' profiles with
//! BM25 (the released notebook's semantics, as [`super::RankSpec`]) → for each user and each
//! (mode, k) build the prompt → generate each distinct prompt once through the generation cache
//! (a rerun reuses every finished generation) → write `OUTPUT-*.json`, extract answers, score →
//! `results.md`, `results.svg`, `results.csv`. See `docs/bench.md`.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pgraphrag_core::{Generator, Progress, RankedProfile, SummaryScope};
use pgraphrag_data::{RankingRecord, Split, write_rankings};
use pgraphrag_eval::{
    Bench, CachedGenerator, ConfigOutputs, GenerationCache, Journal, Recipe, ResultsTable,
    RunConfig, RunDir, RunName, RunStats, cold_start, gold, paired_p_values, rank_all,
    ranking_file_name, vs_best_constant, write_output_file,
};
use pgraphrag_graph::UserItemGraph;
use pgraphrag_llm::{
    Activations, ContextOverflow, Engine, GgufModel, GgufOptions, OpenAiClient, OpenAiOptions,
    Prefill, WeightFormat,
};
use pgraphrag_prompt::pgraphrag::{Mode, Task};
use pgraphrag_retrieval::profile::ProfileRanker;
use pgraphrag_stages::{EntryFormat, LlmSummarizer, SummarizeJob, SummaryPrompt, SummaryStore};
use serde::{Deserialize, Serialize};

use super::source::{load_split, open_profiles, scorer};
use crate::jobs::StoreProfiles as Profiles;
use crate::location::{describe_location, open_location};
use crate::{Error, Result, summary_budget};

/// Where the grid's answers come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Backend {
    /// A local GGUF model on the native engine (or candle's).
    Gguf {
        /// The GGUF file.
        model: PathBuf,
        /// How its weights are kept.
        weights: WeightFormat,
        /// Which engine runs it.
        engine: Engine,
        /// The activations' format.
        activations: Activations,
        /// How prompts are prefilled.
        prefill: Prefill,
        /// A LoRA adapter trained on this model (`pgraphrag train lora`), applied on either
        /// engine.
        adapter: Option<PathBuf>,
    },
    /// An OpenAI-compatible server.
    OpenAi {
        /// Its base URL.
        url: String,
        /// The model name it serves.
        model: String,
        /// The API key (never serialized).
        #[serde(skip)]
        api_key: Option<String>,
    },
}

impl Backend {
    /// The local GGUF model with the default load options.
    pub fn gguf(model: impl Into<PathBuf>) -> Backend {
        Backend::Gguf {
            model: model.into(),
            weights: WeightFormat::default(),
            engine: Engine::default(),
            activations: Activations::default(),
            prefill: Prefill::default(),
            adapter: None,
        }
    }
}

/// The item summaries of the cold-start cells (`isum_`): every profile's target-item summary
/// (without the user's own review), computed where the store lacks them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemSummaries {
    /// The summary store (a SQLite file, or a PostgreSQL URL with feature `postgres`).
    pub store: PathBuf,
    /// New tokens per summary.
    pub tokens: usize,
    /// The summarizer's context in tokens.
    pub context: usize,
}

/// The PGraphRAG benchmark on one split and task.
///
/// ```
/// use pgraphrag_eval::{Bench, pgraphrag_grid};
/// use pgraphrag_prompt::pgraphrag::{Mode, Task};
/// use pgraphrag_runs::pgraphrag::{Backend, BenchSpec};
/// let bench = Bench::new(Task::Rating, pgraphrag_grid(&[Mode::None, Mode::Both], &[1, 4]));
/// let spec = BenchSpec::new("amazon_dev.json", bench, Backend::gguf("models/llm.gguf"), "runs/bench");
/// assert_eq!(spec.output_files()[0], "RANKING-amazon_dev_reviewRating_bm25.json");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchSpec {
    /// The split file.
    pub split: PathBuf,
    /// The candidates from a dataset of the PostgreSQL profile store instead of the graph.
    pub profiles: Option<Profiles>,
    /// The grid: task, cells, generation parameters, language, wrapper, batch.
    pub bench: Bench,
    /// Only the first N users (after [`BenchSpec::skip`]).
    pub limit: Option<usize>,
    /// Users skipped first (their random-review draws still made, so every user gets the
    /// random review a run over the whole split gives it).
    pub skip: usize,
    /// Where the answers come from.
    pub backend: Backend,
    /// The model's label in file names (`None`: the GGUF file's first name part, or the
    /// served model's name).
    pub model_name: Option<String>,
    /// The generation cache (`None`: `OUT/cache.sqlite`; a PostgreSQL URL with feature
    /// `postgres`).
    pub cache: Option<PathBuf>,
    /// Append `stored <cache key>` to this file right after each answer is committed.
    pub journal: Option<PathBuf>,
    /// The output folder.
    pub out: PathBuf,
    /// The released code's answer extraction instead of the fixed one.
    pub reference_extraction: bool,
    /// The cold-start cells' item summaries.
    pub item_summaries: Option<ItemSummaries>,
    /// WordNet 3.0 for METEOR (`None`: METEOR not computed).
    pub wordnet: Option<PathBuf>,
}

/// What a [`BenchSpec`] run did (its files are in [`BenchSpec::out`]).
#[derive(Debug, Clone)]
pub struct BenchReport {
    /// `results.md`: the table, and the paired tests and constant answers where they apply.
    pub markdown: String,
    /// Prompts, cache hits, generations and seconds.
    pub stats: RunStats,
}

/// `(dataset, split)` of a split file named `DATASET_SPLIT.json` (`amazon_dev.json` →
/// `("amazon", "dev")`), as the released file names use them.
///
/// ```
/// assert_eq!(pgraphrag_runs::pgraphrag::split_names("d/amazon_dev.json".as_ref()), ("amazon".into(), "dev".into()));
/// assert_eq!(pgraphrag_runs::pgraphrag::split_names("x.json".as_ref()), ("x".into(), "split".into()));
/// ```
pub fn split_names(path: &Path) -> (String, String) {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    match stem.split_once('_') {
        Some((d, s)) if !d.is_empty() && !s.is_empty() => (d.to_string(), s.replace('_', "-")),
        _ => (stem, "split".into()),
    }
}

impl BenchSpec {
    /// Every user, no cache or journal given, the fixed extraction, no METEOR.
    pub fn new(
        split: impl Into<PathBuf>,
        bench: Bench,
        backend: Backend,
        out: impl Into<PathBuf>,
    ) -> BenchSpec {
        BenchSpec {
            split: split.into(),
            profiles: None,
            bench,
            limit: None,
            skip: 0,
            backend,
            model_name: None,
            cache: None,
            journal: None,
            out: out.into(),
            reference_extraction: false,
            item_summaries: None,
            wordnet: None,
        }
    }

    fn names(&self) -> (String, String) {
        split_names(&self.split)
    }

    /// The files written into [`BenchSpec::out`] besides the OUTPUT files: the ranking file,
    /// `results.*` and, with item summaries, `item_summaries.jsonl`.
    pub fn output_files(&self) -> Vec<String> {
        let (dataset, split) = self.names();
        let ranking = ranking_file_name(
            &format!("{dataset}_{split}"),
            self.bench.task.reference_name(),
            "bm25",
        );
        let mut files = vec![ranking];
        files.extend(["results.md", "results.csv", "results.svg"].map(String::from));
        if self.item_summaries.is_some() {
            files.push("item_summaries.jsonl".into());
        }
        files
    }

    /// Ranks the users of `split` and writes the ranking file; the profiles as the prompts
    /// read them (the ranking file's values: `int()` ratings, `"None"` strings), and the graph.
    fn rank(
        &self,
        split: Split,
        progress: &dyn Progress,
    ) -> Result<(Vec<RankedProfile>, UserItemGraph)> {
        let task = self.bench.task;
        let (dataset, split_name) = self.names();
        // The released code's graph and BM25 semantics, as the ranking files' default.
        let recipe = Recipe::ReleasedCode;
        let policy = recipe.id_policy();
        let graph = recipe.graph(&split);
        let mut popts = recipe.profile_options();
        popts.k = popts
            .k
            .max(self.bench.configs.iter().map(|c| c.k).max().unwrap_or(1));
        let mut ranker = ProfileRanker::new(recipe.bm25(), popts);
        let skip = self.skip.min(split.users.len());
        pgraphrag_eval::skip_users(&split, &graph, policy, &mut ranker, 0..skip)?;
        let mut split = split;
        split.users.drain(..skip);
        if let Some(n) = self.limit {
            split.users.truncate(n);
        }
        if split.users.is_empty() {
            return Err(Error::Setting(
                "no users to run (a limit of 0, a skip past the end, or an empty split)".into(),
            ));
        }
        let ranked = match &self.profiles {
            Some(p) => {
                let (_, source) = open_profiles(p, recipe)?;
                source.rank_all(&split, policy, task, ranker, progress)?
            }
            None => rank_all(&split, &graph, policy, task, ranker, progress)?,
        };
        let records: Vec<RankingRecord> = ranked.iter().map(RankingRecord::from_profile).collect();
        std::fs::create_dir_all(&self.out).map_err(Error::work(format!(
            "creating the output folder {}",
            self.out.display()
        )))?;
        let ranking_file = self.out.join(ranking_file_name(
            &format!("{dataset}_{split_name}"),
            task.reference_name(),
            "bm25",
        ));
        write_rankings(&ranking_file, &records)
            .map_err(Error::work(format!("writing {}", ranking_file.display())))?;
        Ok((
            records.iter().map(RankingRecord::to_profile).collect(),
            graph,
        ))
    }

    /// Writes the grid's distinct prompts with their gold answers as JSON lines to `path`
    /// (the input of `pgraphrag train lora`); returns how many.
    pub fn export_prompts(&self, path: &Path, progress: &dyn Progress) -> Result<usize> {
        self.check_grid()?;
        let (profiles, _) = self.rank(load_split(&self.split)?, progress)?;
        let records = self.bench.prompt_records(&profiles)?;
        pgraphrag_eval::write_prompt_records(path, &records)
            .map_err(Error::work(format!("writing {}", path.display())))?;
        progress.note(&format!(
            "wrote {} prompts ({} users, {} cells) to {}",
            records.len(),
            profiles.len(),
            self.bench.configs.len(),
            path.display()
        ));
        Ok(records.len())
    }

    fn check_grid(&self) -> Result<()> {
        if self.bench.configs.is_empty() {
            return Err(Error::Setting("the grid has no cells".into()));
        }
        Ok(())
    }

    /// Ranks, generates, writes the OUTPUT files and scores.
    pub fn run(&self, progress: &dyn Progress) -> Result<BenchReport> {
        self.check_grid()?;
        let task = self.bench.task;
        let split = load_split(&self.split)?;
        // What would otherwise fail only after ranking or generating, checked before ranking:
        // the model file is there, and WordNet (for METEOR) is intact.
        if let Backend::Gguf { model, .. } = &self.backend
            && !model.is_file()
        {
            return Err(Error::Setting(format!(
                "model file {} not found (scripts/fetch-llms.sh --smollm-only fetches SmolLM2; or name another GGUF file)",
                model.display()
            )));
        }
        let scorer = scorer(task, self.wordnet.as_deref())?;
        let (profiles, graph) = self.rank(split, progress)?;
        let (dataset, split_name) = self.names();

        // Generate (after the item summaries, when asked for).
        let mut bench = self.bench.clone();
        let (model, model_id, label): (Box<dyn Generator>, String, String) =
            match (&self.item_summaries, &self.backend) {
                (Some(settings), Backend::Gguf { .. }) => {
                    let (gguf, label) = self.load_gguf(progress)?;
                    bench.item_summaries =
                        self.item_summaries(settings, &gguf, &profiles, &graph, progress)?;
                    let id = gguf.cache_id();
                    (Box::new(gguf), id, label)
                }
                (Some(_), Backend::OpenAi { .. }) => {
                    return Err(Error::Setting(
                        "item summaries are written by a local GGUF model, not a server".into(),
                    ));
                }
                (None, _) => self.backend(progress)?,
            };
        let label = self.model_name.clone().unwrap_or(label);
        let cache_path = self
            .cache
            .clone()
            .unwrap_or_else(|| self.out.join("cache.sqlite"));
        let cache = open_location(
            &cache_path,
            "the generation cache",
            GenerationCache::open_location,
        )?;
        let mut generator = CachedGenerator::new(model, model_id, cache);
        if let Some(path) = &self.journal {
            generator = generator.with_on_stored(Journal::open(path)?.into_hook());
        }
        progress.note(&format!(
            "bench: {} users of {dataset}_{split_name}, task {}, {} configs, model {label}, cache {}",
            profiles.len(),
            task.reference_name(),
            bench.configs.len(),
            describe_location(&cache_path)
        ));
        let (outputs, stats) = bench.run_with_progress(&profiles, &generator, progress)?;

        // Write and score.
        let name = RunName {
            dataset,
            split: split_name,
            task: task.reference_name().to_string(),
            model: label,
            ranker: "bm25".to_string(),
        };
        for c in &outputs {
            write_output_file(&self.out.join(name.output_file(c.config)), &c.outputs)?;
        }
        let golds: Vec<String> = profiles.iter().map(|p| gold(p, task)).collect();
        // The released ranking, but the fixed extraction unless asked for the released one.
        let extract = if self.reference_extraction {
            Recipe::ReleasedCode.extract_options()
        } else {
            Recipe::Clean.extract_options()
        };
        let title = format!(
            "{}_{}_{}_{}_{}",
            name.dataset, name.split, name.task, name.model, name.ranker
        );
        let table = ResultsTable::score(title, task, &outputs, &golds, &extract, scorer.as_ref())?;
        let mut markdown = table.to_markdown();
        if self.item_summaries.is_some() {
            let k = self.bench.configs.iter().map(|c| c.k).max().unwrap_or(1);
            let baseline = RunConfig::new(Mode::Both, k);
            if configs_have(&outputs, baseline) {
                let p =
                    paired_p_values(task, &outputs, &golds, &extract, scorer.as_ref(), baseline)?;
                markdown.push_str(&p_value_table(&table, &p, baseline));
            }
        }
        if task == Task::Rating {
            markdown.push_str(&vs_best_constant(&outputs, &golds, &extract, 0)?.to_markdown());
        }
        RunDir::new(&self.out).write_results(&markdown, &table)?;
        Ok(BenchReport { markdown, stats })
    }

    /// The generator, its cache id and its label for file names.
    fn backend(&self, progress: &dyn Progress) -> Result<(Box<dyn Generator>, String, String)> {
        match &self.backend {
            Backend::Gguf { .. } => {
                let (model, label) = self.load_gguf(progress)?;
                let id = model.cache_id();
                Ok((Box::new(model), id, label))
            }
            Backend::OpenAi {
                url,
                model,
                api_key,
            } => {
                let client = OpenAiClient::new(
                    url.clone(),
                    model.clone(),
                    OpenAiOptions::default().with_api_key(api_key.clone()),
                )
                .map_err(Error::input(format!("the server {url}")))?;
                let id = client.cache_id();
                Ok((Box::new(client), id, model.clone()))
            }
        }
    }

    /// Loads the local GGUF model (with its adapter); returns it with its label.
    fn load_gguf(&self, progress: &dyn Progress) -> Result<(GgufModel, String)> {
        let Backend::Gguf {
            model: path,
            weights,
            engine,
            activations,
            prefill,
            adapter,
        } = &self.backend
        else {
            return Err(Error::Setting("not a local model".into()));
        };
        let options = GgufOptions {
            overflow: ContextOverflow::TruncateLeft,
            weights: *weights,
            engine: *engine,
            activations: *activations,
            prefill: *prefill,
            ..Default::default()
        };
        let mut model = GgufModel::load(path, options).map_err(Error::work(format!(
            "loading the GGUF model {}",
            path.display()
        )))?;
        if let Some(adapter) = adapter {
            crate::lora::apply_adapter(&mut model, path, adapter, progress)?;
        }
        // Which engine and kernels this CPU got (the kernels change speed, never results).
        progress.note(&format!(
            "model {}: {:?} engine{}",
            path.display(),
            model.engine(),
            model
                .kernels_used()
                .map(|k| format!(", kernels {k}"))
                .unwrap_or_default()
        ));
        let file = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let label = file.split('.').next().unwrap_or("model").to_string();
        Ok((model, label))
    }

    /// Every profile's target-item summary (without the user's own review), computed where
    /// the store lacks it, and exported to `OUT/item_summaries.jsonl`.
    fn item_summaries(
        &self,
        settings: &ItemSummaries,
        model: &GgufModel,
        profiles: &[RankedProfile],
        graph: &UserItemGraph,
        progress: &dyn Progress,
    ) -> Result<HashMap<String, String>> {
        let questions = cold_start::item_questions(profiles, graph);
        let budget = summary_budget(model, settings.context, settings.tokens)?;
        let summarizer = LlmSummarizer::new(
            model,
            SummaryPrompt::item_reviews(),
            model.tokenizer(),
            budget,
        );
        let (model_id, version) = (model.cache_id(), summarizer.version());
        let store = open_location(
            &settings.store,
            "the item summary store",
            SummaryStore::open_location,
        )?;
        let report = SummarizeJob::for_format(EntryFormat::PRODUCT_REVIEW, &model_id, &version)
            .scope(SummaryScope::Question)
            .run(&questions, &summarizer, &store, progress)?;
        progress.note(&format!(
            "item summaries: {} users, {} done before, {} computed in {:.1}s, {} items without other reviews, {} failed; store {}",
            report.users,
            report.done_before,
            report.computed,
            report.seconds,
            report.skipped_empty,
            report.failed,
            describe_location(&settings.store)
        ));
        if !report.failures.is_empty() {
            for f in &report.failures {
                progress.note(&format!("failed: {f}"));
            }
            return Err(Error::work(format!(
                "{} of {} item summaries failed; a rerun retries only those",
                report.failed, report.users
            ))(std::io::Error::other("summaries failed")));
        }
        store.export_jsonl(&self.out.join("item_summaries.jsonl"), &model_id, &version)?;
        Ok(store.summaries(&model_id, &version)?.into_iter().collect())
    }
}

fn configs_have(outputs: &[ConfigOutputs], config: RunConfig) -> bool {
    outputs.iter().any(|c| c.config == config)
}

/// The Markdown table of [`paired_p_values`] against `baseline`.
fn p_value_table(table: &ResultsTable, p: &[Vec<f64>], baseline: RunConfig) -> String {
    let mut out = format!(
        "\nTwo-sided paired t-tests over users against `{baseline}`:\n\n| mode_k |{}\n|---|{}\n",
        table
            .columns
            .iter()
            .map(|c| format!(" p ({c}) |"))
            .collect::<String>(),
        "---:|".repeat(table.columns.len())
    );
    for (row, ps) in table.rows.iter().zip(p) {
        out.push_str(&format!("| {} |", row.config));
        for v in ps {
            if v.is_nan() {
                out.push_str(" – |");
            } else if *v < 0.001 {
                out.push_str(" <0.001 |");
            } else {
                out.push_str(&format!(" {v:.3} |"));
            }
        }
        out.push('\n');
    }
    out
}
