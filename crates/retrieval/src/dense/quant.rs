//! The int8 option of the native forward pass ([`Precision::Int8`]): linear layers with
//! weights quantized once at load and activations quantized per token row, integer dot
//! products ([`super::qmatmul`]) and a dequantisation shared by every kernel set.
//!
//! * **Weights**: symmetric per output channel, `q = round(w / s)` in `[-127, 127]` with
//!   `s = max|w_row| / 127`, packed into the tiles' panels; each row's sum of `q` is kept.
//! * **Activations**: asymmetric per token row, `u8` with a zero point: `s_x = (max − min) /
//!   255` over the row with 0 included in the range (so 0 is exact), `z = round(−min / s_x)`,
//!   `q = clamp(round(x / s_x + z), 0, 255)`. Per row rather than per tensor, because BERT's
//!   token rows differ widely in range.
//! * **Products**: `acc = Σ q_x · q_w` exactly in `i32`, then `y = (acc − z · Σ q_w) ·
//!   (s_x · s_w) + b` in f32 (a multiply and an add, never fused), and the GELU where the f32
//!   path fuses it. Softmax, LayerNorm, GELU and attention stay f32.

use std::str::FromStr;

use pgraphrag_core::simd::SendPtr;
use rayon::prelude::*;

use super::matmul::MR;
use super::packed::RowSegment;
use super::qmatmul::{ActFormat, QIsa, QKG, QKernels, QNR, pack_panels_i8};
use crate::{Error, Result};

/// The number format of the native forward pass's linear layers
/// ([`super::EncoderOptions::precision`]).
///
/// [`Precision::F32`] (the default) is the exact forward pass, matching PyTorch to about 1e-6.
/// [`Precision::Int8`] quantizes every linear layer (Q/K/V, attention output, intermediate,
/// output, pooler): weights per output channel once at load, activations per token row at
/// run time, integer dot products (AVX-512 VNNI, AVX2 or portable, all bit-identical); softmax,
/// LayerNorm, GELU and attention stay f32. Faster, at a measured cost in fidelity (see
/// `docs/dense.md`). Only the native CPU backend has it; embeddings cached with it are keyed
/// apart from f32 ones.
///
/// ```
/// use pgraphrag_retrieval::dense::{EncoderOptions, Precision};
/// let o = EncoderOptions { precision: Precision::Int8, ..Default::default() };
/// assert_eq!(EncoderOptions::default().precision, Precision::F32);
/// assert_eq!(o.precision.name(), "int8");
/// assert_eq!("int8".parse::<Precision>().unwrap(), Precision::Int8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    /// f32 everywhere (the default).
    #[default]
    F32,
    /// int8 linear layers, f32 elsewhere.
    Int8,
}

impl Precision {
    /// A short stable name (`f32`, `int8`), used on the command line and in cache keys.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }
}

impl FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "f32" => Ok(Precision::F32),
            "int8" => Ok(Precision::Int8),
            other => Err(Error::InvalidInput(format!(
                "unknown precision {other:?}: expected f32 or int8"
            ))),
        }
    }
}

/// A linear layer `y = x·Wᵀ + b` with int8 weights.
pub(crate) struct QuantLin {
    n: usize,
    k: usize,
    /// `k` rounded up to a multiple of [`QKG`].
    kp: usize,
    panels: Vec<i8>,
    /// Per output: the weight scale.
    scale: Vec<f32>,
    /// Per output: the sum of its quantized weights (for the activations' zero point).
    sum: Vec<i32>,
    bias: Vec<f32>,
}

impl QuantLin {
    /// Quantizes `w` (`n × k`, PyTorch's `out × in`) per output channel.
    pub(crate) fn new(w: &[f32], bias: Vec<f32>, n: usize, k: usize) -> QuantLin {
        debug_assert_eq!(w.len(), n * k);
        let mut q = vec![0i8; n * k];
        let mut scale = vec![0f32; n];
        let mut sum = vec![0i32; n];
        for (j, (row, qrow)) in w.chunks_exact(k).zip(q.chunks_exact_mut(k)).enumerate() {
            let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            if max > 0.0 && max.is_finite() {
                let s = max / 127.0;
                for (d, v) in qrow.iter_mut().zip(row) {
                    *d = (v / s).round().clamp(-127.0, 127.0) as i8;
                }
                scale[j] = s;
            }
            sum[j] = qrow.iter().map(|v| *v as i32).sum();
        }
        QuantLin {
            n,
            k,
            kp: k.next_multiple_of(QKG),
            panels: pack_panels_i8(&q, n, k),
            scale,
            sum,
            bias,
        }
    }
}

/// The quantized activations of one linear layer's input, reused across layers and batches.
#[derive(Default)]
pub(crate) struct QBuf {
    u8s: Vec<u8>,
    i16s: Vec<i16>,
    scale: Vec<f32>,
    zero: Vec<i32>,
}

/// Rounds to the nearest integer, ties to even, for |v| < 2²²: adding and subtracting 1.5·2²³
/// leaves no fraction bits. Plain adds, so it vectorises and every instruction set agrees.
#[inline(always)]
fn round_even(v: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (v + MAGIC) - MAGIC
}

/// Quantizes one row `x` into `out` (its first `x.len()` values; the rest, up to the padded
/// length, zero); returns `(scale, zero point)`. The same arithmetic for both formats and
/// every instruction set (written to vectorise: 16-lane minimum and maximum, selects).
#[inline(always)]
fn quantize_row<T: Copy + From<u8>>(x: &[f32], out: &mut [T]) -> (f32, i32) {
    let (mut lo, mut hi) = ([0f32; 16], [0f32; 16]);
    let mut chunks = x.chunks_exact(16);
    for c in &mut chunks {
        for i in 0..16 {
            lo[i] = if c[i] < lo[i] { c[i] } else { lo[i] };
            hi[i] = if c[i] > hi[i] { c[i] } else { hi[i] };
        }
    }
    let (mut l, mut h) = (0f32, 0f32);
    for &v in chunks.remainder().iter().chain(&lo).chain(&hi) {
        l = if v < l { v } else { l };
        h = if v > h { v } else { h };
    }
    let range = h - l;
    if !(range > 0.0 && range.is_finite()) {
        // All zeros (or not finite): every value quantizes to 0 and dequantises to 0 · s.
        out.fill(T::from(0));
        return (0.0, 0);
    }
    let s = range / 255.0;
    let inv = 255.0 / range;
    let z = round_even(-l * inv).clamp(0.0, 255.0);
    for (d, &v) in out.iter_mut().zip(x) {
        let r = round_even(v * inv + z);
        // NaN fails both comparisons and becomes 0; the result is in [0, 255].
        let r = if r >= 0.0 { r } else { 0.0 };
        let r = if r <= 255.0 { r } else { 255.0 };
        // SAFETY: r is finite and in [0, 255] (just above), so it fits an i32; a plain `as`
        // would add a saturating conversion that does not vectorise.
        *d = T::from(unsafe { r.to_int_unchecked::<i32>() } as u8);
    }
    out[x.len()..].fill(T::from(0));
    (s, z as i32)
}

/// Quantizes the rows of `x` (`k` values each) into `q` (`kp` each), their scales into `s`
/// and zero points into `z`.
#[inline(always)]
fn quantize_rows<T: Copy + From<u8>>(
    x: &[f32],
    k: usize,
    kp: usize,
    q: &mut [T],
    s: &mut [f32],
    z: &mut [i32],
) {
    for (r, (qr, xr)) in q.chunks_exact_mut(kp).zip(x.chunks_exact(k)).enumerate() {
        (s[r], z[r]) = quantize_row(xr, qr);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;

    /// [`quantize_rows`] to u8 compiled for AVX-512.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VL.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn quantize_u8_512(
        x: &[f32],
        k: usize,
        kp: usize,
        q: &mut [u8],
        s: &mut [f32],
        z: &mut [i32],
    ) {
        quantize_rows(x, k, kp, q, s, z)
    }

    /// [`quantize_rows`] to i16 compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn quantize_i16_256(
        x: &[f32],
        k: usize,
        kp: usize,
        q: &mut [i16],
        s: &mut [f32],
        z: &mut [i32],
    ) {
        quantize_rows(x, k, kp, q, s, z)
    }

    /// [`super::task_body`] compiled for AVX-512.
    ///
    /// # Safety
    /// As [`super::task_body`]; the CPU must have AVX-512 F, BW and VL.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn task_512(t: &Task<'_>, r0: usize, r1: usize, p0: usize, p1: usize) {
        // SAFETY: forwarded contract.
        unsafe { task_body(t, r0, r1, p0, p1) }
    }

    /// [`super::task_body`] compiled for AVX2.
    ///
    /// # Safety
    /// As [`super::task_body`]; the CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn task_256(t: &Task<'_>, r0: usize, r1: usize, p0: usize, p1: usize) {
        // SAFETY: forwarded contract.
        unsafe { task_body(t, r0, r1, p0, p1) }
    }
}

/// Quantizes the `m` rows of `x` (`m × k`) into `buf` for the kernels `qk`, in parallel.
fn quantize(x: &[f32], m: usize, k: usize, kp: usize, qk: &QKernels, buf: &mut QBuf) {
    buf.scale.resize(m, 0.0);
    buf.zero.resize(m, 0);
    const ROWS: usize = 16;
    let x = &x[..m * k];
    let sz = buf
        .scale
        .par_chunks_mut(ROWS)
        .zip(buf.zero.par_chunks_mut(ROWS));
    match qk.act {
        ActFormat::U8 => {
            if buf.u8s.len() < m * kp {
                buf.u8s.resize(m * kp, 0);
            }
            let isa = qk.isa;
            buf.u8s[..m * kp]
                .par_chunks_mut(kp * ROWS)
                .zip(x.par_chunks(k * ROWS))
                .zip(sz)
                .for_each(|((q, x), (s, z))| match isa {
                    // SAFETY: the kernel set was picked for this CPU's features.
                    #[cfg(target_arch = "x86_64")]
                    QIsa::Avx512 => unsafe { x86::quantize_u8_512(x, k, kp, q, s, z) },
                    _ => quantize_rows(x, k, kp, q, s, z),
                });
        }
        ActFormat::I16 => {
            if buf.i16s.len() < m * kp {
                buf.i16s.resize(m * kp, 0);
            }
            let isa = qk.isa;
            buf.i16s[..m * kp]
                .par_chunks_mut(kp * ROWS)
                .zip(x.par_chunks(k * ROWS))
                .zip(sz)
                .for_each(|((q, x), (s, z))| match isa {
                    // SAFETY: the kernel set was picked for this CPU's features.
                    #[cfg(target_arch = "x86_64")]
                    QIsa::Avx2 | QIsa::Avx512 => unsafe {
                        x86::quantize_i16_256(x, k, kp, q, s, z)
                    },
                    _ => quantize_rows(x, k, kp, q, s, z),
                });
        }
    }
}

/// `out[j] = (acc[j] − z · sum[j]) · (s_x · scale[j]) + bias[j]`: the one dequantisation of
/// every kernel set (a multiply, then an add; Rust never fuses them).
#[inline(always)]
fn dequant(
    acc: &[i32],
    z: i32,
    sx: f32,
    sum: &[i32],
    scale: &[f32],
    bias: &[f32],
    out: &mut [f32],
) {
    for ((((o, a), s), w), b) in out.iter_mut().zip(acc).zip(sum).zip(scale).zip(bias) {
        let v = (*a - z * *s) as f32;
        *o = v * (sx * *w) + *b;
    }
}

/// What every task of one [`qlinear`] shares.
struct Task<'a> {
    qk: &'a QKernels,
    lin: &'a QuantLin,
    /// The quantized activations: rows of `lda` bytes (only read).
    xq: SendPtr<u8>,
    lda: usize,
    scales: &'a [f32],
    zeros: &'a [i32],
    /// The output, `m × n`.
    y: SendPtr<f32>,
}

/// Rows `r0..r1`, panels `p0..p1` of the product: tiles, each dequantised into `y` as it
/// finishes.
///
/// # Safety
/// The kernel set runs on this CPU; `t.xq` holds the quantized rows `r0..r1` and `t.y` room
/// for their `n` outputs; no one else accesses rows `r0..r1`, columns `p0·QNR..p1·QNR` of `y`
/// meanwhile.
#[inline(always)]
unsafe fn task_body(t: &Task<'_>, r0: usize, r1: usize, p0: usize, p1: usize) {
    let (lin, n, kp, lda) = (t.lin, t.lin.n, t.lin.kp, t.lda);
    let mut acc = [0i32; MR * QNR];
    for p in p0..p1 {
        let (c0, c1) = (p * QNR, ((p + 1) * QNR).min(n));
        let mut r = r0;
        while r < r1 {
            let rows = t.qk.full.min(r1 - r);
            // SAFETY: the contract; the panel holds kp·QNR bytes, `acc` room for rows·QNR
            // ≤ MR·QNR values.
            unsafe {
                (t.qk.tile)(
                    rows,
                    t.xq.get().cast_const().add(r * lda),
                    lda,
                    kp,
                    lin.panels.as_ptr().add(p * kp * QNR),
                    acc.as_mut_ptr(),
                );
            }
            for i in 0..rows {
                // SAFETY: row r+i, columns c0..c1 of y belong to this task alone.
                let out = unsafe {
                    std::slice::from_raw_parts_mut(t.y.get().add((r + i) * n + c0), c1 - c0)
                };
                dequant(
                    &acc[i * QNR..],
                    t.zeros[r + i],
                    t.scales[r + i],
                    &lin.sum[c0..c1],
                    &lin.scale[c0..c1],
                    &lin.bias[c0..c1],
                    out,
                );
            }
            r += rows;
        }
    }
}

/// `y (m × n) = after(x (m × k) · Wᵀ + b)` with `lin`'s int8 weights: quantizes `x` into
/// `buf`, then tasks of row chunks × panel groups (about 4 per thread of the current rayon
/// pool), each tile dequantised as it finishes and `after` run on each finished row segment.
pub(crate) fn qlinear(
    qk: &QKernels,
    lin: &QuantLin,
    x: &[f32],
    m: usize,
    buf: &mut QBuf,
    y: &mut [f32],
    after: Option<RowSegment<'_>>,
) {
    let (n, k, kp) = (lin.n, lin.k, lin.kp);
    assert!(x.len() >= m * k && y.len() >= m * n);
    if m == 0 {
        return;
    }
    quantize(x, m, k, kp, qk, buf);
    let (xq, lda): (*const u8, usize) = match qk.act {
        ActFormat::U8 => (buf.u8s.as_ptr(), kp),
        ActFormat::I16 => (buf.i16s.as_ptr().cast(), 2 * kp),
    };
    let t = &Task {
        qk,
        lin,
        xq: SendPtr::new(xq.cast_mut()),
        lda,
        scales: &buf.scale[..m],
        zeros: &buf.zero[..m],
        y: SendPtr::new(y.as_mut_ptr()),
    };
    let threads = rayon::current_num_threads().max(1);
    let n_panels = n.div_ceil(QNR);
    let want = threads * 4;
    let tiles = m.div_ceil(MR);
    let row_chunks = tiles.min(want.max(tiles.div_ceil(8)));
    let groups = want.div_ceil(row_chunks).clamp(1, n_panels);
    let per_group = n_panels.div_ceil(groups);
    (0..row_chunks * groups).into_par_iter().for_each(|i| {
        let (rc, g) = (i / groups, i % groups);
        let r0 = rc * tiles / row_chunks * MR;
        let r1 = ((rc + 1) * tiles / row_chunks * MR).min(m);
        let p0 = g * per_group;
        let p1 = ((g + 1) * per_group).min(n_panels);
        if p0 >= p1 {
            return;
        }
        // SAFETY: the kernel set (and its instruction set) was picked for this CPU; each task
        // writes its own rows × panels of y, which holds m × n values; xq holds m rows.
        unsafe {
            match qk.isa {
                #[cfg(target_arch = "x86_64")]
                QIsa::Avx512 => x86::task_512(t, r0, r1, p0, p1),
                #[cfg(target_arch = "x86_64")]
                QIsa::Avx2 => x86::task_256(t, r0, r1, p0, p1),
                _ => task_body(t, r0, r1, p0, p1),
            }
        }
        if let Some(after) = after {
            let (c0, c1) = (p0 * QNR, (p1 * QNR).min(n));
            for r in r0..r1 {
                // SAFETY: as above; every value of the segment was written just now.
                after(unsafe {
                    std::slice::from_raw_parts_mut(t.y.get().add(r * n + c0), c1 - c0)
                });
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgraphrag_core::simd::CpuFeatures;

    #[test]
    fn rows_quantize_with_an_exact_zero_and_the_full_range() {
        let x = [-1.0f32, 0.0, 0.5, 3.0, -0.25];
        let mut q = [7u8; 8];
        let (s, z) = quantize_row(&x, &mut q);
        assert_eq!(s, 4.0 / 255.0);
        assert_eq!(q[0], 0, "the minimum is 0");
        assert_eq!(q[3], 255, "the maximum is 255");
        assert_eq!(q[1] as i32, z, "0 is exactly the zero point");
        assert_eq!(&q[5..], &[0, 0, 0], "padding is zero");
        for (v, qq) in x.iter().zip(&q) {
            assert!((((*qq as i32 - z) as f32) * s - v).abs() <= s / 2.0 + 1e-6);
        }
        // A row of zeros: scale 0, everything 0.
        let mut q = [1i16; 4];
        assert_eq!(quantize_row(&[0.0f32; 3], &mut q), (0.0, 0));
        assert_eq!(q, [0; 4]);
        assert_eq!(round_even(2.5), 2.0);
        assert_eq!(round_even(-3.5), -4.0);
    }

    /// Every int8 kernel set gives bit-identical outputs, within a quantisation step of the
    /// f32 product, for shapes with partial panels, inputs not a multiple of 4 and partial
    /// tiles, with the activation applied to every segment.
    #[test]
    fn every_kernel_set_gives_the_same_product() {
        for (m, k, n) in [(29, 40, 64), (7, 301, 40), (1, 17, 32), (50, 384, 96)] {
            let x: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.37).sin() * 2.0).collect();
            let w: Vec<f32> = (0..n * k).map(|i| (i as f32 * 0.11).cos() * 0.1).collect();
            let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
            let lin = QuantLin::new(&w, b.clone(), n, k);
            let double = |seg: &mut [f32]| seg.iter_mut().for_each(|v| *v *= 2.0);
            let mut outs = Vec::new();
            for qk in QKernels::all_for(CpuFeatures::detect()) {
                let mut y = vec![f32::NAN; m * n];
                qlinear(
                    &qk,
                    &lin,
                    &x,
                    m,
                    &mut QBuf::default(),
                    &mut y,
                    Some(&double),
                );
                outs.push((qk.name, y));
            }
            for r in 0..m {
                let xmax = x[r * k..(r + 1) * k]
                    .iter()
                    .fold(0f32, |a, v| a.max(v.abs()));
                for j in 0..n {
                    let want: f32 =
                        b[j] + (0..k).map(|kk| x[r * k + kk] * w[j * k + kk]).sum::<f32>();
                    let got = outs[0].1[r * n + j] / 2.0;
                    // Each factor is off by at most half a step (|w| ≤ 0.1).
                    let tol = k as f32 * xmax * 0.1 * (1.0 / 255.0 + 1.0 / 254.0) + 1e-4;
                    assert!(
                        (got - want).abs() <= tol,
                        "{m}x{k}x{n} ({r},{j}): {got} vs {want}"
                    );
                }
            }
            for (name, y) in &outs[1..] {
                assert!(
                    y.iter()
                        .zip(&outs[0].1)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{name} differs from {}",
                    outs[0].0
                );
            }
        }
    }
}

/// The timing probe of the int8 linear layer against the f32 one.
#[cfg(all(test, target_arch = "x86_64"))]
#[path = "quant_timing.rs"]
mod timing;
