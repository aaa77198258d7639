//! The inference-only evaluation: for each row, each method's knowledge, prompt and option
//! scores (one [`ScoredRow`]), and the metrics over the scored rows ([`summarize`]).
use std::collections::BTreeMap;

use pgraphrag_graph::kg::{EntityId, KnowledgeGraph, TripleText};
use pgraphrag_metrics::stats::bootstrap_ci_columns;
use serde::{Deserialize, Serialize};

use crate::candidates::LETTERS;
use crate::popularity::Training;
use crate::score::{break_ties, cyclic_scores};
use crate::{
    CandidateSet, Error, Kaping, KgRetriever, LetterScorer, Popularity, PromptStyle, Result, Row,
    history_prompt, instruction, random_scores, ranking, with_facts,
};

/// An evaluation method: what knowledge the prompt gets (if any) and how its options are
/// scored, or a ranking without a model.
///
/// **Position-debiased scoring** (`+cyclic`): the letter scorer prefers positions (SmolLM2
/// ranks option A first in most rows), so a `+cyclic` method scores its prompt once per cyclic
/// rotation of the option order (rotation `r` shows candidate `(j + r) mod M` at letter `j`)
/// and gives each candidate the mean of its M letter scores, one at every position. A score
/// that is a letter's bias plus a candidate's own value comes out as the candidate's value
/// plus the mean bias: a pure position bias is cancelled. It costs M prompts per row. Each
/// rotation is its own prompt, so a [`crate::ScoreCache`] keys it apart (rotation 0 is the
/// plain method's prompt, and shares its entry).
///
/// **No-LLM baselines** ([`Method::Random`], [`Method::Popularity`], [`Method::History`]):
/// no model is asked. Popularity and history count the dataset's training interactions: no
/// row's held-out `(user, target)` interaction, and only interactions strictly before the
/// row's target ([`crate::EvalData::ml100k`], [`crate::EvalData::ml1m`]). Ties are broken by
/// the random ranking of the same seed and row: the recorded score is the primary score plus
/// `u · g / 2`, with `u` the row's [`random_scores`] value and `g` the smallest gap between
/// the row's distinct primary scores (1 when they are all equal), so distinct primaries keep
/// their order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Method {
    /// The instruction alone.
    NoKnowledge,
    /// K-RagRec's retrieval ([`KgRetriever`]: popularity gate, hop-field sub-graphs,
    /// re-ranking, ego expansion), the kept sub-graphs' triples verbalised before the
    /// instruction (the paper's KG-Text baseline).
    KgText,
    /// KAPING-style: the triples around the history items ranked by similarity to the history
    /// ([`Kaping`]), verbalised before the instruction.
    Kaping,
    /// A random ranking of the options ([`random_scores`]); no model.
    Random,
    /// The candidates by popularity: the number of users with a counted training interaction
    /// on each (see above); no model.
    Popularity,
    /// The candidates by their item-kNN similarity to the history: the sum over the distinct
    /// history items `h` of the cosine `co(c, h) / √(n(c) · n(h))`, where `n(x)` counts the
    /// users with a counted training interaction on `x` and `co(c, h)` those with both; no
    /// model.
    History,
    /// [`Method::NoKnowledge`], position-debiased (`none+cyclic`).
    NoKnowledgeCyclic,
    /// [`Method::KgText`], position-debiased (`kg-text+cyclic`).
    KgTextCyclic,
    /// [`Method::Kaping`], position-debiased (`kaping+cyclic`).
    KapingCyclic,
}

impl Method {
    /// Every method, in table order.
    pub const ALL: [Method; 9] = [
        Method::NoKnowledge,
        Method::KgText,
        Method::Kaping,
        Method::Random,
        Method::Popularity,
        Method::History,
        Method::NoKnowledgeCyclic,
        Method::KgTextCyclic,
        Method::KapingCyclic,
    ];

    /// The method's name on the command line and in the rows file.
    pub fn name(self) -> &'static str {
        match self {
            Method::NoKnowledge => "none",
            Method::KgText => "kg-text",
            Method::Kaping => "kaping",
            Method::Random => "random",
            Method::Popularity => "popularity",
            Method::History => "history",
            Method::NoKnowledgeCyclic => "none+cyclic",
            Method::KgTextCyclic => "kg-text+cyclic",
            Method::KapingCyclic => "kaping+cyclic",
        }
    }

    /// The method of a [`Method::name`].
    ///
    /// ```
    /// use pgraphrag_recsys::Method;
    /// assert_eq!(Method::parse("kg-text").unwrap(), Method::KgText);
    /// assert_eq!(Method::parse("kg-text+cyclic").unwrap(), Method::KgTextCyclic);
    /// assert!(Method::parse("rag").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| Error::Option {
                name: "method",
                value: s.to_string(),
                expected: "none, kg-text, kaping (each optionally +cyclic), random, popularity \
                           or history",
            })
    }

    /// The method whose knowledge this one's prompt gets: the plain method of a `+cyclic` one,
    /// else itself.
    ///
    /// ```
    /// use pgraphrag_recsys::Method;
    /// assert_eq!(Method::KapingCyclic.knowledge_method(), Method::Kaping);
    /// assert_eq!(Method::History.knowledge_method(), Method::History);
    /// ```
    pub fn knowledge_method(self) -> Method {
        match self {
            Method::NoKnowledgeCyclic => Method::NoKnowledge,
            Method::KgTextCyclic => Method::KgText,
            Method::KapingCyclic => Method::Kaping,
            m => m,
        }
    }

    /// Whether a model scores the method's options (false for the no-LLM baselines).
    ///
    /// ```
    /// use pgraphrag_recsys::Method;
    /// assert!(Method::NoKnowledgeCyclic.uses_model());
    /// assert!(!Method::Popularity.uses_model());
    /// ```
    pub fn uses_model(self) -> bool {
        !matches!(self, Method::Random | Method::Popularity | Method::History)
    }
}

/// How the evaluation builds prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalConfig {
    /// The instruction's wording.
    pub style: PromptStyle,
    /// At most this many triples in a KG-Text prompt (the first of
    /// [`crate::RowKnowledge::distinct_triple_texts`]: best sub-graph first).
    pub max_triples: usize,
    /// The seed of the random ranking.
    pub random_seed: u64,
}

impl Default for EvalConfig {
    /// The paper's wording, 10 triples (KAPING's k), seed 0.
    fn default() -> Self {
        EvalConfig {
            style: PromptStyle::Paper,
            max_triples: 10,
            random_seed: 0,
        }
    }
}

/// One row scored by one method: the rows file's record. Every figure of the result tables
/// can be recomputed from these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredRow {
    /// The row's index in its dataset (the candidate sampler's stream).
    pub row: usize,
    /// The user.
    pub user_id: u32,
    /// The method's name ([`Method::name`]).
    pub method: String,
    /// The history items, oldest first.
    pub history: Vec<u32>,
    /// The candidates in letter order (A first).
    pub candidates: Vec<u32>,
    /// The target item (one of the candidates).
    pub target: u32,
    /// One score per candidate, higher is better (log-probabilities for the LLM methods).
    pub scores: Vec<f64>,
    /// The triples the prompt was given, `[head, relation, tail]`.
    pub retrieved: Vec<[String; 3]>,
}

impl ScoredRow {
    /// The candidates' indices, best first ([`ranking`]).
    pub fn ranking(&self) -> Result<Vec<usize>> {
        ranking(&self.scores)
    }

    /// Whether the target is among the first `k` of [`ScoredRow::ranking`] (`k = 1`: the
    /// row's ACC).
    ///
    /// ```
    /// use pgraphrag_recsys::ScoredRow;
    /// let r = ScoredRow { row: 0, user_id: 1, method: "none".into(), history: vec![9],
    ///     candidates: vec![1, 2, 3], target: 2, scores: vec![0.5, 0.2, 0.9], retrieved: vec![] };
    /// assert_eq!((r.hit(1).unwrap(), r.hit(2).unwrap(), r.hit(3).unwrap()), (false, false, true));
    /// ```
    pub fn hit(&self, k: usize) -> Result<bool> {
        let t = self.target_index()?;
        Ok(self.ranking()?.iter().take(k).any(|&i| i == t))
    }

    /// The rows of `a` and `b` for the same dataset row, paired by [`ScoredRow::row`] (each
    /// side one method at one M), in `a`'s order; rows of either side without a partner are
    /// left out. A pair whose user, history, candidates (in letter order) or target differ is
    /// an [`Error::ScoreOutput`]: the two were not scored on the same candidate sets. So is a
    /// row twice on one side.
    ///
    /// ```
    /// use pgraphrag_recsys::ScoredRow;
    /// let r = |row, method: &str| ScoredRow { row, user_id: 1, method: method.into(), history: vec![9],
    ///     candidates: vec![1, 2], target: 2, scores: vec![0.5, 0.2], retrieved: vec![] };
    /// let a = [r(0, "popularity"), r(1, "popularity"), r(2, "popularity")];
    /// let b = [r(2, "none"), r(0, "none")];
    /// let pairs = ScoredRow::paired(&a, &b).unwrap();
    /// assert_eq!(pairs.iter().map(|(x, y)| (x.row, y.row)).collect::<Vec<_>>(), [(0, 0), (2, 2)]);
    /// let mut other = r(0, "none");
    /// other.candidates = vec![2, 1];
    /// assert!(ScoredRow::paired(&a, &[other]).is_err());
    /// ```
    pub fn paired<'r>(
        a: &'r [ScoredRow],
        b: &'r [ScoredRow],
    ) -> Result<Vec<(&'r ScoredRow, &'r ScoredRow)>> {
        let mut by_row: BTreeMap<usize, &ScoredRow> = BTreeMap::new();
        for y in b {
            if by_row.insert(y.row, y).is_some() {
                return Err(Error::ScoreOutput {
                    problem: format!("row {} of {} twice", y.row, y.method),
                });
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for x in a {
            if !seen.insert(x.row) {
                return Err(Error::ScoreOutput {
                    problem: format!("row {} of {} twice", x.row, x.method),
                });
            }
            let Some(y) = by_row.get(&x.row) else {
                continue;
            };
            if (x.user_id, &x.history, &x.candidates, x.target)
                != (y.user_id, &y.history, &y.candidates, y.target)
            {
                return Err(Error::ScoreOutput {
                    problem: format!(
                        "row {} of {} and of {} differ in user, history, candidates or target",
                        x.row, x.method, y.method
                    ),
                });
            }
            out.push((x, *y));
        }
        Ok(out)
    }

    /// The target's index among the candidates.
    pub fn target_index(&self) -> Result<usize> {
        self.candidates
            .iter()
            .position(|&c| c == self.target)
            .ok_or_else(|| Error::ScoreOutput {
                problem: format!(
                    "row {} ({}): target {} is not among its candidates",
                    self.row, self.method, self.target
                ),
            })
    }
}

/// Everything the methods read: the KG with the items' entities, the two retrievers, the
/// popularity table and the titles.
pub struct Recommender<'a> {
    /// The knowledge graph.
    pub kg: &'a KnowledgeGraph,
    /// Item → its KG entity, for the items that have one (KAPING's starting points).
    pub entities: &'a BTreeMap<u32, EntityId>,
    /// K-RagRec's retriever (KG-Text).
    pub retriever: &'a KgRetriever<'a>,
    /// The KAPING-style retriever.
    pub kaping: &'a Kaping<'a>,
    /// Item popularity (the gate).
    pub popularity: &'a Popularity,
    /// Item titles as the prompts show them.
    pub titles: &'a BTreeMap<u32, String>,
    /// Prompt settings.
    pub config: EvalConfig,
    /// What the popularity and history baselines count.
    pub(crate) training: &'a Training,
}

impl<'a> Recommender<'a> {
    fn title(&self, item: u32) -> Result<&'a str> {
        self.titles
            .get(&item)
            .map(String::as_str)
            .ok_or(Error::NoTitle {
                item,
                titles: self.titles.len(),
            })
    }

    /// The triples `method` gives the prompt for `history` (none for [`Method::NoKnowledge`]
    /// and the no-LLM baselines; a `+cyclic` method's are its plain method's). They do not
    /// depend on the candidates, so one retrieval serves every M.
    pub fn knowledge(&self, method: Method, history: &[u32]) -> Result<Vec<TripleText<'a>>> {
        match method.knowledge_method() {
            Method::NoKnowledge
            | Method::Random
            | Method::Popularity
            | Method::History
            | Method::NoKnowledgeCyclic
            | Method::KgTextCyclic
            | Method::KapingCyclic => Ok(Vec::new()),
            Method::KgText => {
                let k = self
                    .retriever
                    .retrieve(history, self.popularity, self.titles)?;
                let mut t = k.distinct_triple_texts(self.kg);
                t.truncate(self.config.max_triples);
                Ok(t)
            }
            Method::Kaping => {
                let titles = history
                    .iter()
                    .map(|&i| self.title(i))
                    .collect::<Result<Vec<_>>>()?;
                let entities: Vec<EntityId> = history
                    .iter()
                    .filter_map(|i| self.entities.get(i).copied())
                    .collect();
                let top = self.kaping.retrieve(&entities, &history_prompt(titles))?;
                Ok(top.into_iter().map(|s| s.triple).collect())
            }
        }
    }

    /// The prompt for `row` with `candidates` and `knowledge` ([`with_facts`] around the
    /// [`instruction`]).
    pub fn prompt(
        &self,
        row: &Row,
        candidates: &CandidateSet,
        knowledge: &[TripleText<'_>],
    ) -> Result<String> {
        let history = row
            .history
            .iter()
            .map(|&i| self.title(i))
            .collect::<Result<Vec<_>>>()?;
        let options = candidates
            .items
            .iter()
            .map(|&i| self.title(i))
            .collect::<Result<Vec<_>>>()?;
        Ok(with_facts(
            knowledge,
            &instruction(self.config.style, &history, &options)?,
        ))
    }

    /// Scores row `index` with `method`: the prompt scored by `scorer` over the candidates'
    /// letters (once per cyclic rotation for a `+cyclic` method), or a no-LLM ranking.
    /// `knowledge` is [`Recommender::knowledge`]'s for the row and method.
    pub fn score_row(
        &self,
        scorer: &dyn LetterScorer,
        method: Method,
        index: usize,
        row: &Row,
        candidates: &CandidateSet,
        knowledge: &[TripleText<'_>],
    ) -> Result<ScoredRow> {
        let m = candidates.items.len();
        let seed = self.config.random_seed;
        let scores = match method {
            Method::Random => random_scores(seed, index as u64, m),
            Method::Popularity => break_ties(
                &self.training.popularity(index, &candidates.items)?,
                seed,
                index,
            ),
            Method::History => break_ties(
                &self
                    .training
                    .history(index, &row.history, &candidates.items)?,
                seed,
                index,
            ),
            Method::NoKnowledgeCyclic | Method::KgTextCyclic | Method::KapingCyclic => {
                cyclic_scores(scorer, candidates, |c| self.prompt(row, c, knowledge))?
            }
            Method::NoKnowledge | Method::KgText | Method::Kaping => {
                let prompt = self.prompt(row, candidates, knowledge)?;
                scorer.score(&prompt, &LETTERS[..m])?
            }
        };
        if scores.len() != m {
            return Err(Error::ScoreOutput {
                problem: format!("{} scores for {m} options", scores.len()),
            });
        }
        Ok(ScoredRow {
            row: index,
            user_id: row.user,
            method: method.name().to_string(),
            history: row.history.clone(),
            candidates: candidates.items.clone(),
            target: row.target,
            scores,
            retrieved: knowledge
                .iter()
                .map(|t| {
                    [
                        t.head.to_string(),
                        t.relation.to_string(),
                        t.tail.to_string(),
                    ]
                })
                .collect(),
        })
    }
}

/// The metrics of one method at one M.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodSummary {
    /// The method's name.
    pub method: String,
    /// The number of candidates.
    pub m: usize,
    /// Rows scored.
    pub rows: usize,
    /// Rows whose prompt had at least one triple.
    pub with_knowledge: usize,
    /// ACC = Recall@1.
    pub acc: f64,
    /// Recall@k for each k of the summary, in order.
    pub recall: Vec<(usize, f64)>,
    /// Bootstrap intervals `[low, high]`: ACC first, then each Recall@k.
    pub intervals: Vec<[f64; 2]>,
}

/// ACC and Recall@k (`ks`) per (method, M) over `rows`, with percentile-bootstrap intervals
/// (`n_samples` resamples of the rows, `confidence`, seeded) from `pgraphrag-metrics`.
/// Groups come out by method (in [`Method::ALL`] order, unknown names last) then descending M.
///
/// ```
/// use pgraphrag_recsys::{ScoredRow, summarize};
/// let r = |row, scores: Vec<f64>| ScoredRow { row, user_id: 1, method: "none".into(), history: vec![9],
///     candidates: vec![1, 2, 3], target: 2, scores, retrieved: vec![] };
/// let s = summarize(&[r(0, vec![0.1, 0.9, 0.0]), r(1, vec![0.9, 0.5, 0.0])], &[1, 2], 200, 0.95, 0).unwrap();
/// assert_eq!((s[0].m, s[0].rows, s[0].acc), (3, 2, 0.5));
/// assert_eq!(s[0].recall, [(1, 0.5), (2, 1.0)]);
/// ```
pub fn summarize(
    rows: &[ScoredRow],
    ks: &[usize],
    n_samples: usize,
    confidence: f64,
    seed: u32,
) -> Result<Vec<MethodSummary>> {
    let order = |name: &str| {
        Method::ALL
            .iter()
            .position(|m| m.name() == name)
            .unwrap_or(Method::ALL.len())
    };
    let mut groups: BTreeMap<(usize, std::cmp::Reverse<usize>, &str), Vec<&ScoredRow>> =
        BTreeMap::new();
    for r in rows {
        groups
            .entry((
                order(&r.method),
                std::cmp::Reverse(r.candidates.len()),
                r.method.as_str(),
            ))
            .or_default()
            .push(r);
    }
    let mut out = Vec::new();
    for ((_, std::cmp::Reverse(m), method), group) in groups {
        let mut golds = Vec::with_capacity(group.len());
        let mut rankings = Vec::with_capacity(group.len());
        for r in &group {
            golds.push(r.target_index()?);
            rankings.push(r.ranking()?);
        }
        let metric = |e| Error::ScoreOutput {
            problem: format!("rows the metrics cannot read ({e})"),
        };
        let mut cols: Vec<Vec<f64>> = Vec::new();
        let mut recall = Vec::new();
        for &k in std::iter::once(&1).chain(ks) {
            cols.push(
                rankings
                    .iter()
                    .zip(&golds)
                    .map(|(r, g)| {
                        f64::from(u8::from(pgraphrag_metrics::classify::hit_at_k(r, g, k)))
                    })
                    .collect(),
            );
            recall.push((
                k,
                pgraphrag_metrics::classify::recall_at_k(&rankings, &golds, k).map_err(metric)?,
            ));
        }
        let acc = recall.remove(0).1;
        let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
        let intervals = bootstrap_ci_columns(&refs, n_samples, confidence, seed)
            .map_err(metric)?
            .into_iter()
            .map(|i| [i.low, i.high])
            .collect();
        out.push(MethodSummary {
            method: method.to_string(),
            m,
            rows: group.len(),
            with_knowledge: group.iter().filter(|r| !r.retrieved.is_empty()).count(),
            acc,
            recall,
            intervals,
        });
    }
    Ok(out)
}
