//! K-RagRec's trainable graph side: a Graph Transformer encoder over retrieved knowledge
//! sub-graphs (PyG's `TransformerConv` layers as G-Retriever's `GraphTransformer`, which the
//! released `graph_llm.py` uses), mean pooling per sub-graph, and the projector
//! `Linear – Sigmoid – Linear` into the LLM's hidden size, giving soft tokens.

use candle_core::{D, DType, Device, Tensor, Var};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use crate::error::{Ctx, Result, TrainError};
use crate::ops::{dropout, mix};

/// How the projected sub-graph vectors become soft tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoftTokens {
    /// One token: the mean over the sub-graphs (the released `graph_llm.py`).
    Mean,
    /// One token per sub-graph, in retrieval order (the paper's text).
    PerSubgraph,
}

/// The encoder's and projector's sizes.
///
/// ```
/// let c = pgraphrag_train::GnnConfig::paper(1024, 4096);
/// assert_eq!((c.layers, c.hidden, c.heads, c.projector_hidden), (4, 1024, 4, 2048));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GnnConfig {
    /// Node and edge feature size (the sentence encoder's dimension).
    pub in_dim: usize,
    /// `TransformerConv` layers (at least 1).
    pub layers: usize,
    /// Hidden and output size of the encoder (a multiple of `heads`).
    pub hidden: usize,
    /// Attention heads per layer.
    pub heads: usize,
    /// Dropout on attention weights and between layers, while training.
    pub dropout: f32,
    /// Hidden size of the projector.
    pub projector_hidden: usize,
    /// The LLM's hidden size (the soft tokens' size).
    pub llm_dim: usize,
    /// One mean token or one token per sub-graph.
    pub tokens: SoftTokens,
}

impl GnnConfig {
    /// The paper's setting (appendix Table 4; released `graph_llm.py`): 4 layers, hidden
    /// 1024, 4 heads, projector `Linear(1024, 2048) – Sigmoid – Linear(2048, llm_dim)`,
    /// dropout 0, the released single mean token.
    pub fn paper(in_dim: usize, llm_dim: usize) -> Self {
        GnnConfig {
            in_dim,
            layers: 4,
            hidden: 1024,
            heads: 4,
            dropout: 0.0,
            projector_hidden: 2048,
            llm_dim,
            tokens: SoftTokens::Mean,
        }
    }

    /// A small default for small LLMs and CPUs: 2 layers, hidden 128, 4 heads, projector 256.
    pub fn small(in_dim: usize, llm_dim: usize) -> Self {
        GnnConfig {
            layers: 2,
            hidden: 128,
            projector_hidden: 256,
            ..Self::paper(in_dim, llm_dim)
        }
    }

    fn check(&self) -> Result<()> {
        if self.layers == 0
            || self.heads == 0
            || !self.hidden.is_multiple_of(self.heads)
            || self.in_dim == 0
            || self.llm_dim == 0
            || self.projector_hidden == 0
            || !(0.0..1.0).contains(&self.dropout)
        {
            return Err(TrainError::Config(format!(
                "graph encoder needs layers ≥ 1, hidden a multiple of heads, sizes ≥ 1 and 0 ≤ dropout < 1 (got {self:?})"
            )));
        }
        Ok(())
    }
}

/// One knowledge sub-graph: node features (`n × in_dim`, row-major), directed edges
/// `(source, target)` (messages flow source → target, as PyG reads `edge_index`) and their
/// features (`edges.len() × in_dim`).
#[derive(Debug, Clone, PartialEq)]
pub struct Subgraph {
    /// Node features, `n × in_dim`.
    pub nodes: Vec<f32>,
    /// Edges as (source, target) node indices.
    pub edges: Vec<(u32, u32)>,
    /// Edge features, `edges.len() × in_dim`.
    pub edge_features: Vec<f32>,
}

impl Subgraph {
    /// The sub-graph of an ego graph (`pgraphrag_graph::kg::EgoGraph`, what
    /// `pgraphrag_recsys::KgRetriever` retrieves): its nodes in order (centre first), its
    /// edges head → tail, each node's features from `node` (e.g. the row of the sub-graph
    /// index's hop-0 matrix: the encoded entity text) and each edge's from `relation` (the
    /// encoded relation text), all of length `dim`.
    ///
    /// ```
    /// use pgraphrag_graph::kg::KnowledgeGraph;
    /// let mut kg = KnowledgeGraph::new();
    /// let (h, _, _) = kg.add_triple("m1", "film.film.country", "c1").unwrap();
    /// let ego = kg.ego(h, 1);
    /// let g = pgraphrag_train::Subgraph::from_ego(&ego, 2, |e| Some(vec![e.0 as f32, 1.0]), |_| Some(vec![0.5, 0.5]))?;
    /// assert_eq!((g.nodes.len(), g.edges.clone()), (4, vec![(0, 1)]));
    /// # Ok::<(), pgraphrag_train::TrainError>(())
    /// ```
    pub fn from_ego(
        ego: &pgraphrag_graph::kg::EgoGraph,
        dim: usize,
        node: impl Fn(pgraphrag_graph::kg::EntityId) -> Option<Vec<f32>>,
        relation: impl Fn(pgraphrag_graph::kg::RelationId) -> Option<Vec<f32>>,
    ) -> Result<Subgraph> {
        let mut pos = std::collections::HashMap::new();
        let mut nodes = Vec::with_capacity(ego.nodes.len() * dim);
        for (i, &(e, _)) in ego.nodes.iter().enumerate() {
            let f = node(e).filter(|f| f.len() == dim).ok_or_else(|| {
                TrainError::Input(format!("no {dim}-value features for entity {}", e.0))
            })?;
            nodes.extend(f);
            pos.insert(e, i as u32);
        }
        let mut edges = Vec::with_capacity(ego.edges.len());
        let mut edge_features = Vec::with_capacity(ego.edges.len() * dim);
        for e in &ego.edges {
            let (Some(&h), Some(&t)) = (pos.get(&e.head), pos.get(&e.tail)) else {
                return Err(TrainError::Input(format!(
                    "edge {} of the ego graph has an endpoint outside it",
                    e.id
                )));
            };
            let f = relation(e.relation)
                .filter(|f| f.len() == dim)
                .ok_or_else(|| {
                    TrainError::Input(format!(
                        "no {dim}-value features for relation {}",
                        e.relation.0
                    ))
                })?;
            edges.push((h, t));
            edge_features.extend(f);
        }
        Ok(Subgraph {
            nodes,
            edges,
            edge_features,
        })
    }
}

struct Linear {
    w: Var,
    b: Option<Var>,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let y = x.matmul(&self.w.as_tensor().t()?)?;
        match &self.b {
            Some(b) => y.broadcast_add(b.as_tensor()),
            None => Ok(y),
        }
    }
}

struct Conv {
    q: Linear,
    k: Linear,
    v: Linear,
    e: Linear,
    skip: Linear,
}

struct BatchNorm {
    gamma: Var,
    beta: Var,
    running_mean: Var,
    running_var: Var,
}

/// The Graph Transformer encoder and projector ([`GnnConfig`]): trainable [`Var`]s
/// initialised as PyTorch does (`U(−1/√in, 1/√in)` for weights and biases, BatchNorm at 1
/// and 0), seeded. BatchNorm's running statistics are variables too (no gradient; updated
/// while training), so checkpoints keep them.
pub struct GraphEncoder {
    cfg: GnnConfig,
    convs: Vec<Conv>,
    bns: Vec<BatchNorm>,
    p1: Linear,
    p2: Linear,
    vars: Vec<(String, Var)>,
    device: Device,
}

impl std::fmt::Debug for GraphEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphEncoder")
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

impl GraphEncoder {
    /// A freshly initialised encoder (weights drawn from `seed`).
    pub fn new(cfg: GnnConfig, seed: u64, device: &Device) -> Result<Self> {
        cfg.check()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut vars = Vec::new();
        let mut var = |name: String, vals: Vec<f32>, shape: &[usize]| -> Result<Var> {
            let v = Tensor::from_vec(vals, shape, device)
                .and_then(|t| Var::from_tensor(&t))
                .ctx(|| format!("initialising `{name}`"))?;
            vars.push((name, v.clone()));
            Ok(v)
        };
        let mut linear = |name: String, inp: usize, out: usize, bias: bool| -> Result<Linear> {
            let bound = 1.0 / (inp as f32).sqrt();
            let mut draw = |n: usize| -> Vec<f32> {
                (0..n).map(|_| rng.random_range(-bound..bound)).collect()
            };
            let wv = draw(out * inp);
            let bv = if bias { Some(draw(out)) } else { None };
            let w = var(format!("{name}.weight"), wv, &[out, inp])?;
            let b = match bv {
                Some(bv) => Some(var(format!("{name}.bias"), bv, &[out])?),
                None => None,
            };
            Ok(Linear { w, b })
        };
        let mut convs = Vec::with_capacity(cfg.layers);
        for l in 0..cfg.layers {
            let inp = if l == 0 { cfg.in_dim } else { cfg.hidden };
            let n = |s: &str| format!("gnn.conv{l}.{s}");
            convs.push(Conv {
                q: linear(n("lin_query"), inp, cfg.hidden, true)?,
                k: linear(n("lin_key"), inp, cfg.hidden, true)?,
                v: linear(n("lin_value"), inp, cfg.hidden, true)?,
                e: linear(n("lin_edge"), cfg.in_dim, cfg.hidden, false)?,
                skip: linear(n("lin_skip"), inp, cfg.hidden, true)?,
            });
        }
        let p1 = linear("projector.0".into(), cfg.hidden, cfg.projector_hidden, true)?;
        let p2 = linear(
            "projector.2".into(),
            cfg.projector_hidden,
            cfg.llm_dim,
            true,
        )?;
        let mut bns = Vec::new();
        for l in 0..cfg.layers.saturating_sub(1) {
            let h = cfg.hidden;
            let n = |s: &str| format!("gnn.bn{l}.{s}");
            bns.push(BatchNorm {
                gamma: var(n("weight"), vec![1.0; h], &[h])?,
                beta: var(n("bias"), vec![0.0; h], &[h])?,
                running_mean: var(n("running_mean"), vec![0.0; h], &[h])?,
                running_var: var(n("running_var"), vec![1.0; h], &[h])?,
            });
        }
        Ok(GraphEncoder {
            cfg,
            convs,
            bns,
            p1,
            p2,
            vars,
            device: device.clone(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &GnnConfig {
        &self.cfg
    }

    /// Every variable with its name (PyG/PyTorch-style: `gnn.conv0.lin_query.weight`, …,
    /// `projector.2.bias`), BatchNorm running statistics included.
    pub fn named_vars(&self) -> Vec<(String, Var)> {
        self.vars.clone()
    }

    /// The soft tokens of one row's retrieved sub-graphs: `[1, llm_dim]` for
    /// [`SoftTokens::Mean`], `[graphs.len(), llm_dim]` for [`SoftTokens::PerSubgraph`].
    /// `dropout_seed` is `Some` while training (dropout and BatchNorm batch statistics, which
    /// also update the running statistics) and `None` in evaluation (running statistics).
    pub fn soft_tokens(&self, graphs: &[Subgraph], dropout_seed: Option<u64>) -> Result<Tensor> {
        let mut v = self.soft_tokens_batch(&[graphs], dropout_seed)?;
        v.pop()
            .ok_or_else(|| TrainError::Input("no sub-graphs to encode".into()))
    }

    /// [`GraphEncoder::soft_tokens`] for several rows at once: their sub-graphs are encoded
    /// together (one disjoint graph, so BatchNorm sees the whole batch, as PyG batches do),
    /// then split back per row.
    pub fn soft_tokens_batch(
        &self,
        rows: &[&[Subgraph]],
        dropout_seed: Option<u64>,
    ) -> Result<Vec<Tensor>> {
        let c = &self.cfg;
        // All sub-graphs as one disjoint graph.
        let (mut x, mut ef, mut src, mut dst, mut member) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut per_row = Vec::with_capacity(rows.len());
        let mut g = 0usize;
        for (r, graphs) in rows.iter().enumerate() {
            if graphs.is_empty() {
                return Err(TrainError::Input(format!(
                    "row {r} has no sub-graphs to encode"
                )));
            }
            per_row.push((g, graphs.len()));
            for (gi, sg) in graphs.iter().enumerate() {
                let n = sg.nodes.len() / c.in_dim;
                if n == 0
                    || sg.nodes.len() != n * c.in_dim
                    || sg.edge_features.len() != sg.edges.len() * c.in_dim
                {
                    return Err(TrainError::Input(format!(
                        "row {r}, sub-graph {gi}: {} node values and {} edge values for {} edges do not make rows of {}",
                        sg.nodes.len(),
                        sg.edge_features.len(),
                        sg.edges.len(),
                        c.in_dim
                    )));
                }
                if let Some(&(a, b)) = sg
                    .edges
                    .iter()
                    .find(|(a, b)| *a as usize >= n || *b as usize >= n)
                {
                    return Err(TrainError::Input(format!(
                        "row {r}, sub-graph {gi}: edge ({a}, {b}) outside its {n} nodes"
                    )));
                }
                let off = member.len() as u32;
                x.extend_from_slice(&sg.nodes);
                ef.extend_from_slice(&sg.edge_features);
                src.extend(sg.edges.iter().map(|e| e.0 + off));
                dst.extend(sg.edges.iter().map(|e| e.1 + off));
                member.extend(std::iter::repeat_n(g as u32, n));
                g += 1;
            }
        }
        let p = self
            .encode(x, ef, src, dst, member, g, dropout_seed)
            .ctx(|| format!("encoding {g} sub-graphs"))?;
        per_row
            .into_iter()
            .map(|(start, len)| {
                let rows = p.narrow(0, start, len)?;
                match c.tokens {
                    SoftTokens::Mean => rows.mean_keepdim(0),
                    SoftTokens::PerSubgraph => Ok(rows),
                }
            })
            .collect::<candle_core::Result<Vec<_>>>()
            .ctx(|| "splitting soft tokens per row".into())
    }

    #[allow(clippy::too_many_arguments)]
    fn encode(
        &self,
        x: Vec<f32>,
        ef: Vec<f32>,
        src: Vec<u32>,
        dst: Vec<u32>,
        member: Vec<u32>,
        n_graphs: usize,
        seed: Option<u64>,
    ) -> candle_core::Result<Tensor> {
        let c = &self.cfg;
        let dev = &self.device;
        let n = member.len();
        let ne = src.len();
        let mut h = Tensor::from_vec(x, (n, c.in_dim), dev)?;
        let e_attr = Tensor::from_vec(ef, (ne, c.in_dim), dev)?;
        let src_t = Tensor::from_vec(src, ne, dev)?;
        let dst_ix = dst.clone();
        let dst_t = Tensor::from_vec(dst, ne, dev)?;
        let drop_seed = |l: usize, what: u64| seed.map(|s| mix(s ^ mix(((l as u64) << 8) | what)));
        for (l, conv) in self.convs.iter().enumerate() {
            h = self.conv(conv, &h, &e_attr, &src_t, &dst_t, &dst_ix, drop_seed(l, 1))?;
            if l + 1 < self.convs.len() {
                h = self.batch_norm(&self.bns[l], &h, seed.is_some())?.relu()?;
                if let Some(s) = drop_seed(l, 2) {
                    h = dropout(&h, c.dropout, s)?;
                }
            }
        }
        // Mean pooling per sub-graph.
        let member_t = Tensor::from_vec(member.clone(), n, dev)?;
        let mut counts = vec![0f32; n_graphs];
        for &m in &member {
            counts[m as usize] += 1.0;
        }
        let counts = Tensor::from_vec(counts, (n_graphs, 1), dev)?;
        let pooled = Tensor::zeros((n_graphs, c.hidden), DType::F32, dev)?
            .index_add(&member_t, &h, 0)?
            .broadcast_div(&counts)?;
        self.p2
            .forward(&candle_nn::ops::sigmoid(&self.p1.forward(&pooled)?)?)
    }

    /// One `TransformerConv` (PyG, `concat = True`, `beta = False`, `root_weight = True`):
    /// per head, `α_ij = softmax_j((W_q x_i)·(W_k x_j + W_e e_ij) / √C)` over the edges into
    /// `i`, `out_i = Σ_j α_ij (W_v x_j + W_e e_ij) + W_skip x_i`.
    #[allow(clippy::too_many_arguments)]
    fn conv(
        &self,
        conv: &Conv,
        x: &Tensor,
        e_attr: &Tensor,
        src: &Tensor,
        dst: &Tensor,
        dst_ix: &[u32],
        drop: Option<u64>,
    ) -> candle_core::Result<Tensor> {
        let c = &self.cfg;
        let (heads, ch) = (c.heads, c.hidden / c.heads);
        let n = x.dim(0)?;
        let ne = dst_ix.len();
        let skip = conv.skip.forward(x)?;
        if ne == 0 {
            return Ok(skip);
        }
        let e = conv.e.forward(e_attr)?;
        let q = conv.q.forward(x)?.index_select(dst, 0)?;
        let k = (conv.k.forward(x)?.index_select(src, 0)? + &e)?;
        let v = (conv.v.forward(x)?.index_select(src, 0)? + &e)?;
        let score = ((q * k)?.reshape((ne, heads, ch))?.sum(D::Minus1)? / (ch as f64).sqrt())?;
        // Softmax over the edges into each node; the per-node maximum is a constant for the
        // gradient (softmax does not change when a group's scores shift together).
        let sv = score.to_vec2::<f32>()?;
        let mut mx = vec![f32::NEG_INFINITY; n * heads];
        for (i, row) in sv.iter().enumerate() {
            let t = dst_ix[i] as usize;
            for (hh, &s) in row.iter().enumerate() {
                mx[t * heads + hh] = mx[t * heads + hh].max(s);
            }
        }
        let shift: Vec<f32> = (0..ne)
            .flat_map(|i| {
                let t = dst_ix[i] as usize;
                mx[t * heads..(t + 1) * heads].to_vec()
            })
            .collect();
        let shift = Tensor::from_vec(shift, (ne, heads), x.device())?;
        let num = (score - shift)?.exp()?;
        let den = Tensor::zeros((n, heads), DType::F32, x.device())?.index_add(dst, &num, 0)?;
        let mut alpha = (num / den.index_select(dst, 0)?)?;
        if let Some(s) = drop {
            alpha = dropout(&alpha, c.dropout, s)?;
        }
        let msg = v
            .reshape((ne, heads, ch))?
            .broadcast_mul(&alpha.unsqueeze(2)?)?
            .reshape((ne, heads * ch))?;
        Tensor::zeros((n, heads * ch), DType::F32, x.device())?.index_add(dst, &msg, 0)? + skip
    }

    /// BatchNorm1d: batch statistics while training (biased variance to normalise; the
    /// running statistics move by momentum 0.1 with the unbiased variance), running
    /// statistics in evaluation; eps 1e-5.
    fn batch_norm(&self, bn: &BatchNorm, x: &Tensor, train: bool) -> candle_core::Result<Tensor> {
        let n = x.dim(0)?;
        let (mean, var) = if train && n > 1 {
            let mean = x.mean_keepdim(0)?;
            let var = x.broadcast_sub(&mean)?.sqr()?.mean_keepdim(0)?;
            let (m, v) = (mean.squeeze(0)?.detach(), var.squeeze(0)?.detach());
            let unbiased = (&v * (n as f64 / (n as f64 - 1.0)))?;
            bn.running_mean
                .set(&((bn.running_mean.as_tensor() * 0.9)? + (m * 0.1)?)?)?;
            bn.running_var
                .set(&((bn.running_var.as_tensor() * 0.9)? + (unbiased * 0.1)?)?)?;
            (mean, var)
        } else {
            (
                bn.running_mean.as_tensor().detach().unsqueeze(0)?,
                bn.running_var.as_tensor().detach().unsqueeze(0)?,
            )
        };
        x.broadcast_sub(&mean)?
            .broadcast_div(&(var + 1e-5)?.sqrt()?)?
            .broadcast_mul(bn.gamma.as_tensor())?
            .broadcast_add(bn.beta.as_tensor())
    }
}
