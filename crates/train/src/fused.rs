//! Fused CPU kernels, with hand-written backward passes, for the element-wise parts of the
//! llama forward pass that candle would run as chains of small ops (each allocating its
//! output, and its backward pass padding and adding gradients): RMSNorm with a frozen weight,
//! interleaved RoPE, the causal softmax of the attention scores and the SwiGLU activation. Each
//! computes in f32 what [`crate::ops`]'s candle composition computes (to the order of its
//! sums); `tests/gradients.rs` checks their gradients by finite differences. Rows (and, for
//! the element-wise ops, blocks of values) run in parallel on the current rayon pool; each
//! value is computed as the serial loop computed it, so results do not depend on the threads.

use std::mem::MaybeUninit;
use std::sync::Arc;

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Shape, Tensor};
use rayon::prelude::*;

/// Values per parallel task: below this the hand-off costs more than the work.
const TASK: usize = 16 * 1024;

/// A new vector of `n` values (`n` a multiple of `width`) filled row by row by `f(row index,
/// row)`, groups of rows in parallel. Each group is zeroed by its own task just before `f`
/// runs (parallel and in cache, where `vec![0.0; n]` is one serial pass).
fn par_rows(n: usize, width: usize, f: impl Fn(usize, &mut [f32]) + Sync) -> Vec<f32> {
    debug_assert!(width > 0 && n.is_multiple_of(width));
    let rows_per_task = (TASK / width).max(1);
    let mut v: Vec<f32> = Vec::with_capacity(n);
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(rows_per_task * width)
        .enumerate()
        .for_each(|(task, chunk)| {
            for x in chunk.iter_mut() {
                x.write(0.0);
            }
            // SAFETY: every element of `chunk` was initialised just above, and
            // `MaybeUninit<f32>` has the layout of `f32`.
            let chunk = unsafe { &mut *(chunk as *mut [MaybeUninit<f32>] as *mut [f32]) };
            for (i, row) in chunk.chunks_exact_mut(width).enumerate() {
                f(task * rows_per_task + i, row);
            }
        });
    // SAFETY: the tasks above initialised all `n` values (the chunks cover `..n`).
    unsafe { v.set_len(n) };
    v
}

/// The contiguous f32 values of a CPU storage.
fn values<'a>(s: &'a CpuStorage, l: &Layout, op: &str) -> candle_core::Result<&'a [f32]> {
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("{op}: the input must be contiguous");
    };
    match s {
        CpuStorage::F32(v) => Ok(&v[a..b]),
        _ => candle_core::bail!("{op}: f32 only"),
    }
}

/// The contiguous f32 values of two storages of the same length.
fn pair<'a>(
    (s1, l1): (&'a CpuStorage, &Layout),
    (s2, l2): (&'a CpuStorage, &Layout),
    op: &str,
) -> candle_core::Result<(&'a [f32], &'a [f32])> {
    let (a, b) = (values(s1, l1, op)?, values(s2, l2, op)?);
    if a.len() != b.len() {
        candle_core::bail!("{op}: shapes {:?} and {:?}", l1.dims(), l2.dims());
    }
    Ok((a, b))
}

/// `x / sqrt(mean(x²) + eps) · w` over the last dimension, `w` frozen (no gradient).
pub(crate) struct RmsNorm {
    pub w: Arc<Vec<f32>>,
    pub eps: f32,
}

impl CustomOp1 for RmsNorm {
    fn name(&self) -> &'static str {
        "rms-norm"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = values(s, l, "rms-norm")?;
        let d = self.w.len();
        if d == 0 || !x.len().is_multiple_of(d) || l.dims().last() != Some(&d) {
            candle_core::bail!("rms-norm: {} weights for shape {:?}", d, l.dims());
        }
        let y = par_rows(x.len(), d, |i, out| {
            let row = &x[i * d..(i + 1) * d];
            let r = rms(row, self.eps);
            for ((o, v), w) in out.iter_mut().zip(row).zip(self.w.iter()) {
                *o = v / r * w;
            }
        });
        Ok((CpuStorage::F32(y), l.shape().clone()))
    }

    fn bwd(
        &self,
        arg: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let g = grad.contiguous()?;
        let dx = arg.contiguous()?.apply_op2_no_bwd(
            &g,
            &RmsNormBackward {
                w: self.w.clone(),
                eps: self.eps,
            },
        )?;
        Ok(Some(dx))
    }
}

/// `sqrt(mean(x²) + eps)` of one row, as candle's `sqr`, `sum_keepdim`, `/ d`, `+ eps`,
/// `sqrt` chain computes it.
fn rms(row: &[f32], eps: f32) -> f32 {
    let ss: f32 = row.iter().map(|v| v * v).sum();
    (ss / row.len() as f32 + eps).sqrt()
}

/// The input gradient of [`RmsNorm`]: with `s = sqrt(mean(x²) + eps)` and `gw = g · w`,
/// `dx = gw / s − x · Σ(gw · x) / (d · s³)`.
struct RmsNormBackward {
    w: Arc<Vec<f32>>,
    eps: f32,
}

impl CustomOp2 for RmsNormBackward {
    fn name(&self) -> &'static str {
        "rms-norm-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, g) = pair((s1, l1), (s2, l2), "rms-norm backward")?;
        let d = self.w.len();
        if d == 0 || !x.len().is_multiple_of(d) {
            candle_core::bail!("rms-norm backward: {d} weights for shape {:?}", l1.dims());
        }
        let dx = par_rows(x.len(), d, |i, out| {
            let (xr, gr) = (&x[i * d..(i + 1) * d], &g[i * d..(i + 1) * d]);
            let s = rms(xr, self.eps);
            let dot: f32 = xr
                .iter()
                .zip(gr)
                .zip(self.w.iter())
                .map(|((x, g), w)| g * w * x)
                .sum();
            let c = dot / (d as f32 * s * s * s);
            for (o, ((x, g), w)) in out.iter_mut().zip(xr.iter().zip(gr).zip(self.w.iter())) {
                *o = g * w / s - x * c;
            }
        });
        Ok((CpuStorage::F32(dx), l1.shape().clone()))
    }
}

/// Interleaved RoPE on the first `2·half` values of each head of `x` (`[b, h, t, head_dim]`):
/// pairs `(x₂ᵢ, x₂ᵢ₊₁)` at position `p` become `(x₂ᵢ·cos − x₂ᵢ₊₁·sin, x₂ᵢ·sin + x₂ᵢ₊₁·cos)`
/// with `cos`/`sin` the `[positions ≥ t, half]` tables. Its backward pass is the rotation by
/// the opposite angle (the same op with `sin` negated).
pub(crate) struct Rope {
    pub cos: Arc<Vec<f32>>,
    pub sin: Arc<Vec<f32>>,
    pub half: usize,
}

impl CustomOp1 for Rope {
    fn name(&self) -> &'static str {
        "rope"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = values(s, l, "rope")?;
        let (_, _, t, hd) = l.shape().dims4()?;
        let half = self.half;
        if hd == 0 || 2 * half > hd || self.cos.len() < t * half || self.sin.len() < t * half {
            candle_core::bail!(
                "rope: tables of {} values for {t} positions, head {hd}",
                self.cos.len()
            );
        }
        let y = par_rows(x.len(), hd, |row_i, row| {
            row.copy_from_slice(&x[row_i * hd..(row_i + 1) * hd]);
            let p = row_i % t;
            let (cos, sin) = (
                &self.cos[p * half..(p + 1) * half],
                &self.sin[p * half..(p + 1) * half],
            );
            for i in 0..half {
                let (x0, x1) = (row[2 * i], row[2 * i + 1]);
                row[2 * i] = x0 * cos[i] - x1 * sin[i];
                row[2 * i + 1] = x0 * sin[i] + x1 * cos[i];
            }
        });
        Ok((CpuStorage::F32(y), l.shape().clone()))
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let back = Rope {
            cos: self.cos.clone(),
            sin: Arc::new(self.sin.iter().map(|s| -s).collect()),
            half: self.half,
        };
        Ok(Some(grad.contiguous()?.apply_op1_no_bwd(&back)?))
    }
}

/// `silu(g) · u`, the gated MLP's activation, `silu(g) = g / (1 + exp(−g))` as candle
/// computes it. Backward: `∂g = ∂a · u · σ(g) · (1 + g · (1 − σ(g)))`, `∂u = ∂a · silu(g)`.
pub(crate) struct SwiGlu;

/// `σ(g)`, as `1 / (1 + exp(−g))`.
fn sigmoid(g: f32) -> f32 {
    1.0 / (1.0 + (-g).exp())
}

/// `silu(g) = g / (1 + exp(−g))`, as candle computes it.
fn silu(g: f32) -> f32 {
    g / (1.0 + (-g).exp())
}

impl CustomOp2 for SwiGlu {
    fn name(&self) -> &'static str {
        "swiglu"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (g, u) = pair((s1, l1), (s2, l2), "swiglu")?;
        let a = g
            .par_iter()
            .zip(u)
            .with_min_len(TASK)
            .map(|(g, u)| silu(*g) * u)
            .collect();
        Ok((CpuStorage::F32(a), l1.shape().clone()))
    }

    fn bwd(
        &self,
        g: &Tensor,
        u: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let (g, u, da) = (g.contiguous()?, u.contiguous()?, grad.contiguous()?);
        let dg = g.apply_op3_no_bwd(&u, &da, &SwiGluBackward)?;
        // ∂u = ∂a · silu(g): the forward op itself on (g, ∂a).
        let du = g.apply_op2_no_bwd(&da, &SwiGlu)?;
        Ok((Some(dg), Some(du)))
    }
}

/// `∂g` of [`SwiGlu`] from `(g, u, ∂a)`.
struct SwiGluBackward;

impl candle_core::CustomOp3 for SwiGluBackward {
    fn name(&self) -> &'static str {
        "swiglu-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let op = "swiglu backward";
        let (g, u) = pair((s1, l1), (s2, l2), op)?;
        let (_, da) = pair((s1, l1), (s3, l3), op)?;
        let dg = g
            .par_iter()
            .zip(u)
            .zip(da)
            .with_min_len(TASK)
            .map(|((g, u), da)| {
                let s = sigmoid(*g);
                da * u * s * (1.0 + g * (1.0 - s))
            })
            .collect();
        Ok((CpuStorage::F32(dg), l1.shape().clone()))
    }
}

/// Causal softmax of raw attention scores `s` (`[..., group·t, t]`, row `r` a query at
/// position `r mod t`): `P = softmax(scale · s + mask)` with keys after the query masked out,
/// as `scale`, the additive `-inf` mask of [`crate::ops::causal_mask`] and candle's softmax
/// compute it. Backward: `∂s = scale · P ⊙ (∂P − Σ_j ∂P_j P_j)`.
pub(crate) struct CausalSoftmax {
    pub scale: f32,
}

impl CustomOp1 for CausalSoftmax {
    fn name(&self) -> &'static str {
        "causal-softmax"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = values(s, l, "causal-softmax")?;
        let t = *l.dims().last().unwrap_or(&0);
        if t == 0 {
            candle_core::bail!("causal-softmax: empty rows, shape {:?}", l.dims());
        }
        let p = par_rows(x.len(), t, |r, pr| {
            let xr = &x[r * t..(r + 1) * t];
            let seen = r % t + 1;
            let mut max = f32::NEG_INFINITY;
            for (pv, xv) in pr[..seen].iter_mut().zip(&xr[..seen]) {
                *pv = xv * self.scale;
                max = max.max(*pv);
            }
            let mut sum = 0f32;
            for pv in &mut pr[..seen] {
                *pv = (*pv - max).exp();
                sum += *pv;
            }
            for pv in &mut pr[..seen] {
                *pv /= sum;
            }
        });
        Ok((CpuStorage::F32(p), l.shape().clone()))
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let ds = res.contiguous()?.apply_op2_no_bwd(
            &grad.contiguous()?,
            &CausalSoftmaxBackward { scale: self.scale },
        )?;
        Ok(Some(ds))
    }
}

/// `∂s` of [`CausalSoftmax`] from `(P, ∂P)`.
struct CausalSoftmaxBackward {
    scale: f32,
}

impl CustomOp2 for CausalSoftmaxBackward {
    fn name(&self) -> &'static str {
        "causal-softmax-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (p, dp) = pair((s1, l1), (s2, l2), "causal-softmax backward")?;
        let t = *l1.dims().last().unwrap_or(&0);
        if t == 0 {
            candle_core::bail!("causal-softmax backward: empty rows, shape {:?}", l1.dims());
        }
        let ds = par_rows(p.len(), t, |r, out| {
            let (pr, dr) = (&p[r * t..(r + 1) * t], &dp[r * t..(r + 1) * t]);
            let dot: f32 = pr.iter().zip(dr).map(|(p, d)| p * d).sum();
            for (o, (p, d)) in out.iter_mut().zip(pr.iter().zip(dr)) {
                *o = self.scale * p * (d - dot);
            }
        });
        Ok((CpuStorage::F32(ds), l1.shape().clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// Every fused op, forward and backward, on inputs that split into several tasks.
    fn all_ops() -> Vec<Vec<f32>> {
        let dev = Device::Cpu;
        let (b, h, t, hd) = (2, 3, 96, 64);
        let n = b * h * t * hd;
        let x = Tensor::from_vec(
            (0..n).map(|i| (i as f32 * 0.37).sin()).collect(),
            (b, h, t, hd),
            &dev,
        )
        .unwrap();
        let g = Tensor::from_vec(
            (0..n).map(|i| (i as f32 * 0.11).cos()).collect(),
            (b, h, t, hd),
            &dev,
        )
        .unwrap();
        let w = Arc::new((0..hd).map(|i| 1.0 + i as f32 / 64.0).collect::<Vec<f32>>());
        let table = |f: fn(f32) -> f32| Arc::new((0..t * 16).map(|i| f(i as f32 * 0.01)).collect());
        let rope = Rope {
            cos: table(f32::cos),
            sin: table(f32::sin),
            half: 16,
        };
        let scores = x.reshape((n / (96 * 96), 96, 96)).unwrap();
        let dp = g.reshape(scores.shape()).unwrap().contiguous().unwrap();
        let norm = RmsNorm { w, eps: 1e-5 };
        let soft = CausalSoftmax { scale: 0.125 };
        let p = scores.apply_op1_no_bwd(&soft).unwrap();
        let v = |t: Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let back = |t: &Tensor, y: &Tensor| t.apply_op2_no_bwd(y, &SwiGlu).unwrap();
        vec![
            v(x.apply_op1_no_bwd(&norm).unwrap()),
            v(x.apply_op2_no_bwd(
                &g,
                &RmsNormBackward {
                    w: norm.w.clone(),
                    eps: 1e-5,
                },
            )
            .unwrap()),
            v(x.apply_op1_no_bwd(&rope).unwrap()),
            v(back(&x, &g)),
            v(x.apply_op3_no_bwd(&g, &g, &SwiGluBackward).unwrap()),
            v(p.clone()),
            v(
                p.apply_op2_no_bwd(&dp, &CausalSoftmaxBackward { scale: 0.125 })
                    .unwrap(),
            ),
        ]
    }

    #[test]
    fn results_do_not_depend_on_the_threads() {
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(all_ops)
        };
        let one = run(1);
        assert!(
            one.iter().all(|v| v.len() > TASK),
            "inputs span several tasks"
        );
        let bits = |r: &Vec<Vec<f32>>| -> Vec<Vec<u32>> {
            r.iter()
                .map(|v| v.iter().map(|x| x.to_bits()).collect())
                .collect()
        };
        assert_eq!(bits(&one), bits(&run(3)));
        assert_eq!(bits(&one), bits(&run(4)));
    }

    #[test]
    fn rows_split_across_tasks_match_candles_chains() {
        let ops = all_ops();
        let dev = Device::Cpu;
        let n = ops[0].len();
        let x = Tensor::from_vec(
            (0..n).map(|i| (i as f32 * 0.37).sin()).collect(),
            (n / 64, 64),
            &dev,
        )
        .unwrap();
        let w =
            Tensor::from_vec((0..64).map(|i| 1.0 + i as f32 / 64.0).collect(), 64, &dev).unwrap();
        let ms = (x.sqr().unwrap().sum_keepdim(1).unwrap() / 64.0).unwrap();
        let norm = x
            .broadcast_div(&(ms + 1e-5).unwrap().sqrt().unwrap())
            .unwrap()
            .broadcast_mul(&w)
            .unwrap();
        let s = x.reshape((n / (96 * 96), 96, 96)).unwrap();
        let mask = crate::ops::causal_mask(96, 1, &dev).unwrap();
        let soft = candle_nn::ops::softmax(
            &(s * 0.125).unwrap().broadcast_add(&mask).unwrap(),
            candle_core::D::Minus1,
        )
        .unwrap();
        for (fused, chain) in [(&ops[0], norm), (&ops[5], soft)] {
            let chain = chain.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            let diff = fused
                .iter()
                .zip(&chain)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(diff < 1e-5, "{diff}");
        }
    }
}
