//! The evaluation recipe: a dataset's rows, titles, KG entities, popularity and candidate
//! sets ([`EvalData`]), and the loop that scores every (row, method, M) once
//! ([`evaluate`]).
use std::collections::{BTreeMap, BTreeSet, HashSet};

use pgraphrag_core::Progress;
use pgraphrag_graph::kg::EntityId;
use serde::{Deserialize, Serialize};

use crate::popularity::Training;
use crate::{
    CandidateSampler, CandidateSet, Counted, Error, EvalConfig, Kaping, KgRetriever, LetterScorer,
    Method, Ml1m, Ml100k, MovieKg, Popularity, Recommender, Result, Row, ScoredRow, leave_one_out,
    link_ml1m, ml100k_titles,
};

/// Which dataset a run evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dataset {
    /// MovieLens-100K, leave-one-out rows (one per user, by user id).
    Ml100k,
    /// The MovieLens-1M slice's `test_filtered.csv` rows.
    Ml1m,
}

impl Dataset {
    /// `ml100k` or `ml1m`.
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Ml100k => "ml100k",
            Dataset::Ml1m => "ml1m",
        }
    }
}

impl<'a> Recommender<'a> {
    /// The recommender for `data`: its entities, popularity and titles, `retriever` (and its
    /// knowledge graph) for KG-Text, `kaping` for KAPING, prompts per `config`.
    ///
    /// ```
    /// # use pgraphrag_recsys::{EvalConfig, EvalData, Kaping, KgRetriever, Recommender};
    /// # fn f<'a>(d: &'a EvalData, r: &'a KgRetriever<'a>, k: &'a Kaping<'a>) -> Recommender<'a> {
    /// Recommender::over(d, r, k, EvalConfig::default())
    /// # }
    /// ```
    pub fn over(
        data: &'a EvalData,
        retriever: &'a KgRetriever<'a>,
        kaping: &'a Kaping<'a>,
        config: EvalConfig,
    ) -> Self {
        Recommender {
            kg: retriever.kg(),
            entities: &data.entities,
            retriever,
            kaping,
            popularity: &data.popularity,
            titles: &data.titles,
            config,
            training: &data.training,
        }
    }
}

/// What [`evaluate`] reads of one dataset: the rows (with their index in the dataset, which
/// seeds their candidate sets), titles, the items' KG entities, popularity, the catalogue
/// candidates are drawn from, and what each user interacted with.
pub struct EvalData {
    /// The dataset.
    pub dataset: Dataset,
    /// `(index, row)`, in index order.
    pub rows: Vec<(usize, Row)>,
    /// Item → title as the prompts show it (ML-100K `.item` titles; ML-1M
    /// `movies_id_name.txt`, the released prompts' names).
    pub titles: BTreeMap<u32, String>,
    /// Item → KG entity (ML-100K `.link`; ML-1M through [`link_ml1m`]).
    pub entities: BTreeMap<u32, EntityId>,
    /// Popularity over the catalogue (`Counted::All`).
    pub popularity: Popularity,
    /// Candidate catalogue, ascending.
    pub catalogue: Vec<u32>,
    /// For ML-100K, every item each user rated (negatives avoid them all); `None` for the
    /// ML-1M slice, where only the row's own items are known.
    interacted: Option<BTreeMap<u32, BTreeSet<u32>>>,
    /// What the popularity and history baselines count, for every row of the dataset.
    training: Training,
}

impl EvalData {
    /// ML-100K: leave-one-out rows (history 10), all 943 when every user has 11 items. The
    /// no-LLM baselines count `ml-100k.inter` less every row's `(user, target)` rating, before
    /// the row's target rating's timestamp ([`Method::Popularity`]).
    pub fn ml100k(ml: &Ml100k, kg: &MovieKg) -> Result<Self> {
        let loo = leave_one_out(&ml.interactions, 10);
        let training = Training::leave_one_out(&ml.interactions, &loo.rows);
        Ok(EvalData {
            dataset: Dataset::Ml100k,
            rows: loo.rows.into_iter().enumerate().collect(),
            titles: ml100k_titles(ml),
            entities: kg.items.clone(),
            popularity: ml.popularity(Counted::All)?,
            catalogue: ml.items.keys().copied().collect(),
            interacted: Some(ml.interacted()),
            training,
        })
    }

    /// The ML-1M slice: its 10,000 rows; entities for the movies [`link_ml1m`] links to an
    /// ML-100K item that has one. The slice has no other ratings, so the no-LLM baselines
    /// count the rows' history items, each at its row's target time (an upper bound of its
    /// own, so the cut-off errs towards not counting), less every row's `(user, target)`, before
    /// the row's target time ([`Method::Popularity`]).
    pub fn ml1m(ml1m: &Ml1m, ml100k: &Ml100k, kg: &MovieKg) -> Result<Self> {
        let (links, _) = link_ml1m(ml1m, ml100k);
        let entities = links
            .iter()
            .filter_map(|(&item, l)| kg.items.get(&l.ml100k_item).map(|&e| (item, e)))
            .collect();
        Ok(EvalData {
            dataset: Dataset::Ml1m,
            rows: ml1m.rows.iter().map(|r| r.row()).enumerate().collect(),
            titles: ml1m.names.clone(),
            entities,
            popularity: ml1m.popularity(Counted::All)?,
            catalogue: ml1m.movies.keys().copied().collect(),
            interacted: None,
            training: Training::ml1m(&ml1m.rows),
        })
    }

    /// Keeps the rows with index in `start..start + count` (the released evaluation takes
    /// the last 1,000 of its 10,000).
    pub fn slice(&mut self, start: usize, count: usize) {
        self.rows.retain(|(i, _)| *i >= start && *i - start < count);
    }

    /// A sampler of `m` candidates over the catalogue with `seed`.
    pub fn sampler(&self, m: usize, seed: u64) -> Result<CandidateSampler> {
        CandidateSampler::new(self.catalogue.iter().copied(), m, seed)
    }

    /// Row `index`'s candidate set from `sampler`.
    pub fn candidates(
        &self,
        sampler: &CandidateSampler,
        index: usize,
        row: &Row,
    ) -> Result<CandidateSet> {
        let own: BTreeSet<u32>;
        let empty = BTreeSet::new();
        let seen = match &self.interacted {
            Some(map) => map.get(&row.user).unwrap_or(&empty),
            None => {
                own = row.history.iter().copied().chain([row.target]).collect();
                &own
            }
        };
        sampler.sample(index as u64, row.user, row.target, seen)
    }
}

/// A unit of evaluation work: (row index, method name, M).
pub type Done = (usize, String, usize);

/// Scores every row of `data` with every method and every sampler (one per M), skipping the
/// units in `done`, and hands each [`ScoredRow`] to `sink` as soon as it is scored (the CLI
/// appends it to the rows file, so an interrupted run loses nothing finished). Knowledge is
/// retrieved once per (row, method) and serves every M; prompts of one row are scored back to
/// back, so a model that reuses shared prefixes ([`crate::GgufLetterScorer`] on the native
/// engine) recomputes only what differs. `progress` counts rows. Returns the units scored.
#[allow(clippy::too_many_arguments)]
pub fn evaluate(
    rec: &Recommender<'_>,
    data: &EvalData,
    scorer: &dyn LetterScorer,
    methods: &[Method],
    samplers: &[CandidateSampler],
    done: &HashSet<Done>,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(ScoredRow) -> Result<()>,
) -> Result<usize> {
    if methods.is_empty() || samplers.is_empty() {
        return Err(Error::Option {
            name: "methods and M values",
            value: format!("{} methods, {} M values", methods.len(), samplers.len()),
            expected: "at least one of each",
        });
    }
    progress.start(data.rows.len() as u64, "rows");
    let mut scored = 0;
    for (index, row) in &data.rows {
        for &method in methods {
            let todo: Vec<&CandidateSampler> = samplers
                .iter()
                .filter(|s| !done.contains(&(*index, method.name().to_string(), s.m())))
                .collect();
            if todo.is_empty() {
                continue;
            }
            let knowledge = rec.knowledge(method, &row.history)?;
            for s in todo {
                let c = data.candidates(s, *index, row)?;
                sink(rec.score_row(scorer, method, *index, row, &c, &knowledge)?)?;
                scored += 1;
            }
        }
        progress.advance(1);
    }
    progress.finish();
    Ok(scored)
}
