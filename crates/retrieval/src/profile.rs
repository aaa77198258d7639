//! Graph-scoped profile retrieval: PGraphRAG's user / neighbour / both profiles, task queries
//! and the ranking-file semantics of the released notebook (`notebook/ranking.ipynb`).
//!
//! For a target (user, item) on a [`UserItemGraph`](pgraphrag_graph::UserItemGraph), a [`ProfileRanker`] ranks
//!
//! * the user's reviews of other items (`user_ratings`),
//! * the other users' reviews of the target item (`neighbor_ratings`),
//!
//! against a [`Task`] query with any [`CandidateRanker`] (any
//! [`pgraphrag_core::Retriever`] through [`WithRetriever`], or the token-caching
//! [`CachedBm25`]), keeps the top `k`, and draws a seeded random review of a random other
//! user, exactly as the notebook's `random.choice` calls do ([`PyRandom`]).
//!
//! The notebook's quirks are options ([`ProfileOptions`]); [`ProfileOptions::default`] is the
//! clean behaviour, [`ProfileOptions::notebook`] reproduces the released code (the `pgraphrag
//! rank` default). Tie order among equal scores is the retriever's (`sparse::TieOrder`).
//!
//! ```
//! use pgraphrag_core::Entry;
//! use pgraphrag_graph::{GraphOptions, ItemId, UserItemGraph};
//! use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, Task};
//!
//! let mut g = UserItemGraph::new(GraphOptions::default());
//! let mut add = |id, u: &str, i: &str, title: &str, text: &str| {
//!     g.insert(Entry { id, author: u.into(), item: i.into(), title: Some(title.into()),
//!                      text: Some(text.into()), rating: Some(5.0), time: None });
//! };
//! add(0, "ann", "soap", "Lovely soap", "Smells of lavender");
//! add(1, "ann", "shampoo", "Great shampoo", "My hair is soft");
//! add(2, "bob", "soap", "Lavender soap", "Lavender scent, lasts long");
//! add(3, "cat", "soap", "Dry skin", "Left my skin dry");
//! add(4, "dan", "soap", "Fine", "It does the job");
//! let query = Task::Text.query(Some("Lovely soap"), Some("Smells of lavender"));
//! assert_eq!(query, "Lovely soap");
//! let mut ranker = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default());
//! let p = ranker.rank(&g, "ann", &ItemId::from("soap"), &query).unwrap();
//! assert_eq!(p.user.len(), 1);
//! assert_eq!(p.neighbors[0].entry.author, "bob");
//! assert!(p.random.is_some());
//! ```

mod cached;
mod candidates;
mod options;
mod pyrandom;
mod ranker;

pub use cached::CachedBm25;
pub use candidates::{CandidateRanker, WithRetriever};
pub use options::{DuplicateTexts, EmptyDocs, ProfileOptions, RandomReview, SingleNeighbor};
/// The task, which decides the query ([`Task::query`]): `pgraphrag-core`'s, re-exported.
pub use pgraphrag_core::Task;
/// The ranked profile [`ProfileRanker::rank`] returns: `pgraphrag-core`'s, re-exported.
pub use pgraphrag_core::{RankedEntry, RankedProfile};
pub use pyrandom::PyRandom;
pub use ranker::ProfileRanker;
