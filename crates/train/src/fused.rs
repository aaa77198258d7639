//! Fused CPU kernels, with hand-written backward passes, for the element-wise parts of the
//! llama forward pass that candle would run as chains of small ops (each allocating its
//! output, and its backward pass zeroing and adding gradients): RMSNorm with a frozen weight
//! (also a candle op, for the output norm), the causal softmax rows of the attention scores
//! and the SwiGLU activation, used by [`crate::block`]. Each computes in f32 what
//! [`crate::ops`]'s candle composition computes, to float rounding (the sums' order and
//! [`pgraphrag_core::math::exp`]); the tests below compare them and `tests/gradients.rs`
//! checks the gradients by finite differences. Rows (and, for the element-wise ops, blocks of
//! values) run in parallel on the current rayon pool over [`crate::kernels`]' bodies; each
//! value is computed by one task in a fixed order, so results do not depend on the threads.

use std::mem::MaybeUninit;
use std::sync::Arc;

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Shape, Tensor};
use rayon::prelude::*;

use crate::kernels;

/// Values per parallel task: below this the hand-off costs more than the work.
pub(crate) const TASK: usize = 16 * 1024;

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

/// `n` zeros, written in parallel ([`par_rows`]).
pub(crate) fn zeroed(n: usize) -> Vec<f32> {
    par_rows(n, 1, |_, _| {})
}

/// The contiguous f32 values of a CPU storage.
pub(crate) fn values<'a>(
    s: &'a CpuStorage,
    l: &Layout,
    op: &str,
) -> candle_core::Result<&'a [f32]> {
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
        Ok((
            CpuStorage::F32(rms_norm_rows(x, &self.w, self.eps)),
            l.shape().clone(),
        ))
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

/// [`RmsNorm`] of the rows of `x` (`w.len()` values each, `x.len()` a multiple of it).
pub(crate) fn rms_norm_rows(x: &[f32], w: &[f32], eps: f32) -> Vec<f32> {
    let d = w.len();
    par_rows(x.len(), d, |i, out| {
        kernels::rms_norm_row(&x[i * d..(i + 1) * d], w, eps, out)
    })
}

/// `dx` of [`RmsNorm`] for the rows of `x` and their output gradients `g` (same length, a
/// multiple of `w.len()`), plus `add` (the residual's gradient) when given.
pub(crate) fn rms_norm_backward_rows(
    x: &[f32],
    g: &[f32],
    w: &[f32],
    eps: f32,
    add: Option<&[f32]>,
) -> Vec<f32> {
    let d = w.len();
    par_rows(x.len(), d, |i, out| {
        let r = i * d..(i + 1) * d;
        let add = add.map(|a| &a[r.clone()]);
        kernels::rms_norm_backward_row(&x[r.clone()], &g[r], w, eps, add, out)
    })
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
        let dx = rms_norm_backward_rows(x, g, &self.w, self.eps, None);
        Ok((CpuStorage::F32(dx), l1.shape().clone()))
    }
}

/// SwiGLU, the gated MLP's activation, value by value: `silu(g) · u` ([`kernels::swiglu`]),
/// blocks of values in parallel.
pub(crate) fn swiglu_values(g: &[f32], u: &[f32]) -> Vec<f32> {
    let mut a = zeroed(g.len());
    a.par_chunks_mut(TASK)
        .zip(g.par_chunks(TASK).zip(u.par_chunks(TASK)))
        .for_each(|(a, (g, u))| kernels::swiglu(g, u, a));
    a
}

/// `(∂g, ∂u)` of SwiGLU from `(g, u, ∂a)` ([`kernels::swiglu_backward`]), blocks of values in
/// parallel.
pub(crate) fn swiglu_backward(g: &[f32], u: &[f32], da: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let mut dg = zeroed(g.len());
    let mut du = zeroed(g.len());
    dg.par_chunks_mut(TASK)
        .zip(du.par_chunks_mut(TASK))
        .zip(
            g.par_chunks(TASK)
                .zip(u.par_chunks(TASK))
                .zip(da.par_chunks(TASK)),
        )
        .for_each(|((dg, du), ((g, u), da))| kernels::swiglu_backward(g, u, da, dg, du));
    (dg, du)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{softmax_backward_row, softmax_row};
    use candle_core::Device;

    /// Every fused kernel, forward and backward, on inputs that split into several tasks.
    fn all_ops() -> Vec<Vec<f32>> {
        let (rows, d) = (2 * 3 * 96, 64);
        let n = rows * d;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
        let g: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
        let w: Vec<f32> = (0..d).map(|i| 1.0 + i as f32 / 64.0).collect();
        let t = 96;
        let p = par_rows(n, t, |r, row| {
            row.copy_from_slice(&x[r * t..(r + 1) * t]);
            softmax_row(row, r % t + 1, 0.125);
        });
        let ds = par_rows(n, t, |r, row| {
            row.copy_from_slice(&g[r * t..(r + 1) * t]);
            softmax_backward_row(row, &p[r * t..(r + 1) * t], r % t + 1, 0.125);
        });
        vec![
            rms_norm_rows(&x, &w, 1e-5),
            rms_norm_backward_rows(&x, &g, &w, 1e-5, Some(&g)),
            swiglu_values(&x, &g),
            swiglu_backward(&x, &g, &g).0,
            swiglu_backward(&x, &g, &g).1,
            p,
            ds,
            zeroed(n),
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
        assert!(one[7].iter().all(|v| *v == 0.0));
    }

    #[test]
    fn swiglus_input_gradient_is_the_forward_op_on_the_output_gradient() {
        let g: Vec<f32> = (0..40_000).map(|i| (i as f32 * 0.37).sin() * 6.0).collect();
        let u: Vec<f32> = (0..40_000).map(|i| (i as f32 * 0.11).cos()).collect();
        let da: Vec<f32> = (0..40_000).map(|i| (i as f32 * 0.05).sin()).collect();
        let (dg, du) = swiglu_backward(&g, &u, &da);
        assert_eq!(du, swiglu_values(&g, &da));
        for i in (0..40_000).step_by(997) {
            let s = 1.0 / (1.0 + pgraphrag_core::math::exp(-g[i]));
            let want = da[i] * u[i] * s * (1.0 + g[i] * (1.0 - s));
            assert_eq!(dg[i], want);
        }
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
        // The causal mask written out here, as the reference the fused softmax is held to.
        let mask: Vec<f32> = (0..96 * 96)
            .map(|k| {
                if k % 96 <= k / 96 {
                    0.0
                } else {
                    f32::NEG_INFINITY
                }
            })
            .collect();
        let mask = Tensor::from_vec(mask, (96, 96), &dev).unwrap();
        let soft = candle_nn::ops::softmax(
            &(s * 0.125).unwrap().broadcast_add(&mask).unwrap(),
            candle_core::D::Minus1,
        )
        .unwrap();
        let g = Tensor::from_vec(
            (0..n).map(|i| (i as f32 * 0.11).cos()).collect(),
            (n / 64, 64),
            &dev,
        )
        .unwrap();
        let swiglu = (x.silu().unwrap() * &g).unwrap();
        for (fused, chain) in [(&ops[0], norm), (&ops[5], soft), (&ops[2], swiglu)] {
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
