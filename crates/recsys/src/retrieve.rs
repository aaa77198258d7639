//! K-RagRec's knowledge sub-graph retrieval and re-ranking for one row: the popularity gate
//! picks history items, each item's title retrieves the top-K sub-graphs per hop, the history
//! prompt re-ranks them to the top N, and each kept centre is expanded to its ego sub-graph.
use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;

use pgraphrag_core::{Encoder, TieOrder, top_k};
use pgraphrag_graph::kg::{EgoGraph, KnowledgeGraph, TripleText};

use crate::index::{HopVectors, Subgraph, SubgraphIndex, dot, encode_checked, normalize};
use crate::ml100k::Ml100k;
use crate::popularity::{Popularity, PopularityGate, Take};
use crate::{Error, Result};

/// Which retrieved sub-graphs the re-ranking keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Rerank {
    /// **The paper's text, the default** (equation 6): all retrieved sub-graphs, every hop
    /// together, re-ranked by cosine to the prompt; the top N are kept.
    #[default]
    Pooled,
    /// **The released code** (`retrieve.py: retrieval_topk`): each hop re-ranked on its own,
    /// the top N of each kept (so up to N × hops), hop by hop.
    PerHop,
    /// **No re-ranking** (the paper's "-Re-ranking" ablation, appendix A.6: the retrieved
    /// sub-graphs are input directly): every distinct retrieved sub-graph is kept, up to
    /// K × hops × selected items, in the order it was found (gate order, then hop, then
    /// rank); N is not used.
    Off,
}

/// The retrieval settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieval {
    /// K: sub-graphs retrieved per selected item and hop (the paper: 3).
    pub top_k: usize,
    /// N: sub-graphs kept by the re-ranking (the paper: 5), pooled or per hop ([`Rerank`]).
    pub top_n: usize,
    /// The hops searched (the paper: 0..=2; the released code: 0..=1).
    pub hops: RangeInclusive<usize>,
    /// Which history items get retrieval (the paper: below the 50th popularity percentile).
    pub gate: PopularityGate,
    /// Pooled (the paper) or per-hop (the released code) re-ranking.
    pub rerank: Rerank,
    /// Hops of the ego sub-graph each kept centre is expanded to (1, as the released
    /// `get_first_order_subgraph`; the paper does not say).
    pub ego_hops: usize,
}

impl Default for Retrieval {
    /// [`Retrieval::paper`].
    fn default() -> Self {
        Self::paper()
    }
}

impl Retrieval {
    /// The paper's settings: K = 3, N = 5, hops 0..=2, the popularity gate at p = 0.5,
    /// pooled re-ranking, 1-hop ego sub-graphs.
    ///
    /// ```
    /// use pgraphrag_recsys::{PopularityGate, Rerank, Retrieval};
    /// let r = Retrieval::paper();
    /// assert_eq!((r.top_k, r.top_n, r.hops.clone(), r.rerank), (3, 5, 0..=2, Rerank::Pooled));
    /// assert_eq!(r.gate, PopularityGate::BelowPercentile { p: 0.5 });
    /// ```
    pub fn paper() -> Self {
        Retrieval {
            top_k: 3,
            top_n: 5,
            hops: 0..=2,
            gate: PopularityGate::paper(),
            rerank: Rerank::Pooled,
            ego_hops: 1,
        }
    }

    /// The released evaluation's settings: K = 3, N = 5 per hop, hops 0..=1 (`G.x` and
    /// `layer2_embeddings_W.pt`), the five least popular history items, 1-hop ego
    /// sub-graphs. (Build the index with [`crate::Aggregation::ReleasedGcn`] for the rest.)
    ///
    /// ```
    /// use pgraphrag_recsys::{PopularityGate, Rerank, Retrieval, Take};
    /// let r = Retrieval::released();
    /// assert_eq!((r.hops.clone(), r.rerank), (0..=1, Rerank::PerHop));
    /// assert_eq!(r.gate, PopularityGate::Ascending { take: Take::Count(5) });
    /// ```
    pub fn released() -> Self {
        Retrieval {
            hops: 0..=1,
            gate: PopularityGate::Ascending {
                take: Take::Count(5),
            },
            rerank: Rerank::PerHop,
            ..Self::paper()
        }
    }

    fn check(&self, vectors: &HopVectors) -> Result<()> {
        let opt = |name, value: usize, expected| Error::Option {
            name,
            value: value.to_string(),
            expected,
        };
        if self.top_k == 0 {
            return Err(opt("top_k", 0, "at least 1 sub-graph per item and hop"));
        }
        if self.top_n == 0 {
            return Err(opt("top_n", 0, "at least 1 sub-graph kept"));
        }
        if self.hops.is_empty() {
            return Err(Error::Option {
                name: "hops",
                value: format!("{:?}", self.hops),
                expected: "a non-empty range of hops",
            });
        }
        if *self.hops.end() > vectors.max_hop() {
            return Err(Error::NoSuchHop {
                hop: *self.hops.end(),
                max: vectors.max_hop(),
            });
        }
        Ok(())
    }
}

/// The history prompt the re-ranking scores against, built as the released code's `input`
/// field: every history title in double quotes, joined by `", "`
/// (`"Toy Story", "Heat"`).
///
/// ```
/// assert_eq!(pgraphrag_recsys::history_prompt(["Toy Story", "Heat"]), r#""Toy Story", "Heat""#);
/// ```
pub fn history_prompt<'a>(titles: impl IntoIterator<Item = &'a str>) -> String {
    titles
        .into_iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// ML-100K's titles as the catalogue gives them (`Usual Suspects, The`), the texts K-RagRec
/// queries with. (For the ML-1M slice, `Ml1m::names` is the released `movies_id_name.txt`.)
///
/// ```
/// use pgraphrag_recsys::{Ml100k, Movie, ml100k_titles};
/// let mut ml = Ml100k::default();
/// ml.items.insert(1, Movie { id: 1, title: "Toy Story".into(), year: Some(1995), genres: vec![], line: 2 });
/// assert_eq!(ml100k_titles(&ml)[&1], "Toy Story");
/// ```
pub fn ml100k_titles(ml: &Ml100k) -> BTreeMap<u32, String> {
    ml.items
        .iter()
        .map(|(&id, m)| (id, m.title.clone()))
        .collect()
}

/// One retrieved, re-ranked and expanded sub-graph.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievedSubgraph {
    /// The indexed sub-graph (hop and centre) that was retrieved.
    pub subgraph: Subgraph,
    /// The history item whose title retrieved it first.
    pub item: u32,
    /// Its cosine to that item's title.
    pub item_score: f64,
    /// Its cosine to the history prompt (the re-ranking score).
    pub score: f64,
    /// The centre's ego sub-graph ([`Retrieval::ego_hops`] hops), what the LLM is given.
    pub ego: EgoGraph,
}

/// What [`KgRetriever::retrieve`] found for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowKnowledge {
    /// The history prompt ([`history_prompt`]).
    pub prompt: String,
    /// The history items the gate selected, in the gate's order.
    pub selected: Vec<u32>,
    /// Distinct sub-graphs retrieved before re-ranking.
    pub retrieved: usize,
    /// The kept sub-graphs: pooled, best first; per hop, hop by hop and best first within.
    /// Ties in the re-ranking score go to the lower hop, then the lower entity id.
    pub subgraphs: Vec<RetrievedSubgraph>,
}

impl RowKnowledge {
    /// Every triple of the kept sub-graphs as text, each KG edge once: sub-graphs in order,
    /// edges by id within each, an edge already given by an earlier sub-graph skipped.
    ///
    /// ```
    /// # use pgraphrag_graph::kg::KnowledgeGraph;
    /// # use pgraphrag_recsys::RowKnowledge;
    /// let empty = RowKnowledge { prompt: String::new(), selected: vec![], retrieved: 0, subgraphs: vec![] };
    /// assert!(empty.triples(&KnowledgeGraph::new()).is_empty());
    /// ```
    pub fn triples<'a>(&self, kg: &'a KnowledgeGraph) -> Vec<TripleText<'a>> {
        let mut seen = BTreeSet::new();
        self.subgraphs
            .iter()
            .flat_map(|s| &s.ego.edges)
            .filter(|e| seen.insert(e.id))
            .map(|e| kg.triple_text(e))
            .collect()
    }

    /// [`RowKnowledge::triples`] with textual repeats removed too: entities without a name
    /// share their role label, so distinct edges often read the same (`(Heat, film actor,
    /// actor)` once per actor). The first occurrence is kept, in the same order.
    ///
    /// ```
    /// # use pgraphrag_graph::kg::KnowledgeGraph;
    /// # use pgraphrag_recsys::RowKnowledge;
    /// let empty = RowKnowledge { prompt: String::new(), selected: vec![], retrieved: 0, subgraphs: vec![] };
    /// assert!(empty.distinct_triple_texts(&KnowledgeGraph::new()).is_empty());
    /// ```
    pub fn distinct_triple_texts<'a>(&self, kg: &'a KnowledgeGraph) -> Vec<TripleText<'a>> {
        let mut seen = BTreeSet::new();
        self.triples(kg)
            .into_iter()
            .filter(|t| seen.insert((t.head, t.relation, t.tail)))
            .collect()
    }
}

/// Retrieval and re-ranking over a KG, its hop vectors, a search index on them and the
/// encoder they were built with.
pub struct KgRetriever<'a> {
    kg: &'a KnowledgeGraph,
    vectors: &'a HopVectors,
    index: &'a dyn SubgraphIndex,
    encoder: &'a dyn Encoder,
    config: Retrieval,
}

impl std::fmt::Debug for KgRetriever<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KgRetriever")
            .field("entities", &self.vectors.entities())
            .field("model", &self.vectors.model())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<'a> KgRetriever<'a> {
    /// A retriever. Checks that `vectors` were built for `kg` ([`Error::KgMismatch`]), that
    /// they hold every hop of `config.hops` ([`Error::NoSuchHop`]) and that K, N and the hop
    /// range are not empty ([`Error::Option`]). `encoder` must be the one the vectors were
    /// built with (its output dimension is checked on every query).
    ///
    /// ```
    /// use pgraphrag_core::{Embeddings, Encoder, NoProgress, Result};
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// use pgraphrag_recsys::{ExactIndex, HopVectors, IndexOptions, KgRetriever, Popularity, Retrieval};
    ///
    /// /// Texts mentioning "Heat" point one way, the rest the other.
    /// struct Heat;
    /// impl Encoder for Heat {
    ///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
    ///         Embeddings::new(2, texts.iter().flat_map(|t| if t.contains("Heat") { [1.0, 0.1] } else { [0.1, 1.0] }).collect())
    ///     }
    /// }
    /// let mut kg = KnowledgeGraph::new();
    /// let (heat, _, _) = kg.add_triple("m.heat", "film.film.directed_by", "m.mann").unwrap();
    /// kg.add_triple("m.heat", "film.film.genre", "m.crime").unwrap();
    /// kg.set_name(heat, "Heat");
    /// let vectors = HopVectors::build(&kg, &Heat, "heat", &IndexOptions::default(), &NoProgress).unwrap();
    /// let index = ExactIndex::new(&vectors);
    /// let retriever = KgRetriever::new(&kg, &vectors, &index, &Heat, Retrieval::paper()).unwrap();
    ///
    /// // Item 7 ("Heat") was seen once, item 8 ten times: only item 7 passes the gate.
    /// let pop = Popularity::count([7, 8], std::iter::once(7).chain(std::iter::repeat_n(8, 10))).unwrap();
    /// let titles = [(7, "Heat".to_string()), (8, "Up".to_string())].into();
    /// let row = retriever.retrieve(&[8, 7], &pop, &titles).unwrap();
    /// assert_eq!((row.prompt.as_str(), row.selected.as_slice()), (r#""Up", "Heat""#, &[7][..]));
    /// assert_eq!(row.subgraphs[0].subgraph.centre, heat);
    /// let t = row.triples(&kg);
    /// assert_eq!((t[0].head, t[0].relation), ("Heat", "film directed by"));
    /// ```
    pub fn new(
        kg: &'a KnowledgeGraph,
        vectors: &'a HopVectors,
        index: &'a dyn SubgraphIndex,
        encoder: &'a dyn Encoder,
        config: Retrieval,
    ) -> Result<Self> {
        vectors.check_kg(kg)?;
        config.check(vectors)?;
        Ok(KgRetriever {
            kg,
            vectors,
            index,
            encoder,
            config,
        })
    }

    /// The knowledge graph it retrieves from.
    ///
    /// ```
    /// # use pgraphrag_recsys::KgRetriever;
    /// # fn f(r: &KgRetriever<'_>) -> usize { r.kg().entity_count() }
    /// ```
    pub fn kg(&self) -> &'a KnowledgeGraph {
        self.kg
    }

    /// The settings.
    ///
    /// ```
    /// # use pgraphrag_recsys::KgRetriever;
    /// # fn f(r: &KgRetriever<'_>) -> usize { r.config().top_n }
    /// ```
    pub fn config(&self) -> &Retrieval {
        &self.config
    }

    /// Retrieves knowledge for one row whose history (oldest first) is `history`:
    ///
    /// 1. the gate ([`Retrieval::gate`]) selects history items by `popularity`;
    /// 2. each selected item's title (from `titles`) and the [`history_prompt`] of the whole
    ///    history are encoded in one call;
    /// 3. per selected item and hop, the index gives the top K sub-graphs by cosine to the
    ///    title; a sub-graph (hop, centre) found again is counted once, for the item that
    ///    found it first (gate order, then hop, then rank);
    /// 4. the distinct sub-graphs are re-ranked by the cosine of their hop vector to the
    ///    prompt, ties to the lower hop, then the lower entity id, and the top N kept
    ///    ([`Rerank`]: pooled or per hop);
    /// 5. each kept centre is expanded to its [`Retrieval::ego_hops`]-hop ego sub-graph
    ///    ([`KnowledgeGraph::ego`]).
    ///
    /// A row whose gate selects nothing gets no sub-graphs (and the encoder is not called).
    /// Errors: a history item outside `popularity` ([`Error::NotInCatalogue`]) or without a
    /// title ([`Error::NoTitle`]), the encoder's ([`Error::Encode`],
    /// [`Error::EncoderOutput`]), the index's (and [`Error::IndexOutput`] when it breaks the
    /// [`SubgraphIndex`] contract).
    ///
    /// ```
    /// use pgraphrag_core::{Embeddings, Encoder, NoProgress, Result};
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// use pgraphrag_recsys::{ExactIndex, HopVectors, IndexOptions, KgRetriever, Popularity, Retrieval};
    ///
    /// struct Flat;
    /// impl Encoder for Flat {
    ///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
    ///         Embeddings::new(1, vec![1.0; texts.len()])
    ///     }
    /// }
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "film.film.genre", "m.2").unwrap();
    /// let v = HopVectors::build(&kg, &Flat, "flat", &IndexOptions::default(), &NoProgress).unwrap();
    /// let index = ExactIndex::new(&v);
    /// let r = KgRetriever::new(&kg, &v, &index, &Flat, Retrieval::paper()).unwrap();
    /// // Both items equally popular: both at percentile 0, both retrieved for.
    /// let pop = Popularity::count([1, 2], [1, 2]).unwrap();
    /// let titles = [(1, "A".to_string()), (2, "B".to_string())].into();
    /// let row = r.retrieve(&[1, 2], &pop, &titles).unwrap();
    /// assert_eq!(row.selected, [1, 2]);
    /// // 2 entities × 3 hops, all tied: the lower hop, then the lower id, wins.
    /// assert_eq!((row.retrieved, row.subgraphs.len()), (6, 5));
    /// assert_eq!(row.subgraphs[0].subgraph.hop, 0);
    /// // Without re-ranking, all 6 are kept, as found: item 1 (first in gate order) finds
    /// // every one, hop 0's first.
    /// let off = Retrieval { rerank: pgraphrag_recsys::Rerank::Off, ..Retrieval::paper() };
    /// let r = KgRetriever::new(&kg, &v, &index, &Flat, off).unwrap();
    /// let row = r.retrieve(&[1, 2], &pop, &titles).unwrap();
    /// let found: Vec<_> = row.subgraphs.iter().map(|s| (s.item, s.subgraph.hop)).collect();
    /// assert_eq!(found, [(1, 0), (1, 0), (1, 1), (1, 1), (1, 2), (1, 2)]);
    /// // An item outside the popularity table is an error.
    /// assert!(r.retrieve(&[3], &pop, &titles).is_err());
    /// ```
    pub fn retrieve(
        &self,
        history: &[u32],
        popularity: &Popularity,
        titles: &BTreeMap<u32, String>,
    ) -> Result<RowKnowledge> {
        let selected = self.config.gate.select(popularity, history)?;
        let title = |item: u32| {
            titles.get(&item).map(String::as_str).ok_or(Error::NoTitle {
                item,
                titles: titles.len(),
            })
        };
        let history_titles = history
            .iter()
            .map(|&i| title(i))
            .collect::<Result<Vec<_>>>()?;
        let prompt = history_prompt(history_titles);
        let mut out = RowKnowledge {
            prompt,
            selected,
            retrieved: 0,
            subgraphs: Vec::new(),
        };
        if out.selected.is_empty() {
            return Ok(out);
        }
        let mut texts: Vec<&str> = out
            .selected
            .iter()
            .map(|&i| title(i))
            .collect::<Result<_>>()?;
        texts.push(&out.prompt);
        let (_, q) = encode_checked(self.encoder, &texts, Some(self.vectors.dim()), "queries")?;
        let d = self.vectors.dim();
        let queries: Vec<&[f32]> = q.chunks_exact(d).collect();
        let (item_queries, prompt_q) = queries.split_at(out.selected.len());
        let mut prompt_q = prompt_q[0].to_vec();
        normalize(&mut prompt_q);

        // Candidates (hop, centre) → (item, item score), first finder wins.
        let mut first: BTreeMap<Subgraph, (u32, f64)> = BTreeMap::new();
        let mut hits_by_hop = Vec::new();
        for hop in self.config.hops.clone() {
            hits_by_hop.push(
                self.index
                    .top_k_batch(hop, item_queries, self.config.top_k)?,
            );
        }
        for (hop, hits) in self.config.hops.clone().zip(&hits_by_hop) {
            if hits.len() != item_queries.len() {
                return Err(Error::IndexOutput {
                    problem: format!(
                        "{} result lists for {} queries",
                        hits.len(),
                        item_queries.len()
                    ),
                });
            }
            for h in hits.iter().flatten() {
                if h.subgraph.hop != hop || self.vectors.vector(hop, h.subgraph.centre).is_none() {
                    return Err(Error::IndexOutput {
                        problem: format!("a hit {:?} for a search at hop {hop}", h.subgraph),
                    });
                }
            }
            if let Some(l) = hits.iter().find(|l| l.len() > self.config.top_k) {
                return Err(Error::IndexOutput {
                    problem: format!(
                        "{} hits where at most {} were asked for",
                        l.len(),
                        self.config.top_k
                    ),
                });
            }
        }
        let mut found = Vec::new();
        for (k, &item) in out.selected.iter().enumerate() {
            for hits in &hits_by_hop {
                for h in &hits[k] {
                    if let std::collections::btree_map::Entry::Vacant(v) = first.entry(h.subgraph) {
                        v.insert((item, h.score));
                        found.push(h.subgraph);
                    }
                }
            }
        }
        out.retrieved = first.len();
        // `first` iterates by (hop, centre): the input order that breaks ties.
        let cands: Vec<(Subgraph, u32, f64)> =
            first.into_iter().map(|(s, (i, sc))| (s, i, sc)).collect();
        let rerank_scores: Vec<f64> = cands
            .iter()
            .map(|(s, _, _)| {
                self.vectors
                    .vector(s.hop, s.centre)
                    .map_or(0.0, |v| dot(&prompt_q, v))
            })
            .collect();
        let keep: Vec<usize> = match self.config.rerank {
            Rerank::Pooled => top_k(
                &rerank_scores,
                Some(self.config.top_n),
                TieOrder::InputOrder,
            )
            .into_iter()
            .map(|s| s.item)
            .collect(),
            Rerank::PerHop => self
                .config
                .hops
                .clone()
                .flat_map(|hop| {
                    let idx: Vec<usize> = (0..cands.len())
                        .filter(|&i| cands[i].0.hop == hop)
                        .collect();
                    let scores: Vec<f64> = idx.iter().map(|&i| rerank_scores[i]).collect();
                    top_k(&scores, Some(self.config.top_n), TieOrder::InputOrder)
                        .into_iter()
                        .map(|s| idx[s.item])
                        .collect::<Vec<_>>()
                })
                .collect(),
            Rerank::Off => found
                .iter()
                .filter_map(|s| cands.binary_search_by(|c| c.0.cmp(s)).ok())
                .collect(),
        };
        out.subgraphs = keep
            .into_iter()
            .map(|i| {
                let (subgraph, item, item_score) = cands[i];
                RetrievedSubgraph {
                    subgraph,
                    item,
                    item_score,
                    score: rerank_scores[i],
                    ego: self.kg.ego(subgraph.centre, self.config.ego_hops),
                }
            })
            .collect();
        Ok(out)
    }
}
