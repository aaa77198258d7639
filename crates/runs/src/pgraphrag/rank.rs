//! Every user's profile of a PGraphRAG split ranked into the released notebook's ranking files
//! (`pgraphrag rank`): one record per user, in file order, plus a `score` on every ranked entry.
//! By default the graph and ranking semantics are the released code's (drop-in comparable
//! files); [`RankSpec::clean`] switches to the library's cleaner choices. See `docs/ranking.md`.
use std::path::{Path, PathBuf};
use std::time::Instant;

use pgraphrag_core::{Progress, RankedProfile};
use pgraphrag_data::{RankingRecord, Split, write_rankings};
use pgraphrag_eval::rank::Candidates;
use pgraphrag_eval::{RankingSummary, Recipe, rank_all, ranking_file_name};
use pgraphrag_graph::UserItemGraph;
use pgraphrag_retrieval::dense::{ContrieverOptions, DenseRetriever, EncoderBackend};
use pgraphrag_retrieval::profile::{
    ProfileOptions, ProfileRanker, RandomReview, Task, WithRetriever,
};
use pgraphrag_retrieval::sparse::{
    Bm25Builder, Bm25Lucene, NoRetriever, PgraphragTokenizer, RandomRetriever,
};
use serde::{Deserialize, Serialize};

use super::source::{load_split, open_profiles};
use crate::jobs::StoreProfiles as Profiles;
use crate::{Error, Result};

/// The ranker of a [`RankSpec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Ranker {
    /// BM25Okapi as the notebook ranks (`rank_bm25`), the default.
    Bm25,
    /// Lucene's BM25.
    Bm25Lucene,
    /// A seeded random order.
    Random,
    /// Nothing ranked (the entries in profile order).
    None,
    /// Contriever (or any BERT folder) embeddings: the whole graph's reviews and every query
    /// encoded up front, cached in an embedding cache. Runs on a split file, not a store.
    Contriever {
        /// The BERT folder (`config.json`, `tokenizer.json`, `model.safetensors`).
        model: PathBuf,
        /// The notebook's pooler output for the documents instead of the paper's mean.
        pooler: bool,
        /// The encoder's forward pass.
        #[serde(with = "crate::names")]
        backend: EncoderBackend,
        /// The embedding cache (`None`: the output with `.emb.sqlite` appended).
        embedding_cache: Option<PathBuf>,
    },
}

impl Ranker {
    /// The name in ranking file names: `bm25`, `bm25-lucene`, `random`, `none`, `contriever`.
    pub fn name(&self) -> &'static str {
        match self {
            Ranker::Bm25 => "bm25",
            Ranker::Bm25Lucene => "bm25-lucene",
            Ranker::Random => "random",
            Ranker::None => "none",
            Ranker::Contriever { .. } => "contriever",
        }
    }
}

/// Ranks a split's users for one or more tasks.
///
/// ```
/// use pgraphrag_retrieval::profile::Task;
/// use pgraphrag_runs::pgraphrag::{RankSpec, Ranker};
/// let spec = RankSpec::notebook("amazon_dev.json", vec![Task::Rating], "amazon_dev_rating.json");
/// assert_eq!((spec.top, spec.seed, spec.ranker.name()), (5, 42, "bm25"));
/// assert_eq!(spec.file_name(Task::Title), "RANKING-amazon_dev_reviewTitle_bm25.json");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSpec {
    /// The split file: its targets and (without [`RankSpec::profiles`]) every candidate.
    pub split: Option<PathBuf>,
    /// The targets and candidates from a dataset of the PostgreSQL profile store instead
    /// (feature `postgres`); the files written are byte-identical.
    pub profiles: Option<Profiles>,
    /// The tasks (one ranking file each).
    pub tasks: Vec<Task>,
    /// The ranker.
    pub ranker: Ranker,
    /// Entries kept per list (the notebook: 5).
    pub top: usize,
    /// Seed of the random review (and of the random ranker).
    pub seed: u64,
    /// Draw a random review per user (the notebook's `random` mode).
    pub random_review: bool,
    /// The library's cleaner choices instead of the released code's.
    pub clean: bool,
    /// Only the first N users.
    pub limit: Option<usize>,
    /// The ranking file (one task) or the folder of the ranking files (several tasks).
    pub out: PathBuf,
}

/// One ranking file written.
#[derive(Debug, Clone)]
pub struct RankedFile {
    /// The task.
    pub task: Task,
    /// The file.
    pub path: PathBuf,
    /// Users ranked and their mean list lengths.
    pub summary: RankingSummary,
    /// Seconds since the run started.
    pub seconds: f64,
}

/// What a [`RankSpec`] run wrote.
#[derive(Debug, Clone)]
pub struct RankReport {
    /// Where the candidates came from (`N reviews in the graph, M overwritten`, or the store's
    /// dataset).
    pub source: String,
    /// One per task.
    pub files: Vec<RankedFile>,
}

impl RankSpec {
    /// The released notebook's ranking of `split`: BM25, top 5, a random review with seed 42.
    pub fn notebook(
        split: impl Into<PathBuf>,
        tasks: Vec<Task>,
        out: impl Into<PathBuf>,
    ) -> RankSpec {
        RankSpec {
            split: Some(split.into()),
            profiles: None,
            tasks,
            ranker: Ranker::Bm25,
            top: 5,
            seed: 42,
            random_review: true,
            clean: false,
            limit: None,
            out: out.into(),
        }
    }

    /// The recipe: the released code's, or with [`RankSpec::clean`] the library's.
    pub fn recipe(&self) -> Recipe {
        Recipe::from_clean(self.clean)
    }

    /// The split's name in file names: the split file's stem, else the store dataset's name.
    pub fn stem(&self) -> String {
        match (&self.split, &self.profiles) {
            (Some(p), _) => p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "split".into()),
            (None, Some(d)) => d.dataset.clone(),
            (None, None) => "split".into(),
        }
    }

    /// The ranking file's name for `task` (in [`RankSpec::out`] when there are several
    /// tasks).
    pub fn file_name(&self, task: Task) -> String {
        ranking_file_name(&self.stem(), task.notebook_name(), self.ranker.name())
    }

    /// The tasks, each once.
    pub fn distinct_tasks(&self) -> Vec<Task> {
        let mut tasks = self.tasks.clone();
        tasks.dedup();
        tasks
    }

    /// Ranks and writes every task's file.
    pub fn run(&self, progress: &dyn Progress) -> Result<RankReport> {
        if self.top == 0 {
            return Err(Error::Setting(
                "top must be at least 1 (the notebook uses 5)".into(),
            ));
        }
        let tasks = self.distinct_tasks();
        if tasks.is_empty() {
            return Err(Error::Setting("no task to rank".into()));
        }
        if tasks.len() > 1 {
            std::fs::create_dir_all(&self.out).map_err(Error::work(format!(
                "creating the output folder {} (with several tasks the output is a folder)",
                self.out.display()
            )))?;
        } else if let Some(dir) = self.out.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            return Err(Error::Setting(format!(
                "the folder of the output does not exist: {} (create it first)",
                dir.display()
            )));
        }
        let t0 = Instant::now();
        let recipe = self.recipe();
        let policy = recipe.id_policy();
        let (mut split, source) = self.open_source(recipe)?;
        if let Some(n) = self.limit {
            split.users.truncate(n);
        }
        let mut popts = recipe.profile_options();
        popts.k = self.top;
        popts.random = if self.random_review {
            RandomReview::Python { seed: self.seed }
        } else {
            RandomReview::Off
        };
        let described = describe(&source);
        let mut files = Vec::new();
        if tasks.len() > 1 {
            let outs: Vec<(Task, PathBuf)> = tasks
                .iter()
                .map(|&t| (t, self.out.join(self.file_name(t))))
                .collect();
            if let (Ranker::Bm25, Candidates::Graph(graph)) = (&self.ranker, &source) {
                // Tokenize every review once, then rank the tasks in parallel, each with its
                // own copy of the token cache and its own random stream (as separate runs
                // would). Parallel tasks report no progress (one bar cannot show several).
                let mut warm = recipe.bm25();
                let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
                let graph: &UserItemGraph = graph;
                warm.warm_parallel(graph, threads);
                let (split, warm) = (&split, &warm);
                files = std::thread::scope(|sc| -> Result<Vec<RankedFile>> {
                    let handles: Vec<_> = outs
                        .iter()
                        .map(|(task, out)| {
                            sc.spawn(move || -> Result<RankedFile> {
                                let ranker = ProfileRanker::new(warm.clone(), popts);
                                let records = rank_all(split, graph, policy, *task, ranker, &())?;
                                write(records, *task, out, t0)
                            })
                        })
                        .collect();
                    let mut files = Vec::new();
                    for h in handles {
                        match h.join() {
                            Ok(r) => files.push(r?),
                            Err(e) => std::panic::resume_unwind(e),
                        }
                    }
                    Ok(files)
                })?;
            } else {
                for (task, out) in &outs {
                    let records = self.rank_task(&split, &source, *task, popts, progress)?;
                    files.push(write(records, *task, out, t0)?);
                }
            }
        } else {
            let task = tasks[0];
            let records = self.rank_task(&split, &source, task, popts, progress)?;
            files.push(write(records, task, &self.out, t0)?);
        }
        Ok(RankReport {
            source: described,
            files,
        })
    }

    fn open_source(&self, recipe: Recipe) -> Result<(Split, Candidates)> {
        if let Some(p) = &self.profiles {
            return open_profiles(p, recipe);
        }
        let Some(path) = &self.split else {
            return Err(Error::Setting(
                "a split file is needed (or a store dataset)".into(),
            ));
        };
        let split = load_split(path)?;
        let graph = recipe.graph(&split);
        Ok((split, Candidates::Graph(Box::new(graph))))
    }

    fn rank_task(
        &self,
        split: &Split,
        source: &Candidates,
        task: Task,
        mut popts: ProfileOptions,
        progress: &dyn Progress,
    ) -> Result<Vec<RankedProfile>> {
        let recipe = self.recipe();
        let policy = recipe.id_policy();
        let records = match &self.ranker {
            Ranker::Bm25 => {
                let r = recipe.bm25();
                source.rank_all(split, policy, task, ProfileRanker::new(r, popts), progress)?
            }
            Ranker::Bm25Lucene => {
                let r = WithRetriever(
                    Bm25Lucene::new(PgraphragTokenizer).with_tie_order(recipe.tie_order()),
                );
                source.rank_all(split, policy, task, ProfileRanker::new(r, popts), progress)?
            }
            Ranker::Random => {
                // The notebook has no random ranker: draw the random review over graph order.
                popts.random_via_ranker = false;
                let r = WithRetriever(RandomRetriever::new(self.seed));
                source.rank_all(split, policy, task, ProfileRanker::new(r, popts), progress)?
            }
            Ranker::None => {
                // Nothing is ranked; the random review is drawn over graph order.
                popts.random_via_ranker = false;
                let r = WithRetriever(NoRetriever);
                source.rank_all(split, policy, task, ProfileRanker::new(r, popts), progress)?
            }
            Ranker::Contriever { .. } => {
                // The notebook runs Contriever without the BM25 path, so nothing is dropped.
                let dense = recipe.dense_profile_options();
                popts.empty_docs = dense.empty_docs;
                popts.duplicate_texts = dense.duplicate_texts;
                popts.single_neighbor = dense.single_neighbor;
                let queries: Vec<String> = split
                    .users
                    .iter()
                    .filter_map(|u| u.profile.first())
                    .map(|t| task.query(t.title.as_deref(), t.text.as_deref()))
                    .collect();
                let Some(graph) = source.graph() else {
                    return Err(Error::Setting(
                        "the contriever ranker embeds every review of the graph: it runs on a split file, not a store"
                            .into(),
                    ));
                };
                let r = self.dense_retriever(graph, &queries, progress)?;
                source.rank_all(
                    split,
                    policy,
                    task,
                    ProfileRanker::new(WithRetriever(r), popts),
                    progress,
                )?
            }
        };
        Ok(records)
    }

    fn dense_retriever(
        &self,
        graph: &UserItemGraph,
        queries: &[String],
        progress: &dyn Progress,
    ) -> Result<DenseRetriever> {
        let Ranker::Contriever {
            model,
            pooler,
            backend,
            embedding_cache,
        } = &self.ranker
        else {
            return Err(Error::Setting("not a dense ranker".into()));
        };
        if !model.is_dir() {
            return Err(Error::Setting(format!(
                "the dense model {}: not a folder (expected config.json, tokenizer.json, model.safetensors)",
                model.display()
            )));
        }
        let cache = embedding_cache
            .clone()
            .unwrap_or_else(|| default_cache(&self.out));
        let recipe = if *pooler {
            ContrieverOptions::notebook()
        } else {
            ContrieverOptions::paper()
        };
        let r = DenseRetriever::contriever(model, recipe.backend(*backend).cache(&cache)).map_err(
            Error::work(format!("loading the dense model {}", model.display())),
        )?;
        let docs: Vec<String> = graph
            .reviews()
            .iter()
            .map(|r| r.entry.title_text())
            .collect();
        let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
        let t = Instant::now();
        r.warm(&refs, progress)
            .map_err(Error::work("embedding the split's documents"))?;
        let t_docs = t.elapsed().as_secs_f64();
        // All queries in length-sorted batches up front (not one forward pass per user).
        let q: Vec<&str> = queries.iter().map(String::as_str).collect();
        r.warm_queries(&q, progress)
            .map_err(Error::work("embedding the queries"))?;
        progress.note(&format!(
            "dense: {} documents in {t_docs:.1}s, {} queries in {:.1}s (embedding cache {})",
            refs.len(),
            q.len(),
            t.elapsed().as_secs_f64() - t_docs,
            cache.display()
        ));
        Ok(r)
    }
}

fn describe(source: &Candidates) -> String {
    match source {
        Candidates::Graph(g) => format!(
            "{} reviews in the graph, {} overwritten",
            g.num_reviews(),
            g.num_overwritten()
        ),
        #[cfg(feature = "postgres")]
        Candidates::Store(p) => format!(
            "{} reviews in store dataset {}",
            p.info().reviews,
            p.info().name
        ),
    }
}

fn write(profiles: Vec<RankedProfile>, task: Task, out: &Path, t0: Instant) -> Result<RankedFile> {
    let summary = RankingSummary::of(&profiles);
    let records: Vec<RankingRecord> = profiles.into_iter().map(RankingRecord::from).collect();
    write_rankings(out, &records).map_err(Error::work(format!("writing {}", out.display())))?;
    Ok(RankedFile {
        task,
        path: out.to_path_buf(),
        summary,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The embedding cache next to the output (`OUT.emb.sqlite`).
fn default_cache(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".emb.sqlite");
    PathBuf::from(s)
}
