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
//! in lane `b mod 16` of a second accumulator; each accumulator is reduced by [`hsum16`].
//! Integer sums are exact and `fma`/`mul` are correctly rounded everywhere, so the AVX-512
//! VNNI kernel, the AVX2 build of the portable kernel and the portable kernel agree bit for
//! bit, and batched decoding equals one sequence at a time.

use pgraphrag_core::simd::CpuFeatures;

use super::{MAX_VECS, QData, QK, QRows, f16_bits, hsum16};

/// The storage kinds the 8-bit path handles.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    /// 4-bit unsigned weights with a scale and a minimum per block.
    Q41,
    /// 8-bit signed weights with a scale per block.
    Q80,
}

/// A weight matrix repacked for the 8-bit activation kernels.
pub(super) struct I8Rows {
    /// Blocks per row, rounded up to an even number (padding blocks are zero).
    nbp: usize,
    kind: Kind,
    /// `Q4_1`: 32 bytes of nibbles per pair (the two blocks' bytes as stored); `Q8_0`: 64
    /// reordered bytes per pair.
    qs: Vec<u8>,
    /// `rows × nbp` block scales (f16 bits, as stored: the kernels are bound by reading
    /// weights, so the repacking adds no bytes).
    d: Vec<u16>,
    /// `rows × nbp` block minimums (`Q4_1` only; f16 bits).
    m: Vec<u16>,
}

impl I8Rows {
    /// Repacks `q`; `None` when its rows are not `Q4_1` or `Q8_0` blocks.
    pub(super) fn from_qrows(q: &QRows) -> Option<I8Rows> {
        let nb = q.cols / QK;
        let nbp = nb.div_ceil(2) * 2;
        let (kind, bytes_per_pair) = match &q.data {
            QData::Q41(_) => (Kind::Q41, 32),
            QData::Q80(_) => (Kind::Q80, 64),
            QData::F32(_) => return None,
        };
        let mut qs = vec![0u8; q.rows * nbp / 2 * bytes_per_pair];
        let mut d = vec![0u16; q.rows * nbp];
        let mut m = if kind == Kind::Q41 {
            vec![0u16; q.rows * nbp]
        } else {
            Vec::new()
        };
        for r in 0..q.rows {
            for b in 0..nb {
                let (pair, second) = (b / 2, b % 2);
                let base = (r * nbp / 2 + pair) * bytes_per_pair;
                match &q.data {
                    QData::Q41(v) => {
                        let blk = &v[r * nb + b];
                        qs[base + 16 * second..base + 16 * second + 16].copy_from_slice(&blk.qs);
                        d[r * nbp + b] = blk.d;
                        m[r * nbp + b] = blk.m;
                    }
                    QData::Q80(v) => {
                        let blk = &v[r * nb + b];
                        for j in 0..16 {
                            qs[base + 16 * second + j] = blk.qs[j] as u8;
                            qs[base + 32 + 16 * second + j] = blk.qs[j + 16] as u8;
                        }
                        d[r * nbp + b] = blk.d;
                    }
                    QData::F32(_) => unreachable!("returned above"),
                }
            }
        }
        Some(I8Rows {
            nbp,
            kind,
            qs,
            d,
            m,
        })
    }

    /// The 64 weights of pair `p` of row `r` in lane order, widened to i32.
    #[inline(always)]
    fn pair(&self, r: usize, p: usize) -> [i32; 64] {
        let mut w = [0i32; 64];
        match self.kind {
            Kind::Q41 => {
                let q = &self.qs[(r * self.nbp / 2 + p) * 32..][..32];
                for j in 0..32 {
                    w[j] = (q[j] & 0x0F) as i32;
                    w[32 + j] = (q[j] >> 4) as i32;
                }
            }
            Kind::Q80 => {
                let q = &self.qs[(r * self.nbp / 2 + p) * 64..][..64];
                for j in 0..64 {
                    w[j] = q[j] as i8 as i32;
                }
            }
        }
        w
    }
}

/// Activation vectors quantized for [`I8Rows`] of one column count.
#[derive(Default)]
pub(super) struct QuantX {
    nbp: usize,
    /// `nvec × nbp × 32` values in lane order.
    q: Vec<i8>,
    /// `nvec × nbp` block scales.
    dx: Vec<f32>,
    /// `nvec × nbp/2 × 16`: each pair's scales spread over its lanes.
    dpat: Vec<f32>,
    /// `nvec × nbp` exact f32 block sums (for `Q4_1`'s minimums).
    xsum: Vec<f32>,
}

impl QuantX {
    /// Quantizes the `nvec` vectors of `x` (`nvec × cols`, `cols` a multiple of 32): per block,
    /// `d = max|x|/127`, `q = round(x/d)` (half away from zero), as ggml's `Q8` formats.
    pub(super) fn quantize(&mut self, x: &[f32], cols: usize, nvec: usize) {
        let nb = cols / QK;
        let nbp = nb.div_ceil(2) * 2;
        self.nbp = nbp;
        self.q.clear();
        self.q.resize(nvec * nbp * QK, 0);
        self.dx.clear();
        self.dx.resize(nvec * nbp, 0.0);
        self.xsum.clear();
        self.xsum.resize(nvec * nbp, 0.0);
        self.dpat.clear();
        self.dpat.resize(nvec * nbp / 2 * 16, 0.0);
        for v in 0..nvec {
            for b in 0..nb {
                let xs = &x[v * cols + b * QK..v * cols + (b + 1) * QK];
                let amax = xs.iter().fold(0f32, |a, &y| a.max(y.abs()));
                let d = amax / 127.0;
                let id = if d > 0.0 { 1.0 / d } else { 0.0 };
                let (pair, second) = (b / 2, b % 2);
                let base = (v * nbp / 2 + pair) * 64;
                for j in 0..QK {
                    let q = (xs[j] * id).round().clamp(-127.0, 127.0) as i8;
                    let at = if j < 16 {
                        base + 16 * second + j
                    } else {
                        base + 32 + 16 * second + (j - 16)
                    };
                    self.q[at] = q;
                }
                self.dx[v * nbp + b] = d;
                self.xsum[v * nbp + b] = xs.iter().sum();
            }
            for p in 0..nbp / 2 {
                let pat = &mut self.dpat[(v * nbp / 2 + p) * 16..][..16];
                for (l, s) in pat.iter_mut().enumerate() {
                    *s = self.dx[v * nbp + 2 * p + (l / 4) % 2];
                }
            }
        }
    }
}

/// `out[i·nvec + v] = row(r0 + i) · x_v` on the 8-bit path.
pub(super) type RowsDotI8 = fn(&I8Rows, usize, &QuantX, usize, &mut [f32]);

/// The portable kernel (the definition the others reproduce bit for bit).
#[inline(always)]
fn rows_dot_generic(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &mut [f32]) {
    let (nbp, npair) = (w.nbp, w.nbp / 2);
    debug_assert_eq!(x.nbp, nbp);
    for (i, o) in out.chunks_exact_mut(nvec).enumerate() {
        let r = r0 + i;
        for v0 in (0..nvec).step_by(MAX_VECS) {
            let n = (nvec - v0).min(MAX_VECS);
            let mut acc = [[0f32; 16]; MAX_VECS];
            for p in 0..npair {
                let wp = w.pair(r, p);
                let (da, db) = (
                    f16_bits(w.d[r * nbp + 2 * p]),
                    f16_bits(w.d[r * nbp + 2 * p + 1]),
                );
                for k in 0..n {
                    let v = v0 + k;
                    let xq = &x.q[(v * npair + p) * 64..][..64];
                    let (sa, sb) = (da * x.dx[v * nbp + 2 * p], db * x.dx[v * nbp + 2 * p + 1]);
                    for l in 0..16 {
                        let mut s = 0i32;
                        for t in 0..4 {
                            s += wp[4 * l + t] * xq[4 * l + t] as i32;
                        }
                        let sc = if (l / 4) % 2 == 0 { sa } else { sb };
                        acc[k][l] = (s as f32).mul_add(sc, acc[k][l]);
                    }
                }
            }
            for k in 0..n {
                let v = v0 + k;
                let mut r_val = hsum16(&acc[k]);
                if w.kind == Kind::Q41 {
                    let mut off = [0f32; 16];
                    for b in 0..nbp {
                        off[b % 16] =
                            f16_bits(w.m[r * nbp + b]).mul_add(x.xsum[v * nbp + b], off[b % 16]);
                    }
                    r_val += hsum16(&off);
                }
                o[v] = r_val;
            }
        }
    }
}

/// The buffer sizes every SIMD kernel reads within (checked once per call, not per load).
fn check_sizes(w: &I8Rows, r0: usize, x: &QuantX, nvec: usize, out: &[f32]) {
    let (nbp, npair) = (w.nbp, w.nbp / 2);
    let rows = out.len() / nvec;
    assert!(x.nbp == nbp && x.q.len() >= nvec * nbp * QK && x.dpat.len() >= nvec * npair * 16);
    assert!(w.d.len() >= (r0 + rows) * nbp);
    let bytes = if w.kind == Kind::Q41 { 32 } else { 64 };
    assert!(w.qs.len() >= (r0 + rows) * npair * bytes);
    if w.kind == Kind::Q41 {
        assert!(w.m.len() >= (r0 + rows) * nbp && x.xsum.len() >= nvec * nbp);
    }
}

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
    use super::super::tests::{pseudo_random, qrows, quantized};
    use super::*;
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
