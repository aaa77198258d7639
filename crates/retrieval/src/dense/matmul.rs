//! The native BERT forward pass's matrix multiply: `y = x·Wᵀ + b` against weights packed once
//! into panels of [`NR`] output columns, by register tiles written with intrinsics (AVX-512:
//! 12 rows × 2 `zmm`; AVX2 + FMA: 3 rows × 4 `ymm`), the bias fused in as the accumulators'
//! start. One driver ([`matmul_with`]) cuts the inputs into L1-sized blocks for both.

// The tiles index accumulator and weight arrays in lockstep; clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]

use rayon::prelude::*;

/// Columns of one packed weight panel.
pub(crate) const NR: usize = 32;
/// Rows are handed to the matrix multiply in multiples of this (every tile height divides it).
pub(crate) const MR: usize = 12;

/// `c[r][p·NR..p·NR+NR] = bias + a[r] · panel_p` (with `acc`: `c[r][…] += a[r] · panel_p`,
/// `bias` unread) for `rows` rows starting at `a` (row stride `lda`), `k` inputs, panels
/// `p0..p1` of `packed` ([`pack_panels`]).
///
/// # Safety
/// The CPU must have the features the implementation is compiled for; `a` must hold `rows`
/// rows of `k` floats at stride `lda`, `packed` the panels of [`pack_panels`] for `k` inputs,
/// `bias` `p1·NR` floats, and `c` `rows` rows of at least `p1·NR` floats at stride `ldc`, not
/// aliasing `a`.
pub(crate) type Matmul = unsafe fn(
    *const f32,
    usize,
    usize,
    usize,
    *const f32,
    *const f32,
    bool,
    usize,
    usize,
    *mut f32,
    usize,
);

/// Packs `w` (`n × k`, row-major, PyTorch's `Linear.weight` layout) into `n / NR` panels of
/// `k × NR` (row `kk` of panel `p` holds `w[p·NR .. p·NR+NR][kk]`). `n` must be a multiple of
/// [`NR`].
pub(crate) fn pack_panels(w: &[f32], n: usize, k: usize) -> Vec<f32> {
    debug_assert_eq!(w.len(), n * k);
    debug_assert_eq!(n % NR, 0);
    let mut out = vec![0f32; n * k];
    out.par_chunks_mut(k * NR)
        .enumerate()
        .for_each(|(p, panel)| {
            for j in 0..NR {
                let row = &w[(p * NR + j) * k..(p * NR + j + 1) * k];
                for (kk, v) in row.iter().enumerate() {
                    panel[kk * NR + j] = *v;
                }
            }
        });
    out
}

/// The panels [`pack_panels`] makes of `wᵀ`, read straight from `w` (`k × n`, row-major):
/// row `kk` of panel `p` is `w[kk][p·NR .. p·NR+NR]`, a contiguous copy. `n` must be a
/// multiple of [`NR`].
pub(crate) fn pack_panels_transposed(w: &[f32], k: usize, n: usize) -> Vec<f32> {
    debug_assert_eq!(w.len(), n * k);
    debug_assert_eq!(n % NR, 0);
    let mut out = vec![0f32; n * k];
    out.par_chunks_mut(k * NR)
        .enumerate()
        .for_each(|(p, panel)| {
            for (kk, dst) in panel.chunks_exact_mut(NR).enumerate() {
                dst.copy_from_slice(&w[kk * n + p * NR..kk * n + (p + 1) * NR]);
            }
        });
    out
}

/// A register tile of [`matmul_with`]: up to `FULL` rows × [`NR`] columns.
#[cfg(target_arch = "x86_64")]
trait Tile {
    /// Rows of a full tile.
    const FULL: usize;
    /// One `n × NR` tile (`1 ≤ n ≤ FULL`) over `k` inputs, accumulators seeded with the bias
    /// (`first`) or with what `c` holds (a later block of inputs).
    ///
    /// # Safety
    /// As [`Matmul`], for `n` rows and one panel of `k` inputs at stride [`NR`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile(
        n: usize,
        a: *const f32,
        lda: usize,
        k: usize,
        panel: *const f32,
        bias: *const f32,
        first: bool,
        c: *mut f32,
        ldc: usize,
    );
}

/// The driver: `k` is cut into blocks of `KC` so that a block of one panel (`KC·NR` floats,
/// 16 KiB) stays in L1 while every row tile of this call streams past it; tiles accumulate in
/// `c`.
///
/// # Safety
/// As [`Matmul`], with the CPU features `T` needs.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn matmul_with<T: Tile>(
    a: *const f32,
    lda: usize,
    rows: usize,
    k: usize,
    packed: *const f32,
    bias: *const f32,
    acc: bool,
    p0: usize,
    p1: usize,
    c: *mut f32,
    ldc: usize,
) {
    const KC: usize = 128;
    for p in p0..p1 {
        // SAFETY: all offsets stay inside the buffers described in the contract.
        unsafe {
            let bias = bias.add(p * NR);
            let mut k0 = 0;
            while k0 < k {
                let kc = KC.min(k - k0);
                let panel = packed.add(p * k * NR + k0 * NR);
                let first = k0 == 0 && !acc;
                let mut r = 0;
                while r < rows {
                    let n = T::FULL.min(rows - r);
                    T::tile(
                        n,
                        a.add(r * lda + k0),
                        lda,
                        kc,
                        panel,
                        bias,
                        first,
                        c.add(r * ldc + p * NR),
                        ldc,
                    );
                    r += n;
                }
                k0 += kc;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;
    use std::arch::x86_64::*;

    /// 12 rows × 2 `zmm` accumulators (24 of the 32 registers).
    pub(super) struct Avx512;

    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile_512<const R: usize>(
        a: *const f32,
        lda: usize,
        k: usize,
        panel: *const f32,
        bias: *const f32,
        first: bool,
        c: *mut f32,
        ldc: usize,
    ) {
        // SAFETY: the caller guarantees the extents (see `Matmul`).
        unsafe {
            let b0 = _mm512_loadu_ps(bias);
            let b1 = _mm512_loadu_ps(bias.add(16));
            let mut acc0 = [b0; R];
            let mut acc1 = [b1; R];
            if !first {
                for i in 0..R {
                    acc0[i] = _mm512_loadu_ps(c.add(i * ldc));
                    acc1[i] = _mm512_loadu_ps(c.add(i * ldc + 16));
                }
            }
            let rows: [*const f32; R] = std::array::from_fn(|i| a.add(i * lda));
            for kk in 0..k {
                let w0 = _mm512_loadu_ps(panel.add(kk * NR));
                let w1 = _mm512_loadu_ps(panel.add(kk * NR + 16));
                for i in 0..R {
                    let av = _mm512_set1_ps(*rows[i].add(kk));
                    acc0[i] = _mm512_fmadd_ps(av, w0, acc0[i]);
                    acc1[i] = _mm512_fmadd_ps(av, w1, acc1[i]);
                }
            }
            for i in 0..R {
                _mm512_storeu_ps(c.add(i * ldc), acc0[i]);
                _mm512_storeu_ps(c.add(i * ldc + 16), acc1[i]);
            }
        }
    }

    impl Tile for Avx512 {
        const FULL: usize = 12;
        #[inline(always)]
        unsafe fn tile(
            n: usize,
            a: *const f32,
            lda: usize,
            k: usize,
            p: *const f32,
            b: *const f32,
            f: bool,
            c: *mut f32,
            ldc: usize,
        ) {
            // SAFETY: forwarded contract (the caller runs with AVX-512F).
            unsafe {
                match n {
                    12 => tile_512::<12>(a, lda, k, p, b, f, c, ldc),
                    1 => tile_512::<1>(a, lda, k, p, b, f, c, ldc),
                    2 => tile_512::<2>(a, lda, k, p, b, f, c, ldc),
                    3 => tile_512::<3>(a, lda, k, p, b, f, c, ldc),
                    4 => tile_512::<4>(a, lda, k, p, b, f, c, ldc),
                    5 => tile_512::<5>(a, lda, k, p, b, f, c, ldc),
                    6 => tile_512::<6>(a, lda, k, p, b, f, c, ldc),
                    7 => tile_512::<7>(a, lda, k, p, b, f, c, ldc),
                    8 => tile_512::<8>(a, lda, k, p, b, f, c, ldc),
                    9 => tile_512::<9>(a, lda, k, p, b, f, c, ldc),
                    10 => tile_512::<10>(a, lda, k, p, b, f, c, ldc),
                    _ => tile_512::<11>(a, lda, k, p, b, f, c, ldc),
                }
            }
        }
    }

    /// 3 rows × 4 `ymm` accumulators (12 of the 16 registers, the rest for the 3 broadcast
    /// inputs and one weight chunk).
    pub(super) struct Avx2;

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile_256<const R: usize>(
        a: *const f32,
        lda: usize,
        k: usize,
        panel: *const f32,
        bias: *const f32,
        first: bool,
        c: *mut f32,
        ldc: usize,
    ) {
        // SAFETY: the caller guarantees the extents (see `Matmul`).
        unsafe {
            let mut acc = [[_mm256_setzero_ps(); 4]; R];
            for (i, row) in acc.iter_mut().enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = if first {
                        _mm256_loadu_ps(bias.add(8 * j))
                    } else {
                        _mm256_loadu_ps(c.add(i * ldc + 8 * j))
                    };
                }
            }
            let rows: [*const f32; R] = std::array::from_fn(|i| a.add(i * lda));
            for kk in 0..k {
                let av: [__m256; R] =
                    std::array::from_fn(|i| _mm256_broadcast_ss(&*rows[i].add(kk)));
                for j in 0..4 {
                    let w = _mm256_loadu_ps(panel.add(kk * NR + 8 * j));
                    for i in 0..R {
                        acc[i][j] = _mm256_fmadd_ps(av[i], w, acc[i][j]);
                    }
                }
            }
            for (i, row) in acc.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    _mm256_storeu_ps(c.add(i * ldc + 8 * j), *v);
                }
            }
        }
    }

    impl Tile for Avx2 {
        const FULL: usize = 3;
        #[inline(always)]
        unsafe fn tile(
            n: usize,
            a: *const f32,
            lda: usize,
            k: usize,
            p: *const f32,
            b: *const f32,
            f: bool,
            c: *mut f32,
            ldc: usize,
        ) {
            // SAFETY: forwarded contract (the caller runs with AVX2 and FMA).
            unsafe {
                match n {
                    3 => tile_256::<3>(a, lda, k, p, b, f, c, ldc),
                    2 => tile_256::<2>(a, lda, k, p, b, f, c, ldc),
                    _ => tile_256::<1>(a, lda, k, p, b, f, c, ldc),
                }
            }
        }
    }
}

/// The AVX-512 matrix multiply ([`Matmul`]).
///
/// # Safety
/// As [`Matmul`]; the CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn avx512(
    a: *const f32,
    lda: usize,
    rows: usize,
    k: usize,
    packed: *const f32,
    bias: *const f32,
    acc: bool,
    p0: usize,
    p1: usize,
    c: *mut f32,
    ldc: usize,
) {
    // SAFETY: forwarded contract.
    unsafe { matmul_with::<x86::Avx512>(a, lda, rows, k, packed, bias, acc, p0, p1, c, ldc) }
}

/// The AVX2 + FMA matrix multiply ([`Matmul`]).
///
/// # Safety
/// As [`Matmul`]; the CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn avx2(
    a: *const f32,
    lda: usize,
    rows: usize,
    k: usize,
    packed: *const f32,
    bias: *const f32,
    acc: bool,
    p0: usize,
    p1: usize,
    c: *mut f32,
    ldc: usize,
) {
    // SAFETY: forwarded contract.
    unsafe { matmul_with::<x86::Avx2>(a, lda, rows, k, packed, bias, acc, p0, p1, c, ldc) }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use pgraphrag_core::simd::CpuFeatures;

    /// Every packed matrix multiply this CPU runs, with its name.
    fn available() -> Vec<(&'static str, Matmul)> {
        let cpu = CpuFeatures::detect();
        let mut v: Vec<(&'static str, Matmul)> = Vec::new();
        if cpu.avx512() {
            v.push(("avx512", avx512));
        }
        if cpu.avx2_fma() {
            v.push(("avx2", avx2));
        }
        v
    }

    #[test]
    fn every_matmul_matches_a_naive_product() {
        // Rows that leave every remainder of both tile heights; k over two input blocks.
        for (m, k, n) in [(29, 40, 64), (7, 300, 96), (1, 17, 32)] {
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0)
                .collect();
            let w: Vec<f32> = (0..n * k)
                .map(|i| ((i * 5 % 11) as f32 - 5.0) / 7.0)
                .collect();
            let bias: Vec<f32> = (0..n).map(|i| i as f32 / 10.0).collect();
            let packed = pack_panels(&w, n, k);
            for (name, f) in available() {
                let mut c = vec![0f32; m * n];
                // SAFETY: the CPU has the features (available); sizes as in the contract.
                unsafe {
                    f(
                        a.as_ptr(),
                        k,
                        m,
                        k,
                        packed.as_ptr(),
                        bias.as_ptr(),
                        false,
                        0,
                        n / NR,
                        c.as_mut_ptr(),
                        n,
                    )
                };
                for r in 0..m {
                    for j in 0..n {
                        let want: f64 = bias[j] as f64
                            + (0..k)
                                .map(|kk| a[r * k + kk] as f64 * w[j * k + kk] as f64)
                                .sum::<f64>();
                        let got = c[r * n + j] as f64;
                        assert!(
                            (got - want).abs() < 1e-4 * (1.0 + want.abs()),
                            "{name} {m}x{k}x{n} ({r},{j}): {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    /// `cargo test --release -p pgraphrag-retrieval --lib matmul_gflops -- --ignored --nocapture`
    #[test]
    #[ignore = "a timing probe, not a test"]
    fn matmul_gflops() {
        for (name, f) in available() {
            for (m, k, n) in [(2048, 384, 1152), (2048, 384, 1536), (2048, 1536, 384)] {
                let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 * 0.1).collect();
                let w: Vec<f32> = (0..n * k).map(|i| (i % 5) as f32 * 0.1).collect();
                let bias = vec![0.5f32; n];
                let packed = pack_panels(&w, n, k);
                let mut c = vec![0f32; m * n];
                let t = std::time::Instant::now();
                let reps = 5;
                for _ in 0..reps {
                    for r0 in (0..m).step_by(96) {
                        // SAFETY: the CPU has the features; sizes as in the contract.
                        unsafe {
                            f(
                                a.as_ptr().add(r0 * k),
                                k,
                                96.min(m - r0),
                                k,
                                packed.as_ptr(),
                                bias.as_ptr(),
                                false,
                                0,
                                n / NR,
                                c.as_mut_ptr().add(r0 * n),
                                n,
                            )
                        };
                    }
                }
                let s = t.elapsed().as_secs_f64();
                eprintln!(
                    "{name} m={m} k={k} n={n}: {:.1} GFLOP/s",
                    2.0 * (m * k * n * reps) as f64 / s / 1e9
                );
            }
        }
    }
}
