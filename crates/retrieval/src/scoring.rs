//! Scoring rules shared by the dense retrievers and the live index: vector similarity and
//! reciprocal-rank fusion. Neither needs an encoder, so they are here, outside the `dense`
//! feature.

use pgraphrag_core::Scored;

/// How a query vector scores a document vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Similarity {
    /// Cosine similarity (`q·d / (max(‖q‖,ε)·max(‖d‖,ε))`, ε = 1e-8, as
    /// `torch.nn.functional.cosine_similarity`): PGraphRAG. The default.
    #[default]
    Cosine,
    /// The dot product `q·d`: LaMP's Contriever retriever.
    Dot,
}

/// `s(q, d)` under `sim`, accumulated in f64.
///
/// ```
/// use pgraphrag_retrieval::scoring::{Similarity, similarity};
/// assert_eq!(similarity(Similarity::Dot, &[1.0, 2.0], &[3.0, 4.0]), 11.0);
/// assert!((similarity(Similarity::Cosine, &[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-12);
/// ```
pub fn similarity(sim: Similarity, q: &[f32], d: &[f32]) -> f64 {
    let dot: f64 = q.iter().zip(d).map(|(a, b)| *a as f64 * *b as f64).sum();
    match sim {
        Similarity::Dot => dot,
        Similarity::Cosine => {
            let nq = q.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt();
            let nd = d.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt();
            dot / (nq.max(1e-8) * nd.max(1e-8))
        }
    }
}

/// Reciprocal-rank fusion: for each of `n` documents, `Σ 1 / (k + rank)` over the rankings
/// that list it (ranks from 1; indices past `n` are ignored).
///
/// ```
/// use pgraphrag_core::Scored;
/// use pgraphrag_retrieval::scoring::rrf_scores;
/// let a = vec![Scored::new(0, 2.0), Scored::new(1, 1.0)];
/// let b = vec![Scored::new(1, 0.9)];
/// let fused = rrf_scores(2, &[a, b], 60.0);
/// assert_eq!(fused, vec![1.0 / 61.0, 1.0 / 62.0 + 1.0 / 61.0]);
/// ```
pub fn rrf_scores(n: usize, rankings: &[Vec<Scored<usize>>], k: f64) -> Vec<f64> {
    let mut fused = vec![0.0f64; n];
    for ranking in rankings {
        for (r, s) in ranking.iter().enumerate() {
            if let Some(f) = fused.get_mut(s.item) {
                *f += 1.0 / (k + (r + 1) as f64);
            }
        }
    }
    fused
}
