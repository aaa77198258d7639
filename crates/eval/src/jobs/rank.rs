//! The ranking job: every user of a split, BM25, as `pgraphrag rank` ranks them.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pgraphrag_core::{NoProgress, Task};
use pgraphrag_data::{RankingRecord, Split, write_rankings};
use pgraphrag_graph::UserItemGraph;
use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, RandomReview};
use serde::{Deserialize, Serialize};

use super::{Error, Result, ResultSink, UnitMessage};
use crate::Recipe;
use crate::rank::rank_users;

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
        }
    }

    /// The recipe.
    pub fn recipe(&self) -> Recipe {
        if self.clean {
            Recipe::Clean
        } else {
            Recipe::ReleasedCode
        }
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

/// A loaded split and its graph.
struct Loaded {
    path: PathBuf,
    clean: bool,
    split: Split,
    graph: UserItemGraph,
}

/// A job's ranker and the user its random stream has reached.
struct Positioned {
    ranker: ProfileRanker<CachedBm25>,
    next: usize,
}

/// What a worker keeps between ranking units: the last split loaded, one ranker per job.
#[derive(Default)]
pub(crate) struct RankCache {
    loaded: Option<Arc<Loaded>>,
    rankers: HashMap<String, Positioned>,
}

impl RankCache {
    fn load(&mut self, spec: &RankSpec) -> Result<Arc<Loaded>> {
        if let Some(l) = &self.loaded
            && l.path == spec.split
            && l.clean == spec.clean
        {
            return Ok(Arc::clone(l));
        }
        self.loaded = None;
        self.rankers.clear();
        let split = pgraphrag_data::load_split(&spec.split).map_err(|e| Error::Input {
            path: spec.split.clone(),
            reason: pgraphrag_core::error_chain(&e),
        })?;
        if split.users.len() < spec.users {
            return Err(Error::Input {
                path: spec.split.clone(),
                reason: format!(
                    "it has {} users, the job ranks {}: the file changed since the job was submitted",
                    split.users.len(),
                    spec.users
                ),
            });
        }
        let graph = spec.recipe().graph(&split);
        let l = Arc::new(Loaded {
            path: spec.split.clone(),
            clean: spec.clean,
            split,
            graph,
        });
        self.loaded = Some(Arc::clone(&l));
        Ok(l)
    }

    /// Ranks the unit's users into `(user index, RankingRecord JSON)` rows.
    ///
    /// The random review comes from one seeded stream over the split in file order. A ranker
    /// that has not just ranked the users before this unit replays them first (results
    /// dropped), so every unit gets the random reviews `pgraphrag rank` draws; a worker that
    /// takes consecutive units replays nothing.
    pub(crate) fn run(&mut self, msg: &UnitMessage, spec: &RankSpec) -> Result<Vec<(u64, String)>> {
        let loaded = self.load(spec)?;
        let recipe = spec.recipe();
        let policy = recipe.id_policy();
        let work = |source: crate::Error| Error::Work {
            job: msg.job.clone(),
            unit: msg.unit,
            source: Box::new(source),
        };
        let fresh = || Positioned {
            ranker: ProfileRanker::new(recipe.bm25(), spec.profile_options()),
            next: 0,
        };
        let p = self.rankers.entry(msg.job.clone()).or_insert_with(fresh);
        if spec.random_seed.is_some() && p.next != msg.start {
            if p.next > msg.start {
                // Keep the warm token cache, restart the random stream.
                p.ranker =
                    ProfileRanker::new(p.ranker.ranker_mut().clone(), spec.profile_options());
                p.next = 0;
            }
            rank_users(
                &loaded.split,
                &loaded.graph,
                policy,
                spec.task,
                &mut p.ranker,
                p.next..msg.start,
                &NoProgress,
            )
            .map_err(work)?;
        }
        let profiles = rank_users(
            &loaded.split,
            &loaded.graph,
            policy,
            spec.task,
            &mut p.ranker,
            msg.start..msg.end,
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

/// Writes a finished ranking job's records to `out` as a ranking file (the format and bytes of
/// `pgraphrag rank --out`). Fails with [`Error::Incomplete`] while units are missing.
/// Returns the number of records.
///
/// ```
/// use pgraphrag_eval::jobs::{JobInfo, JobStore, ResultSink, export_ranking};
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
