//! The hop-field vectors of every KG entity and what the index's files and scans share.
use pgraphrag_core::{Encoder, Progress};
use pgraphrag_graph::kg::{EntityId, KnowledgeGraph};

use super::gcn::{self, Aggregation};
use crate::{Error, Result};

/// One sub-graph of the index: the `hop`-hop neighbourhood of `centre`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Subgraph {
    /// The hop (`l`): 0 is the entity alone, 1 its 1-hop neighbourhood, …
    pub hop: usize,
    /// The centre entity.
    pub centre: EntityId,
}

/// A sub-graph found by a search, with its cosine to the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubgraphHit {
    /// The sub-graph.
    pub subgraph: Subgraph,
    /// Cosine similarity to the query, in `[−1, 1]`.
    pub score: f64,
}

/// Top-K search over the hop representations.
///
/// Only [`SubgraphIndex::top_k`] is required. Hits come best first; an exact implementation
/// breaks ties by ascending entity id (an approximate one may return other hits, never more
/// than `k`).
///
/// ```
/// use pgraphrag_core::Scored;
/// use pgraphrag_graph::kg::EntityId;
/// use pgraphrag_recsys::{Result, Subgraph, SubgraphHit, SubgraphIndex};
///
/// /// A toy index: every hop holds the entities 0..3, scored by the query's first value.
/// struct Toy;
/// impl SubgraphIndex for Toy {
///     fn top_k(&self, hop: usize, query: &[f32], k: usize) -> Result<Vec<SubgraphHit>> {
///         Ok((0..3u32).take(k).map(|c| SubgraphHit {
///             subgraph: Subgraph { hop, centre: EntityId(c) },
///             score: f64::from(query[0]) / f64::from(c + 1),
///         }).collect())
///     }
/// }
/// let hits = Toy.top_k_batch(1, &[&[1.0], &[2.0]], 2).unwrap();
/// assert_eq!((hits.len(), hits[1][0].score), (2, 2.0));
/// ```
pub trait SubgraphIndex {
    /// The best `k` sub-graphs at `hop` by cosine to `query`, best first.
    fn top_k(&self, hop: usize, query: &[f32], k: usize) -> Result<Vec<SubgraphHit>>;

    /// [`SubgraphIndex::top_k`] for each query, in order. The default calls `top_k` for each.
    fn top_k_batch(
        &self,
        hop: usize,
        queries: &[&[f32]],
        k: usize,
    ) -> Result<Vec<Vec<SubgraphHit>>> {
        queries.iter().map(|q| self.top_k(hop, q, k)).collect()
    }
}

/// How [`HopVectors::build`] builds the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexOptions {
    /// The largest hop `L`: hops `0..=L` are built (the paper's 3-layer index reads up to
    /// 2 hops; default 2).
    pub max_hop: usize,
    /// The message passing ([`Aggregation::Mean`], the paper's text, by default).
    pub aggregation: Aggregation,
    /// Texts per call to the encoder (default 256).
    pub batch: usize,
}

impl Default for IndexOptions {
    /// Hops 0..=2, [`Aggregation::Mean`], batches of 256 texts.
    fn default() -> Self {
        IndexOptions {
            max_hop: 2,
            aggregation: Aggregation::Mean,
            batch: 256,
        }
    }
}

/// Every entity's representation at every hop `0..=L`, L2-normalised (a zero vector stays
/// zero), with what they were built from: the model id, the message passing and the KG's
/// fingerprint ([`kg_fingerprint`]).
#[derive(Debug, Clone, PartialEq)]
pub struct HopVectors {
    pub(crate) model: String,
    pub(crate) aggregation: Aggregation,
    pub(crate) dim: usize,
    pub(crate) entities: usize,
    pub(crate) kg: u64,
    /// `hops[l]` is `entities × dim`, row-major, rows unit length (or zero).
    pub(crate) hops: Vec<Vec<f32>>,
}

impl HopVectors {
    /// Builds the index of `kg`: the texts of every entity ([`Entity::text`]: its name, else
    /// its role label) and every relation ([`Relation::text`]) are encoded with `encoder`
    /// (each distinct text once) and L2-normalised, then `opts.max_hop` rounds of
    /// `opts.aggregation` give the hop representations. `model` is the caller's id of the
    /// encoder (a model folder's name, or `BertEncoder::fingerprint`), stored with the
    /// vectors and checked by [`HopVectors::load`]. `progress` counts hops.
    ///
    /// Errors: the encoder's ([`Error::Encode`]), an output with the wrong shape or a
    /// non-finite value ([`Error::EncoderOutput`]), `opts.batch == 0` ([`Error::Option`]).
    ///
    /// [`Entity::text`]: pgraphrag_graph::kg::Entity::text
    /// [`Relation::text`]: pgraphrag_graph::kg::Relation
    ///
    /// ```
    /// use pgraphrag_core::{Embeddings, Encoder, NoProgress, Result};
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// use pgraphrag_recsys::{HopVectors, IndexOptions};
    ///
    /// /// Texts as (length, spaces + 1).
    /// struct Shape;
    /// impl Encoder for Shape {
    ///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
    ///         Embeddings::new(2, texts.iter().flat_map(|t| [t.len() as f32, 1.0 + t.matches(' ').count() as f32]).collect())
    ///     }
    /// }
    /// let mut kg = KnowledgeGraph::new();
    /// kg.add_triple("m.1", "film.film.genre", "m.2").unwrap();
    /// let v = HopVectors::build(&kg, &Shape, "shape", &IndexOptions::default(), &NoProgress).unwrap();
    /// assert_eq!((v.dim(), v.entities(), v.max_hop()), (2, 2, 2));
    /// let z = v.vector(1, kg.find("m.1").unwrap()).unwrap();
    /// assert!((z[0] * z[0] + z[1] * z[1] - 1.0).abs() < 1e-6);
    /// ```
    pub fn build(
        kg: &KnowledgeGraph,
        encoder: &dyn Encoder,
        model: &str,
        opts: &IndexOptions,
        progress: &dyn Progress,
    ) -> Result<HopVectors> {
        if opts.batch == 0 {
            return Err(Error::Option {
                name: "batch",
                value: "0".into(),
                expected: "at least one text per encoder call",
            });
        }
        let n = kg.entity_count();
        progress.start(opts.max_hop as u64 + 1, "hops");
        let entity_texts: Vec<&str> = kg.entity_ids().map(|e| kg.entity(e).text()).collect();
        let relation_texts: Vec<&str> = kg.relations().iter().map(|r| r.text.as_str()).collect();
        let mut texts: Vec<&str> = entity_texts
            .iter()
            .chain(&relation_texts)
            .copied()
            .collect();
        texts.sort_unstable();
        texts.dedup();
        let (dim, table) = encode_all(encoder, &texts, opts.batch, encoder.dim())?;
        let row_of = |t: &str| {
            let i = texts.binary_search(&t).unwrap_or_default();
            &table[i * dim..(i + 1) * dim]
        };
        let x0: Vec<f32> = entity_texts
            .iter()
            .flat_map(|t| row_of(t).iter().copied())
            .collect();
        let rel: Vec<f32> = relation_texts
            .iter()
            .flat_map(|t| row_of(t).iter().copied())
            .collect();
        progress.advance(1);
        let edges: Vec<gcn::Edge> = kg
            .edges()
            .map(|e| (e.head.0, e.relation.0, e.tail.0))
            .collect();
        let graph = gcn::Graph {
            rel: &rel,
            edges: &edges,
            n,
            d: dim,
        };
        let mut hops = gcn::propagate(opts.aggregation, x0, &graph, opts.max_hop, || {
            progress.advance(1)
        });
        for h in &mut hops {
            for row in h.chunks_mut(dim) {
                normalize(row);
            }
        }
        progress.finish();
        Ok(HopVectors {
            model: model.to_string(),
            aggregation: opts.aggregation,
            dim,
            entities: n,
            kg: kg_fingerprint(kg),
            hops,
        })
    }

    /// The model id the vectors were built with.
    ///
    /// ```
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors) { println!("{}", v.model()); }
    /// ```
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The message passing the vectors were built with.
    ///
    /// ```
    /// # use pgraphrag_recsys::{Aggregation, HopVectors};
    /// # fn f(v: &HopVectors) -> bool { v.aggregation() == Aggregation::Mean }
    /// ```
    pub fn aggregation(&self) -> Aggregation {
        self.aggregation
    }

    /// The vector dimension.
    ///
    /// ```
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors) -> usize { v.dim() }
    /// ```
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of entities (rows per hop).
    ///
    /// ```
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors) -> usize { v.entities() }
    /// ```
    pub fn entities(&self) -> usize {
        self.entities
    }

    /// The largest hop held (`L`; hops `0..=L`).
    ///
    /// ```
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors) -> usize { v.max_hop() }
    /// ```
    pub fn max_hop(&self) -> usize {
        self.hops.len().saturating_sub(1)
    }

    /// The fingerprint of the KG the vectors were built for ([`kg_fingerprint`]).
    ///
    /// ```
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors) -> u64 { v.kg_fingerprint() }
    /// ```
    pub fn kg_fingerprint(&self) -> u64 {
        self.kg
    }

    /// The unit-length `hop`-hop representation of `centre`, or `None` when the index holds
    /// no such hop or entity.
    ///
    /// ```
    /// # use pgraphrag_graph::kg::EntityId;
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors) -> bool { v.vector(9, EntityId(u32::MAX)).is_none() }
    /// ```
    pub fn vector(&self, hop: usize, centre: EntityId) -> Option<&[f32]> {
        let m = self.hops.get(hop)?;
        let i = centre.index();
        (i < self.entities).then(|| &m[i * self.dim..(i + 1) * self.dim])
    }

    /// The whole `hop`-hop matrix (`entities × dim`, row-major), for an ANN index to load.
    ///
    /// ```
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors) -> usize { v.hop_matrix(0).map_or(0, |m| m.len()) }
    /// ```
    pub fn hop_matrix(&self, hop: usize) -> Option<&[f32]> {
        self.hops.get(hop).map(Vec::as_slice)
    }

    /// Checks that these vectors were built for `kg` ([`Error::KgMismatch`] otherwise).
    ///
    /// ```
    /// # use pgraphrag_graph::kg::KnowledgeGraph;
    /// # use pgraphrag_recsys::HopVectors;
    /// # fn f(v: &HopVectors, kg: &KnowledgeGraph) -> bool { v.check_kg(kg).is_ok() }
    /// ```
    pub fn check_kg(&self, kg: &KnowledgeGraph) -> Result<()> {
        let expected = kg_fingerprint(kg);
        if expected != self.kg || kg.entity_count() != self.entities {
            return Err(Error::KgMismatch {
                expected,
                found: self.kg,
                expected_entities: kg.entity_count(),
                found_entities: self.entities,
            });
        }
        Ok(())
    }
}

/// Encodes `texts` in batches; checks the shape and that every value is finite; L2-normalises
/// the rows. Returns the dimension and the `texts.len() × dim` table.
pub(super) fn encode_all(
    encoder: &dyn Encoder,
    texts: &[&str],
    batch: usize,
    known_dim: Option<usize>,
) -> Result<(usize, Vec<f32>)> {
    let mut dim = known_dim;
    let mut table = Vec::new();
    for chunk in texts.chunks(batch) {
        let (d, rows) = encode_checked(encoder, chunk, dim, "entity and relation texts")?;
        dim = Some(d);
        table.extend(rows);
    }
    let dim = match dim {
        Some(d) => d,
        // No texts (an empty graph): ask the encoder for one vector to learn the dimension.
        None => encode_checked(encoder, &[""], None, "entity and relation texts")?.0,
    };
    for row in table.chunks_mut(dim) {
        normalize(row);
    }
    Ok((dim, table))
}

/// Encodes `texts` and checks the output: one row per text, dimension `dim` when given (and
/// not 0), every value finite.
pub(crate) fn encode_checked(
    encoder: &dyn Encoder,
    texts: &[&str],
    dim: Option<usize>,
    what: &'static str,
) -> Result<(usize, Vec<f32>)> {
    let e = encoder
        .encode(texts)
        .map_err(|source| Error::Encode { what, source })?;
    let bad = |problem: String| Error::EncoderOutput { what, problem };
    if e.rows() != texts.len() {
        return Err(bad(format!("{} rows for {} texts", e.rows(), texts.len())));
    }
    if e.dim() == 0 {
        return Err(bad("vectors of dimension 0".into()));
    }
    if let Some(d) = dim
        && d != e.dim()
    {
        return Err(bad(format!("dimension {}, expected {d}", e.dim())));
    }
    if let Some(i) = e.as_slice().iter().position(|x| !x.is_finite()) {
        return Err(bad(format!("non-finite value in row {}", i / e.dim())));
    }
    Ok((e.dim(), e.into_vec()))
}

/// L2-normalises `v` in place in f64 (`v / ‖v‖`); a zero vector stays zero.
pub(crate) fn normalize(v: &mut [f32]) {
    let n = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if n > 0.0 {
        for x in v {
            *x = (f64::from(*x) / n) as f32;
        }
    }
}

/// A 64-bit FNV-1a hash, for fingerprints and the index file's checksum (not cryptographic).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

/// A fingerprint of everything the index depends on in `kg`: every entity's key and text,
/// every relation's key and text, and every edge (head, relation, tail), in id order, hashed
/// with 64-bit FNV-1a. Renaming an entity, adding a triple or reordering the triples changes
/// it.
///
/// ```
/// use pgraphrag_graph::kg::KnowledgeGraph;
/// use pgraphrag_recsys::kg_fingerprint;
/// let mut kg = KnowledgeGraph::new();
/// let (h, _, _) = kg.add_triple("m.1", "r", "m.2").unwrap();
/// let before = kg_fingerprint(&kg);
/// kg.set_name(h, "Heat");
/// assert_ne!(before, kg_fingerprint(&kg));
/// ```
pub fn kg_fingerprint(kg: &KnowledgeGraph) -> u64 {
    let mut h = Fnv::new();
    let field = |h: &mut Fnv, s: &str| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    h.update(b"pgraphrag-kg-v1\0");
    h.update(&(kg.entity_count() as u64).to_le_bytes());
    for e in kg.entity_ids() {
        let e = kg.entity(e);
        field(&mut h, &e.key);
        field(&mut h, e.text());
    }
    h.update(&(kg.relations().len() as u64).to_le_bytes());
    for r in kg.relations() {
        field(&mut h, &r.key);
        field(&mut h, &r.text);
    }
    h.update(&(kg.edge_count() as u64).to_le_bytes());
    for e in kg.edges() {
        for x in [e.head.0, e.relation.0, e.tail.0] {
            h.update(&x.to_le_bytes());
        }
    }
    h.finish()
}
