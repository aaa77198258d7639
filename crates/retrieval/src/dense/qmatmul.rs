//! The int8 register tiles of the native forward pass ([`super::quant`]): exact `i32` dot
//! products of quantized activations (unsigned 8-bit) with weights packed once into panels of
//! [`QNR`] output columns (signed 8-bit, groups of 4 inputs per column).
//!
//! A tile computes `c[i][j] = Σ_k a[i][k] · w[j][k]` for up to its height of rows and the 32
//! columns of one panel. Integer sums are exact, so every tile gives the same `i32`s whatever
//! its order of summation; the dequantisation that follows is one shared function
//! ([`super::quant`]), so every kernel set gives bit-identical outputs.
//!
//! * **AVX-512 VNNI**: 12 rows × 2 `zmm` accumulators, one `vpdpbusd` (u8 × i8, 4 products
//!   summed into each `i32` lane) per row, panel half and group of 4 inputs.
//! * **AVX2**: activations and weights sign/zero-extended to `i16` and multiplied with
//!   `vpmaddwd` (exact: no saturation, unlike `vpmaddubsw` on full-range u8 × i8), 3 rows × 4
//!   `ymm` accumulators per half panel; the pairs of partial sums are folded at the end.
//! * **Portable**: plain Rust over the same packed layout.

// The tiles index accumulator arrays in lockstep; clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]

use pgraphrag_core::simd::CpuFeatures;

/// Output columns of one packed int8 panel.
pub(crate) const QNR: usize = 32;
/// Inputs per group of the packed layout (one `vpdpbusd` lane).
pub(crate) const QKG: usize = 4;

/// How a tile reads the quantized activations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActFormat {
    /// One `u8` per input.
    U8,
    /// The same values widened to `i16` (the AVX2 tile multiplies 16-bit lanes).
    I16,
}

/// `c[i·QNR + j] = Σ_k a_i[k] · panel[k][j]` for `rows` rows (at most the tile height) of
/// `kp` quantized inputs (a multiple of [`QKG`]) and the [`QNR`] columns of one panel.
///
/// # Safety
/// The CPU must have the features the tile is compiled for; `a` must hold `rows` rows of `kp`
/// values in the tile's [`ActFormat`] at a stride of `lda` bytes, `panel` `kp · QNR` bytes of
/// [`pack_panels_i8`], and `c` room for `rows · QNR` values.
pub(crate) type QTile = unsafe fn(usize, *const u8, usize, usize, *const i8, *mut i32);

/// The instruction set the code around an int8 tile (quantisation, dequantisation) is
/// compiled for; the arithmetic is the same in each, so the results are too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QIsa {
    /// AVX-512 F, BW, VL.
    Avx512,
    /// AVX2.
    Avx2,
    /// The target's baseline.
    Portable,
}

/// An int8 kernel set: its tile, the tile's height, the activation format it reads.
#[derive(Clone, Copy)]
pub(crate) struct QKernels {
    pub tile: QTile,
    pub isa: QIsa,
    /// Rows of a full tile (divides [`super::matmul::MR`]).
    pub full: usize,
    pub act: ActFormat,
    /// `avx512-vnni`, `avx2` or `portable`.
    pub name: &'static str,
}

impl std::fmt::Debug for QKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl QKernels {
    /// The portable tile.
    pub fn portable() -> QKernels {
        QKernels {
            tile: tile_portable,
            isa: QIsa::Portable,
            full: 4,
            act: ActFormat::U8,
            name: "portable",
        }
    }

    /// The best int8 tile for the features `cpu`: AVX-512 VNNI, else AVX2, else portable.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    pub fn for_cpu(cpu: CpuFeatures) -> QKernels {
        #[cfg(target_arch = "x86_64")]
        {
            if cpu.avx512_vnni() {
                return QKernels {
                    tile: x86::vnni,
                    isa: QIsa::Avx512,
                    full: 12,
                    act: ActFormat::U8,
                    name: "avx512-vnni",
                };
            }
            if cpu.avx2() {
                return QKernels {
                    tile: x86::avx2,
                    isa: QIsa::Avx2,
                    full: 3,
                    act: ActFormat::I16,
                    name: "avx2",
                };
            }
        }
        QKernels::portable()
    }

    /// Every int8 kernel set this CPU runs, best first (tests compare them).
    #[cfg(test)]
    pub fn all_for(cpu: CpuFeatures) -> Vec<QKernels> {
        let mut v = vec![QKernels::for_cpu(cpu)];
        for other in [
            QKernels::for_cpu(cpu.without_avx512()),
            QKernels::portable(),
        ] {
            if v.iter().all(|k| k.name != other.name) {
                v.push(other);
            }
        }
        v
    }
}

/// Packs the quantized weights `q` (`n × k`, row-major) into `⌈n / QNR⌉` panels of
/// `kp / QKG` groups × [`QNR`] columns × [`QKG`] inputs, `kp` = `k` rounded up to a multiple of
/// [`QKG`]: byte `(g·QNR + j)·QKG + t` of panel `p` is `q[p·QNR + j][g·QKG + t]`. Columns past
/// `n` and inputs past `k` are zeros.
pub(crate) fn pack_panels_i8(q: &[i8], n: usize, k: usize) -> Vec<i8> {
    debug_assert_eq!(q.len(), n * k);
    let kp = k.next_multiple_of(QKG);
    let panels = n.div_ceil(QNR);
    let mut out = vec![0i8; panels * kp * QNR];
    for (p, panel) in out.chunks_exact_mut(kp * QNR).enumerate() {
        for j in 0..QNR.min(n - p * QNR) {
            let row = &q[(p * QNR + j) * k..(p * QNR + j + 1) * k];
            for (kk, v) in row.iter().enumerate() {
                let (g, t) = (kk / QKG, kk % QKG);
                panel[(g * QNR + j) * QKG + t] = *v;
            }
        }
    }
    out
}

/// The portable tile ([`QTile`], [`ActFormat::U8`]).
///
/// # Safety
/// As [`QTile`].
unsafe fn tile_portable(
    rows: usize,
    a: *const u8,
    lda: usize,
    kp: usize,
    panel: *const i8,
    c: *mut i32,
) {
    // SAFETY: the extents are the caller's contract.
    let w = unsafe { std::slice::from_raw_parts(panel, kp * QNR) };
    for i in 0..rows {
        // SAFETY: as above.
        let x = unsafe { std::slice::from_raw_parts(a.add(i * lda), kp) };
        let mut acc = [0i32; QNR];
        for (xg, wg) in x.chunks_exact(QKG).zip(w.chunks_exact(QKG * QNR)) {
            for (j, wj) in wg.chunks_exact(QKG).enumerate() {
                let mut s = 0i32;
                for t in 0..QKG {
                    s += xg[t] as i32 * wj[t] as i32;
                }
                acc[j] += s;
            }
        }
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), c.add(i * QNR), QNR) };
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{QKG, QNR};
    use std::arch::x86_64::*;

    /// 12 (or fewer) rows × 2 `zmm`: `vpdpbusd` of 4 broadcast activation bytes against 16
    /// columns × 4 inputs of weights.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn tile_vnni<const R: usize>(
        a: *const u8,
        lda: usize,
        kp: usize,
        panel: *const i8,
        c: *mut i32,
    ) {
        // SAFETY: the caller guarantees the extents (see `QTile`).
        unsafe {
            let mut acc0 = [_mm512_setzero_si512(); R];
            let mut acc1 = [_mm512_setzero_si512(); R];
            let rows: [*const u8; R] = std::array::from_fn(|i| a.add(i * lda));
            for g in 0..kp / QKG {
                let w = panel.add(g * QKG * QNR);
                let w0 = _mm512_loadu_si512(w.cast());
                let w1 = _mm512_loadu_si512(w.add(64).cast());
                for i in 0..R {
                    let x = _mm512_set1_epi32(rows[i].add(g * QKG).cast::<i32>().read_unaligned());
                    acc0[i] = _mm512_dpbusd_epi32(acc0[i], x, w0);
                    acc1[i] = _mm512_dpbusd_epi32(acc1[i], x, w1);
                }
            }
            for i in 0..R {
                _mm512_storeu_si512(c.add(i * QNR).cast(), acc0[i]);
                _mm512_storeu_si512(c.add(i * QNR + 16).cast(), acc1[i]);
            }
        }
    }

    /// The AVX-512 VNNI tile ([`super::QTile`], u8 activations, up to 12 rows).
    ///
    /// # Safety
    /// As [`super::QTile`]; the CPU must have AVX-512 F, BW and VNNI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn vnni(
        rows: usize,
        a: *const u8,
        lda: usize,
        kp: usize,
        p: *const i8,
        c: *mut i32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            match rows {
                12 => tile_vnni::<12>(a, lda, kp, p, c),
                1 => tile_vnni::<1>(a, lda, kp, p, c),
                2 => tile_vnni::<2>(a, lda, kp, p, c),
                3 => tile_vnni::<3>(a, lda, kp, p, c),
                4 => tile_vnni::<4>(a, lda, kp, p, c),
                5 => tile_vnni::<5>(a, lda, kp, p, c),
                6 => tile_vnni::<6>(a, lda, kp, p, c),
                7 => tile_vnni::<7>(a, lda, kp, p, c),
                8 => tile_vnni::<8>(a, lda, kp, p, c),
                9 => tile_vnni::<9>(a, lda, kp, p, c),
                10 => tile_vnni::<10>(a, lda, kp, p, c),
                _ => tile_vnni::<11>(a, lda, kp, p, c),
            }
        }
    }

    /// `R` rows × 16 columns (one half panel) × 4 `ymm`: each `ymm` holds 4 columns × 2 partial
    /// sums (inputs 0–1 and 2–3 of every group), folded by `vphaddd` at the end.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn tile_256<const R: usize>(
        a: *const u8,
        lda: usize,
        kp: usize,
        panel: *const i8,
        c: *mut i32,
    ) {
        // SAFETY: the caller guarantees the extents (see `QTile`); `a` holds i16 values.
        unsafe {
            let rows: [*const u8; R] = std::array::from_fn(|i| a.add(i * lda));
            for half in 0..2 {
                let mut acc = [[_mm256_setzero_si256(); 4]; R];
                for g in 0..kp / QKG {
                    let w = panel.add(g * QKG * QNR + half * 64);
                    // The 4 inputs of the group (i16), repeated in every 64-bit lane.
                    let x: [__m256i; R] = std::array::from_fn(|i| {
                        _mm256_set1_epi64x(rows[i].add(g * QKG * 2).cast::<i64>().read_unaligned())
                    });
                    for q in 0..4 {
                        let wq = _mm256_cvtepi8_epi16(_mm_loadu_si128(w.add(16 * q).cast()));
                        for i in 0..R {
                            acc[i][q] = _mm256_add_epi32(acc[i][q], _mm256_madd_epi16(x[i], wq));
                        }
                    }
                }
                for i in 0..R {
                    // hadd(cols 0–3, cols 4–7) = [c0 c1 c4 c5 | c2 c3 c6 c7]; reorder the
                    // 64-bit pairs to c0..c7.
                    let lo = _mm256_hadd_epi32(acc[i][0], acc[i][1]);
                    let hi = _mm256_hadd_epi32(acc[i][2], acc[i][3]);
                    let lo = _mm256_permute4x64_epi64::<0b11_01_10_00>(lo);
                    let hi = _mm256_permute4x64_epi64::<0b11_01_10_00>(hi);
                    let out = c.add(i * QNR + half * 16);
                    _mm256_storeu_si256(out.cast(), lo);
                    _mm256_storeu_si256(out.add(8).cast(), hi);
                }
            }
        }
    }

    /// The AVX2 tile ([`super::QTile`], i16 activations, up to 3 rows).
    ///
    /// # Safety
    /// As [`super::QTile`]; the CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2(
        rows: usize,
        a: *const u8,
        lda: usize,
        kp: usize,
        p: *const i8,
        c: *mut i32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            match rows {
                3 => tile_256::<3>(a, lda, kp, p, c),
                2 => tile_256::<2>(a, lda, kp, p, c),
                _ => tile_256::<1>(a, lda, kp, p, c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tile this CPU runs gives the exact integer product, at every tile height, with
    /// the extreme values (255 × ±127) that would saturate `vpmaddubsw`.
    #[test]
    fn every_tile_gives_the_exact_integer_product() {
        for (n, k) in [(32usize, 8usize), (64, 1536), (40, 13)] {
            let kp = k.next_multiple_of(QKG);
            let w: Vec<i8> = (0..n * k)
                .map(|i| match i % 7 {
                    0 => 127,
                    1 => -127,
                    _ => ((i * 31 % 255) as i32 - 127) as i8,
                })
                .collect();
            let packed = pack_panels_i8(&w, n, k);
            let m = 13;
            let a: Vec<u8> = (0..m * k)
                .map(|i| {
                    if i % 5 == 0 {
                        255
                    } else {
                        (i * 17 % 256) as u8
                    }
                })
                .collect();
            for qk in QKernels::all_for(CpuFeatures::detect()) {
                let mut xa = vec![0u8; m * kp * 2];
                for r in 0..m {
                    for kk in 0..k {
                        let v = a[r * k + kk];
                        match qk.act {
                            ActFormat::U8 => xa[r * kp + kk] = v,
                            ActFormat::I16 => xa[(r * kp + kk) * 2..(r * kp + kk) * 2 + 2]
                                .copy_from_slice(&(v as i16).to_le_bytes()),
                        }
                    }
                }
                let lda = kp * if qk.act == ActFormat::U8 { 1 } else { 2 };
                for p in 0..n.div_ceil(QNR) {
                    let mut r = 0;
                    while r < m {
                        let rows = qk.full.min(m - r);
                        let mut c = vec![0i32; rows * QNR];
                        // SAFETY: the kernel set runs on this CPU; sizes as in the contract.
                        unsafe {
                            (qk.tile)(
                                rows,
                                xa.as_ptr().add(r * lda),
                                lda,
                                kp,
                                packed.as_ptr().add(p * kp * QNR),
                                c.as_mut_ptr(),
                            )
                        };
                        for i in 0..rows {
                            for j in 0..QNR.min(n - p * QNR) {
                                let col = p * QNR + j;
                                let want: i32 = (0..k)
                                    .map(|kk| a[(r + i) * k + kk] as i32 * w[col * k + kk] as i32)
                                    .sum();
                                assert_eq!(
                                    c[i * QNR + j],
                                    want,
                                    "{} {n}x{k} row {} col {col}",
                                    qk.name,
                                    r + i
                                );
                            }
                        }
                        r += rows;
                    }
                }
            }
        }
    }
}
