//! The bench job: PGraphRAG's generation grid (`pgraphrag bench`) over the first users of a
//! split, in chunks of users, its generations committed to a shared generation cache.
//!
//! A unit ranks its users as the ranking job does (the same records, random reviews included:
//! [`RankSpec`]), builds every grid cell's prompt for them exactly as [`Bench`] does, and
//! generates each distinct prompt the cache lacks, committing each answer as it finishes. When
//! every unit is done, `pgraphrag bench` with the same options and `--cache` computes nothing:
//! every prompt is a cache hit, and its `results.md`, `results.csv` and OUTPUT files are those
//! of a run that generated them itself (the native engine answers a prompt identically whatever
//! else is in its batch). A unit delivered again after a crash finds its finished answers in
//! the cache and generates only the rest.
use std::path::PathBuf;

use pgraphrag_data::RankingRecord;
use pgraphrag_llm::{
    Activations, ContextOverflow, Engine, GgufModel, GgufOptions, Prefill, WeightFormat,
};
use serde::{Deserialize, Serialize};

use super::common::{Error, Result, UnitRange};
use super::rank::RankCache;
use super::rank::RankSpec;
use pgraphrag_eval::{Bench, CachedGenerator, GenerationCache};

/// What a bench job computes: the grid `bench` over the users `rank` ranks, answered by a local
/// GGUF model into the generation cache `cache`.
///
/// ```
/// use pgraphrag_core::Task;
/// use pgraphrag_runs::jobs::{BenchSpec, JobSpec, RankSpec, plan};
/// use pgraphrag_eval::{Bench, pgraphrag_grid};
/// use pgraphrag_prompt::pgraphrag::Mode;
/// let bench = Bench::new(Task::Rating, pgraphrag_grid(&[Mode::None, Mode::User], &[1, 8]));
/// let rank = RankSpec::new("/data/amazon_dev.json".as_ref(), Task::Rating, 200);
/// let spec = BenchSpec::new(rank, bench, "/models/SmolLM2.gguf", "/runs/bench/cache.sqlite");
/// // Ranked as `pgraphrag bench` ranks: at least the notebook's top 5, as deep as the largest k.
/// assert_eq!(spec.rank.top, 8);
/// let planned = plan(&JobSpec::Bench(Box::new(spec)), "/runs/jobs.sqlite", 25).unwrap();
/// assert_eq!((planned.job.kind.as_str(), planned.units.len()), ("bench", 8));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchSpec {
    /// Which users, ranked how (a split file, or a dataset of the PostgreSQL profile store).
    pub rank: RankSpec,
    /// The grid: task, cells, language, wrapper, generation parameters, batch. Item summaries
    /// are not part of a job (refused by [`BenchSpec::check`]).
    pub bench: Bench,
    /// The GGUF model file (absolute path; every worker reads it there).
    pub model: PathBuf,
    /// How the model holds its weights (part of its cache id).
    pub weights: WeightFormat,
    /// Which implementation runs it.
    pub engine: Engine,
    /// The native engine's decoding arithmetic (part of the cache id).
    pub activations: Activations,
    /// The native engine's prompt processing (part of the cache id).
    pub prefill: Prefill,
    /// The generation cache: a SQLite file (absolute path, on storage every worker shares) or a
    /// PostgreSQL URL (workers built with the feature `postgres`).
    pub cache: String,
}

impl BenchSpec {
    /// The grid `bench` over `rank`'s users with the model file `model` into the generation
    /// cache `cache`, with `pgraphrag bench`'s model defaults (weights as stored, the engine
    /// chosen automatically, Q8 activations, row-wise prefill). Ranks at least as deep as the
    /// grid's largest k, as `pgraphrag bench` does.
    pub fn new(
        mut rank: RankSpec,
        bench: Bench,
        model: impl Into<PathBuf>,
        cache: impl Into<String>,
    ) -> Self {
        rank.task = bench.task;
        rank.top = bench.configs.iter().map(|c| c.k).fold(rank.top, usize::max);
        BenchSpec {
            rank,
            bench,
            model: model.into(),
            weights: WeightFormat::default(),
            engine: Engine::default(),
            activations: Activations::default(),
            prefill: Prefill::default(),
            cache: cache.into(),
        }
    }

    /// The options the model is loaded with: `pgraphrag bench`'s (prompts too long for the
    /// context lose their beginning).
    ///
    /// ```
    /// # use pgraphrag_core::Task;
    /// # use pgraphrag_eval::Bench;
    /// # use pgraphrag_runs::jobs::{BenchSpec, RankSpec};
    /// # let rank = RankSpec::new("/d/s.json".as_ref(), Task::Title, 1);
    /// let mut spec = BenchSpec::new(rank, Bench::new(Task::Title, vec![]), "/m.gguf", "/c.sqlite");
    /// spec.activations = pgraphrag_llm::Activations::F32;
    /// assert_eq!(spec.options().activations, pgraphrag_llm::Activations::F32);
    /// ```
    pub fn options(&self) -> GgufOptions {
        GgufOptions {
            overflow: ContextOverflow::TruncateLeft,
            weights: self.weights,
            engine: self.engine,
            activations: self.activations,
            prefill: self.prefill,
            ..Default::default()
        }
    }

    /// Checks the job as a worker would run it: loads the model and opens the generation cache
    /// (so a bad model or cache is an error at submission, not a dead letter per unit), and
    /// refuses an empty grid and item summaries. Returns the model's cache id.
    ///
    /// ```no_run
    /// # use pgraphrag_core::Task;
    /// # use pgraphrag_eval::{Bench, pgraphrag_grid};
    /// # use pgraphrag_runs::jobs::{BenchSpec, RankSpec};
    /// # use pgraphrag_prompt::pgraphrag::Mode;
    /// let rank = RankSpec::new("/data/amazon_dev.json".as_ref(), Task::Rating, 200);
    /// let bench = Bench::new(Task::Rating, pgraphrag_grid(&[Mode::None], &[1]));
    /// let spec = BenchSpec::new(rank, bench, "models/SmolLM2-135M-Instruct.Q4_1.gguf", "cache.sqlite");
    /// println!("answers cached under {}", spec.check().unwrap());
    /// ```
    pub fn check(&self) -> Result<String> {
        self.check_grid()?;
        let model = super::common::load_gguf(&self.model, self.options())?;
        open_cache(&self.cache)?;
        Ok(model.cache_id())
    }

    fn check_grid(&self) -> Result<()> {
        if self.bench.configs.is_empty() {
            return Err(Error::InvalidJob("the bench grid has no cells".into()));
        }
        if !self.bench.item_summaries.is_empty() {
            return Err(Error::InvalidJob(
                "item summaries are not part of a bench job: run `pgraphrag bench --item-summaries` instead"
                    .into(),
            ));
        }
        if self.bench.task != self.rank.task {
            return Err(Error::InvalidJob(format!(
                "the grid's task {} is not the ranking's {}",
                self.bench.task.reference_name(),
                self.rank.task.reference_name()
            )));
        }
        Ok(())
    }
}

/// Opens the generation cache at `location`.
fn open_cache(location: &str) -> Result<GenerationCache> {
    super::common::open_artifact(location, "generation cache", GenerationCache::open_location)
}

/// A loaded model wrapped in its cache, and what it was loaded for.
struct Loaded {
    model: PathBuf,
    options: (WeightFormat, Engine, Activations, Prefill),
    cache: String,
    generator: CachedGenerator<GgufModel>,
}

/// What a worker keeps between bench units: the ranking job's state (loaded split or store,
/// rankers) and the last model with its generation cache.
#[derive(Default)]
pub(crate) struct BenchCache {
    rank: RankCache,
    loaded: Option<Loaded>,
}

impl BenchCache {
    /// Ranks the unit's users, then answers every grid prompt of theirs the cache lacks.
    /// Returns the users done.
    pub(crate) fn run(&mut self, msg: UnitRange<'_>, spec: &BenchSpec) -> Result<usize> {
        spec.check_grid()?;
        let rows = self.rank.run(msg, &spec.rank)?;
        // The prompts read the ranking file's values (`int()` ratings, `"None"` strings), as
        // `pgraphrag bench` does.
        let profiles = rows
            .iter()
            .map(|(_, json)| {
                serde_json::from_str::<RankingRecord>(json)
                    .map(|r| r.to_profile())
                    .map_err(|e| Error::InvalidJob(format!("reading back a ranking record: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        let options = (spec.weights, spec.engine, spec.activations, spec.prefill);
        let same = self.loaded.as_ref().is_some_and(|l| {
            l.model == spec.model && l.options == options && l.cache == spec.cache
        });
        if !same {
            self.loaded = None;
            let model = super::common::load_gguf(&spec.model, spec.options())?;
            let id = model.cache_id();
            self.loaded = Some(Loaded {
                model: spec.model.clone(),
                options,
                cache: spec.cache.clone(),
                generator: CachedGenerator::new(model, id, open_cache(&spec.cache)?),
            });
        }
        let generator = &self.loaded.as_ref().expect("loaded above").generator;
        if let Err(source) = spec.bench.run(&profiles, generator) {
            // The cache's connection may be what failed: the next unit opens a fresh one.
            self.loaded = None;
            return Err(Error::Work {
                job: msg.job.to_string(),
                unit: msg.unit,
                source: Box::new(source),
            });
        }
        Ok(profiles.len())
    }
}
