//! Causal grouped-query attention on the CPU with a hand-written backward pass: the head
//! split, interleaved RoPE on queries and keys, the scaled causal softmax of `Q·Kᵀ`, `P·V` and
//! the head merge, from the projections' token-major outputs to the output projection's input
//! (inside [`crate::block`]'s attention half; candle's chain, [`crate::ops::attention`], is
//! the GPU path and the reference in tests).
//!
//! Each (sequence, head) runs as one task on the current rayon pool, its products on the `gemm`
//! crate (candle's own CPU products) without further threads; the softmax rows are
//! [`crate::kernels::softmax_row`]'s. Every value is computed by one task in a fixed order, so
//! results do not depend on the thread count.

use std::sync::Arc;

use gemm::{Parallelism, gemm};
use pgraphrag_core::simd::SendPtr;
use rayon::prelude::*;

use crate::fused::zeroed;
use crate::kernels::{softmax_backward_row, softmax_row};

/// Shapes and tables of one attention call.
#[derive(Clone)]
pub(crate) struct AttentionShape {
    /// Sequences, positions per sequence.
    pub b: usize,
    pub t: usize,
    /// Query heads, key/value heads (query head `h` reads key/value head `h / (heads / kv_heads)`).
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    /// RoPE pairs per head (0: no RoPE) and the `[≥ t, half]` cos/sin tables.
    pub half: usize,
    pub cos: Arc<Vec<f32>>,
    pub sin: Arc<Vec<f32>>,
    /// The scores' scale, `1/√head_dim`.
    pub scale: f32,
}

/// What the forward pass keeps for the backward one: the rotated queries `[b, heads, t, hd]`,
/// the rotated keys and the values `[b, kv_heads, t, hd]`, and the probabilities
/// `[b, heads, t, t]` (zero above the diagonal).
pub(crate) struct Saved {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    p: Vec<f32>,
}

/// Query rows per block of the causal products: block `r0..r1` needs keys `0..r1` only.
const ROW_BLOCK: usize = 32;

/// The row blocks `(r0, r1)` of `t` positions.
fn row_blocks(t: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..t)
        .step_by(ROW_BLOCK)
        .map(move |r0| (r0, (r0 + ROW_BLOCK).min(t)))
}

/// `c (m × n) [+]= beta · a (m × k) · b (k × n)` with element `(i, j)` of each matrix at
/// `ptr + i·rs + j·cs`, on the `gemm` crate with `par` (`Parallelism::None`: the calling
/// thread).
///
/// # Safety
/// Every element addressed must lie inside its buffer; `c` must not overlap `a` or `b`.
pub(crate) unsafe fn product(
    (m, n, k): (usize, usize, usize),
    c: (*mut f32, usize, usize),
    accumulate: bool,
    a: (*const f32, usize, usize),
    b: (*const f32, usize, usize),
    (beta, par): (f32, Parallelism),
) {
    // SAFETY: forwarded contract.
    unsafe {
        gemm(
            m,
            n,
            k,
            c.0,
            c.2 as isize,
            c.1 as isize,
            accumulate,
            a.0,
            a.2 as isize,
            a.1 as isize,
            b.0,
            b.2 as isize,
            b.1 as isize,
            if accumulate { 1.0 } else { 0.0 },
            beta,
            false,
            false,
            false,
            par,
        )
    }
}

impl AttentionShape {
    pub(crate) fn check(&self, q: usize, k: usize, v: usize) -> candle_core::Result<()> {
        let n = self.b * self.t;
        let (qd, kvd) = (self.heads * self.head_dim, self.kv_heads * self.head_dim);
        if self.kv_heads == 0
            || !self.heads.is_multiple_of(self.kv_heads)
            || q != n * qd
            || k != n * kvd
            || v != n * kvd
            || 2 * self.half > self.head_dim
            || self.cos.len() < self.t * self.half
            || self.sin.len() < self.t * self.half
        {
            candle_core::bail!(
                "attention: {q}/{k}/{v} values for {} x {} positions, {}/{} heads of {}",
                self.b,
                self.t,
                self.heads,
                self.kv_heads,
                self.head_dim
            );
        }
        Ok(())
    }

    /// Copies head `h` of `heads` (row stride `heads·hd`) of sequence `bi` from the token-major
    /// `x` into `out` (`[t, hd]`), each row rotated by RoPE at its position when `rotate`.
    fn gather(&self, x: &[f32], heads: usize, bi: usize, h: usize, rotate: bool, out: &mut [f32]) {
        let (t, hd) = (self.t, self.head_dim);
        let stride = heads * hd;
        for (p, row) in out.chunks_exact_mut(hd).enumerate() {
            let at = (bi * t + p) * stride + h * hd;
            row.copy_from_slice(&x[at..at + hd]);
            if rotate {
                self.rotate(row, p, 1.0);
            }
        }
    }

    /// Interleaved RoPE on one head's row at position `p`, as [`crate::ops::rope`] computes
    /// it (`sign` −1 rotates by the opposite angle: the backward pass).
    fn rotate(&self, row: &mut [f32], p: usize, sign: f32) {
        let half = self.half;
        let (cos, sin) = (
            &self.cos[p * half..(p + 1) * half],
            &self.sin[p * half..(p + 1) * half],
        );
        for i in 0..half {
            let s = sign * sin[i];
            let (x0, x1) = (row[2 * i], row[2 * i + 1]);
            row[2 * i] = x0 * cos[i] - x1 * s;
            row[2 * i + 1] = x0 * s + x1 * cos[i];
        }
    }

    /// Writes `rows` (`[t, hd]`) into head `h` of `heads` of sequence `bi` of the token-major
    /// buffer at `out`, rotating each row back by RoPE first when `unrotate`.
    ///
    /// # Safety
    /// `out` holds `b·t·heads·hd` values and no other task writes this head's columns.
    unsafe fn scatter(
        &self,
        rows: &mut [f32],
        unrotate: bool,
        heads: usize,
        bi: usize,
        h: usize,
        out: SendPtr<f32>,
    ) {
        let (t, hd) = (self.t, self.head_dim);
        for (p, row) in rows.chunks_exact_mut(hd).enumerate() {
            if unrotate {
                self.rotate(row, p, -1.0);
            }
            // SAFETY: by the contract, inside `out` and written by this task only.
            unsafe {
                let dst = out.get().add((bi * t + p) * heads * hd + h * hd);
                std::ptr::copy_nonoverlapping(row.as_ptr(), dst, hd);
            }
        }
    }

    pub(crate) fn forward(&self, q: &[f32], k: &[f32], v: &[f32]) -> (Vec<f32>, Saved) {
        let (b, t, hd) = (self.b, self.t, self.head_dim);
        let (heads, kvh) = (self.heads, self.kv_heads);
        let group = heads / kvh;
        let head = t * hd;
        let mut kr = zeroed(b * kvh * head);
        let mut vh = zeroed(b * kvh * head);
        kr.par_chunks_mut(head)
            .zip(vh.par_chunks_mut(head))
            .enumerate()
            .for_each(|(i, (kr, vh))| {
                let (bi, h) = (i / kvh, i % kvh);
                self.gather(k, kvh, bi, h, true, kr);
                self.gather(v, kvh, bi, h, false, vh);
            });
        let mut qr = zeroed(b * heads * head);
        let mut p = zeroed(b * heads * t * t);
        let mut out = zeroed(b * t * heads * hd);
        let op = SendPtr::new(out.as_mut_ptr());
        qr.par_chunks_mut(head)
            .zip(p.par_chunks_mut(t * t))
            .enumerate()
            .for_each(|(i, (qr, pm))| {
                let (bi, h) = (i / heads, i % heads);
                let kv = (bi * kvh + h / group) * head;
                self.gather(q, heads, bi, h, true, qr);
                // Query rows in blocks, each reading only the keys up to its last row (the
                // rest of its probabilities are 0). SAFETY (both products): every matrix lies
                // inside its buffer (t×hd heads, t×t probabilities, the token-major output of
                // b·t rows of heads·hd); this task alone writes `pm` and head h's columns of
                // sequence bi.
                for (r0, r1) in row_blocks(t) {
                    let w = r1 - r0;
                    // SAFETY: see the loop's comment.
                    unsafe {
                        product(
                            (w, r1, hd),
                            (pm.as_mut_ptr().add(r0 * t), t, 1),
                            false,
                            (qr.as_ptr().add(r0 * hd), hd, 1),
                            (kr.as_ptr().add(kv), 1, hd),
                            (1.0, Parallelism::None),
                        );
                    }
                    for r in r0..r1 {
                        softmax_row(&mut pm[r * t..(r + 1) * t], r + 1, self.scale);
                    }
                    // SAFETY: see the loop's comment.
                    unsafe {
                        product(
                            (w, hd, r1),
                            (
                                op.get().add((bi * t + r0) * heads * hd + h * hd),
                                heads * hd,
                                1,
                            ),
                            false,
                            (pm.as_ptr().add(r0 * t), t, 1),
                            (vh.as_ptr().add(kv), hd, 1),
                            (1.0, Parallelism::None),
                        );
                    }
                }
            });
        (
            out,
            Saved {
                q: qr,
                k: kr,
                v: vh,
                p,
            },
        )
    }

    /// `(∂q, ∂k, ∂v)` from the output's gradient `g` (`[n, heads·hd]`). Each task owns one
    /// key/value head of one sequence and runs the query heads that read it in order.
    pub(crate) fn backward(&self, s: &Saved, g: &[f32]) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let (b, t, hd) = (self.b, self.t, self.head_dim);
        let (heads, kvh) = (self.heads, self.kv_heads);
        let group = heads / kvh;
        let head = t * hd;
        let mut dq = zeroed(b * t * heads * hd);
        let mut dk = zeroed(b * t * kvh * hd);
        let mut dv = zeroed(b * t * kvh * hd);
        let (pq, pk, pv) = (
            SendPtr::new(dq.as_mut_ptr()),
            SendPtr::new(dk.as_mut_ptr()),
            SendPtr::new(dv.as_mut_ptr()),
        );
        (0..b * kvh).into_par_iter().for_each(|i| {
            let (bi, kv) = (i / kvh, i % kvh);
            let (kr, vh) = (
                &s.k[i * head..(i + 1) * head],
                &s.v[i * head..(i + 1) * head],
            );
            let mut dkr = vec![0f32; head];
            let mut dvh = vec![0f32; head];
            let mut ds = vec![0f32; t * t];
            let mut dqr = vec![0f32; head];
            for h in kv * group..(kv + 1) * group {
                let j = bi * heads + h;
                let qr = &s.q[j * head..(j + 1) * head];
                let pm = &s.p[j * t * t..(j + 1) * t * t];
                let go = g[bi * t * heads * hd + h * hd..].as_ptr();
                // SAFETY (every product): each matrix lies inside its buffer (the gradient's
                // head h columns of sequence bi: rows of stride heads·hd; row block r0..r1
                // reads keys 0..r1), and the outputs are this task's.
                for (r0, r1) in row_blocks(t) {
                    // SAFETY: row r0 of the gradient's rows lies inside `g`.
                    let (w, gb) = (r1 - r0, unsafe { go.add(r0 * heads * hd) });
                    // SAFETY: see the loop's comment.
                    unsafe {
                        // ∂P = ∂O · Vᵀ
                        product(
                            (w, r1, hd),
                            (ds.as_mut_ptr().add(r0 * t), t, 1),
                            false,
                            (gb, heads * hd, 1),
                            (vh.as_ptr(), 1, hd),
                            (1.0, Parallelism::None),
                        );
                        // ∂V += Pᵀ · ∂O
                        product(
                            (r1, hd, w),
                            (dvh.as_mut_ptr(), hd, 1),
                            true,
                            (pm.as_ptr().add(r0 * t), 1, t),
                            (gb, heads * hd, 1),
                            (1.0, Parallelism::None),
                        );
                    }
                    for r in r0..r1 {
                        let row = r * t..(r + 1) * t;
                        softmax_backward_row(&mut ds[row.clone()], &pm[row], r + 1, self.scale);
                    }
                    // SAFETY: see the loop's comment.
                    unsafe {
                        // ∂Q = ∂S · K, ∂K += ∂Sᵀ · Q
                        product(
                            (w, hd, r1),
                            (dqr.as_mut_ptr().add(r0 * hd), hd, 1),
                            false,
                            (ds.as_ptr().add(r0 * t), t, 1),
                            (kr.as_ptr(), hd, 1),
                            (1.0, Parallelism::None),
                        );
                        product(
                            (r1, hd, w),
                            (dkr.as_mut_ptr(), hd, 1),
                            true,
                            (ds.as_ptr().add(r0 * t), 1, t),
                            (qr.as_ptr().add(r0 * hd), hd, 1),
                            (1.0, Parallelism::None),
                        );
                    }
                }
                // SAFETY: this task alone writes query head h of sequence bi.
                unsafe {
                    self.scatter(&mut dqr, true, heads, bi, h, pq);
                }
            }
            // SAFETY: this task alone writes key/value head kv of sequence bi.
            unsafe {
                self.scatter(&mut dkr, true, kvh, bi, kv, pk);
                self.scatter(&mut dvh, false, kvh, bi, kv, pv);
            }
        });
        (dq, dk, dv)
    }
}
