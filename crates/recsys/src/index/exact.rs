//! Exact cosine search: every vector of the hop scored against the query.
use pgraphrag_core::{TieOrder, top_k};
use pgraphrag_graph::kg::EntityId;

use super::{HopVectors, Subgraph, SubgraphHit, SubgraphIndex, dot, normalize};
use crate::{Error, Result};

/// The exact [`SubgraphIndex`]: scores every entity of the hop (a dot product with the
/// normalised query, accumulated in f64, which is the cosine since the stored vectors are
/// unit length; a zero vector scores 0) and keeps the best `k` with
/// [`pgraphrag_core::top_k`], ties by ascending entity id ([`TieOrder::InputOrder`]).
///
/// A query of the wrong length or with a non-finite value is an [`Error::Query`]; a hop the
/// vectors do not hold is an [`Error::NoSuchHop`].
///
/// ```
/// use pgraphrag_core::{Embeddings, Encoder, NoProgress, Result};
/// use pgraphrag_graph::kg::KnowledgeGraph;
/// use pgraphrag_recsys::{ExactIndex, HopVectors, IndexOptions, SubgraphIndex};
///
/// /// "genre" texts point one way, all others the other.
/// struct Genre;
/// impl Encoder for Genre {
///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
///         Embeddings::new(2, texts.iter().flat_map(|t| if t.contains("genre") { [1.0, 0.0] } else { [0.0, 1.0] }).collect())
///     }
/// }
/// let mut kg = KnowledgeGraph::new();
/// let (_, _, genre) = kg.add_triple("m.1", "film.film.genre", "m.2").unwrap();
/// let v = HopVectors::build(&kg, &Genre, "genre", &IndexOptions::default(), &NoProgress).unwrap();
/// let hits = ExactIndex::new(&v).top_k(0, &[1.0, 0.0], 1).unwrap();
/// assert_eq!(hits[0].subgraph.centre, genre); // its role label is "genre"
/// assert!((hits[0].score - 1.0).abs() < 1e-9);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ExactIndex<'a> {
    vectors: &'a HopVectors,
}

impl<'a> ExactIndex<'a> {
    /// An exact index over `vectors`.
    ///
    /// ```
    /// # use pgraphrag_recsys::{ExactIndex, HopVectors};
    /// # fn f(v: &HopVectors) -> ExactIndex<'_> { ExactIndex::new(v) }
    /// ```
    pub fn new(vectors: &'a HopVectors) -> Self {
        ExactIndex { vectors }
    }

    /// The cosine of `query` with every entity at `hop`, by entity id.
    ///
    /// ```
    /// # use pgraphrag_recsys::{ExactIndex, HopVectors};
    /// # fn f(v: &HopVectors) { let _ = ExactIndex::new(v).scores(0, &[0.0; 3]); }
    /// ```
    pub fn scores(&self, hop: usize, query: &[f32]) -> Result<Vec<f64>> {
        let v = self.vectors;
        let m = v.hop_matrix(hop).ok_or(Error::NoSuchHop {
            hop,
            max: v.max_hop(),
        })?;
        let q = unit_query(query, v.dim())?;
        Ok(m.chunks_exact(v.dim()).map(|row| dot(&q, row)).collect())
    }
}

/// The query, checked (length `dim`, finite) and L2-normalised.
pub(crate) fn unit_query(query: &[f32], dim: usize) -> Result<Vec<f32>> {
    if query.len() != dim {
        return Err(Error::Query {
            problem: format!("length {}", query.len()),
            dim,
        });
    }
    if let Some(i) = query.iter().position(|x| !x.is_finite()) {
        return Err(Error::Query {
            problem: format!("non-finite value at {i}"),
            dim,
        });
    }
    let mut q = query.to_vec();
    normalize(&mut q);
    Ok(q)
}

impl SubgraphIndex for ExactIndex<'_> {
    fn top_k(&self, hop: usize, query: &[f32], k: usize) -> Result<Vec<SubgraphHit>> {
        let scores = self.scores(hop, query)?;
        Ok(top_k(&scores, Some(k), TieOrder::InputOrder)
            .into_iter()
            .map(|s| SubgraphHit {
                subgraph: Subgraph {
                    hop,
                    centre: EntityId(s.item as u32),
                },
                score: s.score,
            })
            .collect())
    }
}
