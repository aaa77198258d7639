//! The ranking job: every user of a split, BM25, as `pgraphrag rank` ranks them.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pgraphrag_core::{NoProgress, Task};
use pgraphrag_data::{RankingRecord, Split, write_rankings};
use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, RandomReview};
use serde::{Deserialize, Serialize};

use super::common::{Error, Result, UnitRange};
use super::sink::ResultSink;
use pgraphrag_eval::Recipe;
use pgraphrag_eval::rank::Candidates;

/// What a ranking job ranks: the options of `pgraphrag rank --retriever bm25`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankSpec {
    /// The split file (an absolute path: workers may run elsewhere in the tree).
    pub split: PathBuf,
    /// The task.
    pub task: Task,
    /// The library's clean semantics instead of the released notebook's.
    pub clean: bool,
    /// Reviews kept per list.
    pub top: usize,
    /// The random review's seed (`None`: no random review).
    pub random_seed: Option<u64>,
    /// Users ranked: the first `users` of the split.
    pub users: usize,
    /// Read the targets and the profiles from a PostgreSQL profile store instead of the split
    /// file (workers need the feature `postgres`); `split` then only names the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiles: Option<StoreProfiles>,
}

/// A dataset of the PostgreSQL profile store (`pgraphrag store load`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreProfiles {
    /// The connection URL (`postgres://USER@HOST:PORT/DATABASE`; the coordinator of a
    /// sharded cluster). It travels in every unit: keep passwords out of it (trust or
    /// certificate authentication on the workers' network).
    pub url: String,
    /// The dataset.
    pub dataset: String,
}

impl RankSpec {
    /// The defaults of `pgraphrag rank`: the released notebook's semantics, top 5, random
    /// review seeded 42, the first `users` users.
    pub fn new(split: &Path, task: Task, users: usize) -> Self {
        RankSpec {
            split: split.to_path_buf(),
            task,
            clean: false,
            top: 5,
            random_seed: Some(42),
            users,
            profiles: None,
        }
    }

    /// [`RankSpec::new`] over a dataset of the PostgreSQL profile store: the first `users` of
    /// its targets, ranked from its profiles (a worker built with the feature `postgres`).
    ///
    /// ```
    /// use pgraphrag_core::Task;
    /// use pgraphrag_runs::jobs::RankSpec;
    /// let s = RankSpec::from_store("postgres://postgres@127.0.0.1:55432/postgres", "amazon_dev", Task::Title, 2500);
    /// assert_eq!(s.profiles.unwrap().dataset, "amazon_dev");
    /// ```
    pub fn from_store(url: &str, dataset: &str, task: Task, users: usize) -> Self {
        RankSpec {
            profiles: Some(StoreProfiles {
                url: url.to_string(),
                dataset: dataset.to_string(),
            }),
            ..RankSpec::new(Path::new(dataset), task, users)
        }
    }

    /// The recipe.
    pub fn recipe(&self) -> Recipe {
        Recipe::from_clean(self.clean)
    }

    /// The profile options (as `pgraphrag rank` sets them).
    pub fn profile_options(&self) -> ProfileOptions {
        let mut o = self.recipe().profile_options();
        o.k = self.top;
        o.random = match self.random_seed {
            Some(seed) => RandomReview::Python { seed },
            None => RandomReview::Off,
        };
        o
    }
}

/// A job's targets and profiles, as loaded.
struct Loaded {
    /// The file, or the store's URL and dataset.
    key: String,
    clean: bool,
    split: Split,
    profiles: Candidates,
}

/// A job's ranker and the user its random stream has reached.
struct Positioned {
    ranker: ProfileRanker<CachedBm25>,
    next: usize,
}

/// What a worker keeps between ranking units: the last source loaded, one ranker per job.
#[derive(Default)]
pub(crate) struct RankCache {
    loaded: Option<Loaded>,
    rankers: HashMap<String, Positioned>,
}

/// The key of a spec's source.
fn source_key(spec: &RankSpec) -> String {
    match &spec.profiles {
        Some(p) => format!("postgres {} {}", p.url, p.dataset),
        None => format!("file {}", spec.split.display()),
    }
}

/// Loads a spec's targets and profiles.
fn load(spec: &RankSpec) -> Result<Loaded> {
    let (split, profiles) = match &spec.profiles {
        None => {
            let split = pgraphrag_data::load_split(&spec.split)
                .and_then(|s| s.check_unique_ids(&spec.split).map(|()| s))
                .map_err(|e| Error::Input {
                    path: spec.split.clone(),
                    reason: pgraphrag_core::error_chain(&e),
                })?;
            let graph = spec.recipe().graph(&split);
            (split, Candidates::Graph(Box::new(graph)))
        }
        #[cfg(feature = "postgres")]
        Some(p) => {
            let (split, store) =
                pgraphrag_eval::store::open_for_ranking(&p.url, &p.dataset, spec.recipe())
                    .map_err(Error::Profiles)?;
            (split, Candidates::Store(Box::new(store)))
        }
        #[cfg(not(feature = "postgres"))]
        Some(p) => {
            return Err(Error::InvalidJob(format!(
                "the job reads dataset {} from a PostgreSQL profile store, and this worker was built \
                 without the feature `postgres` (build pgraphrag-cli with --features postgres)",
                p.dataset
            )));
        }
    };
    if split.users.len() < spec.users {
        return Err(Error::Input {
            path: spec.split.clone(),
            reason: format!(
                "it has {} users, the job ranks {}: the data changed since the job was submitted",
                split.users.len(),
                spec.users
            ),
        });
    }
    Ok(Loaded {
        key: source_key(spec),
        clean: spec.clean,
        split,
        profiles,
    })
}

impl RankCache {
    /// Ranks the unit's users into `(user index, RankingRecord JSON)` rows.
    ///
    /// The random review comes from one seeded stream over the split in file order. A ranker
    /// whose stream has not reached this unit's first user advances it with
    /// [`ProfileRanker::skip`] (the draws ranking those users would make, without ranking
    /// them), so every unit gets the random reviews `pgraphrag rank` draws.
    ///
    /// A unit that fails drops the loaded source (a store's connection, say), so the next
    /// delivery starts from a fresh one.
    pub(crate) fn run(
        &mut self,
        msg: UnitRange<'_>,
        spec: &RankSpec,
    ) -> Result<Vec<(u64, String)>> {
        let key = source_key(spec);
        if !matches!(&self.loaded, Some(l) if l.key == key && l.clean == spec.clean) {
            self.loaded = None;
            self.rankers.clear();
            self.loaded = Some(load(spec)?);
        }
        let result = self.rank_unit(msg, spec);
        if result.is_err() {
            self.loaded = None;
            self.rankers.remove(msg.job);
        }
        result
    }

    fn rank_unit(&mut self, msg: UnitRange<'_>, spec: &RankSpec) -> Result<Vec<(u64, String)>> {
        let Some(loaded) = &self.loaded else {
            return Err(Error::InvalidJob("no source loaded".into()));
        };
        let recipe = spec.recipe();
        let policy = recipe.id_policy();
        let work = |source: pgraphrag_eval::Error| Error::Work {
            job: msg.job.to_string(),
            unit: msg.unit,
            source: Box::new(source),
        };
        let fresh = || Positioned {
            ranker: ProfileRanker::new(recipe.bm25(), spec.profile_options()),
            next: 0,
        };
        let p = self
            .rankers
            .entry(msg.job.to_string())
            .or_insert_with(fresh);
        if spec.random_seed.is_some() && p.next != msg.start {
            if p.next > msg.start {
                // Keep the warm token cache, restart the random stream.
                p.ranker =
                    ProfileRanker::new(p.ranker.ranker_mut().clone(), spec.profile_options());
                p.next = 0;
            }
            skip_users(loaded, policy, &mut p.ranker, p.next..msg.start).map_err(work)?;
        }
        let range = msg.start..msg.end;
        let profiles = loaded
            .profiles
            .rank_users(
                &loaded.split,
                policy,
                spec.task,
                &mut p.ranker,
                range,
                &NoProgress,
            )
            .map_err(work)?;
        p.next = msg.end;
        profiles
            .into_iter()
            .enumerate()
            .map(|(i, prof)| {
                let rec = RankingRecord::from(prof);
                serde_json::to_string(&rec)
                    .map(|s| ((msg.start + i) as u64, s))
                    .map_err(|e| Error::InvalidJob(format!("serialising a ranking record: {e}")))
            })
            .collect()
    }
}

/// Advances `ranker`'s random stream past the users `users` of the split.
fn skip_users(
    loaded: &Loaded,
    policy: pgraphrag_data::IdPolicy,
    ranker: &mut ProfileRanker<CachedBm25>,
    users: std::ops::Range<usize>,
) -> pgraphrag_eval::Result<()> {
    match &loaded.profiles {
        Candidates::Graph(g) => {
            pgraphrag_eval::skip_users(&loaded.split, g.as_ref(), policy, ranker, users)
        }
        #[cfg(feature = "postgres")]
        Candidates::Store(s) => {
            pgraphrag_eval::skip_users(&loaded.split, s.as_ref(), policy, ranker, users)
        }
    }
}

/// Writes a finished ranking job's records to `out` as a ranking file (the format and bytes of
/// `pgraphrag rank --out`). Fails with [`Error::Incomplete`] while units are missing.
/// Returns the number of records.
///
/// ```
/// use pgraphrag_runs::jobs::{JobInfo, JobStore, ResultSink, export_ranking};
/// let store = JobStore::in_memory().unwrap();
/// store.register(&JobInfo { id: "rank-1".into(), kind: "rank".into(), spec: "{}".into(), units: 1, items: 1 }).unwrap();
/// let out = tempfile::tempdir().unwrap().path().join("r.json");
/// assert!(export_ranking(&store, "rank-1", &out).is_err()); // nothing stored yet
/// ```
pub fn export_ranking(sink: &dyn ResultSink, job: &str, out: &Path) -> Result<usize> {
    let progress = sink
        .jobs()?
        .into_iter()
        .find(|p| p.job.id == job)
        .ok_or_else(|| Error::InvalidJob(format!("no job {job} in this store")))?;
    if progress.records < progress.job.items {
        return Err(Error::Incomplete {
            job: job.to_string(),
            done: progress.records,
            total: progress.job.items,
        });
    }
    let records = sink
        .records(job)?
        .iter()
        .map(|s| serde_json::from_str::<RankingRecord>(s))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::BadUnit {
            reason: format!("a stored record of job {job} is not a ranking record: {e}"),
        })?;
    write_rankings(out, &records).map_err(|e| Error::Io {
        path: out.to_path_buf(),
        source: std::io::Error::other(pgraphrag_core::error_chain(&e)),
    })?;
    Ok(records.len())
}
