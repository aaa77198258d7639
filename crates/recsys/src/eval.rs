//! The inference-only evaluation: for each row, each method's knowledge, prompt and option
//! scores (one [`ScoredRow`]), and the metrics over the scored rows ([`summarize`]).
use std::collections::BTreeMap;

use pgraphrag_graph::kg::{EntityId, KnowledgeGraph, TripleText};
use pgraphrag_metrics::stats::bootstrap_ci_columns;
use serde::{Deserialize, Serialize};

use crate::candidates::LETTERS;
use crate::{
    CandidateSet, Error, Kaping, KgRetriever, LetterScorer, Popularity, PromptStyle, Result, Row,
    history_prompt, instruction, random_scores, ranking, with_facts,
};

/// An inference-only method: what knowledge the prompt gets (if any), or no model at all.
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
}

impl Method {
    /// Every method, in table order.
    pub const ALL: [Method; 4] = [
        Method::NoKnowledge,
        Method::KgText,
        Method::Kaping,
        Method::Random,
    ];

    /// The method's name on the command line and in the rows file.
    pub fn name(self) -> &'static str {
        match self {
            Method::NoKnowledge => "none",
            Method::KgText => "kg-text",
            Method::Kaping => "kaping",
            Method::Random => "random",
        }
    }

    /// The method of a [`Method::name`].
    ///
    /// ```
    /// use pgraphrag_recsys::Method;
    /// assert_eq!(Method::parse("kg-text").unwrap(), Method::KgText);
    /// assert!(Method::parse("rag").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| Error::Option {
                name: "method",
                value: s.to_string(),
                expected: "none, kg-text, kaping or random",
            })
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
    /// and [`Method::Random`]). They do not depend on the candidates, so one retrieval serves
    /// every M.
    pub fn knowledge(&self, method: Method, history: &[u32]) -> Result<Vec<TripleText<'a>>> {
        match method {
            Method::NoKnowledge | Method::Random => Ok(Vec::new()),
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
    /// letters, or the random ranking. `knowledge` is [`Recommender::knowledge`]'s for the
    /// row and method.
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
        let scores = if method == Method::Random {
            random_scores(self.config.random_seed, index as u64, m)
        } else {
            let prompt = self.prompt(row, candidates, knowledge)?;
            scorer.score(&prompt, &LETTERS[..m])?
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
