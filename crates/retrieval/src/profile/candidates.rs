//! [`CandidateRanker`]: what ranks one candidate list, and [`WithRetriever`] for any
//! [`Retriever`].

use pgraphrag_core::{Retriever, Scored};
use pgraphrag_graph::{ReviewId, ReviewLookup};

/// Ranks candidate reviews of a graph (or of reviews fetched from any
/// [`ProfileSource`](pgraphrag_graph::ProfileSource), through [`ReviewLookup`]) for a query.
/// Implemented by [`WithRetriever`] (any [`Retriever`] over `"{title} {text}"` documents) and
/// [`super::CachedBm25`].
pub trait CandidateRanker {
    /// Ranks `cands` for `query`: indices into `cands` with scores, best first, at most `k`
    /// (all when `None`).
    fn rank_reviews<G: ReviewLookup + ?Sized>(
        &mut self,
        graph: &G,
        query: &str,
        cands: &[ReviewId],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<usize>>>;

    /// Whether the document of review `r` tokenizes to nothing. The default: its
    /// `"{title} {text}"` is blank.
    fn is_empty_doc<G: ReviewLookup + ?Sized>(&mut self, graph: &G, r: ReviewId) -> bool {
        graph.review(r).entry.title_text().trim().is_empty()
    }
}

/// Adapts any [`Retriever`]: documents are `Entry::title_text()` (`f"{title} {text}"`).
#[derive(Debug, Clone)]
pub struct WithRetriever<R>(pub R);

impl<R: Retriever> CandidateRanker for WithRetriever<R> {
    fn rank_reviews<G: ReviewLookup + ?Sized>(
        &mut self,
        graph: &G,
        query: &str,
        cands: &[ReviewId],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
        let docs: Vec<String> = cands
            .iter()
            .map(|&r| graph.review(r).entry.title_text())
            .collect();
        let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
        self.0.rank(query, &refs, k)
    }
}
