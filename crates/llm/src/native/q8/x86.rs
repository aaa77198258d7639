//! The x86 8-bit kernels: AVX2 (`vpmaddubsw`) and AVX-512 VNNI (`vpdpbusd`).

use std::arch::x86_64::*;

use pgraphrag_core::simd::CpuFeatures;

use super::generic::{I8Rows, Kind, QuantX, RowsDotI8, check_sizes};
use crate::native::formats::f16_bits;
use crate::native::kernels::{MAX_VECS, hsum16};

/// Vectors per pass over a row in the AVX2 kernel: two 8-lane accumulators each, so four
/// vectors keep every accumulator in the 16 `ymm` registers. The grouping does not change
/// any (row, vector) value: each vector has its own accumulators.
const AVX2_VECS: usize = 4;

/// AVX2: per pair and vector, `vpmaddubsw` (unsigned weights × signed activations, pairs
/// summed to i16, exact: at most 2·128·127) and `vpmaddwd` by ones (pairs of those summed
/// to i32): lane `l`'s 4-product integer sum, as llama.cpp's AVX2 `Q8` dot products.
/// `Q8_0`'s signed weights go in as `|w|` with the activation's sign flipped where `w < 0`.
/// The 16 lanes of a pair are two 8-lane halves with their own accumulators; the f32
/// steps are the portable kernel's, lane by lane.
#[target_feature(enable = "avx2,fma,f16c")]
fn rows_dot_avx2(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &mut [f32]) {
    let (nbp, npair) = (w.nbp, w.nbp / 2);
    check_sizes(w, r0, x, nvec, out);
    // SAFETY: every load below is inside the buffers whose sizes `check_sizes` asserts.
    unsafe {
        let idx = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
        let mask = _mm256_set1_epi8(0x0F);
        let ones = _mm256_set1_epi16(1);
        for (i, o) in out.chunks_exact_mut(nvec).enumerate() {
            let r = r0 + i;
            let drow = w.d.as_ptr().add(r * nbp);
            for v0 in (0..nvec).step_by(AVX2_VECS) {
                let n = (nvec - v0).min(AVX2_VECS);
                let mut acc = [[_mm256_setzero_ps(); 2]; AVX2_VECS];
                for p in 0..npair {
                    // [d_A, d_B] widened once, spread as [d_A ×4, d_B ×4] (both halves).
                    let dw = _mm256_permutevar8x32_ps(
                        _mm256_castps128_ps256(_mm_cvtph_ps(_mm_cvtsi32_si128(
                            (drow.add(2 * p) as *const i32).read_unaligned(),
                        ))),
                        idx,
                    );
                    // The two halves' weights as unsigned bytes, and (Q8_0) their signs.
                    let (w0, w1, s0, s1) = if w.kind == Kind::Q41 {
                        let q = _mm256_loadu_si256(
                            w.qs.as_ptr().add((r * npair + p) * 32) as *const __m256i
                        );
                        let lo = _mm256_and_si256(q, mask);
                        let hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);
                        (lo, hi, lo, hi)
                    } else {
                        let pw = w.qs.as_ptr().add((r * npair + p) * 64);
                        let a = _mm256_loadu_si256(pw as *const __m256i);
                        let b = _mm256_loadu_si256(pw.add(32) as *const __m256i);
                        (_mm256_abs_epi8(a), _mm256_abs_epi8(b), a, b)
                    };
                    for (k, acc) in acc.iter_mut().enumerate().take(n) {
                        let v = v0 + k;
                        let px = x.q.as_ptr().add((v * npair + p) * 64);
                        let mut x0 = _mm256_loadu_si256(px as *const __m256i);
                        let mut x1 = _mm256_loadu_si256(px.add(32) as *const __m256i);
                        if w.kind == Kind::Q80 {
                            x0 = _mm256_sign_epi8(x0, s0);
                            x1 = _mm256_sign_epi8(x1, s1);
                        }
                        let i0 = _mm256_madd_epi16(_mm256_maddubs_epi16(w0, x0), ones);
                        let i1 = _mm256_madd_epi16(_mm256_maddubs_epi16(w1, x1), ones);
                        let pd = x.dpat.as_ptr().add((v * npair + p) * 16);
                        let sc0 = _mm256_mul_ps(dw, _mm256_loadu_ps(pd));
                        let sc1 = _mm256_mul_ps(dw, _mm256_loadu_ps(pd.add(8)));
                        acc[0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0), sc0, acc[0]);
                        acc[1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1), sc1, acc[1]);
                    }
                }
                for (k, acc) in acc.iter().enumerate().take(n) {
                    o[v0 + k] = finish_avx2(w, r, x, v0 + k, acc[0], acc[1]);
                }
            }
        }
    }
}

/// [`hsum16`] of the 16 lanes `a ‖ b` with vector operations in the same order: `s = a + b`
/// (lanes `j` and `j + 8`), `t = s_lo + s_hi` (`s_j + s_{j+4}`), then `(t0 + t1) + (t2 + t3)`.
#[target_feature(enable = "avx2,fma,f16c")]
fn hsum16_avx2(a: __m256, b: __m256) -> f32 {
    let s = _mm256_add_ps(a, b);
    let t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    let u = _mm_add_ps(t, _mm_shuffle_ps(t, t, 0b10_11_00_01));
    _mm_cvtss_f32(_mm_add_ss(u, _mm_movehl_ps(u, u)))
}

/// Row `r`'s value for vector `v` from its two 8-lane accumulators: their [`hsum16`], plus for
/// `Q4_1` the minimum term `Σ_b m_b·Σx_b` (lane `b mod 16`, reduced the same way).
///
/// # Safety
/// `r` and `v` must be inside `w` and `x` (as [`check_sizes`] asserts for the calling kernel).
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn finish_avx2(w: &I8Rows, r: usize, x: &QuantX, v: usize, a0: __m256, a1: __m256) -> f32 {
    let nbp = w.nbp;
    let mut val = hsum16_avx2(a0, a1);
    if w.kind == Kind::Q41 {
        // SAFETY: the caller keeps `r` and `v` inside the buffers.
        unsafe {
            let (mrow, xs) = (w.m.as_ptr().add(r * nbp), x.xsum.as_ptr().add(v * nbp));
            let (mut off0, mut off1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            let full = nbp / 16 * 16;
            for b in (0..full).step_by(16) {
                let m0 = _mm256_cvtph_ps(_mm_loadu_si128(mrow.add(b) as *const __m128i));
                let m1 = _mm256_cvtph_ps(_mm_loadu_si128(mrow.add(b + 8) as *const __m128i));
                off0 = _mm256_fmadd_ps(m0, _mm256_loadu_ps(xs.add(b)), off0);
                off1 = _mm256_fmadd_ps(m1, _mm256_loadu_ps(xs.add(b + 8)), off1);
            }
            if full < nbp {
                let mut lanes = [0f32; 16];
                _mm256_storeu_ps(lanes.as_mut_ptr(), off0);
                _mm256_storeu_ps(lanes.as_mut_ptr().add(8), off1);
                for b in full..nbp {
                    lanes[b % 16] = f16_bits(*mrow.add(b)).mul_add(*xs.add(b), lanes[b % 16]);
                }
                off0 = _mm256_loadu_ps(lanes.as_ptr());
                off1 = _mm256_loadu_ps(lanes.as_ptr().add(8));
            }
            val += hsum16_avx2(off0, off1);
        }
    }
    val
}

/// AVX-512 VNNI: one `vpdpbusd` per pair and vector.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")]
fn rows_dot_vnni(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &mut [f32]) {
    let (nbp, npair) = (w.nbp, w.nbp / 2);
    check_sizes(w, r0, x, nvec, out);
    // SAFETY: every load below is inside the buffers whose sizes `check_sizes` asserts.
    unsafe {
        let idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1);
        let mask = _mm256_set1_epi8(0x0F);
        let zero = _mm512_setzero_si512();
        for (i, o) in out.chunks_exact_mut(nvec).enumerate() {
            let r = r0 + i;
            let drow = w.d.as_ptr().add(r * nbp);
            for v0 in (0..nvec).step_by(MAX_VECS) {
                let n = (nvec - v0).min(MAX_VECS);
                let mut acc = [_mm512_setzero_ps(); MAX_VECS];
                for p in 0..npair {
                    let dw = _mm512_permutexvar_ps(
                        idx,
                        _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128(
                            (drow.add(2 * p) as *const i32).read_unaligned(),
                        ))),
                    );
                    if w.kind == Kind::Q41 {
                        let q = _mm256_loadu_si256(
                            w.qs.as_ptr().add((r * npair + p) * 32) as *const __m256i
                        );
                        let lo = _mm256_and_si256(q, mask);
                        let hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);
                        let wz = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
                        for k in 0..n {
                            let v = v0 + k;
                            let xv = _mm512_loadu_si512(
                                x.q.as_ptr().add((v * npair + p) * 64) as *const __m512i
                            );
                            let s = _mm512_dpbusd_epi32(zero, wz, xv);
                            let sc = _mm512_mul_ps(
                                dw,
                                _mm512_loadu_ps(x.dpat.as_ptr().add((v * npair + p) * 16)),
                            );
                            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sc, acc[k]);
                        }
                    } else {
                        let wz = _mm512_loadu_si512(
                            w.qs.as_ptr().add((r * npair + p) * 64) as *const __m512i
                        );
                        let aw = _mm512_abs_epi8(wz);
                        let neg = _mm512_movepi8_mask(wz);
                        for k in 0..n {
                            let v = v0 + k;
                            let xv = _mm512_loadu_si512(
                                x.q.as_ptr().add((v * npair + p) * 64) as *const __m512i
                            );
                            let xs = _mm512_mask_sub_epi8(xv, neg, zero, xv);
                            let s = _mm512_dpbusd_epi32(zero, aw, xs);
                            let sc = _mm512_mul_ps(
                                dw,
                                _mm512_loadu_ps(x.dpat.as_ptr().add((v * npair + p) * 16)),
                            );
                            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sc, acc[k]);
                        }
                    }
                }
                for k in 0..n {
                    let v = v0 + k;
                    let mut lanes = [0f32; 16];
                    _mm512_storeu_ps(lanes.as_mut_ptr(), acc[k]);
                    let mut val = hsum16(&lanes);
                    if w.kind == Kind::Q41 {
                        let mut off = _mm512_setzero_ps();
                        let (mrow, xs) = (w.m.as_ptr().add(r * nbp), x.xsum.as_ptr().add(v * nbp));
                        let mut b = 0;
                        while b < nbp {
                            let left = nbp - b;
                            let km: __mmask16 = if left >= 16 {
                                0xFFFF
                            } else {
                                (1u16 << left) - 1
                            };
                            off = _mm512_fmadd_ps(
                                _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(
                                    km,
                                    mrow.add(b) as *const i16,
                                )),
                                _mm512_maskz_loadu_ps(km, xs.add(b)),
                                off,
                            );
                            b += 16;
                        }
                        _mm512_storeu_ps(lanes.as_mut_ptr(), off);
                        val += hsum16(&lanes);
                    }
                    o[v] = val;
                }
            }
        }
    }
}

pub(super) fn vnni(cpu: CpuFeatures) -> Option<RowsDotI8> {
    if cpu.avx512_vnni() && cpu.f16c() {
        // SAFETY: the CPU has every feature the function is compiled for.
        return Some(|w, r0, x, n, o| unsafe { rows_dot_vnni(w, r0, x, n, o) });
    }
    None
}

pub(super) fn avx2(cpu: CpuFeatures) -> Option<RowsDotI8> {
    if cpu.avx2_fma() && cpu.f16c() {
        // SAFETY: as above.
        return Some(|w, r0, x, n, o| unsafe { rows_dot_avx2(w, r0, x, n, o) });
    }
    None
}
