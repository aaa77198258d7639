//! Decoding with 8-bit activations ([`crate::Activations::Q8`]), as candle's and llama.cpp's
//! CPU matmuls do: each 32-value block of the activation vector is quantized to `i8` with one
//! f32 scale, and a weight block's dot product with it is an exact integer sum scaled once.
//!
//! The weights are repacked at load into [`I8Rows`]: blocks in pairs, the pair's 64 weights in
//! the order `[A 0..16, B 0..16, A 16..32, B 16..32]` (for `Q4_1` that is what unpacking the
//! two blocks' nibbles gives, for `Q8_0` the bytes are reordered), scales and minimums as f32
//! arrays. The activations are quantized once per vector into the same order.
//!
//! The arithmetic is defined lane by lane so that every implementation gives bit-identical
//! results: lane `l` (0..16) of a pair is the integer sum of the 4 products at `4l..4l+4`
//! (lanes 0–3 and 8–11 belong to block A, 4–7 and 12–15 to block B), accumulated as
//! `acc[l] = fma(isum, d_w·d_x, acc[l])`; `Q4_1`'s minimum term `Σ_b m_b·Σx_b` is accumulated
//! in lane `b mod 16` of a second accumulator; each accumulator is reduced by
//! [`hsum16`](super::kernels::hsum16).
//! Integer sums are exact and `fma`/`mul` are correctly rounded everywhere, so the AVX-512
//! VNNI kernel, the AVX2 build of the portable kernel and the portable kernel agree bit for
//! bit, and batched decoding equals one sequence at a time.

use pgraphrag_core::simd::CpuFeatures;

mod generic;

use generic::rows_dot_generic;
pub(super) use generic::{I8Rows, QuantX, RowsDotI8};

#[cfg(target_arch = "aarch64")]
mod arm;
#[cfg(target_arch = "x86_64")]
mod x86;

/// Every 8-bit kernel a CPU with the features `cpu` can run, best first.
pub(super) fn available(cpu: CpuFeatures) -> Vec<(&'static str, RowsDotI8)> {
    let mut v: Vec<(&'static str, RowsDotI8)> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(k) = x86::vnni(cpu) {
            v.push(("avx512vnni", k));
        }
        if let Some(k) = x86::avx2(cpu) {
            v.push(("avx2", k));
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if let Some(k) = arm::dotprod(cpu) {
            v.push(("neon-dotprod", k));
        }
        if let Some(k) = arm::neon(cpu) {
            v.push(("neon", k));
        }
    }
    v.push(("plain", |w, r0, x, n, o| rows_dot_generic(w, r0, x, n, o)));
    v
}

/// The fastest 8-bit kernel for `cpu` ([`CpuFeatures::portable`]: the portable one), with its name.
pub(super) fn best(cpu: CpuFeatures) -> (&'static str, RowsDotI8) {
    available(cpu)[0]
}

#[cfg(all(test, feature = "candle"))]
mod tests {
    use super::*;
    use crate::native::testing::{pseudo_random, qrows, quantized};
    use candle_core::quantized::GgmlDType;

    #[test]
    fn every_kernel_is_bit_identical_and_close_to_the_exact_product() {
        let all = available(CpuFeatures::detect());
        // 7 blocks per row: odd, so the padding block is exercised.
        for (dtype, cols) in [
            (GgmlDType::Q4_1, 224),
            (GgmlDType::Q8_0, 224),
            (GgmlDType::Q4_1, 768),
            (GgmlDType::Q8_0, 1024),
        ] {
            let rows = 37;
            let q = qrows(&quantized(rows, cols, dtype, 11));
            let i8 = I8Rows::from_qrows(&q).unwrap();
            let dense = q.dense();
            for nvec in [1usize, 3, 9] {
                let x = pseudo_random(cols * nvec, 5 + nvec as u64);
                let mut qx = QuantX::default();
                qx.quantize(&x, cols, nvec);
                let mut first: Option<Vec<f32>> = None;
                for (name, k) in &all {
                    let mut out = vec![0f32; (rows - 3) * nvec];
                    k(&i8, 3, &qx, nvec, &mut out);
                    for (i, chunk) in out.chunks_exact(nvec).enumerate() {
                        for (v, got) in chunk.iter().enumerate() {
                            let row = &dense[(i + 3) * cols..(i + 4) * cols];
                            let xv = &x[v * cols..(v + 1) * cols];
                            let want: f64 =
                                row.iter().zip(xv).map(|(a, b)| *a as f64 * *b as f64).sum();
                            let norm: f64 = row
                                .iter()
                                .zip(xv)
                                .map(|(a, b)| (*a * *b).abs() as f64)
                                .sum();
                            assert!(
                                (*got as f64 - want).abs() < 2e-2 * norm.max(1.0),
                                "{name} {dtype:?} row {i} vec {v}: {got} vs {want}"
                            );
                        }
                    }
                    match &first {
                        None => first = Some(out),
                        Some(f) => assert!(
                            f.iter().zip(&out).all(|(a, b)| a.to_bits() == b.to_bits()),
                            "{name} {dtype:?} nvec {nvec}: not bit-identical to {}",
                            all[0].0
                        ),
                    }
                }
                // One vector at a time gives the same bits as the batch.
                let f = first.unwrap();
                for v in 0..nvec {
                    let mut one = QuantX::default();
                    one.quantize(&x[v * cols..(v + 1) * cols], cols, 1);
                    let mut out = vec![0f32; rows - 3];
                    (all[0].1)(&i8, 3, &one, 1, &mut out);
                    for (i, got) in out.iter().enumerate() {
                        assert_eq!(got.to_bits(), f[i * nvec + v].to_bits());
                    }
                }
            }
        }
    }

    #[test]
    fn quantization_round_trips_within_half_a_step() {
        let x = pseudo_random(64, 9);
        let mut qx = QuantX::default();
        qx.quantize(&x, 64, 1);
        for b in 0..2 {
            let d = qx.dx[b];
            for j in 0..32 {
                let at = if j < 16 {
                    16 * b + j
                } else {
                    32 + 16 * b + j - 16
                };
                let back = qx.q[at] as f32 * d;
                assert!((back - x[b * 32 + j]).abs() <= d * 0.5 + 1e-7);
            }
        }
        // An all-zero block quantizes to zeros with scale 0 (no division by zero).
        qx.quantize(&[0.0; 32], 32, 1);
        assert!(qx.q.iter().all(|&q| q == 0) && qx.dx[0] == 0.0);
    }
}
