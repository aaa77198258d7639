//! The PostgreSQL profile store's runs (feature `postgres`): a split loaded into it as a
//! dataset ([`LoadSpec`]), and its profile fetches and whole-split ranking timed against the
//! in-memory graph, both checked to agree ([`BenchSpec`]). `pgraphrag store load|bench` map
//! their flags to these; `docs/store.md` has the layout and the figures.
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pgraphrag_core::{Progress, Task};
use pgraphrag_data::Split;
use pgraphrag_eval::{Recipe, rank_all, rank_all_from};
use pgraphrag_graph::{ProfileSource, Scope};
use pgraphrag_retrieval::profile::ProfileRanker;
use pgraphrag_store::postgres::{self as pg, LoadOptions, LoadSummary, PgStore};
use serde::{Deserialize, Serialize};

use crate::pgraphrag::load_split;
use crate::{Error, Result};

/// A split (and review JSONL files) loaded into the store as a dataset: the graph of the
/// in-memory path, copied into tables hash-partitioned by user and by item.
///
/// ```
/// use pgraphrag_runs::store::LoadSpec;
/// let spec = LoadSpec::new("postgres://postgres@127.0.0.1:55432/postgres", Some("data/amazon_dev.json".into()));
/// assert_eq!(spec.dataset_name().unwrap(), "amazon_dev");
/// assert_eq!(spec.partitions, 8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadSpec {
    /// The database: `postgres://USER@HOST:PORT/DATABASE` (a coordinator with
    /// `pgraphrag_shard*` foreign servers spreads the partitions over them).
    pub url: String,
    /// The PGraphRAG split: its reviews and its targets (each record's `profile[0]`).
    pub split: Option<PathBuf>,
    /// Review JSONL files appended after the split's reviews.
    #[serde(default)]
    pub jsonl: Vec<PathBuf>,
    /// The dataset name (default: the split file's stem).
    #[serde(default)]
    pub dataset: Option<String>,
    /// The library's clean graph instead of the released notebook's.
    #[serde(default)]
    pub clean: bool,
    /// Hash partitions per review table.
    pub partitions: usize,
    /// Drop and reload the dataset if it exists.
    #[serde(default)]
    pub replace: bool,
}

/// What [`LoadSpec::run`] loaded; [`fmt::Display`] gives its report line.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadReport {
    /// The dataset.
    pub dataset: String,
    /// What the store counted.
    pub summary: LoadSummary,
    /// Partitions per review table.
    pub partitions: usize,
    /// `one server` or the shard servers.
    pub layout: String,
    /// Seconds reading the split.
    pub read_seconds: f64,
    /// Seconds loading.
    pub load_seconds: f64,
}

impl fmt::Display for LoadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.summary;
        write!(
            f,
            "loaded dataset {}: {} reviews ({} from JSONL, {} overwritten), {} users, {} targets \
             into {} partitions ({}) in {:.2}s (reading the split {:.2}s)",
            self.dataset,
            s.reviews,
            s.jsonl_reviews,
            s.overwritten,
            s.users,
            s.targets,
            self.partitions,
            self.layout,
            self.load_seconds,
            self.read_seconds
        )
    }
}

/// A store error as it is: [`crate::is_bad_input`] classifies it (a bad URL, no server, no
/// such dataset are the caller's; a failed query is not).
fn library(e: pg::Error) -> Error {
    Error::Library(Box::new(e))
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl LoadSpec {
    /// The defaults of `pgraphrag store load`: the released notebook's graph, 8 partitions,
    /// the dataset named after the split.
    pub fn new(url: impl Into<String>, split: Option<PathBuf>) -> Self {
        LoadSpec {
            url: url.into(),
            split,
            jsonl: Vec::new(),
            dataset: None,
            clean: false,
            partitions: 8,
            replace: false,
        }
    }

    /// The dataset's name: [`LoadSpec::dataset`], else the split file's stem; checked.
    pub fn dataset_name(&self) -> Result<String> {
        let name = match (&self.dataset, &self.split) {
            (Some(d), _) => d.clone(),
            (None, Some(p)) => stem(p),
            (None, None) => {
                return Err(Error::Setting(
                    "name the dataset (dataset), or give the split it is named after".into(),
                ));
            }
        };
        pg::validate_dataset_name(&name).map_err(library)?;
        Ok(name)
    }

    /// Loads the dataset, reporting the reviews copied to `progress`.
    pub fn run(&self, progress: &dyn Progress) -> Result<LoadReport> {
        let dataset = self.dataset_name()?;
        if self.partitions == 0 {
            return Err(Error::Setting("partitions must be at least 1".into()));
        }
        let t0 = Instant::now();
        let split = match &self.split {
            Some(p) => load_split(p)?,
            None => Split::default(),
        };
        let read_seconds = t0.elapsed().as_secs_f64();
        let recipe = Recipe::from_clean(self.clean);
        let opts = LoadOptions {
            graph: recipe.graph_options(),
            ids: recipe.id_policy(),
            partitions: self.partitions,
            replace: self.replace,
        };
        let mut store = PgStore::connect(&self.url).map_err(library)?;
        let layout = match store.layout().map_err(library)? {
            pg::Layout::Single => "one server".to_string(),
            pg::Layout::Sharded(shards) => {
                let names: Vec<&str> = shards.iter().map(|s| s.server.as_str()).collect();
                format!("shards {}", names.join(", "))
            }
        };
        let t1 = Instant::now();
        let summary = store
            .load(&dataset, &split, &self.jsonl, &opts, progress)
            .map_err(library)?;
        Ok(LoadReport {
            dataset,
            summary,
            partitions: self.partitions,
            layout,
            read_seconds,
            load_seconds: t1.elapsed().as_secs_f64(),
        })
    }
}

/// The store against the in-memory graph: single profile fetches (scope both) and the ranking
/// of a whole split (BM25), timed on both sides and checked to agree.
///
/// ```
/// use pgraphrag_runs::store::BenchSpec;
/// let spec = BenchSpec::new("postgres://postgres@127.0.0.1:55432/postgres", "data/amazon_dev.json".into());
/// assert_eq!((spec.fetches, spec.limit), (1000, None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchSpec {
    /// The database holding the dataset.
    pub url: String,
    /// The split the dataset was loaded from (the in-memory side).
    pub split: PathBuf,
    /// The dataset (default: the split file's stem).
    #[serde(default)]
    pub dataset: Option<String>,
    /// The task whose ranking is timed.
    pub task: Task,
    /// The dataset was loaded with the clean graph.
    #[serde(default)]
    pub clean: bool,
    /// Targets whose single profile fetches are timed.
    pub fetches: usize,
    /// Rank only the first N targets (`None`: all).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// What [`BenchSpec::run`] measured; [`fmt::Display`] gives its three report lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoreBenchReport {
    /// The dataset.
    pub dataset: String,
    /// Reviews and users of the in-memory graph.
    pub reviews: usize,
    /// Users of the in-memory graph.
    pub users: usize,
    /// Seconds building the in-memory graph.
    pub graph_seconds: f64,
    /// Profile fetches timed.
    pub fetches: usize,
    /// In-memory fetch p50 and p99, milliseconds.
    pub memory_ms: (f64, f64),
    /// PostgreSQL fetch p50 and p99, milliseconds.
    pub store_ms: (f64, f64),
    /// Targets ranked.
    pub ranked: usize,
    /// The task ranked.
    pub task: Task,
    /// Seconds ranking in memory and from the store.
    pub rank_seconds: (f64, f64),
}

impl fmt::Display for StoreBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.ranked as f64;
        let (t_mem, t_db) = self.rank_seconds;
        writeln!(
            f,
            "dataset {}: {} reviews, {} users; in-memory graph built in {:.2}s",
            self.dataset, self.reviews, self.users, self.graph_seconds
        )?;
        writeln!(
            f,
            "profile fetch (scope both, {} targets): in-memory p50 {:.4} ms p99 {:.4} ms; PostgreSQL p50 {:.3} ms p99 {:.3} ms (p50 ratio {:.0}x)",
            self.fetches,
            self.memory_ms.0,
            self.memory_ms.1,
            self.store_ms.0,
            self.store_ms.1,
            self.store_ms.0 / self.memory_ms.0.max(1e-9)
        )?;
        write!(
            f,
            "ranking {} targets ({:?}, bm25): in-memory {t_mem:.2}s ({:.0} users/s); PostgreSQL {t_db:.2}s ({:.0} users/s); ratio {:.2}x; identical: true",
            self.ranked,
            self.task,
            n / t_mem.max(1e-9),
            n / t_db.max(1e-9),
            t_db / t_mem.max(1e-9)
        )
    }
}

/// The `q` quantile of sorted durations, in milliseconds (nearest rank).
fn percentile(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

impl BenchSpec {
    /// The defaults of `pgraphrag store bench`: review text, 1,000 fetches, every target.
    pub fn new(url: impl Into<String>, split: PathBuf) -> Self {
        BenchSpec {
            url: url.into(),
            split,
            dataset: None,
            task: Task::Text,
            clean: false,
            fetches: 1000,
            limit: None,
        }
    }

    /// Times both sides; a profile or a ranking that differs between them is an
    /// [`Error::Work`] (the store does not hold what the graph does).
    pub fn run(&self, progress: &dyn Progress) -> Result<StoreBenchReport> {
        let dataset = self.dataset.clone().unwrap_or_else(|| stem(&self.split));
        let recipe = Recipe::from_clean(self.clean);
        let policy = recipe.id_policy();
        let t0 = Instant::now();
        let split = load_split(&self.split)?;
        let graph = recipe.graph(&split);
        let graph_seconds = t0.elapsed().as_secs_f64();
        let (targets, store) = pgraphrag_eval::store::open_for_ranking(&self.url, &dataset, recipe)
            .map_err(|e| Error::Library(e as crate::BoxError))?;
        if targets.users.len() != split.users.len() {
            return Err(Error::Setting(format!(
                "dataset {dataset} has {} targets but {} has {} records: load that split",
                targets.users.len(),
                self.split.display(),
                split.users.len()
            )));
        }
        let differs = |what: String| Error::Work {
            what,
            source: "the store does not hold what the in-memory graph does".into(),
        };
        // Single profile fetches (scope both), both sides through ProfileSource.
        let (mut mem, mut db) = (Vec::new(), Vec::new());
        for u in split.users.iter().take(self.fetches) {
            let Some(t) = u.target() else { continue };
            let item = policy.apply(&t.pid);
            let t = Instant::now();
            let want = ProfileSource::profile(&graph, &u.id, &item, Scope::Both)
                .map_err(Error::work("fetching a profile from the in-memory graph"))?;
            mem.push(t.elapsed());
            let t = Instant::now();
            let got = store
                .profile(&u.id, &item, Scope::Both)
                .map_err(Error::work("fetching a profile from the store"))?;
            db.push(t.elapsed());
            if got != want {
                return Err(differs(format!(
                    "the profile of user {} differs between the store and the graph",
                    u.id
                )));
            }
        }
        mem.sort_unstable();
        db.sort_unstable();
        let mut ranked = split.clone();
        if let Some(n) = self.limit {
            ranked.users.truncate(n);
        }
        let ranker = || ProfileRanker::new(recipe.bm25(), recipe.profile_options());
        let t = Instant::now();
        let want = rank_all(&ranked, &graph, policy, self.task, ranker(), progress)?;
        let t_mem = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let got = rank_all_from(
            &ranked,
            &store,
            policy,
            self.task,
            ranker(),
            progress,
            pgraphrag_eval::rank::FETCH_BATCH,
        )?;
        let t_db = t.elapsed().as_secs_f64();
        if got != want {
            return Err(differs(
                "the rankings differ between the store and the graph".into(),
            ));
        }
        Ok(StoreBenchReport {
            dataset,
            reviews: graph.num_reviews(),
            users: graph.num_users(),
            graph_seconds,
            fetches: mem.len(),
            memory_ms: (percentile(&mem, 0.5), percentile(&mem, 0.99)),
            store_ms: (percentile(&db, 0.5), percentile(&db, 0.99)),
            ranked: ranked.users.len(),
            task: self.task,
            rank_seconds: (t_mem, t_db),
        })
    }
}
