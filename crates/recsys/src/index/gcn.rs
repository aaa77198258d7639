//! Message passing over the KG's sparse adjacency: the `l`-hop representations of every entity
//! from the `(l − 1)`-hop ones, parameter-free (the paper's text) or as the released code's
//! untrained GCN.
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

/// How the `l`-hop representation of an entity is made from the `(l − 1)`-hop ones
/// (K-RagRec's `GNNIndexing`, equation 3 of the paper).
///
/// The paper's GNN is trained with the rest of the model; neither variant here has trained
/// weights. `docs/kragrec.md` compares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Aggregation {
    /// **The paper's text, the default.** Equation 3 aggregates, for a centre `o`, its
    /// neighbours' previous representations *and the relations of the edges to them*, and
    /// appendix A.2 combines the aggregate with the centre's own representation
    /// (`x_o ⊕ AGG(…)`). Parameter-free, so the result stays in the encoder's space and can be
    /// compared with a query by cosine:
    ///
    /// `z⁽ˡ⁾(o) = ½ z⁽ˡ⁻¹⁾(o) + ½ mean over the edges e = (o, m) of ½ (z⁽ˡ⁻¹⁾(m) + r(e))`
    ///
    /// Edges are followed in both directions (the ego sub-graphs' rule); a repeated triple
    /// counts once per edge and a self-loop sends its entity two messages. An entity without
    /// edges keeps `z⁽ˡ⁻¹⁾(o)`. `z⁽⁰⁾` and `r` are the encoder's vectors, L2-normalised.
    Mean,
    /// **The released code** (`index_KG.py`: `GCNConv`, `GCN`): per layer
    /// `H⁽ˡ⁾ = ReLU(Â (H⁽ˡ⁻¹⁾ Wₗ + bₗ))` with untrained random weights, where `Â` has one entry
    /// `d(h)^-½ d(t)^-½` per directed edge `h → t` (row `h`, column `t`: a head receives from
    /// its tails only) and `d` is the **out**-degree. No self-loops, no edge (relation)
    /// features, a sum over the edges. An entity that heads no edge gets a zero vector, and so
    /// does any edge into an entity that heads none (its `d^-½` is set to 0, as the released
    /// code does with the infinite power). `Wₗ` and `bₗ` are drawn like `torch.nn.Linear`'s
    /// initialisation, uniform in `[−1/√d, 1/√d)`, from a ChaCha8 stream seeded with `seed`
    /// (torch's generator is not reproduced, so the numbers differ from any released run).
    /// The hidden size is the encoder's dimension `d` (the released 1024 is the dimension of
    /// its `all-roberta-large-v1` encoder, which is what lets it compare a query with these
    /// vectors at all). Vectors after a ReLU of random projections are not in the query's
    /// space, so cosine retrieval on hops ≥ 1 is close to arbitrary, as in the released code.
    ReleasedGcn {
        /// The seed of the random weights.
        seed: u64,
    },
}

impl Default for Aggregation {
    /// [`Aggregation::Mean`], the paper's text.
    fn default() -> Self {
        Aggregation::Mean
    }
}

impl Aggregation {
    /// A short name for reports and file headers: `mean` or `released-gcn(seed=S)`.
    ///
    /// ```
    /// use pgraphrag_recsys::Aggregation;
    /// assert_eq!(Aggregation::Mean.name(), "mean");
    /// assert_eq!(Aggregation::ReleasedGcn { seed: 7 }.name(), "released-gcn(seed=7)");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Aggregation::Mean => "mean".to_string(),
            Aggregation::ReleasedGcn { seed } => format!("released-gcn(seed={seed})"),
        }
    }
}

/// One directed edge for message passing: head, relation, tail (dense indices).
pub(crate) type Edge = (u32, u32, u32);

/// The graph message passing runs on: `n` entities, `d`-vectors, one `d`-vector per relation
/// in `rel`, and the edges.
pub(crate) struct Graph<'a> {
    pub(crate) rel: &'a [f32],
    pub(crate) edges: &'a [Edge],
    pub(crate) n: usize,
    pub(crate) d: usize,
}

/// Runs `layers` rounds of message passing from `x0` (`n × d`, row-major) and returns the
/// representations of every round, `x0` first (so `layers + 1` matrices).
pub(crate) fn propagate(
    agg: Aggregation,
    x0: Vec<f32>,
    g: &Graph<'_>,
    layers: usize,
    mut on_layer: impl FnMut(),
) -> Vec<Vec<f32>> {
    let Graph { rel, edges, n, d } = *g;
    let mut out = Vec::with_capacity(layers + 1);
    out.push(x0);
    let mut rng = match agg {
        Aggregation::ReleasedGcn { seed } => Some(ChaCha8Rng::seed_from_u64(seed)),
        Aggregation::Mean => None,
    };
    for _ in 0..layers {
        let prev = out.last().map(Vec::as_slice).unwrap_or_default();
        let next = match rng.as_mut() {
            None => mean_layer(prev, rel, edges, n, d),
            Some(rng) => gcn_layer(prev, edges, n, d, rng),
        };
        out.push(next);
        on_layer();
    }
    out
}

/// `out += s · v`.
fn axpy(out: &mut [f32], s: f32, v: &[f32]) {
    for (o, x) in out.iter_mut().zip(v) {
        *o += s * x;
    }
}

/// One layer of [`Aggregation::Mean`].
fn mean_layer(prev: &[f32], rel: &[f32], edges: &[Edge], n: usize, d: usize) -> Vec<f32> {
    let mut acc = vec![0f32; n * d];
    let mut count = vec![0u32; n];
    for &(h, r, t) in edges {
        let (h, r, t) = (h as usize, r as usize, t as usize);
        let rv = &rel[r * d..(r + 1) * d];
        for (to, from) in [(h, t), (t, h)] {
            let a = &mut acc[to * d..(to + 1) * d];
            axpy(a, 0.5, &prev[from * d..(from + 1) * d]);
            axpy(a, 0.5, rv);
            count[to] += 1;
        }
    }
    let mut out = prev.to_vec();
    for (i, &c) in count.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let inv = 0.5 / c as f32;
        let row = &mut out[i * d..(i + 1) * d];
        for (o, a) in row.iter_mut().zip(&acc[i * d..(i + 1) * d]) {
            *o = 0.5 * *o + inv * a;
        }
    }
    out
}

/// One layer of [`Aggregation::ReleasedGcn`], drawing its weights from `rng`.
fn gcn_layer(prev: &[f32], edges: &[Edge], n: usize, d: usize, rng: &mut ChaCha8Rng) -> Vec<f32> {
    let bound = 1.0 / (d as f32).sqrt();
    // torch layout: weight[out][in], then bias[out].
    let w: Vec<f32> = (0..d * d)
        .map(|_| rng.random_range(-bound..bound))
        .collect();
    let b: Vec<f32> = (0..d).map(|_| rng.random_range(-bound..bound)).collect();
    // Wᵀ row-major (in × out), so that y[i] = Σ_k x[i][k] · wt[k] + b is a run of axpys.
    let mut wt = vec![0f32; d * d];
    for o in 0..d {
        for i in 0..d {
            wt[i * d + o] = w[o * d + i];
        }
    }
    let mut y = vec![0f32; n * d];
    for i in 0..n {
        let row = &mut y[i * d..(i + 1) * d];
        row.copy_from_slice(&b);
        for (k, &x) in prev[i * d..(i + 1) * d].iter().enumerate() {
            if x != 0.0 {
                axpy(row, x, &wt[k * d..(k + 1) * d]);
            }
        }
    }
    let mut deg = vec![0u32; n];
    for &(h, _, _) in edges {
        deg[h as usize] += 1;
    }
    let dinv: Vec<f32> = deg
        .iter()
        .map(|&c| if c == 0 { 0.0 } else { 1.0 / (c as f32).sqrt() })
        .collect();
    let mut out = vec![0f32; n * d];
    for &(h, _, t) in edges {
        let (h, t) = (h as usize, t as usize);
        let s = dinv[h] * dinv[t];
        if s != 0.0 {
            axpy(&mut out[h * d..(h + 1) * d], s, &y[t * d..(t + 1) * d]);
        }
    }
    for v in &mut out {
        *v = v.max(0.0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_layer_by_hand() {
        // Two entities joined by one edge, d = 1: a = 1, b = 3, relation 5; c alone.
        let g = Graph {
            rel: &[5.0],
            edges: &[(0, 0, 1)],
            n: 3,
            d: 1,
        };
        let out = propagate(Aggregation::Mean, vec![1.0, 3.0, 7.0], &g, 1, || {});
        // a: ½·1 + ½·½(3 + 5) = 2.5; b: ½·3 + ½·½(1 + 5) = 3; c has no edge and keeps 7.
        assert_eq!(out[1], [2.5, 3.0, 7.0]);
    }

    #[test]
    fn released_gcn_flows_from_tails_to_heads() {
        // 0 → 1, 1 → 2: entity 2 heads nothing, so the edge into it carries nothing, and
        // 1 and 2 get zero; 0 receives from 1 (out-degree 1 each).
        let x = vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let g = Graph {
            rel: &[0.0, 0.0],
            edges: &[(0, 0, 1), (1, 0, 2)],
            n: 3,
            d: 2,
        };
        let out = propagate(
            Aggregation::ReleasedGcn { seed: 1 },
            x.clone(),
            &g,
            2,
            || {},
        );
        assert_eq!(out.len(), 3);
        assert_eq!(&out[1][2..6], &[0.0; 4]);
        // Same seed, same numbers.
        let again = propagate(Aggregation::ReleasedGcn { seed: 1 }, x, &g, 2, || {});
        assert_eq!(out, again);
    }
}
