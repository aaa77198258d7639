//! The x86 prompt kernels: AVX-512 (the plain tile compiled for it) and AVX2 (a tile with
//! intrinsics).

use pgraphrag_core::simd::CpuFeatures;

use super::generic::{Kernels, NR, Tile, Vectorised, attend_row_generic, block};

#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn block_512(x: *const f32, cols: usize, n: usize, p: &[f32], acc: &mut [f32]) {
    // SAFETY: forwarded contract.
    unsafe { block::<Vectorised, 12>(x, cols, n, p, acc) }
}
/// [`Tile::tile`] with intrinsics for AVX2: `R` rows × 4 `ymm` accumulators pinned in registers,
/// the `R` broadcast inputs, one weight chunk at a time (LLVM's version of the generic tile
/// spilled accumulators to the stack). The same fused multiply-add chain per element.
///
/// # Safety
/// As [`Tile::tile`]; the CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn tile_256<const R: usize>(
    a: *const f32,
    lda: usize,
    kc: usize,
    panel: &[f32],
    acc: &mut [f32],
) {
    use std::arch::x86_64::*;
    assert!(panel.len() >= kc * NR && acc.len() >= R * NR);
    // SAFETY: the loads and stores stay inside `panel`, `acc` (asserted) and the `R` rows
    // of `kc` inputs of `a` (the contract).
    unsafe {
        let mut c = [[_mm256_setzero_ps(); 4]; R];
        for (i, ci) in c.iter_mut().enumerate() {
            for (j, cij) in ci.iter_mut().enumerate() {
                *cij = _mm256_loadu_ps(acc.as_ptr().add(i * NR + 8 * j));
            }
        }
        let w = panel.as_ptr();
        for kk in 0..kc {
            let b: [__m256; R] =
                std::array::from_fn(|i| _mm256_broadcast_ss(&*a.add(i * lda + kk)));
            for j in 0..4 {
                let wj = _mm256_loadu_ps(w.add(kk * NR + 8 * j));
                for i in 0..R {
                    c[i][j] = _mm256_fmadd_ps(b[i], wj, c[i][j]);
                }
            }
        }
        for (i, ci) in c.iter().enumerate() {
            for (j, cij) in ci.iter().enumerate() {
                _mm256_storeu_ps(acc.as_mut_ptr().add(i * NR + 8 * j), *cij);
            }
        }
    }
}

/// [`tile_256`] as a [`Tile`].
struct Avx2;

impl Tile for Avx2 {
    #[inline(always)]
    unsafe fn tile<const R: usize>(
        a: *const f32,
        lda: usize,
        kc: usize,
        p: &[f32],
        acc: &mut [f32],
    ) {
        // SAFETY: forwarded contract (the caller runs on a CPU with AVX2 and FMA).
        unsafe { tile_256::<R>(a, lda, kc, p, acc) }
    }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn block_256(x: *const f32, cols: usize, n: usize, p: &[f32], acc: &mut [f32]) {
    // SAFETY: forwarded contract.
    unsafe { block::<Avx2, 3>(x, cols, n, p, acc) }
}

#[target_feature(enable = "avx512f,avx2,fma")]
#[allow(clippy::too_many_arguments)]
fn attend_512(
    q: &[f32],
    kt: &[f32],
    lp: usize,
    vc: &[f32],
    st: usize,
    off: usize,
    sc: f32,
    s: &mut [f32],
    o: &mut [f32],
) {
    attend_row_generic(q, kt, lp, vc, st, off, sc, s, o)
}
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
fn attend_256(
    q: &[f32],
    kt: &[f32],
    lp: usize,
    vc: &[f32],
    st: usize,
    off: usize,
    sc: f32,
    s: &mut [f32],
    o: &mut [f32],
) {
    attend_row_generic(q, kt, lp, vc, st, off, sc, s, o)
}

pub(super) fn avx512(cpu: CpuFeatures) -> Option<Kernels> {
    (cpu.avx512f() && cpu.avx2_fma()).then_some(Kernels {
        block: block_512,
        // SAFETY: the CPU has the features attend_512 is compiled for (checked above).
        attend: |q, kt, lp, vc, st, off, sc, s, o| unsafe {
            attend_512(q, kt, lp, vc, st, off, sc, s, o)
        },
    })
}
pub(super) fn avx2(cpu: CpuFeatures) -> Option<Kernels> {
    cpu.avx2_fma().then_some(Kernels {
        block: block_256,
        // SAFETY: as above.
        attend: |q, kt, lp, vc, st, off, sc, s, o| unsafe {
            attend_256(q, kt, lp, vc, st, off, sc, s, o)
        },
    })
}
