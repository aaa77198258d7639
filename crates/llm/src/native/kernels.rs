//! The decoding kernels: row dot products against the stored blocks (several activation
//! vectors per pass over a row) and single-query attention, written so that LLVM vectorises
//! them, compiled for AVX-512, AVX2+FMA and the portable baseline, picked at load from
//! [`CpuFeatures`].

use pgraphrag_core::simd::CpuFeatures;

use super::formats::{QData, QK, QRows};

/// Up to this many activation vectors share one pass over a weight row.
pub(super) const MAX_VECS: usize = 8;

/// `out[i·n + v] = row(r0 + i) · x_v` for `n = out.len() / rows` vectors `x_v =
/// x[v·cols..]`; `xsum[v·nb + b]` is the sum of block `b` of `x_v` (for `Q4_1`'s offsets).
/// Each (row, vector) pair is computed with the same operations in the same order whatever
/// the number of vectors, so batched decoding is bit-identical to one sequence at a time, and
/// as the AVX-512 kernel (`p = fma(lo, x_j, hi·x_{j+16})`, `acc = fma(d, p, acc)`), so every
/// kernel set gives the same bits (exact `f32::mul_add`: slow only on CPUs without FMA).
#[inline(always)]
pub(super) fn rows_dot_generic(
    w: &QRows,
    r0: usize,
    x: &[f32],
    xsum: &[f32],
    nvec: usize,
    out: &mut [f32],
) {
    let nb = w.cols / QK;
    for (i, o) in out.chunks_exact_mut(nvec).enumerate() {
        let r = r0 + i;
        for (v, ov) in o.iter_mut().enumerate() {
            let xv = &x[v * w.cols..(v + 1) * w.cols];
            *ov = match &w.data {
                QData::Q41(blocks) => {
                    let row = &blocks[r * nb..(r + 1) * nb];
                    let mut acc = [0f32; 16];
                    let mut off = 0f32;
                    for ((b, xs), s) in row.iter().zip(xv.chunks_exact(QK)).zip(&xsum[v * nb..]) {
                        let mut p = [0f32; 16];
                        for j in 0..16 {
                            p[j] = ((b.qs[j] & 0x0F) as f32)
                                .mul_add(xs[j], (b.qs[j] >> 4) as f32 * xs[j + 16]);
                        }
                        let d = b.d();
                        for j in 0..16 {
                            acc[j] = d.mul_add(p[j], acc[j]);
                        }
                        off += b.m() * s;
                    }
                    hsum16_512(&acc) + off
                }
                QData::Q80(blocks) => {
                    let row = &blocks[r * nb..(r + 1) * nb];
                    let mut acc = [0f32; 16];
                    for (b, xs) in row.iter().zip(xv.chunks_exact(QK)) {
                        let mut p = [0f32; 16];
                        for j in 0..16 {
                            p[j] =
                                (b.qs[j] as f32).mul_add(xs[j], b.qs[j + 16] as f32 * xs[j + 16]);
                        }
                        let d = b.d();
                        for j in 0..16 {
                            acc[j] = d.mul_add(p[j], acc[j]);
                        }
                    }
                    hsum16_512(&acc)
                }
                QData::F32(v) => dot_generic(&v[r * w.cols..(r + 1) * w.cols], xv),
            };
        }
    }
}

#[inline(always)]
pub(super) fn hsum16(a: &[f32; 16]) -> f32 {
    let mut s = [0f32; 8];
    for j in 0..8 {
        s[j] = a[j] + a[j + 8];
    }
    (s[0] + s[4]) + (s[1] + s[5]) + ((s[2] + s[6]) + (s[3] + s[7]))
}

/// The sum of 16 lanes in the order of `_mm512_reduce_add_ps` (halves, quarters, then lanes
/// `(0+2) + (1+3)`), which the AVX-512 kernel of [`rows_dot_generic`] reduces with.
#[inline(always)]
fn hsum16_512(a: &[f32; 16]) -> f32 {
    let mut s = [0f32; 8];
    for j in 0..8 {
        s[j] = a[j] + a[j + 8];
    }
    let t = [s[0] + s[4], s[1] + s[5], s[2] + s[6], s[3] + s[7]];
    (t[0] + t[2]) + (t[1] + t[3])
}

/// Dot product with 16 independent accumulators (vectorisable without reassociation).
#[inline(always)]
pub(super) fn dot_generic(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    let mut ca = a.chunks_exact(16);
    let mut cb = b.chunks_exact(16);
    for (x, y) in (&mut ca).zip(&mut cb) {
        // Fixed-size chunks: two 8-lane (or one 16-lane) multiply-adds per chunk.
        let (x, y): (&[f32; 16], &[f32; 16]) = (x.try_into().unwrap(), y.try_into().unwrap());
        for j in 0..16 {
            acc[j] += x[j] * y[j];
        }
    }
    let mut tail = 0f32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    hsum16(&acc) + tail
}

/// `o[e] = Σ_j p_j · vc[j·stride + col + e]` for `e < W`, summed in order of `j` from 0 (as
/// `o.fill(0.0)` then `o += p_j · v_j` one position at a time), with the `W` sums in registers.
#[inline(always)]
fn weighted_rows<const W: usize>(p: &[f32], vc: &[f32], stride: usize, col: usize, o: &mut [f32]) {
    let mut acc = [0f32; W];
    for (j, &pj) in p.iter().enumerate() {
        if W >= 16 && j + PF < p.len() {
            prefetch(&vc[(j + PF) * stride + col..(j + PF) * stride + col + W]);
        }
        let v: &[f32; W] = vc[j * stride + col..j * stride + col + W]
            .try_into()
            .unwrap();
        for e in 0..W {
            acc[e] += pj * v[e];
        }
    }
    o[..W].copy_from_slice(&acc);
}

/// How many cached positions ahead [`attend_generic`] prefetches (the cache rows of one head
/// are `stride` apart, which the hardware prefetchers follow late).
const PF: usize = 6;

/// Hints the CPU to bring `x` into the cache (a no-op off x86-64); changes no result.
#[inline(always)]
fn prefetch(x: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    for c in x.chunks(16) {
        // SAFETY: a prefetch reads nothing and writes nothing; `c` is a valid address.
        unsafe {
            std::arch::x86_64::_mm_prefetch(c.as_ptr() as *const i8, std::arch::x86_64::_MM_HINT_T0)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// The query heads `q` (`g = q.len() / hd` heads of `hd` values, one after another) that share
/// one KV head, against `l = s.len() / g` cached positions: for each head `h`, `s_hj = (q_h ·
/// k_j)·scale`, softmax, `o_h = Σ_j p_hj v_j`, where `k_j = kc[j·stride + off..][..hd]` (and
/// `v_j` likewise); `s` is scratch (head `h`'s scores at `h·l..`). Each head gets exactly what
/// [`dot_generic`], [`softmax`] and one position at a time `o += p_j · v_j` give, whatever `g`;
/// each key row is read once for the `g` heads, and the output sums stay in registers.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn attend_generic(
    q: &[f32],
    kc: &[f32],
    vc: &[f32],
    stride: usize,
    off: usize,
    hd: usize,
    scale: f32,
    s: &mut [f32],
    o: &mut [f32],
) {
    let g = q.len() / hd;
    let l = s.len() / g;
    debug_assert_eq!((q.len(), o.len(), s.len()), (g * hd, g * hd, g * l));
    for j in 0..l {
        if j + PF < l {
            prefetch(&kc[(j + PF) * stride + off..(j + PF) * stride + off + hd]);
        }
        let k = &kc[j * stride + off..j * stride + off + hd];
        for (h, qh) in q.chunks_exact(hd).enumerate() {
            s[h * l + j] = dot_generic(qh, k) * scale;
        }
    }
    for (p, oh) in s.chunks_exact_mut(l).zip(o.chunks_exact_mut(hd)) {
        softmax(p);
        let mut c = 0;
        while c + 64 <= hd {
            weighted_rows::<64>(p, vc, stride, off + c, &mut oh[c..]);
            c += 64;
        }
        while c + 16 <= hd {
            weighted_rows::<16>(p, vc, stride, off + c, &mut oh[c..]);
            c += 16;
        }
        while c < hd {
            weighted_rows::<1>(p, vc, stride, off + c, &mut oh[c..]);
            c += 1;
        }
    }
}

/// Softmax in place.
#[inline(always)]
pub(super) fn softmax(s: &mut [f32]) {
    let max = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0f32;
    for v in s.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    for v in s.iter_mut() {
        *v /= sum;
    }
}

/// Signature of [`attend_generic`] and its compiled variants.
pub(super) type Attend =
    fn(&[f32], &[f32], &[f32], usize, usize, usize, f32, &mut [f32], &mut [f32]);

pub(super) type RowsDot = fn(&QRows, usize, &[f32], &[f32], usize, &mut [f32]);

#[derive(Clone, Copy)]
pub(super) struct Kernels {
    pub(super) rows_dot: RowsDot,
    pub(super) attend: Attend,
}

pub(super) fn plain() -> Kernels {
    Kernels {
        rows_dot: |w, r0, x, xs, n, o| rows_dot_generic(w, r0, x, xs, n, o),
        attend: |q, k, v, st, off, hd, sc, s, o| attend_generic(q, k, v, st, off, hd, sc, s, o),
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;

    /// AVX-512 row dots: 16 lanes; each weight block is widened to f32 once and used
    /// against every vector.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma,f16c")]
    fn rows_dot_512(w: &QRows, r0: usize, x: &[f32], xs: &[f32], nvec: usize, o: &mut [f32]) {
        use std::arch::x86_64::*;
        let nb = w.cols / QK;
        assert!(nvec >= 1 && x.len() >= nvec * nb * QK && xs.len() >= nvec * nb);
        let rows = o.len() / nvec;
        match &w.data {
            QData::Q41(v) => {
                assert!(v.len() >= (r0 + rows) * nb);
                let mask = _mm_set1_epi8(0x0F);
                for (i, out) in o.chunks_exact_mut(nvec).enumerate() {
                    let row = &v[(r0 + i) * nb..(r0 + i + 1) * nb];
                    for v0 in (0..nvec).step_by(MAX_VECS) {
                        let n = (nvec - v0).min(MAX_VECS);
                        let mut acc = [_mm512_setzero_ps(); MAX_VECS];
                        let mut off = [0f32; MAX_VECS];
                        for (bi, b) in row.iter().enumerate() {
                            // SAFETY: `b.qs` is 16 bytes; every x block read is inside
                            // `x` (asserted above).
                            unsafe {
                                let q = _mm_loadu_si128(b.qs.as_ptr() as *const __m128i);
                                let lo = _mm_and_si128(q, mask);
                                let hi = _mm_and_si128(_mm_srli_epi16(q, 4), mask);
                                let flo = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(lo));
                                let fhi = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(hi));
                                // d and m from f16 (exact), as one conversion.
                                let dm = _mm_cvtph_ps(_mm_set1_epi32(
                                    ((b.m as u32) << 16 | b.d as u32) as i32,
                                ));
                                let d = _mm512_broadcastss_ps(dm);
                                let m = _mm_cvtss_f32(_mm_movehdup_ps(dm));
                                for k in 0..n {
                                    let px = x.as_ptr().add((v0 + k) * w.cols + bi * QK);
                                    let x0 = _mm512_loadu_ps(px);
                                    let x1 = _mm512_loadu_ps(px.add(16));
                                    let p = _mm512_fmadd_ps(flo, x0, _mm512_mul_ps(fhi, x1));
                                    acc[k] = _mm512_fmadd_ps(d, p, acc[k]);
                                    off[k] += m * xs[(v0 + k) * nb + bi];
                                }
                            }
                        }
                        for k in 0..n {
                            out[v0 + k] = _mm512_reduce_add_ps(acc[k]) + off[k];
                        }
                    }
                }
            }
            QData::Q80(v) => {
                assert!(v.len() >= (r0 + rows) * nb);
                for (i, out) in o.chunks_exact_mut(nvec).enumerate() {
                    let row = &v[(r0 + i) * nb..(r0 + i + 1) * nb];
                    for v0 in (0..nvec).step_by(MAX_VECS) {
                        let n = (nvec - v0).min(MAX_VECS);
                        let mut acc = [_mm512_setzero_ps(); MAX_VECS];
                        for (bi, b) in row.iter().enumerate() {
                            // SAFETY: `b.qs` is 32 bytes; x blocks in bounds (asserted).
                            unsafe {
                                let q0 = _mm_loadu_si128(b.qs.as_ptr() as *const __m128i);
                                let q1 = _mm_loadu_si128(b.qs.as_ptr().add(16) as *const __m128i);
                                let f0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q0));
                                let f1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q1));
                                let d =
                                    _mm512_broadcastss_ps(_mm_cvtph_ps(_mm_set1_epi16(b.d as i16)));
                                for k in 0..n {
                                    let px = x.as_ptr().add((v0 + k) * w.cols + bi * QK);
                                    let x0 = _mm512_loadu_ps(px);
                                    let x1 = _mm512_loadu_ps(px.add(16));
                                    let p = _mm512_fmadd_ps(f0, x0, _mm512_mul_ps(f1, x1));
                                    acc[k] = _mm512_fmadd_ps(d, p, acc[k]);
                                }
                            }
                        }
                        for k in 0..n {
                            out[v0 + k] = _mm512_reduce_add_ps(acc[k]);
                        }
                    }
                }
            }
            QData::F32(_) => rows_dot_generic(w, r0, x, xs, nvec, o),
        }
    }
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma,f16c")]
    fn attend_512(
        q: &[f32],
        k: &[f32],
        v: &[f32],
        st: usize,
        off: usize,
        hd: usize,
        sc: f32,
        s: &mut [f32],
        o: &mut [f32],
    ) {
        attend_generic(q, k, v, st, off, hd, sc, s, o)
    }
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn attend_256(
        q: &[f32],
        k: &[f32],
        v: &[f32],
        st: usize,
        off: usize,
        hd: usize,
        sc: f32,
        s: &mut [f32],
        o: &mut [f32],
    ) {
        attend_generic(q, k, v, st, off, hd, sc, s, o)
    }
    #[target_feature(enable = "avx2,fma,f16c")]
    fn rows_dot_256(w: &QRows, r0: usize, x: &[f32], xs: &[f32], n: usize, o: &mut [f32]) {
        rows_dot_generic(w, r0, x, xs, n, o)
    }

    pub(super) fn avx512(cpu: CpuFeatures) -> Option<Kernels> {
        if cpu.avx512() && cpu.f16c() {
            // SAFETY: the CPU has every feature these functions are compiled for.
            return Some(Kernels {
                rows_dot: |w, r0, x, xs, n, o| unsafe { rows_dot_512(w, r0, x, xs, n, o) },
                attend: |q, k, v, st, off, hd, sc, s, o| unsafe {
                    attend_512(q, k, v, st, off, hd, sc, s, o)
                },
            });
        }
        None
    }

    pub(super) fn avx2(cpu: CpuFeatures) -> Option<Kernels> {
        if cpu.avx2_fma() && cpu.f16c() {
            // SAFETY: as above.
            return Some(Kernels {
                rows_dot: |w, r0, x, xs, n, o| unsafe { rows_dot_256(w, r0, x, xs, n, o) },
                attend: |q, k, v, st, off, hd, sc, s, o| unsafe {
                    attend_256(q, k, v, st, off, hd, sc, s, o)
                },
            });
        }
        None
    }
}

/// Every kernel set a CPU with the features `cpu` can run, best first. On AArch64 the plain
/// set is the NEON one (NEON is part of the baseline target, and LLVM vectorises these loops
/// with it).
#[cfg_attr(
    not(target_arch = "x86_64"),
    allow(unused_variables, clippy::vec_init_then_push)
)]
pub(super) fn available(cpu: CpuFeatures) -> Vec<(&'static str, Kernels)> {
    let mut v = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(k) = x86::avx512(cpu) {
            v.push(("avx512", k));
        }
        if let Some(k) = x86::avx2(cpu) {
            v.push(("avx2", k));
        }
    }
    v.push(("plain", plain()));
    v
}

/// The fastest kernel set for `cpu` ([`CpuFeatures::portable`]: the portable one), with its name.
pub(super) fn best(cpu: CpuFeatures) -> (&'static str, Kernels) {
    available(cpu)[0]
}
