//! [`IndexOptions`]: how a [`super::ProfileIndex`] scores, orders and validates.

use pgraphrag_core::{RATING_SCALE, TieOrder};

use crate::scoring::Similarity;
use crate::sparse::Bm25Params;

/// Options of a [`ProfileIndex`](super::ProfileIndex), set with a struct literal and `..Default::default()`.
///
/// ```
/// use pgraphrag_retrieval::live::{IndexOptions, ProfileIndex};
/// let index = ProfileIndex::new(IndexOptions { ratings: Some((0.0, 10.0)), ..Default::default() }).unwrap();
/// assert_eq!(index.options().ratings, Some((0.0, 10.0)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexOptions {
    /// BM25Okapi's k1, b and epsilon (rank_bm25's defaults). Only `k1 > 0`, `0 <= b < 1` and
    /// a finite epsilon are accepted.
    pub bm25: Bm25Params,
    /// Order among equal BM25 scores. Default [`TieOrder::InputOrder`] (the clean recipe):
    /// earlier documents first.
    pub ties: TieOrder,
    /// The range a rating must lie in (inclusive); `None` accepts any finite number.
    /// Default `Some((1.0, 5.0))`, the star ratings of the PGraphRAG and LaMP data
    /// ([`RATING_SCALE`]).
    pub ratings: Option<(f64, f64)>,
    /// How a query vector scores a document vector. Default [`Similarity::Cosine`]
    /// (PGraphRAG's dense retriever).
    pub similarity: Similarity,
    /// The rank offset of hybrid reciprocal-rank fusion. Default 60.
    pub rrf_k: f64,
    /// User and item lists at least this long keep their BM25 fit (document frequencies and
    /// postings, about 8 bytes per distinct token of each document), made by the first read
    /// after each change and reused: a read of a popular item's neighbour side then costs its
    /// vocabulary and the query terms' postings instead of every token. Scores are the same
    /// bit for bit either way. Default 64; `usize::MAX` fits every list per read (no memory).
    pub fit_min_docs: usize,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            bm25: Bm25Params::default(),
            ties: TieOrder::InputOrder,
            ratings: Some((*RATING_SCALE.start(), *RATING_SCALE.end())),
            similarity: Similarity::Cosine,
            rrf_k: 60.0,
            fit_min_docs: 64,
        }
    }
}
