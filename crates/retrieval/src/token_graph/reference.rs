//! The brute-force reference that [`super::TokenGraph`] is checked against.

use crate::Error;
use crate::sparse::{Bm25Okapi, Bm25Params};

/// Reference: rank_bm25's BM25Okapi fitted on `docs` (token-id lists), scores for `query`, in
/// rank_bm25's own order of floating-point operations (idfs summed in first-appearance order,
/// per-document sums in query order): [`Bm25Okapi`] itself, over the token ids. Used to check
/// [`super::TokenGraph`].
///
/// Where rank_bm25 cannot fit, no documents give no scores and documents that are all empty
/// score 0.
///
/// ```
/// use pgraphrag_retrieval::sparse::{Bm25Okapi, Bm25Params};
/// use pgraphrag_retrieval::token_graph::bm25okapi_scores;
/// let docs: [&[u32]; 3] = [&[1, 2], &[2, 3], &[3, 4]];
/// let p = Bm25Params::default();
/// let fitted = Bm25Okapi::fit(&[vec!["1", "2"], vec!["2", "3"], vec!["3", "4"]], p).unwrap();
/// assert_eq!(bm25okapi_scores(&docs, &[2, 4], p), fitted.get_scores(&["2", "4"]));
/// assert_eq!(bm25okapi_scores(&[&[], &[]], &[1], p), vec![0.0, 0.0]);
/// ```
pub fn bm25okapi_scores(docs: &[&[u32]], query: &[u32], p: Bm25Params) -> Vec<f64> {
    // Distinct ids are distinct strings: the fit is the same as over the ids themselves.
    let corpus: Vec<Vec<String>> = docs
        .iter()
        .map(|d| d.iter().map(u32::to_string).collect())
        .collect();
    let query: Vec<String> = query.iter().map(u32::to_string).collect();
    match Bm25Okapi::fit(&corpus, p) {
        Ok(bm25) => bm25.get_scores(&query),
        Err(Error::EmptyVocabulary { documents }) => vec![0.0; documents],
        Err(_) => Vec::new(),
    }
}
