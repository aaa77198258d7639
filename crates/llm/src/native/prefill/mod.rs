//! Row-wise prompt processing ([`crate::Prefill::Rowwise`]).
//!
//! The matrix multiply here computes every output element as one sequential chain of fused
//! multiply-adds over the inputs, in input order, starting from zero. Tiling, the number of
//! rows in the call, the thread split and the CPU's vector width change only which elements
//! are computed together, never the operations that make one element. So a token's
//! activations do not depend on how many tokens share the call or on where the prompt was
//! split: processing a prompt in pieces (reusing the KV cache of a shared prefix) is
//! bit-identical to processing it at once, on every CPU with FMA.
//!
//! Weights are packed once into panels of [`NR`] output columns (`cols × NR`, input-major) so a
//! panel block of [`KC`](generic::KC) inputs stays in L1 while a tile of rows streams past it.
//! The bodies ([`generic`]) are plain Rust (`f32::mul_add` over `NR`-wide arrays) that LLVM
//! vectorises, compiled for AVX-512 and the baseline target, and for AVX2+FMA a tile written
//! with intrinsics (LLVM's AVX2 version spilled its accumulators); all are picked at run time.

use pgraphrag_core::simd::{CpuFeatures, SendPtr};
use rayon::prelude::*;

mod generic;

pub(super) use generic::Kernels;
use generic::{Block, KB, NR, plain};

/// Rows of one parallel task.
const RB: usize = 48;

/// A `rows × cols` weight matrix packed into panels of [`NR`] rows (zero-padded).
pub(super) struct Packed {
    rows: usize,
    cols: usize,
    data: Vec<f32>,
}

impl Packed {
    /// Packs the row-major `rows × cols` matrix `w`.
    pub(super) fn new(w: &[f32], rows: usize, cols: usize) -> Packed {
        debug_assert_eq!(w.len(), rows * cols);
        let np = rows.div_ceil(NR);
        let mut data = vec![0f32; np * cols * NR];
        for (r, row) in w.chunks_exact(cols.max(1)).enumerate().take(rows) {
            let (p, j) = (r / NR, r % NR);
            let panel = &mut data[p * cols * NR..(p + 1) * cols * NR];
            for (kk, &v) in row.iter().enumerate() {
                panel[kk * NR + j] = v;
            }
        }
        Packed { rows, cols, data }
    }
}

/// `kt[d·lp + j] = k_j[off + d]` for the `l` keys `k_j = kc[j·stride..]` (`hd` dimensions),
/// zero beyond `l`; `lp` is `l` rounded up to [`KB`].
pub(super) fn transpose_keys(
    kc: &[f32],
    l: usize,
    stride: usize,
    off: usize,
    hd: usize,
) -> (Vec<f32>, usize) {
    let lp = l.div_ceil(KB) * KB;
    let mut kt = vec![0f32; hd * lp];
    for j in 0..l {
        for (d, &v) in kc[j * stride + off..j * stride + off + hd]
            .iter()
            .enumerate()
        {
            kt[d * lp + j] = v;
        }
    }
    (kt, lp)
}

#[cfg(target_arch = "aarch64")]
mod arm;
#[cfg(target_arch = "x86_64")]
mod x86;

/// Every compiled kernel set a CPU with the features `cpu` can run, best first.
pub(super) fn available(cpu: CpuFeatures) -> Vec<(&'static str, Kernels)> {
    let mut v = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(b) = x86::avx512(cpu) {
            v.push(("avx512", b));
        }
        if let Some(b) = x86::avx2(cpu) {
            v.push(("avx2", b));
        }
    }
    #[cfg(target_arch = "aarch64")]
    if let Some(b) = arm::neon(cpu) {
        v.push(("neon", b));
    }
    v.push(("plain", plain()));
    v
}

/// The fastest kernel set for `cpu` ([`CpuFeatures::portable`]: the portable one), with its name.
pub(super) fn best(cpu: CpuFeatures) -> (&'static str, Kernels) {
    available(cpu)[0]
}

/// `y (t × rows) = x (t × cols) · Wᵀ` with `W` packed in `p`, on the current rayon pool.
pub(super) fn matmul(f: Block, p: &Packed, x: &[f32], t: usize, y: &mut [f32]) {
    assert!(
        x.len() >= t * p.cols && y.len() >= t * p.rows,
        "matmul extents"
    );
    let np = p.rows.div_ceil(NR);
    let nb = t.div_ceil(RB);
    // Tasks write disjoint (row, column) ranges of `y` inside this parallel region.
    let out = SendPtr::new(y.as_mut_ptr());
    let (rows, cols) = (p.rows, p.cols);
    (0..np * nb).into_par_iter().for_each(|task| {
        let (pi, bi) = (task / nb, task % nb);
        let r0 = bi * RB;
        let n = RB.min(t - r0);
        let mut acc = [0f32; RB * NR];
        let panel = &p.data[pi * cols * NR..(pi + 1) * cols * NR];
        // SAFETY: rows r0..r0+n of x exist (asserted above); the block was chosen for this CPU.
        unsafe {
            f(
                x.as_ptr().add(r0 * cols),
                cols,
                n,
                panel,
                &mut acc[..n * NR],
            )
        };
        let c0 = pi * NR;
        let w = NR.min(rows - c0);
        for i in 0..n {
            // SAFETY: row r0+i, columns c0..c0+w of y are inside y and written by this task only.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    acc.as_ptr().add(i * NR),
                    out.get().add((r0 + i) * rows + c0),
                    w,
                )
            };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                let v = (i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8;
                (v % 2001) as f32 / 1000.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn every_block_is_bit_identical_row_independent_and_correct() {
        let (rows, cols) = (70, 300);
        let w = data(rows * cols, 1);
        let p = Packed::new(&w, rows, cols);
        let t = 101;
        let x = data(t * cols, 2);
        // Reference: the same chain of fused multiply-adds, one element at a time.
        let mut want = vec![0f32; t * rows];
        for r in 0..t {
            for o in 0..rows {
                let mut acc = 0f32;
                for k in 0..cols {
                    acc = x[r * cols + k].mul_add(w[o * cols + k], acc);
                }
                want[r * rows + o] = acc;
            }
        }
        for (name, k) in available(CpuFeatures::detect()) {
            let f = k.block;
            let mut y = vec![0f32; t * rows];
            matmul(f, &p, &x, t, &mut y);
            assert!(y == want, "{name}: full call");
            // Any split into pieces gives the same rows.
            for cut in [1, 13, 48, 77] {
                let mut a = vec![0f32; cut * rows];
                matmul(f, &p, &x[..cut * cols], cut, &mut a);
                let mut b = vec![0f32; (t - cut) * rows];
                matmul(f, &p, &x[cut * cols..], t - cut, &mut b);
                assert!(a[..] == want[..cut * rows], "{name}: first {cut} rows");
                assert!(b[..] == want[cut * rows..], "{name}: rows after {cut}");
            }
        }
    }
}

#[cfg(test)]
mod attention_tests {
    use super::*;
    use crate::native::testing::attention_reference;

    #[test]
    fn attention_rows_agree_across_kernels_and_lengths() {
        let (hd, stride, off, l) = (64, 3 * 64, 64, 300);
        let kc: Vec<f32> = (0..l * stride)
            .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
            .collect();
        let vc: Vec<f32> = (0..l * stride)
            .map(|i| ((i * 104729) % 997) as f32 / 498.0 - 1.0)
            .collect();
        let q: Vec<f32> = (0..hd).map(|i| (i as f32 * 0.37).sin()).collect();
        let all = available(CpuFeatures::detect());
        for n in [1, 17, 128, 129, 300] {
            let mut first: Option<Vec<f32>> = None;
            for (name, k) in &all {
                // The transposed keys of a longer call give the same row as a shorter one.
                for take in [n, l] {
                    let (kt, lp) = transpose_keys(&kc, take, stride, off, hd);
                    let mut s = vec![0f32; n];
                    let mut o = vec![0f32; hd];
                    (k.attend)(&q, &kt, lp, &vc, stride, off, 0.125, &mut s, &mut o);
                    match &first {
                        None => first = Some(o),
                        Some(f) => assert!(f == &o, "{name}: {n} positions, keys of {take}"),
                    }
                }
            }
            // And it is attention: compare with an f64 reference.
            let o = first.unwrap();
            let want = attention_reference(&q, &kc, &vc, n, stride, off, 0.125);
            for d in 0..hd {
                let want = want[d];
                assert!(
                    (o[d] as f64 - want).abs() < 1e-4,
                    "{n}: dim {d}: {} vs {want}",
                    o[d]
                );
            }
        }
    }
}
