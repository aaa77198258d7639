//! The llama block's two halves as two CPU ops with hand-written backward passes, the path a
//! training step takes on the CPU:
//!
//! - attention: `x + o(attention(q(h), k(h), v(h)))` with `h = RMSNorm(x)`;
//! - MLP: `x + down(silu(gate(h)) · up(h))` with `h = RMSNorm(x)`;
//!
//! every projection frozen, with its LoRA adapter (`scale · B A dropout(·)`) where the model
//! has one. As candle ops each half is some twenty nodes; candle's backward pass gives every
//! input of every node a zeroed buffer and adds its gradient into it (and computes gradients
//! for inputs that need none, such as dropout masks), which on two cores cost more than a
//! third of a step, all on one thread. Here each half is one node: two inputs (the residual
//! stream and the block's adapters as one flat tensor), each gradient written once, every
//! step on the rayon pool (the frozen products on the packed tiles, the element-wise work in
//! rows, the attention per head). Values are those of the candle composition up to the order
//! of float sums (`tests` below compare both, forward and backward).

use std::sync::{Arc, Mutex};

use candle_core::{CpuStorage, CustomOp2, DType, Device, Layout, Shape, Storage, Tensor};
use gemm::Parallelism;
use rayon::prelude::*;

use crate::attention::{self, AttentionShape, product};
use crate::fused::{
    TASK, rms_norm_backward_rows, rms_norm_rows, swiglu_backward, swiglu_values, values,
};
use crate::lora::{AdapterSlot, Lora, LoraTarget};
use crate::ops::{Frozen, dropout_mask};

/// `y += x`, in parallel.
fn add_into(y: &mut [f32], x: &[f32]) {
    y.par_chunks_mut(TASK)
        .zip(x.par_chunks(TASK))
        .for_each(|(y, x)| crate::kernels::add(y, x));
}

/// The adapters' small products on the current rayon pool.
fn pool() -> Parallelism {
    Parallelism::Rayon(rayon::current_num_threads())
}

/// A LoRA adapter inside a fused block: where its `A` and `B` lie in the block's flat
/// parameters, its scale and, while training, its dropout rate and mask seed.
#[derive(Clone, Copy)]
struct Adapter {
    slot: AdapterSlot,
    scale: f32,
    dropout: Option<(f32, u64)>,
}

/// What an adapter's forward pass keeps: the dropout mask (`[n, in]`, scaled keep values),
/// the dropped-out input (`None` without dropout: the input itself) and
/// `u = dropout(x) · Aᵀ` (`[n, rank]`).
struct AdapterSaved {
    mask: Option<Vec<f32>>,
    dropped: Option<Vec<f32>>,
    u: Vec<f32>,
}

impl Adapter {
    fn a<'p>(&self, params: &'p [f32]) -> &'p [f32] {
        let s = self.slot;
        &params[s.at..s.at + s.rank * s.inp]
    }

    fn b<'p>(&self, params: &'p [f32]) -> &'p [f32] {
        let s = self.slot;
        &params[s.at + s.rank * s.inp..s.at + s.rank * (s.inp + s.out)]
    }

    /// `y += scale · (dropout(x) · Aᵀ) · Bᵀ` for `n` rows.
    fn forward(&self, params: &[f32], x: &[f32], n: usize, y: &mut [f32]) -> AdapterSaved {
        let AdapterSlot { rank, inp, out, .. } = self.slot;
        let mask = self.dropout.map(|(p, seed)| dropout_mask(n * inp, p, seed));
        let dropped: Option<Vec<f32>> = mask.as_ref().map(|m| {
            x.par_iter()
                .zip(m)
                .with_min_len(TASK)
                .map(|(x, m)| x * m)
                .collect()
        });
        let xd = dropped.as_deref().unwrap_or(x);
        let mut u = vec![0f32; n * rank];
        let (a, b) = (self.a(params), self.b(params));
        // SAFETY: xd is n × inp, A rank × inp (read transposed), u n × rank, B out × rank
        // (read transposed), y n × out.
        unsafe {
            product(
                (n, rank, inp),
                (u.as_mut_ptr(), rank, 1),
                false,
                (xd.as_ptr(), inp, 1),
                (a.as_ptr(), 1, inp),
                (1.0, pool()),
            );
            product(
                (n, out, rank),
                (y.as_mut_ptr(), out, 1),
                true,
                (u.as_ptr(), rank, 1),
                (b.as_ptr(), 1, rank),
                (self.scale, pool()),
            );
        }
        AdapterSaved { mask, dropped, u }
    }

    /// The adapter's part of the backward pass for the output gradient `g` (`[n, out]`) of
    /// input `x`: `∂A` and `∂B` into `dparams`, `dx += (scale · g · B · A) ⊙ mask`.
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        params: &[f32],
        x: &[f32],
        saved: &AdapterSaved,
        g: &[f32],
        n: usize,
        dx: &mut [f32],
        dparams: &mut [f32],
    ) {
        let AdapterSlot {
            at, rank, inp, out, ..
        } = self.slot;
        let (a, b) = (self.a(params), self.b(params));
        let xd = saved.dropped.as_deref().unwrap_or(x);
        let mut du = vec![0f32; n * rank];
        let (da, db) = dparams[at..at + rank * (inp + out)].split_at_mut(rank * inp);
        // SAFETY: g is n × out, B out × rank, du n × rank, u n × rank, A rank × inp, xd
        // n × inp, ∂A rank × inp and ∂B out × rank (this adapter's part of dparams).
        unsafe {
            // ∂u = scale · g · B
            product(
                (n, rank, out),
                (du.as_mut_ptr(), rank, 1),
                false,
                (g.as_ptr(), out, 1),
                (b.as_ptr(), rank, 1),
                (self.scale, pool()),
            );
            // ∂B = scale · gᵀ · u
            product(
                (out, rank, n),
                (db.as_mut_ptr(), rank, 1),
                false,
                (g.as_ptr(), 1, out),
                (saved.u.as_ptr(), rank, 1),
                (self.scale, pool()),
            );
            // ∂A = ∂uᵀ · dropout(x)
            product(
                (rank, inp, n),
                (da.as_mut_ptr(), inp, 1),
                false,
                (du.as_ptr(), 1, rank),
                (xd.as_ptr(), inp, 1),
                (1.0, pool()),
            );
        }
        // ∂x += (∂u · A) ⊙ mask, row by row (rank products per row, summed in rank order).
        let rows_per_task = (TASK / inp).max(1);
        dx.par_chunks_mut(rows_per_task * inp)
            .enumerate()
            .for_each(|(task, chunk)| {
                let mut row = vec![0f32; inp];
                for (j, dxr) in chunk.chunks_exact_mut(inp).enumerate() {
                    let i = task * rows_per_task + j;
                    row.fill(0.0);
                    for (r, ar) in a.chunks_exact(inp).enumerate() {
                        let c = du[i * rank + r];
                        for (v, w) in row.iter_mut().zip(ar) {
                            *v += c * w;
                        }
                    }
                    match &saved.mask {
                        None => dxr.iter_mut().zip(&row).for_each(|(d, v)| *d += v),
                        Some(m) => {
                            let mr = &m[i * inp..(i + 1) * inp];
                            for ((d, v), m) in dxr.iter_mut().zip(&row).zip(mr) {
                                *d += v * m;
                            }
                        }
                    }
                }
            });
    }
}

/// A frozen projection and its adapter, if any.
struct Proj {
    w: Frozen,
    adapter: Option<Adapter>,
}

impl Proj {
    fn forward(
        &self,
        params: &[f32],
        x: &[f32],
        n: usize,
    ) -> candle_core::Result<(Vec<f32>, Option<AdapterSaved>)> {
        let mut y = self.w.forward_cpu(x, n)?;
        let saved = self.adapter.map(|a| a.forward(params, x, n, &mut y));
        Ok((y, saved))
    }

    /// `∂x` of this projection for output gradient `g`, into `dx` (`accumulate`: added to it,
    /// else written; `dx` then `None`), the adapter's gradients into `dparams`.
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        params: &[f32],
        x: &[f32],
        saved: Option<&AdapterSaved>,
        g: &[f32],
        n: usize,
        dx: &mut Option<Vec<f32>>,
        dparams: &mut [f32],
    ) -> candle_core::Result<()> {
        let d = match dx {
            Some(d) => {
                self.w.backward_cpu_add(g, n, d)?;
                d
            }
            None => dx.insert(self.w.backward_cpu(g, n)?),
        };
        if let (Some(a), Some(s)) = (self.adapter, saved) {
            a.backward(params, x, s, g, n, d, dparams);
        }
        Ok(())
    }
}

/// Which half of the block.
enum Kind {
    /// Projections q, k, v, o and the attention between them.
    Attention(AttentionShape),
    /// Projections gate, up, down.
    Mlp,
}

/// One half of a block as a [`CustomOp2`] of `(x [n, d], adapters [P])` → `[n, d]`.
struct BlockOp {
    kind: Kind,
    norm: Arc<Vec<f32>>,
    eps: f32,
    projs: Vec<Proj>,
    saved: Mutex<Option<Saved>>,
}

/// The forward pass's values the backward pass reads: `h = RMSNorm(x)`, the last
/// projection's input (attention's merged heads, or the MLP's `silu(g)·u`), the half's own
/// and each adapter's.
struct Saved {
    h: Vec<f32>,
    mid: Vec<f32>,
    inner: Inner,
    adapters: Vec<Option<AdapterSaved>>,
}

/// What the middle of a half keeps: the attention's values, or the MLP's gate and up outputs.
enum Inner {
    Attention(attention::Saved),
    Mlp { gate: Vec<f32>, up: Vec<f32> },
}

impl BlockOp {
    fn forward(&self, x: &[f32], params: &[f32]) -> candle_core::Result<(Vec<f32>, Saved)> {
        let d = self.norm.len();
        let n = x.len() / d;
        let h = rms_norm_rows(x, &self.norm, self.eps);
        let mut adapters = Vec::with_capacity(self.projs.len());
        let (mut y, saved) = match &self.kind {
            Kind::Attention(shape) => {
                let mut qkv = Vec::with_capacity(3);
                for p in &self.projs[..3] {
                    let (y, s) = p.forward(params, &h, n)?;
                    qkv.push(y);
                    adapters.push(s);
                }
                shape.check(qkv[0].len(), qkv[1].len(), qkv[2].len())?;
                let (att, a_saved) = shape.forward(&qkv[0], &qkv[1], &qkv[2]);
                let (o, s) = self.projs[3].forward(params, &att, n)?;
                adapters.push(s);
                (o, (att, Inner::Attention(a_saved)))
            }
            Kind::Mlp => {
                let (g, sg) = self.projs[0].forward(params, &h, n)?;
                let (u, su) = self.projs[1].forward(params, &h, n)?;
                let a = swiglu_values(&g, &u);
                let (dn, sd) = self.projs[2].forward(params, &a, n)?;
                adapters.extend([sg, su, sd]);
                (dn, (a, Inner::Mlp { gate: g, up: u }))
            }
        };
        add_into(&mut y, x);
        let (mid, inner) = saved;
        Ok((
            y,
            Saved {
                h,
                mid,
                inner,
                adapters,
            },
        ))
    }

    /// `∂x` from the output gradient `g`; the adapters' gradients go to their places in
    /// `dparams`.
    fn backward(
        &self,
        x: &[f32],
        params: &[f32],
        s: &Saved,
        g: &[f32],
        dparams: &mut [f32],
    ) -> candle_core::Result<Vec<f32>> {
        let d = self.norm.len();
        let n = x.len() / d;
        let last = self.projs.len() - 1;
        // The last projection (o, down) reads `mid`.
        let mut dmid = None;
        self.projs[last].backward(
            params,
            &s.mid,
            s.adapters[last].as_ref(),
            g,
            n,
            &mut dmid,
            dparams,
        )?;
        let Some(dmid) = dmid else {
            candle_core::bail!("fused block: no gradient for the middle values");
        };
        // The gradients of the projections that read `h`.
        let outs: Vec<Vec<f32>> = match (&self.kind, &s.inner) {
            (Kind::Attention(shape), Inner::Attention(a)) => {
                let (dq, dk, dv) = shape.backward(a, &dmid);
                vec![dq, dk, dv]
            }
            (Kind::Mlp, Inner::Mlp { gate, up }) => {
                let (dg, du) = swiglu_backward(gate, up, &dmid);
                vec![dg, du]
            }
            _ => candle_core::bail!("fused block: a half's saved values are another kind's"),
        };
        let mut dh = None;
        for (i, go) in outs.iter().enumerate() {
            self.projs[i].backward(
                params,
                &s.h,
                s.adapters[i].as_ref(),
                go,
                n,
                &mut dh,
                dparams,
            )?;
        }
        let Some(dh) = dh else {
            candle_core::bail!("fused block: no gradient for the normalised input");
        };
        Ok(rms_norm_backward_rows(
            x,
            &dh,
            &self.norm,
            self.eps,
            Some(g),
        ))
    }
}

/// Every half of every block, in order, as one [`CustomOp2`] of `(x [n, d], adapters [P])`
/// → `[n, d]`: one node of the autograd graph for the whole stack, so candle's backward pass
/// allocates and adds one input gradient instead of one per half. Each half's adapters lie at
/// their own offsets of the flat parameters.
struct StackOp {
    halves: Vec<BlockOp>,
    /// Whether any half has an adapter (else the parameters get no gradient).
    adapted: bool,
    /// Whether a backward pass can follow (the input or the adapters are tracked): only
    /// then does the forward pass keep what the backward one reads.
    keep: bool,
    /// The input of every half, kept by the forward pass for the backward one.
    inputs: Mutex<Vec<Vec<f32>>>,
}

impl CustomOp2 for StackOp {
    fn name(&self) -> &'static str {
        "llama-blocks"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, params) = (
            values(s1, l1, "fused block")?,
            values(s2, l2, "fused block")?,
        );
        let mut inputs = Vec::with_capacity(self.halves.len());
        let mut cur = x.to_vec();
        for half in &self.halves {
            let d = half.norm.len();
            if d == 0 || l1.dims().len() != 2 || l1.dims()[1] != d {
                candle_core::bail!("fused block: input {:?}, hidden size {d}", l1.dims());
            }
            let (y, saved) = half.forward(&cur, params)?;
            let input = std::mem::replace(&mut cur, y);
            if self.keep {
                *half.saved.lock().unwrap_or_else(|e| e.into_inner()) = Some(saved);
                inputs.push(input);
            }
        }
        *self.inputs.lock().unwrap_or_else(|e| e.into_inner()) = inputs;
        Ok((CpuStorage::F32(cur), l1.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        params: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let grad = grad.contiguous()?;
        let (gs, gl) = grad.storage_and_layout();
        let (ps, pl) = params.storage_and_layout();
        let (Storage::Cpu(gs), Storage::Cpu(ps)) = (&*gs, &*ps) else {
            candle_core::bail!("fused block backward: CPU tensors only");
        };
        let params_v = values(ps, pl, "fused block")?;
        let inputs = self.inputs.lock().unwrap_or_else(|e| e.into_inner());
        if inputs.len() != self.halves.len() {
            candle_core::bail!("fused block backward without a forward pass");
        }
        let mut dparams = vec![0f32; params_v.len()];
        let mut g = values(gs, gl, "fused block")?.to_vec();
        for (half, input) in self.halves.iter().zip(inputs.iter()).rev() {
            let saved = half.saved.lock().unwrap_or_else(|e| e.into_inner());
            let Some(s) = saved.as_ref() else {
                candle_core::bail!("fused block backward without a forward pass");
            };
            g = half.backward(input, params_v, s, &g, &mut dparams)?;
        }
        // An untracked input (embeddings under LoRA training) takes no gradient.
        let dx = if x.track_op() {
            Some(Tensor::from_vec(g, x.shape(), &Device::Cpu)?)
        } else {
            None
        };
        let dp = if self.adapted {
            Some(Tensor::from_vec(dparams, params.shape(), &Device::Cpu)?)
        } else {
            None
        };
        Ok((dx, dp))
    }
}

/// The frozen weights of one half of a block, in the order the op reads them (q, k, v, o or
/// gate, up, down), with their LoRA targets.
pub(crate) struct Half<'a> {
    pub norm: &'a Tensor,
    pub eps: f32,
    pub projs: Vec<(&'a Frozen, LoraTarget)>,
    /// `Some` for the attention half.
    pub attention: Option<AttentionShape>,
}

/// Whether `x` takes the fused CPU path.
pub(crate) fn applies(x: &Tensor) -> bool {
    x.device().is_cpu() && x.dtype() == DType::F32
}

/// One half as a [`BlockOp`] whose adapters (`lora`'s of block `li` among the half's
/// targets) lie from `offset` in the stack's flat parameters, and those parameters.
fn half_op(
    half: Half<'_>,
    lora: Option<&Lora>,
    li: usize,
    dropout_seed: Option<u64>,
    offset: usize,
) -> candle_core::Result<(BlockOp, Option<Tensor>)> {
    let targets: Vec<LoraTarget> = half.projs.iter().map(|(_, t)| *t).collect();
    let found = match lora {
        Some(l) => l.block_params(li, &targets)?,
        None => None,
    };
    let (params, slots) = match found {
        Some((p, s)) => (Some(p), s),
        None => (None, Vec::new()),
    };
    let projs = half
        .projs
        .iter()
        .map(|(w, tg)| Proj {
            w: (*w).clone(),
            adapter: slots.iter().find(|s| s.target == *tg).and_then(|&slot| {
                let l = lora?;
                Some(Adapter {
                    slot: AdapterSlot {
                        at: slot.at + offset,
                        ..slot
                    },
                    scale: l.config().scale() as f32,
                    dropout: l
                        .dropout_seed(li, *tg, dropout_seed)
                        .map(|s| (l.config().dropout, s)),
                })
            }),
        })
        .collect();
    let op = BlockOp {
        kind: match half.attention {
            Some(shape) => Kind::Attention(shape),
            None => Kind::Mlp,
        },
        norm: Arc::new(half.norm.to_vec1()?),
        eps: half.eps,
        projs,
        saved: Mutex::new(None),
    };
    Ok((op, params))
}

/// `x` (`[n, d]`) through every half in order (block `li` of each `(li, half)`), each adding
/// its output to the residual stream, on the CPU: one node of the autograd graph, gradients
/// to `x` and to `lora`'s adapters.
pub(crate) fn apply(
    x: &Tensor,
    halves: Vec<(usize, Half<'_>)>,
    lora: Option<&Lora>,
    dropout_seed: Option<u64>,
) -> candle_core::Result<Tensor> {
    let (mut ops, mut parts, mut offset) = (Vec::with_capacity(halves.len()), Vec::new(), 0);
    for (li, half) in halves {
        let (op, params) = half_op(half, lora, li, dropout_seed, offset)?;
        if let Some(p) = params {
            offset += p.elem_count();
            parts.push(p);
        }
        ops.push(op);
    }
    let adapted = !parts.is_empty();
    let params = if adapted {
        Tensor::cat(&parts, 0)?
    } else {
        Tensor::zeros(0, DType::F32, x.device())?
    };
    let op = StackOp {
        halves: ops,
        adapted,
        keep: x.track_op() || params.track_op(),
        inputs: Mutex::new(Vec::new()),
    };
    x.contiguous()?.apply_op2(&params, op)
}

#[cfg(test)]
mod tests;
