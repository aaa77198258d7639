//! Offline jobs split into units for work queues: what a unit is, how a job is planned into
//! units, and the handler that runs one unit and commits its result.
//!
//! Nothing here talks to a queue: [`plan`] turns a job into units (a dedup id and a JSON
//! payload each) for any queue to carry, and [`JobRunner::run`] runs one payload, writing its
//! result through a [`ResultSink`] ([`JobStore`], SQLite) before returning. The CLI wires both
//! to the JetStream work queue of `pgraphrag-store` (`pgraphrag queue submit`,
//! `pgraphrag worker`); see `docs/queue.md`.
//!
//! Job kinds: [`JobSpec::Rank`], every user of a split ranked as `pgraphrag rank` does (BM25),
//! in chunks of users; the exported file is identical to `pgraphrag rank`'s. With the feature
//! `dense`, `JobSpec::Embed`: a corpus encoded into an embedding cache in chunks of texts (the
//! vectors `pgraphrag embed --cache` then reads instead of encoding). [`JobSpec::Summarize`]:
//! every user of a LaMP questions file summarised into a summary store in chunks of users, the
//! summaries `pgraphrag summarize` writes. [`JobSpec::Bench`]: PGraphRAG's generation grid
//! (`pgraphrag bench`) over the first users of a split in chunks of users, every answer
//! committed to a generation cache that `pgraphrag bench --cache` then reads.
//!
//! A unit is done when its records are committed; a unit delivered again (after a crash
//! between commit and ack, or a resubmission) is found done and not computed again.
//!
//! ```
//! use pgraphrag_core::Task;
//! use pgraphrag_runs::jobs::{JobRunner, JobSpec, JobStore, RankSpec, ResultSink, UnitOutcome, plan};
//! let dir = tempfile::tempdir().unwrap();
//! let split = dir.path().join("split.json");
//! std::fs::write(&split, br#"[
//!   {"id": "u1", "profile": [{"title": "soap", "text": "a", "rating": 5, "pid": "p1"}]},
//!   {"id": "u2", "profile": [{"title": "soap", "text": "c", "rating": 2, "pid": "p1"}]},
//!   {"id": "u3", "profile": [{"title": "soap", "text": "d", "rating": 3, "pid": "p1"}]}]"#).unwrap();
//! let store = dir.path().join("jobs.sqlite");
//! let spec = JobSpec::Rank(RankSpec::new(&split, Task::Title, 3));
//! let planned = plan(&spec, &store.display().to_string(), 2).unwrap();
//! assert_eq!(planned.units.len(), 2);
//! let mut runner = JobRunner::sqlite("w1");
//! for u in &planned.units {
//!     assert!(matches!(runner.run(&u.payload).unwrap(), UnitOutcome::Stored { .. }));
//! }
//! assert_eq!(runner.run(&planned.units[0].payload).unwrap(), UnitOutcome::AlreadyDone);
//! let jobs = JobStore::open(&store).unwrap().jobs().unwrap();
//! assert_eq!((jobs[0].units_done, jobs[0].records), (2, 3));
//! ```
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod bench;
#[cfg(test)]
mod bench_tests;
mod common;
mod embed;
mod rank;
mod sink;
mod summarize;
#[cfg(test)]
mod summarize_tests;

pub use bench::BenchSpec;
use common::UnitRange;
pub use common::{Error, Result};
pub use embed::{EmbedSpec, count_texts};
pub use rank::{RankSpec, StoreProfiles, export_ranking};
pub use sink::{JobInfo, JobProgress, JobStore, ResultSink, UnitDone};
pub use summarize::{SummarizeSpec, count_users};

/// A job: what to compute, independent of how it is split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum JobSpec {
    /// Rank every user of a split.
    Rank(RankSpec),
    /// Encode a corpus into an embedding cache.
    Embed(EmbedSpec),
    /// Summarise every user of a LaMP questions file into a summary store.
    Summarize(SummarizeSpec),
    /// Answer PGraphRAG's generation grid for the first users of a split into a generation
    /// cache.
    Bench(Box<BenchSpec>),
}

impl JobSpec {
    /// The kind (`rank`, `embed`, `summarize`, `bench`), the unit subject token.
    pub fn kind(&self) -> &'static str {
        match self {
            JobSpec::Rank(_) => "rank",
            JobSpec::Embed(_) => "embed",
            JobSpec::Summarize(_) => "summarize",
            JobSpec::Bench(_) => "bench",
        }
    }

    /// The records the whole job produces.
    pub fn items(&self) -> usize {
        match self {
            JobSpec::Rank(r) => r.users,
            JobSpec::Embed(e) => e.texts_count,
            JobSpec::Summarize(s) => s.users,
            JobSpec::Bench(b) => b.rank.users,
        }
    }
}

/// One unit as carried by a queue (the payload is this, as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitMessage {
    /// The job id.
    pub job: String,
    /// The unit number (0-based).
    pub unit: u64,
    /// Where results go (a SQLite file path).
    pub store: String,
    /// Units of the job.
    pub units: u64,
    /// First item (user index) of the unit.
    pub start: usize,
    /// One past its last item.
    pub end: usize,
    /// The job.
    pub spec: JobSpec,
}

impl UnitMessage {
    /// The part of the unit a handler reads.
    fn range(&self) -> UnitRange<'_> {
        UnitRange {
            job: &self.job,
            unit: self.unit,
            start: self.start,
            end: self.end,
        }
    }
}

/// A unit ready for a queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedUnit {
    /// The kind (the queue subject token).
    pub kind: &'static str,
    /// The dedup id: `{job}.{unit}`.
    pub id: String,
    /// The [`UnitMessage`] as JSON.
    pub payload: Vec<u8>,
}

/// A job split into units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The job (register it in the store before submitting).
    pub job: JobInfo,
    /// Its units, in item order.
    pub units: Vec<PlannedUnit>,
}

/// Splits `spec` into units of `chunk` items (the last may be smaller), results to `store`.
/// The job id is a hash of the specification and the store, so planning the same job twice
/// gives the same ids and a queue that deduplicates by id takes it once.
pub fn plan(spec: &JobSpec, store: &str, chunk: usize) -> Result<Plan> {
    if chunk == 0 {
        return Err(Error::InvalidJob(
            "the chunk size must be at least 1".into(),
        ));
    }
    let items = spec.items();
    if items == 0 {
        return Err(Error::InvalidJob("the job has no items".into()));
    }
    let spec_json = serde_json::to_string(spec).map_err(|e| Error::InvalidJob(e.to_string()))?;
    let digest = Sha256::digest(format!("{spec_json}\n{store}").as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let id = format!("{}-{hex}", spec.kind());
    let n = items.div_ceil(chunk) as u64;
    let units = (0..n)
        .map(|u| {
            let start = u as usize * chunk;
            let msg = UnitMessage {
                job: id.clone(),
                unit: u,
                store: store.to_string(),
                units: n,
                start,
                end: (start + chunk).min(items),
                spec: spec.clone(),
            };
            let payload = serde_json::to_vec(&msg).map_err(|e| Error::InvalidJob(e.to_string()))?;
            Ok(PlannedUnit {
                kind: spec.kind(),
                id: format!("{id}.{u}"),
                payload,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Plan {
        job: JobInfo {
            id,
            kind: spec.kind().to_string(),
            spec: spec_json,
            units: n,
            items: items as u64,
        },
        units,
    })
}

/// What [`JobRunner::run`] did with a unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnitOutcome {
    /// Computed and committed.
    Stored {
        /// Items done: records stored (ranking), texts encoded into their cache, users
        /// summarised (or found summarised) into their summary store, or users whose grid
        /// prompts are all answered in the generation cache (bench).
        items: usize,
        /// Seconds the computation took.
        seconds: f64,
    },
    /// Its result was already stored: nothing computed.
    AlreadyDone,
}

/// Opens the result sink a unit names.
type SinkOpener = Box<dyn Fn(&str) -> Result<Arc<dyn ResultSink>> + Send>;

/// Runs units: keeps what is costly to rebuild between units (loaded splits, rankers, open
/// stores), so a worker pays for a split once. Stateless as far as the queue is concerned:
/// everything a unit needs is in its payload.
pub struct JobRunner {
    worker: String,
    open_sink: SinkOpener,
    sinks: HashMap<String, Arc<dyn ResultSink>>,
    registered: HashSet<String>,
    rank: rank::RankCache,
    embed: embed::EmbedCache,
    summarize: summarize::SummarizeCache,
    bench: bench::BenchCache,
}

impl JobRunner {
    /// A runner named `worker` whose units' stores are SQLite files ([`JobStore`]).
    pub fn sqlite(worker: impl Into<String>) -> Self {
        Self::with_sinks(worker, |store: &str| {
            if store.contains("://") {
                return Err(Error::UnsupportedStore {
                    store: store.to_string(),
                });
            }
            let s: Arc<dyn ResultSink> = Arc::new(JobStore::open(std::path::Path::new(store))?);
            Ok(s)
        })
    }

    /// A runner that opens each unit's store with `open` (e.g. a PostgreSQL backend).
    pub fn with_sinks(
        worker: impl Into<String>,
        open: impl Fn(&str) -> Result<Arc<dyn ResultSink>> + Send + 'static,
    ) -> Self {
        JobRunner {
            worker: worker.into(),
            open_sink: Box::new(open),
            sinks: HashMap::new(),
            registered: HashSet::new(),
            rank: rank::RankCache::default(),
            embed: embed::EmbedCache::default(),
            summarize: summarize::SummarizeCache::default(),
            bench: bench::BenchCache::default(),
        }
    }

    /// Runs one unit (a [`UnitMessage`] as JSON): returns [`UnitOutcome::AlreadyDone`] when
    /// its store has it, else computes it and commits its records with its done mark in one
    /// transaction before returning.
    pub fn run(&mut self, payload: &[u8]) -> Result<UnitOutcome> {
        let msg: UnitMessage = serde_json::from_slice(payload).map_err(|e| Error::BadUnit {
            reason: e.to_string(),
        })?;
        if msg.start >= msg.end || msg.end > msg.spec.items() {
            return Err(Error::BadUnit {
                reason: format!(
                    "items {}..{} of a job of {}",
                    msg.start,
                    msg.end,
                    msg.spec.items()
                ),
            });
        }
        let sink = match self.sinks.get(&msg.store) {
            Some(s) => Arc::clone(s),
            None => {
                let s = (self.open_sink)(&msg.store)?;
                self.sinks.insert(msg.store.clone(), Arc::clone(&s));
                s
            }
        };
        if !self.registered.contains(&msg.job) {
            let spec = serde_json::to_string(&msg.spec).map_err(|e| Error::BadUnit {
                reason: e.to_string(),
            })?;
            sink.register(&JobInfo {
                id: msg.job.clone(),
                kind: msg.spec.kind().to_string(),
                spec,
                units: msg.units,
                items: msg.spec.items() as u64,
            })?;
            self.registered.insert(msg.job.clone());
        }
        if sink.is_done(&msg.job, msg.unit)? {
            return Ok(UnitOutcome::AlreadyDone);
        }
        let t = Instant::now();
        // Rows for the store, and the items done (records, texts encoded, users summarised).
        let (records, n) = match &msg.spec {
            JobSpec::Rank(spec) => {
                let r = self.rank.run(msg.range(), spec)?;
                let n = r.len();
                (r, n)
            }
            JobSpec::Embed(spec) => (Vec::new(), self.embed.run(msg.range(), spec)?),
            JobSpec::Summarize(spec) => (Vec::new(), self.summarize.run(msg.range(), spec)?),
            JobSpec::Bench(spec) => (Vec::new(), self.bench.run(msg.range(), spec)?),
        };
        let seconds = t.elapsed().as_secs_f64();
        let done = UnitDone {
            worker: &self.worker,
            seconds,
        };
        if sink.put_unit(&msg.job, msg.unit, &records, &done)? {
            Ok(UnitOutcome::Stored { items: n, seconds })
        } else {
            Ok(UnitOutcome::AlreadyDone)
        }
    }
}

/// The SmolLM2 model of the job tests: `None` (skipped, with a message) when it is missing,
/// except under `CI=true`, where `scripts/test.sh` fetches it and a missing model fails.
#[cfg(test)]
pub(crate) fn test_model() -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models/SmolLM2-135M-Instruct.Q4_1.gguf");
    if p.is_file() {
        return Some(p);
    }
    let msg = format!(
        "the SmolLM2 model is missing at {} (scripts/fetch-llms.sh --smollm-only)",
        p.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("SKIPPED: {msg}");
    None
}

/// A split of 7 users over 3 items, so users have neighbours and random reviews vary.
#[cfg(test)]
pub(crate) fn test_split(dir: &std::path::Path) -> std::path::PathBuf {
    let mut users = Vec::new();
    for u in 0..7 {
        let profile: Vec<serde_json::Value> = (0..3)
            .map(|k| {
                serde_json::json!({"title": format!("title {u} {k}"), "text": format!("soap {} nice {k}", u % 3),
                 "rating": (u + k) % 5 + 1, "pid": format!("p{}", (u + k) % 3)})
            })
            .collect();
        users.push(serde_json::json!({"id": format!("u{u}"), "profile": profile}));
    }
    let p = dir.join("split.json");
    std::fs::write(&p, serde_json::to_vec(&users).unwrap()).unwrap();
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgraphrag_core::{NoProgress, Task};
    use pgraphrag_data::RankingRecord;

    #[test]
    fn units_in_any_order_on_two_runners_give_rank_all_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let split_path = test_split(dir.path());
        let store = dir.path().join("jobs.sqlite");
        let spec = RankSpec::new(&split_path, Task::Text, 7);
        let planned = plan(
            &JobSpec::Rank(spec.clone()),
            &store.display().to_string(),
            2,
        )
        .unwrap();
        assert_eq!(planned.units.len(), 4);
        let (mut a, mut b) = (JobRunner::sqlite("a"), JobRunner::sqlite("b"));
        // Out of order, alternating runners: both replay the random stream as needed.
        for (i, u) in [3, 1, 0, 2].iter().enumerate() {
            let r = if i % 2 == 0 { &mut a } else { &mut b };
            assert!(matches!(
                r.run(&planned.units[*u].payload).unwrap(),
                UnitOutcome::Stored { .. }
            ));
        }
        assert_eq!(
            b.run(&planned.units[3].payload).unwrap(),
            UnitOutcome::AlreadyDone
        );
        let out = dir.path().join("queue.json");
        let sink = JobStore::open(&store).unwrap();
        assert_eq!(export_ranking(&sink, &planned.job.id, &out).unwrap(), 7);

        let split = pgraphrag_data::load_split(&split_path).unwrap();
        let recipe = spec.recipe();
        let graph = recipe.graph(&split);
        let ranker =
            pgraphrag_retrieval::profile::ProfileRanker::new(recipe.bm25(), spec.profile_options());
        let all = pgraphrag_eval::rank_all(
            &split,
            &graph,
            recipe.id_policy(),
            Task::Text,
            ranker,
            &NoProgress,
        )
        .unwrap();
        let records: Vec<RankingRecord> = all.into_iter().map(RankingRecord::from).collect();
        assert!(records.iter().any(|r| r.random_review.is_some()));
        let direct = dir.path().join("direct.json");
        pgraphrag_data::write_rankings(&direct, &records).unwrap();
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&direct).unwrap()
        );
        let p = &sink.jobs().unwrap()[0];
        assert_eq!((p.units_done, p.records, p.stores), (4, 7, 4));
        assert_eq!(p.workers, [("a".to_string(), 2), ("b".to_string(), 2)]);
    }

    #[test]
    fn bad_payloads_and_stores_are_typed_errors() {
        let mut r = JobRunner::sqlite("w");
        let e = r.run(b"not json").unwrap_err();
        assert!(matches!(e, Error::BadUnit { .. }), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let split_path = test_split(dir.path());
        let spec = JobSpec::Rank(RankSpec::new(&split_path, Task::Title, 7));
        let p = plan(&spec, "postgres://db/x", 7).unwrap();
        let e = r.run(&p.units[0].payload).unwrap_err();
        assert!(matches!(e, Error::UnsupportedStore { .. }), "{e}");
        // A split that lost users since submission.
        let store = dir.path().join("s.sqlite").display().to_string();
        let big = JobSpec::Rank(RankSpec::new(&split_path, Task::Title, 9));
        let p = plan(&big, &store, 9).unwrap();
        let mut msg: UnitMessage = serde_json::from_slice(&p.units[0].payload).unwrap();
        msg.end = 9;
        let e = r.run(&serde_json::to_vec(&msg).unwrap()).unwrap_err();
        assert!(
            e.to_string()
                .contains("changed since the job was submitted"),
            "{e}"
        );
        assert!(plan(&spec, &store, 0).is_err());
    }
}
