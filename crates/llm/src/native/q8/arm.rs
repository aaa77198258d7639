//! The AArch64 8-bit kernels: NEON with the dot-product extension (`sdot`, four products
//! summed into each 32-bit lane in one instruction) and plain NEON (`smull` and pairwise adds,
//! for Armv8.0 CPUs). Both give lane `l` of a pair its exact 4-product integer sum, so the
//! f32 steps that follow are the portable kernel's, lane by lane, and the results its bits.

use std::arch::aarch64::*;

use pgraphrag_core::simd::CpuFeatures;

use super::generic::{I8Rows, Kind, QuantX, RowsDotI8, check_sizes};
use crate::native::formats::f16_bits;
use crate::native::kernels::hsum16;

/// Vectors per pass over a row: four 4-lane accumulators each, so four vectors keep 16 of the
/// 32 NEON registers for accumulators. The grouping does not change any (row, vector) value.
const NEON_VECS: usize = 4;

/// The integer sums of 4 consecutive products of 16 weight and 16 activation bytes.
trait Dot4 {
    /// `[Σ_{t<4} w[t]·x[t], Σ w[4+t]·x[4+t], …]`, exact.
    ///
    /// # Safety
    /// The CPU has the features the implementation needs.
    unsafe fn dot4(w: int8x16_t, x: int8x16_t) -> int32x4_t;
}

/// `smull`/`smull2` to 16-bit products (exact: at most 127·127), `saddlp` to pairs, `addp`
/// to fours.
struct Widen;

impl Dot4 for Widen {
    #[inline(always)]
    unsafe fn dot4(w: int8x16_t, x: int8x16_t) -> int32x4_t {
        // SAFETY: register arithmetic; the caller runs on a CPU with NEON (the contract).
        unsafe {
            let lo = vmull_s8(vget_low_s8(w), vget_low_s8(x));
            let hi = vmull_high_s8(w, x);
            vpaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi))
        }
    }
}

/// One `sdot` (the Rust intrinsic is not stable in this toolchain, so inline assembly).
struct Sdot;

impl Dot4 for Sdot {
    #[inline(always)]
    unsafe fn dot4(w: int8x16_t, x: int8x16_t) -> int32x4_t {
        // SAFETY: `sdot` reads and writes registers only; the caller runs on a CPU with the
        // dot-product extension (the contract).
        unsafe {
            let mut acc = vdupq_n_s32(0);
            std::arch::asm!(
                ".arch_extension dotprod",
                "sdot {acc:v}.4s, {w:v}.16b, {x:v}.16b",
                acc = inout(vreg) acc,
                w = in(vreg) w,
                x = in(vreg) x,
                options(pure, nomem, nostack, preserves_flags),
            );
            acc
        }
    }
}

/// Four stored f16 values to f32, exactly (zero, subnormals, infinities and NaN included):
/// the magnitude's bits moved into the f32 exponent and mantissa and scaled by 2¹¹², the
/// exponent forced to 255 for infinities and NaN, the sign put back.
///
/// # Safety
/// `p` points to 4 readable `u16`.
#[inline(always)]
unsafe fn f16x4(p: *const u16) -> float32x4_t {
    // SAFETY: `p` points to 4 `u16` (the contract).
    unsafe {
        let h = vmovl_u16(vld1_u16(p));
        let mag = vandq_u32(h, vdupq_n_u32(0x7FFF));
        let shifted = vshlq_n_u32::<13>(mag);
        let finite = vmulq_f32(
            vreinterpretq_f32_u32(shifted),
            vdupq_n_f32(f32::from_bits(0x7780_0000)),
        );
        let special = vreinterpretq_f32_u32(vorrq_u32(shifted, vdupq_n_u32(0x7F80_0000)));
        let is_special = vcgeq_u32(mag, vdupq_n_u32(0x7C00));
        let f = vreinterpretq_u32_f32(vbslq_f32(is_special, special, finite));
        let sign = vshlq_n_u32::<16>(vandq_u32(h, vdupq_n_u32(0x8000)));
        vreinterpretq_f32_u32(vorrq_u32(f, sign))
    }
}

/// `n` stored f16 values from `p` into `out[..n]` as f32.
///
/// # Safety
/// `p` points to `n` readable `u16`; `out.len() >= n`.
#[inline(always)]
unsafe fn f16_row(p: *const u16, n: usize, out: &mut [f32]) {
    let full = n / 4 * 4;
    // SAFETY: reads `p[..n]` and writes `out[..n]` (the contract).
    unsafe {
        for b in (0..full).step_by(4) {
            vst1q_f32(out.as_mut_ptr().add(b), f16x4(p.add(b)));
        }
        for b in full..n {
            out[b] = f16_bits(*p.add(b));
        }
    }
}

/// The kernel body, for either way of summing products.
///
/// # Safety
/// The CPU has what `D` needs.
#[inline(always)]
unsafe fn rows_dot<D: Dot4>(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &mut [f32]) {
    let (nbp, npair) = (w.nbp, w.nbp / 2);
    check_sizes(w, r0, x, nvec, out);
    let q41 = w.kind == Kind::Q41;
    let (mut d, mut m) = (vec![0f32; nbp], vec![0f32; if q41 { nbp } else { 0 }]);
    // SAFETY: every load below is inside the buffers whose sizes `check_sizes` asserts.
    unsafe {
        let mask = vdupq_n_u8(0x0F);
        for (i, o) in out.chunks_exact_mut(nvec).enumerate() {
            let r = r0 + i;
            f16_row(w.d.as_ptr().add(r * nbp), nbp, &mut d);
            if q41 {
                f16_row(w.m.as_ptr().add(r * nbp), nbp, &mut m);
            }
            for v0 in (0..nvec).step_by(NEON_VECS) {
                let n = (nvec - v0).min(NEON_VECS);
                let mut acc = [[vdupq_n_f32(0.0); 4]; NEON_VECS];
                for p in 0..npair {
                    // The pair's 64 weights as 4 × 16 lanes (lanes 4t..4t+4 from vector t).
                    let wv: [int8x16_t; 4] = if q41 {
                        let q = w.qs.as_ptr().add((r * npair + p) * 32);
                        let (q0, q1) = (vld1q_u8(q), vld1q_u8(q.add(16)));
                        [
                            vreinterpretq_s8_u8(vandq_u8(q0, mask)),
                            vreinterpretq_s8_u8(vandq_u8(q1, mask)),
                            vreinterpretq_s8_u8(vshrq_n_u8::<4>(q0)),
                            vreinterpretq_s8_u8(vshrq_n_u8::<4>(q1)),
                        ]
                    } else {
                        let q = w.qs.as_ptr().add((r * npair + p) * 64) as *const i8;
                        std::array::from_fn(|t| vld1q_s8(q.add(16 * t)))
                    };
                    let (da, db) = (d[2 * p], d[2 * p + 1]);
                    for (k, acc) in acc.iter_mut().enumerate().take(n) {
                        let v = v0 + k;
                        let px = x.q.as_ptr().add((v * npair + p) * 64);
                        let sc = [
                            vdupq_n_f32(da * x.dx[v * nbp + 2 * p]),
                            vdupq_n_f32(db * x.dx[v * nbp + 2 * p + 1]),
                        ];
                        for t in 0..4 {
                            let s = D::dot4(wv[t], vld1q_s8(px.add(16 * t)));
                            acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(s), sc[t % 2]);
                        }
                    }
                }
                for (k, acc) in acc.iter().enumerate().take(n) {
                    let v = v0 + k;
                    let mut lanes = [0f32; 16];
                    for (t, a) in acc.iter().enumerate() {
                        vst1q_f32(lanes.as_mut_ptr().add(4 * t), *a);
                    }
                    let mut val = hsum16(&lanes);
                    if q41 {
                        // Lane b mod 16 of the minimum term, in block order, as the portable
                        // kernel.
                        let xs = x.xsum.as_ptr().add(v * nbp);
                        let mut off = [vdupq_n_f32(0.0); 4];
                        let full = nbp / 16 * 16;
                        for b in (0..full).step_by(16) {
                            for (t, o) in off.iter_mut().enumerate() {
                                *o = vfmaq_f32(
                                    *o,
                                    vld1q_f32(m.as_ptr().add(b + 4 * t)),
                                    vld1q_f32(xs.add(b + 4 * t)),
                                );
                            }
                        }
                        for (t, o) in off.iter().enumerate() {
                            vst1q_f32(lanes.as_mut_ptr().add(4 * t), *o);
                        }
                        for b in full..nbp {
                            lanes[b % 16] = m[b].mul_add(*xs.add(b), lanes[b % 16]);
                        }
                        val += hsum16(&lanes);
                    }
                    o[v] = val;
                }
            }
        }
    }
}

#[target_feature(enable = "neon")]
fn rows_dot_neon(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &mut [f32]) {
    // SAFETY: NEON is enabled for this function.
    unsafe { rows_dot::<Widen>(w, r0, x, nvec, out) }
}

#[target_feature(enable = "neon,dotprod")]
fn rows_dot_dotprod(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &mut [f32]) {
    // SAFETY: NEON and the dot-product extension are enabled for this function.
    unsafe { rows_dot::<Sdot>(w, r0, x, nvec, out) }
}

pub(super) fn dotprod(cpu: CpuFeatures) -> Option<RowsDotI8> {
    // SAFETY: the CPU has every feature the function is compiled for.
    cpu.neon_dotprod()
        .then_some(|w, r0, x, n, o| unsafe { rows_dot_dotprod(w, r0, x, n, o) })
}

pub(super) fn neon(cpu: CpuFeatures) -> Option<RowsDotI8> {
    // SAFETY: as above.
    cpu.neon()
        .then_some(|w, r0, x, n, o| unsafe { rows_dot_neon(w, r0, x, n, o) })
}
