//! Exact cosine search: every vector of the hop scored against the query.
use pgraphrag_core::{TieOrder, top_k};
use pgraphrag_graph::kg::EntityId;

use super::scan::{Distinct, scan, widen};
use super::vectors::{HopVectors, Subgraph, SubgraphHit, SubgraphIndex, normalize};
use crate::{Error, Result};

/// The exact [`SubgraphIndex`]: scores every entity of the hop (a dot product with the
/// normalised query, accumulated in f64, which is the cosine since the stored vectors are
/// unit length; a zero vector scores 0) and keeps the best `k` with
/// [`pgraphrag_core::top_k`], ties by ascending entity id ([`TieOrder::InputOrder`]).
///
/// Fast without giving up exactness: [`SubgraphIndex::top_k_batch`] reads a hop's matrix
/// once for all its queries, on all of rayon's threads, with the AVX-512 or AVX2 build of
/// the kernel where the CPU has it (the same bits on every CPU: the f64 sums run in one
/// fixed order); and a hop whose entities share vectors (hop 0: every unnamed entity with
/// the same role label) is scanned once per distinct vector ([`ExactIndex::new`] finds them).
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
#[derive(Debug, Clone)]
pub struct ExactIndex<'a> {
    vectors: &'a HopVectors,
    /// Per hop, its distinct vectors when they are markedly fewer than its entities.
    distinct: Vec<Option<Distinct>>,
}

impl<'a> ExactIndex<'a> {
    /// An exact index over `vectors`. Finds each hop's distinct vectors (one pass over the
    /// vectors; kept for a hop only when they save at least a quarter of its scan).
    ///
    /// ```
    /// # use pgraphrag_recsys::{ExactIndex, HopVectors};
    /// # fn f(v: &HopVectors) -> ExactIndex<'_> { ExactIndex::new(v) }
    /// ```
    pub fn new(vectors: &'a HopVectors) -> Self {
        let distinct = (0..=vectors.max_hop())
            .map(|hop| {
                vectors
                    .hop_matrix(hop)
                    .and_then(|m| Distinct::of(m, vectors.dim()))
            })
            .collect();
        ExactIndex { vectors, distinct }
    }

    /// For each hop, how many distinct vectors its scan reads (its entity count where
    /// deduplicating would not pay).
    ///
    /// ```
    /// # use pgraphrag_recsys::{ExactIndex, HopVectors};
    /// # fn f(v: &HopVectors) -> Vec<usize> { ExactIndex::new(v).scanned_rows() }
    /// ```
    pub fn scanned_rows(&self) -> Vec<usize> {
        let d = self.vectors.dim().max(1);
        self.distinct
            .iter()
            .map(|x| {
                x.as_ref()
                    .map_or(self.vectors.entities(), |x| x.rows.len() / d)
            })
            .collect()
    }

    /// The cosine of `query` with every entity at `hop`, by entity id.
    ///
    /// ```
    /// # use pgraphrag_recsys::{ExactIndex, HopVectors};
    /// # fn f(v: &HopVectors) { let _ = ExactIndex::new(v).scores(0, &[0.0; 3]); }
    /// ```
    pub fn scores(&self, hop: usize, query: &[f32]) -> Result<Vec<f64>> {
        Ok(self.scores_batch(hop, &[query])?.pop().unwrap_or_default())
    }

    /// [`ExactIndex::scores`] for each query, the hop's vectors read once for all.
    fn scores_batch(&self, hop: usize, queries: &[&[f32]]) -> Result<Vec<Vec<f64>>> {
        let v = self.vectors;
        let m = v.hop_matrix(hop).ok_or(Error::NoSuchHop {
            hop,
            max: v.max_hop(),
        })?;
        let qs = queries
            .iter()
            .map(|q| unit_query(q, v.dim()).map(|q| widen(&q)))
            .collect::<Result<Vec<_>>>()?;
        let nq = qs.len();
        let distinct = self.distinct.get(hop).and_then(Option::as_ref);
        let flat = scan(distinct.map_or(m, |x| &x.rows), v.dim(), &qs);
        Ok((0..nq)
            .map(|q| match distinct {
                Some(x) => x.of.iter().map(|&j| flat[j as usize * nq + q]).collect(),
                None => flat.iter().skip(q).step_by(nq).copied().collect(),
            })
            .collect())
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

/// The best `k` of one query's scores at `hop`, ties to the lower entity id.
fn hits(hop: usize, scores: &[f64], k: usize) -> Vec<SubgraphHit> {
    top_k(scores, Some(k), TieOrder::InputOrder)
        .into_iter()
        .map(|s| SubgraphHit {
            subgraph: Subgraph {
                hop,
                centre: EntityId(s.item as u32),
            },
            score: s.score,
        })
        .collect()
}

impl SubgraphIndex for ExactIndex<'_> {
    fn top_k(&self, hop: usize, query: &[f32], k: usize) -> Result<Vec<SubgraphHit>> {
        Ok(hits(hop, &self.scores(hop, query)?, k))
    }

    fn top_k_batch(
        &self,
        hop: usize,
        queries: &[&[f32]],
        k: usize,
    ) -> Result<Vec<Vec<SubgraphHit>>> {
        Ok(self
            .scores_batch(hop, queries)?
            .iter()
            .map(|s| hits(hop, s, k))
            .collect())
    }
}
