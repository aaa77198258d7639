//! [`TokenGraph`]: a compact user-item graph over token-id reviews with per-node BM25Okapi
//! statistics, for exact profile retrieval at scale (millions of reviews).
//!
//! PGraphRAG fits a fresh BM25Okapi (rank_bm25 semantics: k1, b, epsilon flooring of negative
//! idf at `epsilon * average_idf`) on each candidate list: the target user's other reviews, or
//! the other reviews of the target item. Refitting per query costs O(candidates), which is
//! hopeless for a popular item with 10⁵ reviews. `TokenGraph` instead precomputes, per node
//! with at least [`TokenGraph::INDEX_MIN_DEGREE`] reviews, an inverted index (term → postings
//! with term frequencies), the total document length and a histogram of document frequencies.
//! A query then fits the *exact* same BM25 as rank_bm25 would on the candidate list by
//! subtracting the excluded reviews' contributions (document count, lengths, per-term df, the
//! idf sum behind `average_idf`). Postings are grouped into impact segments (same term
//! frequency and document length, or buckets of them) that order an exact threshold
//! algorithm: segments are visited highest bound first, every review met is scored exactly
//! from the forward index, and the search stops once no review left can reach the top k.
//! Nodes with at least [`TokenGraph::DENSE_MIN_DEGREE`] reviews also keep byte-quantized
//! per-review bounds of their frequent terms; when impact order does not stop early (the
//! query's terms are all frequent there), a vectorized bound pass over every review finds
//! the few that can reach the top k (see `docs/graph.md`). Small nodes are scored by brute
//! force over their reviews.
//!
//! Scores equal rank_bm25's up to floating-point summation order (≈1e-12 relative); among equal
//! scores the earlier review (graph order) comes first.
//!
//! ```
//! use pgraphrag_retrieval::token_graph::{Bm25Params, Side, TokenGraph, TokenReview};
//! let reviews = vec![
//!     TokenReview { user: 0, item: 0, tokens: vec![1, 2, 3] },
//!     TokenReview { user: 1, item: 0, tokens: vec![2, 4] },
//!     TokenReview { user: 2, item: 0, tokens: vec![5, 6] },
//!     TokenReview { user: 0, item: 1, tokens: vec![2, 2, 7] },
//! ];
//! let g = TokenGraph::build(reviews).unwrap();
//! let mut s = g.scratch();
//! // Neighbours of review 0 (user 0 on item 0): the other reviews of item 0.
//! let top = g.neighbors_top_k(0, &[2], 5, Bm25Params::default(), &mut s);
//! assert_eq!(top.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1, 2]);
//! ```

mod bounds;
mod build;
mod node;
mod reference;
mod scratch;
mod search;

pub use crate::sparse::Bm25Params;
pub use reference::bm25okapi_scores;
pub use scratch::Scratch;

use node::NodeSide;

/// One review as token ids.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TokenReview {
    /// Author (dense id, `0..num_users`).
    pub user: u32,
    /// Item (dense id, `0..num_items`).
    pub item: u32,
    /// Token ids of `"{title} {text}"`.
    pub tokens: Vec<u32>,
}

/// Which side of the bipartite graph a node is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// User nodes: their reviews form the user profile.
    User,
    /// Item nodes: their reviews form the neighbour profile.
    Item,
}

/// A compact user-item graph over token-id reviews; see the [module docs](self).
#[derive(Debug, Default)]
pub struct TokenGraph {
    review_user: Vec<u32>,
    review_item: Vec<u32>,
    /// Forward index: review `r` has distinct sorted terms `fwd_term[fwd_off[r]..fwd_off[r+1]]`.
    fwd_off: Vec<u64>,
    fwd_term: Vec<u32>,
    fwd_tf: Vec<u32>,
    doc_len: Vec<u32>,
    users: NodeSide,
    items: NodeSide,
    max_degree: usize,
    opts: IndexOptions,
    /// The (user, item) pairs with more reviews than the per-node idf cache covers.
    heavy: std::collections::HashMap<(u32, u32), PairStats>,
}

/// The exclusion of a (user, item) pair with many reviews (a user reviewing the same item
/// again and again), precomputed so that its queries cost no more than others.
#[derive(Debug, Default)]
struct PairStats {
    /// Total length of the pair's reviews.
    len: u64,
    /// Terms of the pair's reviews with how many of them hold each, ascending by term.
    dec: Vec<(u32, u32)>,
    /// (idf sum, vocabulary size) of the user's and of the item's candidate lists (for an
    /// indexed node with candidates left).
    idf: [(f64, i64); 2],
}

/// Thresholds of [`TokenGraph`]'s indexes. They change speed and memory, never results;
/// [`IndexOptions::default`] is tuned for millions of reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexOptions {
    /// Nodes with at least this many reviews get an inverted index; smaller ones are scored
    /// by brute force. Default [`TokenGraph::INDEX_MIN_DEGREE`].
    pub index_min_degree: usize,
    /// Indexed nodes with at least this many reviews also get dense quantized bounds of
    /// their frequent terms. Default [`TokenGraph::DENSE_MIN_DEGREE`].
    pub dense_min_degree: usize,
    /// A term gets a dense column in a node when at least `1 / dense_df_div` of the node's
    /// reviews hold it. Default [`TokenGraph::DENSE_DF_DIV`].
    pub dense_df_div: usize,
    /// Exact scorings allowed to the impact-ordered search on a node with dense bounds
    /// before the bound pass takes over: `budget_base + reviews / 8192`. Default 16.
    pub budget_base: usize,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            index_min_degree: TokenGraph::INDEX_MIN_DEGREE,
            dense_min_degree: TokenGraph::DENSE_MIN_DEGREE,
            dense_df_div: TokenGraph::DENSE_DF_DIV,
            budget_base: 16,
        }
    }
}

impl TokenGraph {
    /// Nodes with at least this many reviews get an inverted index; smaller ones are scored
    /// by brute force (cheaper for a handful of reviews).
    pub const INDEX_MIN_DEGREE: usize = 48;

    /// Nodes with at least this many reviews also get dense quantized bounds of their
    /// frequent terms, for queries whose terms are all frequent there.
    pub const DENSE_MIN_DEGREE: usize = 256;

    /// A term gets a dense column in a node when at least `1 / DENSE_DF_DIV` of the node's
    /// reviews hold it.
    pub const DENSE_DF_DIV: usize = 32;

    /// A scratch buffer big enough for any node of this graph.
    pub fn scratch(&self) -> Scratch {
        let mut s = Scratch::default();
        s.next_gen(self.max_degree);
        s
    }

    /// How many reviews.
    pub fn num_reviews(&self) -> usize {
        self.review_user.len()
    }

    /// The reviews of a node, in review order.
    pub fn node_reviews(&self, side: Side, node: u32) -> &[u32] {
        let s = self.side(side);
        let v = node as usize;
        if v + 1 >= s.off.len() {
            return &[];
        }
        &s.reviews[s.off[v] as usize..s.off[v + 1] as usize]
    }

    /// Author and item of review `r`.
    pub fn review_ends(&self, r: u32) -> (u32, u32) {
        (self.review_user[r as usize], self.review_item[r as usize])
    }

    /// The distinct terms of review `r` with their frequencies.
    pub fn review_terms(&self, r: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let (a, b) = (
            self.fwd_off[r as usize] as usize,
            self.fwd_off[r as usize + 1] as usize,
        );
        (a..b).map(|k| (self.fwd_term[k], self.fwd_tf[k]))
    }

    fn side(&self, side: Side) -> &NodeSide {
        match side {
            Side::User => &self.users,
            Side::Item => &self.items,
        }
    }

    /// Top-k of the user profile for target review `target`: the author's reviews of other
    /// items, ranked against `query`.
    pub fn user_top_k(
        &self,
        target: u32,
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
    ) -> Vec<(u32, f64)> {
        let (u, i) = self.review_ends(target);
        let list = self.node_reviews(Side::User, u);
        let excl = self.pair_positions(Side::User, u, i, list);
        let pair = self.heavy.get(&(u, i));
        self.top_k_inner(Side::User, u, &excl, query, k, p, s, pair)
    }

    /// Top-k of the neighbour profile for target review `target`: the other users' reviews of
    /// its item, ranked against `query`.
    pub fn neighbors_top_k(
        &self,
        target: u32,
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
    ) -> Vec<(u32, f64)> {
        let (u, i) = self.review_ends(target);
        let list = self.node_reviews(Side::Item, i);
        let excl = self.pair_positions(Side::Item, u, i, list);
        let pair = self.heavy.get(&(u, i));
        self.top_k_inner(Side::Item, i, &excl, query, k, p, s, pair)
    }

    /// Top-k reviews of `node` (excluding the local positions `excl`) for `query`, with
    /// rank_bm25's BM25Okapi fitted on exactly those candidates. Returns (review id, score),
    /// best first; ties by review order; zero-score candidates fill up to `k`.
    #[allow(clippy::too_many_arguments)]
    pub fn top_k(
        &self,
        side: Side,
        node: u32,
        excl: &[u32],
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
    ) -> Vec<(u32, f64)> {
        self.top_k_inner(side, node, excl, query, k, p, s, None)
    }
}
