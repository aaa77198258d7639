//! The AArch64 prompt kernel: a NEON tile with intrinsics (3 rows × 8 four-lane accumulators,
//! 24 of the 32 registers). The attention row is the portable one, which LLVM vectorises with
//! NEON and fuses exactly as written (`f32::mul_add` is one `fmla`).

use std::arch::aarch64::*;

use pgraphrag_core::simd::CpuFeatures;

use super::generic::{Kernels, NR, Tile, attend_row_generic, block};

/// [`Tile::tile`] with NEON intrinsics: `R` rows × 8 accumulators in registers, the `R`
/// broadcast inputs, one 4-wide weight chunk at a time; `vfmaq_f32(c, a, w)` is `a·w + c`
/// rounded once, the plain tile's `a.mul_add(w, c)`.
///
/// # Safety
/// As [`Tile::tile`]; the CPU must have NEON.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn tile_neon<const R: usize>(
    a: *const f32,
    lda: usize,
    kc: usize,
    panel: &[f32],
    acc: &mut [f32],
) {
    assert!(panel.len() >= kc * NR && acc.len() >= R * NR);
    // SAFETY: the loads and stores stay inside `panel`, `acc` (asserted) and the `R` rows of
    // `kc` inputs of `a` (the contract).
    unsafe {
        let mut c = [[vdupq_n_f32(0.0); NR / 4]; R];
        for (i, ci) in c.iter_mut().enumerate() {
            for (j, cij) in ci.iter_mut().enumerate() {
                *cij = vld1q_f32(acc.as_ptr().add(i * NR + 4 * j));
            }
        }
        let w = panel.as_ptr();
        for kk in 0..kc {
            let b: [float32x4_t; R] = std::array::from_fn(|i| vld1q_dup_f32(a.add(i * lda + kk)));
            for j in 0..NR / 4 {
                let wj = vld1q_f32(w.add(kk * NR + 4 * j));
                for i in 0..R {
                    c[i][j] = vfmaq_f32(c[i][j], b[i], wj);
                }
            }
        }
        for (i, ci) in c.iter().enumerate() {
            for (j, cij) in ci.iter().enumerate() {
                vst1q_f32(acc.as_mut_ptr().add(i * NR + 4 * j), *cij);
            }
        }
    }
}

/// [`tile_neon`] as a [`Tile`].
struct Neon;

impl Tile for Neon {
    #[inline(always)]
    unsafe fn tile<const R: usize>(
        a: *const f32,
        lda: usize,
        kc: usize,
        p: &[f32],
        acc: &mut [f32],
    ) {
        // SAFETY: forwarded contract (the caller runs on a CPU with NEON).
        unsafe { tile_neon::<R>(a, lda, kc, p, acc) }
    }
}

#[target_feature(enable = "neon")]
unsafe fn block_neon(x: *const f32, cols: usize, n: usize, p: &[f32], acc: &mut [f32]) {
    // SAFETY: forwarded contract.
    unsafe { block::<Neon, 3>(x, cols, n, p, acc) }
}

pub(super) fn neon(cpu: CpuFeatures) -> Option<Kernels> {
    cpu.neon().then_some(Kernels {
        block: block_neon,
        attend: |q, kt, lp, vc, st, off, sc, s, o| {
            attend_row_generic(q, kt, lp, vc, st, off, sc, s, o)
        },
    })
}
