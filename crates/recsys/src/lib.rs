#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-recsys
//!
//! The data side of K-RagRec (knowledge-graph RAG for LLM recommendation, Wang et al., ACL
//! 2025): the recommendation datasets, their link to a Freebase knowledge graph, the rows and
//! candidate sets the LLM chooses from, and the popularity gate that decides which history
//! items get knowledge retrieved.
//!
//! * [`Ml100k`]: MovieLens-100K from RecBole's atomic files (`ml-100k.{inter,item,kg,link}`):
//!   interactions, the catalogue, the KG triples and the item → Freebase entity links.
//! * [`Ml1m`]: the MovieLens-1M slice (`movies.dat`, `test_filtered.csv`,
//!   `movies_id_name.txt`), 10,000 rows of ten history items with like flags and a target.
//! * [`link_ml1m`]: ML-1M movies → KG entities by (normalised title, year) through ML-100K
//!   ([`normalize_title`]), with a [`LinkReport`].
//! * [`build_kg`]: the typed [`pgraphrag_graph::kg::KnowledgeGraph`] with movie titles on the
//!   linked entities ([`MovieKg`]).
//! * [`leave_one_out`]: ML-100K rows (last item the target, the ten before it the history);
//!   ML-1M rows come from the file ([`Ml1mRow::row`]).
//! * [`CandidateSampler`]: M = 20 (A–T) or M = 10 (A–J) candidates, the target and seeded
//!   negatives the user never interacted with, shuffled into option letters ([`CandidateSet`]).
//! * [`Popularity`] and [`PopularityGate`]: the paper's threshold (a percentile over the
//!   catalogue, p = 50%) and the released code's ascending-popularity variant.
//! * [`HopVectors`]: the hop-field sub-graph index, every entity's `l`-hop representation
//!   (`l = 0, 1, 2`) from any [`pgraphrag_core::Encoder`] and message passing
//!   ([`Aggregation`]: the paper's parameter-free mean, or the released untrained GCN), saved
//!   to and loaded from a checked file; [`SubgraphIndex`] searches it ([`ExactIndex`]).
//! * [`KgRetriever`]: per row, top-K sub-graphs per hop for each gated history item,
//!   re-ranked against the history prompt to the top N ([`Retrieval`], [`Rerank`]), each
//!   expanded to its ego sub-graph with triples as text ([`RowKnowledge`]).
//!
//! Libraries take paths: nothing here reads the environment or guesses a folder.
//! `docs/kragrec.md` describes the data, the rules and the figures measured on the real files.
//!
//! ```
//! use std::collections::BTreeSet;
//! use pgraphrag_recsys::{CandidateSampler, Popularity, PopularityGate, Row};
//!
//! let row = Row { user: 1, history: vec![1, 2, 3], target: 4 };
//! let seen: BTreeSet<u32> = row.history.iter().copied().collect();
//! let sets = CandidateSampler::new(1..=50, 20, 2025).unwrap();
//! let c = sets.sample(0, row.user, row.target, &seen).unwrap();
//! assert_eq!(c.items.len(), 20);
//! assert_eq!(c.item(c.target_letter()), Some(4));
//!
//! // Items 1 and 2 were seen once, item 3 a hundred times: only the cold ones get retrieval.
//! let pop = Popularity::count(1..=4, [1, 2].into_iter().chain(std::iter::repeat_n(3, 100))).unwrap();
//! assert_eq!(PopularityGate::paper().select(&pop, &row.history).unwrap(), [1, 2]);
//! ```
#![deny(missing_docs)]

mod cache;
mod candidates;
mod error;
mod eval;
mod index;
mod kaping;
mod kg;
mod link;
mod ml100k;
mod ml1m;
mod popularity;
mod prompt;
mod retrieve;
mod rows;
mod score;
mod setup;
mod text;
mod title;

pub use cache::{CachedScorer, ScoreCache};
pub use candidates::{CandidateSampler, CandidateSet, Interacted, LETTERS};
pub use error::{Error, Result};
pub use eval::{EvalConfig, Method, MethodSummary, Recommender, ScoredRow, summarize};
pub use index::{
    Aggregation, ExactIndex, HopVectors, INDEX_FORMAT_VERSION, IndexOptions, Subgraph, SubgraphHit,
    SubgraphIndex, kg_fingerprint,
};
pub use kaping::{Kaping, ScoredTriple};
pub use kg::{KgReport, MovieKg, build_kg};
pub use link::{KgLink, LinkReport, link_ml1m};
pub use ml1m::{Ml1m, Ml1mRow};
pub use ml100k::{Interaction, ML100K_FILES, Ml100k, Triple};
/// The data crate's reader error, which [`Error::Recbole`] wraps (re-exported so a caller can
/// match it without depending on `pgraphrag-data`).
pub use pgraphrag_data::RecboleError;
pub use popularity::{Counted, Popularity, PopularityGate, Take};
pub use prompt::{FACTS_PREAMBLE, PromptStyle, instruction, triple_line, with_facts};
pub use retrieve::{
    KgRetriever, Rerank, Retrieval, RetrievedSubgraph, RowKnowledge, history_prompt, ml100k_titles,
};
pub use rows::{LeaveOneOut, Row, leave_one_out};
pub use score::{GgufLetterScorer, LetterScorer, Wrap, random_scores, ranking};
pub use setup::{Dataset, Done, EvalData, evaluate};
pub use title::{Movie, display_title, normalize_title, split_title_year};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
