//! LoRA adapters for inference: low-rank updates `y = W x + scale · B (A x)` of a llama
//! block's projections ([`crate::GgufModel::set_adapter`]). The native engine applies them on
//! the fly without touching the stored weights; the candle engine merges them into f32 copies
//! of the adapted projections ([`LowRank::add_product_to`]).
//!
//! `pgraphrag-train` trains and saves adapters and converts them into a [`LoraAdapter`].

use std::collections::BTreeMap;

use crate::error::{LlmError, Result};
use crate::gguf::dims::LlamaDims;

/// A projection of a llama block that can carry an adapter (named by its GGUF tensor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LoraTarget {
    /// Query projection (`attn_q`; PEFT's `q_proj`).
    Q,
    /// Key projection (`attn_k`).
    K,
    /// Value projection (`attn_v`; PEFT's `v_proj`).
    V,
    /// Attention output (`attn_output`).
    O,
    /// MLP gate (`ffn_gate`).
    Gate,
    /// MLP up projection (`ffn_up`).
    Up,
    /// MLP down projection (`ffn_down`).
    Down,
}

impl LoraTarget {
    /// Every target, in block order.
    pub const ALL: [LoraTarget; 7] = [
        LoraTarget::Q,
        LoraTarget::K,
        LoraTarget::V,
        LoraTarget::O,
        LoraTarget::Gate,
        LoraTarget::Up,
        LoraTarget::Down,
    ];

    /// The GGUF name of the projection (`attn_q`, …).
    ///
    /// ```
    /// assert_eq!(pgraphrag_llm::LoraTarget::V.name(), "attn_v");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            LoraTarget::Q => "attn_q",
            LoraTarget::K => "attn_k",
            LoraTarget::V => "attn_v",
            LoraTarget::O => "attn_output",
            LoraTarget::Gate => "ffn_gate",
            LoraTarget::Up => "ffn_up",
            LoraTarget::Down => "ffn_down",
        }
    }

    /// The target named `name` ([`LoraTarget::name`]).
    ///
    /// ```
    /// use pgraphrag_llm::LoraTarget;
    /// assert_eq!(LoraTarget::from_name("attn_q"), Some(LoraTarget::Q));
    /// assert_eq!(LoraTarget::from_name("q"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// `(out, in)` of the projection in a model of dimensions `d`.
    ///
    /// ```
    /// let d = pgraphrag_llm::LlamaDims { n_embd: 16, n_head: 2, n_kv_head: 1, head_dim: 8,
    ///     n_ff: 32, n_layer: 2, rope_dim: 8, rope_base: 1e4, eps: 1e-5, vocab: 40 };
    /// assert_eq!(pgraphrag_llm::LoraTarget::V.shape(&d), (8, 16));
    /// assert_eq!(pgraphrag_llm::LoraTarget::Down.shape(&d), (16, 32));
    /// ```
    pub fn shape(self, d: &LlamaDims) -> (usize, usize) {
        let (qd, kvd) = (d.n_head * d.head_dim, d.n_kv_head * d.head_dim);
        match self {
            LoraTarget::Q => (qd, d.n_embd),
            LoraTarget::K | LoraTarget::V => (kvd, d.n_embd),
            LoraTarget::O => (d.n_embd, qd),
            LoraTarget::Gate | LoraTarget::Up => (d.n_ff, d.n_embd),
            LoraTarget::Down => (d.n_embd, d.n_ff),
        }
    }
}

/// One low-rank update `scale · B A` of an `out × in` projection: `A` is `rank × in`, `B` is
/// `out × rank`, both row-major f32.
///
/// ```
/// use pgraphrag_llm::LowRank;
/// // rank 1, in 2, out 3: B A = [1, 2, 3]ᵀ [1, -1]
/// let u = LowRank::new(vec![1.0, -1.0], vec![1.0, 2.0, 3.0], 1, 0.5)?;
/// assert_eq!((u.rank(), u.in_dim(), u.out_dim(), u.scale()), (1, 2, 3, 0.5));
/// let mut y = vec![10.0; 3];
/// u.add_to(&[3.0, 1.0], 1, &mut y, 3, 0); // x = [3, 1]: A x = 2, scale · B · 2
/// assert_eq!(y, [11.0, 12.0, 13.0]);
/// assert!(LowRank::new(vec![1.0, 2.0, 3.0], vec![1.0], 2, 1.0).is_err()); // 3 values for rank 2
/// # Ok::<(), pgraphrag_llm::LlmError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LowRank {
    rank: usize,
    in_dim: usize,
    out_dim: usize,
    a: Vec<f32>,
    b: Vec<f32>,
    scale: f32,
}

impl LowRank {
    /// The update from `A` (`rank × in` values), `B` (`out × rank`) and `scale` (LoRA's
    /// `alpha / rank`). Errors ([`LlmError::InvalidParams`]) on a zero rank, lengths that
    /// are not multiples of the rank, or non-finite values.
    pub fn new(a: Vec<f32>, b: Vec<f32>, rank: usize, scale: f32) -> Result<Self> {
        let bad = |m: String| Err(LlmError::InvalidParams(format!("low-rank update: {m}")));
        if rank == 0 || a.is_empty() || b.is_empty() {
            return bad("rank, A and B must not be empty".into());
        }
        if !a.len().is_multiple_of(rank) || !b.len().is_multiple_of(rank) {
            return bad(format!(
                "A has {} and B {} values, not multiples of the rank {rank}",
                a.len(),
                b.len()
            ));
        }
        if !scale.is_finite() || a.iter().chain(&b).any(|v| !v.is_finite()) {
            return bad("non-finite values".into());
        }
        Ok(LowRank {
            rank,
            in_dim: a.len() / rank,
            out_dim: b.len() / rank,
            a,
            b,
            scale,
        })
    }

    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Inputs of the projection (columns of `A`).
    pub fn in_dim(&self) -> usize {
        self.in_dim
    }
    /// Outputs of the projection (rows of `B`).
    pub fn out_dim(&self) -> usize {
        self.out_dim
    }
    /// The factor applied to `B A x`.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Adds `scale · B (A x)` to `t` rows: row `i` of `x` is `x[i·in..(i+1)·in]`, its update
    /// goes to `y[i·y_stride + y_offset..][..out]` (a slice of a stacked projection's output
    /// such as Q/K/V). `A x` is computed first (`r` values), then `B` times it, in f32.
    ///
    /// Panics if `x` or `y` is shorter than `t` rows.
    pub fn add_to(&self, x: &[f32], t: usize, y: &mut [f32], y_stride: usize, y_offset: usize) {
        let mut u = vec![0f32; self.rank];
        for i in 0..t {
            let xi = &x[i * self.in_dim..(i + 1) * self.in_dim];
            for (ur, ar) in u.iter_mut().zip(self.a.chunks_exact(self.in_dim)) {
                *ur = ar.iter().zip(xi).map(|(a, x)| a * x).sum::<f32>() * self.scale;
            }
            let yi = &mut y[i * y_stride + y_offset..i * y_stride + y_offset + self.out_dim];
            for (yo, bo) in yi.iter_mut().zip(self.b.chunks_exact(self.rank)) {
                *yo += bo.iter().zip(&u).map(|(b, u)| b * u).sum::<f32>();
            }
        }
    }

    /// Adds `scale · B A` to `w`, a row-major `out × in` matrix (the projection's weights):
    /// the update merged into the weights, `(W + scale · B A) x`. Each entry is one sum over
    /// the rank, in f32.
    ///
    /// Errors ([`LlmError::InvalidParams`]) when `w` does not hold `out · in` values.
    ///
    /// ```
    /// use pgraphrag_llm::LowRank;
    /// let u = LowRank::new(vec![1.0, -1.0], vec![1.0, 2.0, 3.0], 1, 0.5)?;
    /// let mut w = vec![0.0; 6];
    /// u.add_product_to(&mut w)?;
    /// assert_eq!(w, [0.5, -0.5, 1.0, -1.0, 1.5, -1.5]);
    /// assert!(u.add_product_to(&mut [0.0; 4]).is_err());
    /// # Ok::<(), pgraphrag_llm::LlmError>(())
    /// ```
    pub fn add_product_to(&self, w: &mut [f32]) -> Result<()> {
        if w.len() != self.out_dim * self.in_dim {
            return Err(LlmError::InvalidParams(format!(
                "low-rank update: a {}x{} matrix has {} values, not {}",
                self.out_dim,
                self.in_dim,
                self.out_dim * self.in_dim,
                w.len()
            )));
        }
        for (row, b) in w
            .chunks_exact_mut(self.in_dim)
            .zip(self.b.chunks_exact(self.rank))
        {
            for (j, wj) in row.iter_mut().enumerate() {
                let sum: f32 = b
                    .iter()
                    .enumerate()
                    .map(|(r, br)| br * self.a[r * self.in_dim + j])
                    .sum();
                *wj += self.scale * sum;
            }
        }
        Ok(())
    }
}

/// A set of low-rank updates, at most one per (block, projection), with an id that names
/// its values (part of [`crate::GgufModel::cache_id`], so generations with and without it,
/// or with another adapter, are never confused).
///
/// ```
/// use pgraphrag_llm::{LoraAdapter, LoraTarget, LowRank};
/// let mut ad = LoraAdapter::new("lora-1234");
/// ad.insert(0, LoraTarget::Q, LowRank::new(vec![0.1; 16], vec![0.0; 16], 1, 2.0)?);
/// assert_eq!((ad.id(), ad.len()), ("lora-1234", 1));
/// assert!(ad.get(0, LoraTarget::Q).is_some() && ad.get(0, LoraTarget::V).is_none());
/// # Ok::<(), pgraphrag_llm::LlmError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LoraAdapter {
    id: String,
    updates: BTreeMap<(usize, LoraTarget), LowRank>,
}

impl LoraAdapter {
    /// An empty adapter named `id` (it should change whenever the values do, e.g. a hash).
    pub fn new(id: impl Into<String>) -> Self {
        LoraAdapter {
            id: id.into(),
            updates: BTreeMap::new(),
        }
    }

    /// Sets the update of projection `target` of block `layer` (returns the one it replaces).
    pub fn insert(&mut self, layer: usize, target: LoraTarget, update: LowRank) -> Option<LowRank> {
        self.updates.insert((layer, target), update)
    }

    /// The adapter's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The update of projection `target` of block `layer`, if any.
    pub fn get(&self, layer: usize, target: LoraTarget) -> Option<&LowRank> {
        self.updates.get(&(layer, target))
    }

    /// Every update with its block and projection, in (block, projection) order.
    ///
    /// ```
    /// use pgraphrag_llm::{LoraAdapter, LoraTarget, LowRank};
    /// let mut ad = LoraAdapter::new("a");
    /// ad.insert(1, LoraTarget::V, LowRank::new(vec![0.1; 4], vec![0.0; 4], 1, 2.0)?);
    /// ad.insert(0, LoraTarget::Q, LowRank::new(vec![0.1; 4], vec![0.0; 4], 1, 2.0)?);
    /// let keys: Vec<_> = ad.updates().map(|(l, t, _)| (l, t)).collect();
    /// assert_eq!(keys, [(0, LoraTarget::Q), (1, LoraTarget::V)]);
    /// # Ok::<(), pgraphrag_llm::LlmError>(())
    /// ```
    pub fn updates(&self) -> impl Iterator<Item = (usize, LoraTarget, &LowRank)> {
        self.updates.iter().map(|(&(l, t), u)| (l, t, u))
    }

    /// Updates held.
    pub fn len(&self) -> usize {
        self.updates.len()
    }

    /// No update held.
    pub fn is_empty(&self) -> bool {
        self.updates.is_empty()
    }

    /// Every update fits a model of `n_layer` blocks of dimensions `d`.
    pub(crate) fn check(&self, d: &LlamaDims, n_layer: usize) -> Result<()> {
        for (&(layer, tg), u) in &self.updates {
            let bad = |reason: String| LlmError::Adapter {
                adapter: self.id.clone(),
                reason,
            };
            if layer >= n_layer {
                return Err(bad(format!(
                    "blk.{layer}.{} is beyond the model's {n_layer} blocks",
                    tg.name()
                )));
            }
            let (out, inp) = tg.shape(d);
            if (u.out_dim, u.in_dim) != (out, inp) {
                return Err(bad(format!(
                    "blk.{layer}.{} is {}x{}, the model's projection is {out}x{inp}",
                    tg.name(),
                    u.out_dim,
                    u.in_dim
                )));
            }
        }
        Ok(())
    }
}
