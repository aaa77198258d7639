//! The native CPU engine for llama-architecture GGUF models (SmolLM2, Llama, Mistral, …).
//!
//! candle's quantized llama runs every op through its generic tensor machinery and, on CPU,
//! quantizes the activations to 8 bits before each quantized matmul (as llama.cpp does). On a
//! small model most of a decode step then goes to per-op overhead and thread barriers rather
//! than to arithmetic. This engine computes the same network directly on slices:
//!
//! * **Weights** are kept in the file's blocks (`Q4_1`, `Q8_0`; any other type is dequantized
//!   to f32 rows) for single-token decoding, where the cost is reading the weights, and as a
//!   dequantized f32 copy for prompt processing, where the cost is arithmetic and the `gemm`
//!   crate's blocked f32 kernels win. Both compute `Σ dequant(w)·x` with f32 activations: no
//!   activation quantization, so results follow the stored weights exactly up to f32 rounding.
//! * **Kernels**: the row dot products are written so that LLVM vectorises them, compiled for
//!   AVX-512, AVX2+FMA and plain x86-64/other targets, picked at run time.
//! * **Fused projections**: Q, K and V are one matrix, gate and up are one matrix, so a layer is
//!   four parallel regions (rayon) per token.
//! * **KV cache** grows with the sequence; RoPE tables are computed as candle computes them
//!   (f32 angles), for any position up to the model's declared context.
//!
//! Semantics are candle's `quantized_llama` (and llama.cpp's `LLM_ARCH_LLAMA`): RMSNorm,
//! interleaved ("normal") RoPE over `rope.dimension_count` dimensions, grouped-query attention,
//! SiLU-gated MLP, output weights tied to the embeddings when `output.weight` is absent.
//! Mixture-of-experts llama files are not supported here (use the candle engine).

// The kernels index several fixed-size arrays in lockstep; that is clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]

use std::io::{Read, Seek};
use std::path::Path;

use candle_core::Device;
use candle_core::quantized::{GgmlDType, QTensor, gguf_file::Content};
use gemm::Parallelism;
use rayon::prelude::*;

use crate::error::{LlmError, Result};
use crate::gguf::{Activations, Prefill};

mod prefill;
mod q8;

fn invalid(path: &Path, reason: impl Into<String>) -> LlmError {
    LlmError::InvalidGguf {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// One `Q4_1` block as stored (20 bytes): 32 weights `d·q + m`, `q` in 0..16 (low nibbles hold
/// weights 0..16, high nibbles weights 16..32), `d` and `m` as f16 bits.
#[derive(Clone, Copy)]
#[repr(C)]
struct BlockQ41 {
    d: u16,
    m: u16,
    qs: [u8; 16],
}

/// One `Q8_0` block as stored (34 bytes): 32 weights `d·q`, `d` as f16 bits.
#[derive(Clone, Copy)]
#[repr(C)]
struct BlockQ80 {
    d: u16,
    qs: [i8; 32],
}

fn f16_bits(b: u16) -> f32 {
    half::f16::from_bits(b).to_f32()
}

impl BlockQ41 {
    #[inline(always)]
    fn d(&self) -> f32 {
        f16_bits(self.d)
    }
    #[inline(always)]
    fn m(&self) -> f32 {
        f16_bits(self.m)
    }
}

impl BlockQ80 {
    #[inline(always)]
    fn d(&self) -> f32 {
        f16_bits(self.d)
    }
}

enum QData {
    Q41(Vec<BlockQ41>),
    Q80(Vec<BlockQ80>),
    F32(Vec<f32>),
}

/// A row-major `rows × cols` weight matrix in its storage format.
struct QRows {
    rows: usize,
    cols: usize,
    data: QData,
}

const QK: usize = 32;

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

impl QRows {
    fn from_qtensor(qt: &QTensor, name: &str, path: &Path) -> Result<Self> {
        let dims = qt.shape().dims().to_vec();
        let (rows, cols) = match dims.as_slice() {
            [r, c] => (*r, *c),
            [c] => (1, *c),
            _ => return Err(invalid(path, format!("tensor `{name}` has shape {dims:?}"))),
        };
        let bad = |what: &str| invalid(path, format!("tensor `{name}`: {what}"));
        let data = match qt.dtype() {
            GgmlDType::Q4_1 | GgmlDType::Q8_0 if cols.is_multiple_of(QK) => {
                let raw = qt
                    .data()
                    .map_err(|e| bad(&format!("reading blocks: {e}")))?;
                let nblocks = rows * cols / QK;
                if qt.dtype() == GgmlDType::Q4_1 {
                    if raw.len() != nblocks * 20 {
                        return Err(bad("Q4_1 data has the wrong size"));
                    }
                    QData::Q41(
                        raw.chunks_exact(20)
                            .map(|c| {
                                let mut qs = [0u8; 16];
                                qs.copy_from_slice(&c[4..20]);
                                BlockQ41 {
                                    d: u16_at(c, 0),
                                    m: u16_at(c, 2),
                                    qs,
                                }
                            })
                            .collect(),
                    )
                } else {
                    if raw.len() != nblocks * 34 {
                        return Err(bad("Q8_0 data has the wrong size"));
                    }
                    QData::Q80(
                        raw.chunks_exact(34)
                            .map(|c| {
                                let mut qs = [0i8; 32];
                                for (q, &b) in qs.iter_mut().zip(&c[2..34]) {
                                    *q = b as i8;
                                }
                                BlockQ80 {
                                    d: u16_at(c, 0),
                                    qs,
                                }
                            })
                            .collect(),
                    )
                }
            }
            _ => {
                let t = qt
                    .dequantize(&Device::Cpu)
                    .and_then(|t| t.flatten_all())
                    .and_then(|t| t.to_vec1::<f32>())
                    .map_err(|e| bad(&format!("dequantizing: {e}")))?;
                if t.len() != rows * cols {
                    return Err(bad("dequantized size does not match the shape"));
                }
                QData::F32(t)
            }
        };
        Ok(QRows { rows, cols, data })
    }

    /// Stacks matrices with the same column count (rows of `parts[0]` first). Mixed storage
    /// formats fall back to f32 rows.
    fn stack(parts: Vec<QRows>) -> QRows {
        let cols = parts[0].cols;
        let rows = parts.iter().map(|p| p.rows).sum();
        let data = if parts.iter().all(|p| matches!(p.data, QData::Q41(_))) {
            QData::Q41(
                parts
                    .into_iter()
                    .flat_map(|p| match p.data {
                        QData::Q41(v) => v,
                        _ => Vec::new(),
                    })
                    .collect(),
            )
        } else if parts.iter().all(|p| matches!(p.data, QData::Q80(_))) {
            QData::Q80(
                parts
                    .into_iter()
                    .flat_map(|p| match p.data {
                        QData::Q80(v) => v,
                        _ => Vec::new(),
                    })
                    .collect(),
            )
        } else {
            QData::F32(parts.iter().flat_map(|p| p.dense()).collect())
        };
        QRows { rows, cols, data }
    }

    /// Row `r` dequantized into `out` (length `cols`).
    fn dequant_row(&self, r: usize, out: &mut [f32]) {
        let nb = self.cols / QK;
        match &self.data {
            QData::Q41(v) => {
                for (b, o) in v[r * nb..(r + 1) * nb].iter().zip(out.chunks_exact_mut(QK)) {
                    for j in 0..16 {
                        o[j] = (b.qs[j] & 0x0F) as f32 * b.d() + b.m();
                        o[j + 16] = (b.qs[j] >> 4) as f32 * b.d() + b.m();
                    }
                }
            }
            QData::Q80(v) => {
                for (b, o) in v[r * nb..(r + 1) * nb].iter().zip(out.chunks_exact_mut(QK)) {
                    for j in 0..QK {
                        o[j] = b.qs[j] as f32 * b.d();
                    }
                }
            }
            QData::F32(v) => out.copy_from_slice(&v[r * self.cols..(r + 1) * self.cols]),
        }
    }

    /// The whole matrix as row-major f32.
    fn dense(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.rows * self.cols];
        out.par_chunks_mut(self.cols)
            .enumerate()
            .for_each(|(r, o)| self.dequant_row(r, o));
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

/// Up to this many activation vectors share one pass over a weight row.
const MAX_VECS: usize = 8;

/// `out[i·n + v] = row(r0 + i) · x_v` for `n = out.len() / rows` vectors `x_v =
/// x[v·cols..]`; `xsum[v·nb + b]` is the sum of block `b` of `x_v` (for `Q4_1`'s offsets).
/// Each (row, vector) pair is computed with the same operations in the same order whatever
/// the number of vectors, so batched decoding is bit-identical to one sequence at a time.
#[inline(always)]
fn rows_dot_generic(w: &QRows, r0: usize, x: &[f32], xsum: &[f32], nvec: usize, out: &mut [f32]) {
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
                            p[j] = (b.qs[j] & 0x0F) as f32 * xs[j]
                                + (b.qs[j] >> 4) as f32 * xs[j + 16];
                        }
                        let d = b.d();
                        for j in 0..16 {
                            acc[j] += d * p[j];
                        }
                        off += b.m() * s;
                    }
                    hsum16(&acc) + off
                }
                QData::Q80(blocks) => {
                    let row = &blocks[r * nb..(r + 1) * nb];
                    let mut acc = [0f32; 16];
                    for (b, xs) in row.iter().zip(xv.chunks_exact(QK)) {
                        let mut p = [0f32; 16];
                        for j in 0..16 {
                            p[j] = b.qs[j] as f32 * xs[j] + b.qs[j + 16] as f32 * xs[j + 16];
                        }
                        let d = b.d();
                        for j in 0..16 {
                            acc[j] += d * p[j];
                        }
                    }
                    hsum16(&acc)
                }
                QData::F32(v) => dot_generic(&v[r * w.cols..(r + 1) * w.cols], xv),
            };
        }
    }
}

#[inline(always)]
fn hsum16(a: &[f32; 16]) -> f32 {
    let mut s = [0f32; 8];
    for j in 0..8 {
        s[j] = a[j] + a[j + 8];
    }
    (s[0] + s[4]) + (s[1] + s[5]) + ((s[2] + s[6]) + (s[3] + s[7]))
}

/// Dot product with 16 independent accumulators (vectorisable without reassociation).
#[inline(always)]
fn dot_generic(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    let mut ca = a.chunks_exact(16);
    let mut cb = b.chunks_exact(16);
    for (x, y) in (&mut ca).zip(&mut cb) {
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

/// `acc += p · v` element-wise.
#[inline(always)]
fn axpy_generic(acc: &mut [f32], p: f32, v: &[f32]) {
    for (a, x) in acc.iter_mut().zip(v) {
        *a += p * x;
    }
}

/// One query head against `l` cached positions: `s_j = (q · k_j)·scale`, softmax, `o = Σ p_j
/// v_j`, where `k_j = kc[j·stride + off..][..q.len()]` (and `v_j` likewise). The same
/// operations, in the same order, as [`dot_generic`], [`softmax`] and [`axpy_generic`] one
/// position at a time, but inlined into one loop.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn attend_generic(
    q: &[f32],
    kc: &[f32],
    vc: &[f32],
    stride: usize,
    off: usize,
    scale: f32,
    s: &mut [f32],
    o: &mut [f32],
) {
    let hd = q.len();
    for (j, sj) in s.iter_mut().enumerate() {
        *sj = dot_generic(q, &kc[j * stride + off..j * stride + off + hd]) * scale;
    }
    softmax(s);
    o.fill(0.0);
    for (j, &p) in s.iter().enumerate() {
        axpy_generic(o, p, &vc[j * stride + off..j * stride + off + hd]);
    }
}

/// Signature of [`attend_generic`] and its compiled variants.
type Attend = fn(&[f32], &[f32], &[f32], usize, usize, f32, &mut [f32], &mut [f32]);

type RowsDot = fn(&QRows, usize, &[f32], &[f32], usize, &mut [f32]);

#[derive(Clone, Copy)]
struct Kernels {
    rows_dot: RowsDot,
    attend: Attend,
}

mod kernels {
    use super::*;

    pub(super) fn plain() -> Kernels {
        Kernels {
            rows_dot: |w, r0, x, xs, n, o| rows_dot_generic(w, r0, x, xs, n, o),
            attend: |q, k, v, st, off, sc, s, o| attend_generic(q, k, v, st, off, sc, s, o),
        }
    }

    #[cfg(target_arch = "x86_64")]
    mod x86 {
        use super::super::*;

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
                                    let q1 =
                                        _mm_loadu_si128(b.qs.as_ptr().add(16) as *const __m128i);
                                    let f0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q0));
                                    let f1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q1));
                                    let d = _mm512_broadcastss_ps(_mm_cvtph_ps(_mm_set1_epi16(
                                        b.d as i16,
                                    )));
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
            sc: f32,
            s: &mut [f32],
            o: &mut [f32],
        ) {
            attend_generic(q, k, v, st, off, sc, s, o)
        }
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx2,fma,f16c")]
        fn attend_256(
            q: &[f32],
            k: &[f32],
            v: &[f32],
            st: usize,
            off: usize,
            sc: f32,
            s: &mut [f32],
            o: &mut [f32],
        ) {
            attend_generic(q, k, v, st, off, sc, s, o)
        }
        #[target_feature(enable = "avx2,fma,f16c")]
        fn rows_dot_256(w: &QRows, r0: usize, x: &[f32], xs: &[f32], n: usize, o: &mut [f32]) {
            rows_dot_generic(w, r0, x, xs, n, o)
        }

        pub(in super::super) fn avx512() -> Option<Kernels> {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("f16c")
            {
                // SAFETY: the CPU has every feature these functions are compiled for.
                return Some(Kernels {
                    rows_dot: |w, r0, x, xs, n, o| unsafe { rows_dot_512(w, r0, x, xs, n, o) },
                    attend: |q, k, v, st, off, sc, s, o| unsafe {
                        attend_512(q, k, v, st, off, sc, s, o)
                    },
                });
            }
            None
        }

        pub(in super::super) fn avx2() -> Option<Kernels> {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("f16c")
            {
                // SAFETY: as above.
                return Some(Kernels {
                    rows_dot: |w, r0, x, xs, n, o| unsafe { rows_dot_256(w, r0, x, xs, n, o) },
                    attend: |q, k, v, st, off, sc, s, o| unsafe {
                        attend_256(q, k, v, st, off, sc, s, o)
                    },
                });
            }
            None
        }
    }

    /// Every kernel set this CPU can run, best first.
    pub(super) fn available() -> Vec<(&'static str, Kernels)> {
        let mut v = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(k) = x86::avx512() {
                v.push(("avx512", k));
            }
            if let Some(k) = x86::avx2() {
                v.push(("avx2", k));
            }
        }
        v.push(("plain", plain()));
        v
    }

    /// The fastest kernel set (`PGRAPHRAG_NATIVE_PLAIN` forces the portable one).
    pub(super) fn best() -> Kernels {
        if std::env::var_os("PGRAPHRAG_NATIVE_PLAIN").is_some() {
            return plain();
        }
        available()[0].1
    }
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// A linear layer: stored blocks for matrix-vector products (and their 8-bit-activation
/// repacking when [`Activations::Q8`] is on), an f32 copy for prompts: row-major for
/// [`Prefill::Gemm`], packed in panels for [`Prefill::Rowwise`].
struct Linear {
    q: QRows,
    i8: Option<q8::I8Rows>,
    dense: Vec<f32>,
    packed: Option<prefill::Packed>,
}

struct Layer {
    attn_norm: Vec<f32>,
    /// Q, K, V stacked: `(n_head + 2·n_kv_head)·head_dim` rows.
    qkv: Linear,
    wo: Linear,
    ffn_norm: Vec<f32>,
    /// gate, up stacked: `2·n_ff` rows.
    gate_up: Linear,
    down: Linear,
}

#[derive(Default, Clone)]
struct KvCache {
    /// `[pos][kv_head][head_dim]`.
    k: Vec<f32>,
    v: Vec<f32>,
}

/// Hyper-parameters read from the GGUF metadata.
#[derive(Debug, Clone, Copy)]
struct Config {
    n_embd: usize,
    n_head: usize,
    n_kv_head: usize,
    head_dim: usize,
    n_ff: usize,
    rope_dim: usize,
    rope_base: f32,
    eps: f32,
    vocab: usize,
}

/// Minimum rows for which a linear layer uses the f32 `gemm` path instead of per-row dots.
const GEMM_MIN_ROWS: usize = 2;

/// A llama-architecture model on the native CPU engine.
pub(crate) struct NativeLlama {
    cfg: Config,
    tok_embd: QRows,
    layers: Vec<Layer>,
    out_norm: Vec<f32>,
    /// `None`: tied to `tok_embd`.
    output: Option<QRows>,
    /// The output matrix repacked for 8-bit activations ([`Activations::Q8`]).
    output_i8: Option<q8::I8Rows>,
    /// The 8-bit activation kernel.
    k8: q8::RowsDotI8,
    /// The sequence of the single-sequence API ([`Self::forward`]).
    seq: Seq,
    cos: Vec<f32>,
    sin: Vec<f32>,
    k: Kernels,
    /// How prompts are processed.
    prefill: Prefill,
    /// The row-wise prompt kernels ([`Prefill::Rowwise`]).
    pk: prefill::Kernels,
    /// Recent prompts and their KV caches ([`Prefill::Rowwise`] only), most recent last.
    prefixes: Vec<(Vec<u32>, Seq)>,
    /// The threads of this model. Work runs inside [`Self::install`], so the calling thread
    /// is one of the pool's workers and each parallel region is a cheap fork-join instead of
    /// a hand-off to sleeping threads.
    pool: std::sync::Arc<rayon::ThreadPool>,
}

/// The state of one sequence: its KV cache and length.
#[derive(Default, Clone)]
pub(crate) struct Seq {
    cache: Vec<KvCache>,
    len: usize,
}

impl Seq {
    /// Empties the KV cache (keeps its memory).
    pub(crate) fn reset(&mut self) {
        self.len = 0;
        for c in &mut self.cache {
            c.k.clear();
            c.v.clear();
        }
    }

    /// Positions held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// A copy of the first `n` positions.
    fn prefix(&self, n: usize) -> Seq {
        let n = n.min(self.len);
        Seq {
            cache: self
                .cache
                .iter()
                .map(|c| {
                    let per = c.k.len().checked_div(self.len).unwrap_or(0);
                    KvCache {
                        k: c.k[..n * per].to_vec(),
                        v: c.v[..n * per].to_vec(),
                    }
                })
                .collect(),
            len: n,
        }
    }

    fn bytes(&self) -> usize {
        self.cache.iter().map(|c| (c.k.len() + c.v.len()) * 4).sum()
    }
}

/// Memory kept for the KV caches of recent prompts under [`Prefill::Rowwise`].
const PREFIX_CACHE_BYTES: usize = 512 << 20;

fn md_u32(ct: &Content, key: &str) -> Option<usize> {
    ct.metadata
        .get(key)
        .and_then(|v| v.to_u32().ok())
        .map(|v| v as usize)
}
fn md_f32(ct: &Content, key: &str) -> Option<f32> {
    ct.metadata.get(key).and_then(|v| v.to_f32().ok())
}

impl NativeLlama {
    /// Loads the weights of a llama-architecture GGUF (`ct` read from `r`).
    pub(crate) fn load<R: Read + Seek>(
        ct: &Content,
        r: &mut R,
        path: &Path,
        act: Activations,
        pf: Prefill,
    ) -> Result<Self> {
        let need =
            |k: &str| md_u32(ct, k).ok_or_else(|| invalid(path, format!("missing metadata `{k}`")));
        if md_u32(ct, "llama.expert_count").unwrap_or(0) > 0 {
            return Err(invalid(
                path,
                "mixture-of-experts llama models need the candle engine (Engine::Candle)",
            ));
        }
        let n_embd = need("llama.embedding_length")?;
        let n_head = need("llama.attention.head_count")?;
        let n_kv_head = md_u32(ct, "llama.attention.head_count_kv").unwrap_or(n_head);
        if n_head == 0
            || n_kv_head == 0
            || !n_embd.is_multiple_of(n_head)
            || !n_head.is_multiple_of(n_kv_head)
        {
            return Err(invalid(
                path,
                format!(
                    "inconsistent heads: embedding {n_embd}, heads {n_head}, kv heads {n_kv_head}"
                ),
            ));
        }
        let head_dim = n_embd / n_head;
        let rope_dim = md_u32(ct, "llama.rope.dimension_count").unwrap_or(head_dim);
        if rope_dim > head_dim || !rope_dim.is_multiple_of(2) {
            return Err(invalid(
                path,
                format!("rope dimension {rope_dim} for head size {head_dim}"),
            ));
        }
        let n_layer = need("llama.block_count")?;
        let n_ff = need("llama.feed_forward_length")?;
        let eps = md_f32(ct, "llama.attention.layer_norm_rms_epsilon")
            .ok_or_else(|| invalid(path, "missing `llama.attention.layer_norm_rms_epsilon`"))?;
        let rope_base = md_f32(ct, "llama.rope.freq_base").unwrap_or(10000.0);

        let mut get = |name: &str| -> Result<QRows> {
            let qt = ct
                .tensor(r, name, &Device::Cpu)
                .map_err(|e| invalid(path, format!("reading tensor `{name}`: {e}")))?;
            QRows::from_qtensor(&qt, name, path)
        };
        let tok_embd = get("token_embd.weight")?;
        if tok_embd.cols != n_embd {
            return Err(invalid(
                path,
                "token_embd.weight does not match embedding_length",
            ));
        }
        let vocab = tok_embd.rows;
        let vec_of = |q: QRows, name: &str, n: usize| -> Result<Vec<f32>> {
            if q.rows * q.cols != n {
                return Err(invalid(path, format!("`{name}` should have {n} values")));
            }
            Ok(q.dense())
        };
        let check = |q: &QRows, name: &str, rows: usize, cols: usize| -> Result<()> {
            if q.rows != rows || q.cols != cols {
                return Err(invalid(
                    path,
                    format!("`{name}` is {}x{}, expected {rows}x{cols}", q.rows, q.cols),
                ));
            }
            if !cols.is_multiple_of(QK) {
                return Err(invalid(
                    path,
                    format!("`{name}`: {cols} columns is not a multiple of 32"),
                ));
            }
            Ok(())
        };
        let kv_dim = n_kv_head * head_dim;
        let mut layers = Vec::with_capacity(n_layer);
        for i in 0..n_layer {
            let p = |s: &str| format!("blk.{i}.{s}.weight");
            let attn_norm = vec_of(get(&p("attn_norm"))?, &p("attn_norm"), n_embd)?;
            let ffn_norm = vec_of(get(&p("ffn_norm"))?, &p("ffn_norm"), n_embd)?;
            let wq = get(&p("attn_q"))?;
            check(&wq, &p("attn_q"), n_embd, n_embd)?;
            let wk = get(&p("attn_k"))?;
            check(&wk, &p("attn_k"), kv_dim, n_embd)?;
            let wv = get(&p("attn_v"))?;
            check(&wv, &p("attn_v"), kv_dim, n_embd)?;
            let wo = get(&p("attn_output"))?;
            check(&wo, &p("attn_output"), n_embd, n_embd)?;
            let wg = get(&p("ffn_gate"))?;
            check(&wg, &p("ffn_gate"), n_ff, n_embd)?;
            let wu = get(&p("ffn_up"))?;
            check(&wu, &p("ffn_up"), n_ff, n_embd)?;
            let wd = get(&p("ffn_down"))?;
            check(&wd, &p("ffn_down"), n_embd, n_ff)?;
            let lin = |q: QRows| {
                let mut dense = q.dense();
                let i8 = match act {
                    Activations::Q8 => q8::I8Rows::from_qrows(&q),
                    Activations::F32 => None,
                };
                let packed = match pf {
                    Prefill::Rowwise => {
                        let p = prefill::Packed::new(&dense, q.rows, q.cols);
                        dense = Vec::new();
                        Some(p)
                    }
                    Prefill::Gemm => None,
                };
                Linear {
                    q,
                    i8,
                    dense,
                    packed,
                }
            };
            layers.push(Layer {
                attn_norm,
                qkv: lin(QRows::stack(vec![wq, wk, wv])),
                wo: lin(wo),
                ffn_norm,
                gate_up: lin(QRows::stack(vec![wg, wu])),
                down: lin(wd),
            });
        }
        let out_norm = vec_of(get("output_norm.weight")?, "output_norm.weight", n_embd)?;
        let output = if ct.tensor_infos.contains_key("output.weight") {
            let o = get("output.weight")?;
            check(&o, "output.weight", vocab, n_embd)?;
            Some(o)
        } else {
            None
        };
        let output_i8 = match act {
            Activations::Q8 => q8::I8Rows::from_qrows(output.as_ref().unwrap_or(&tok_embd)),
            Activations::F32 => None,
        };
        let cfg = Config {
            n_embd,
            n_head,
            n_kv_head,
            head_dim,
            n_ff,
            rope_dim,
            rope_base,
            eps,
            vocab,
        };
        Ok(NativeLlama {
            cfg,
            tok_embd,
            layers,
            out_norm,
            output,
            output_i8,
            k8: q8::best(),
            seq: Seq {
                cache: (0..n_layer).map(|_| KvCache::default()).collect(),
                len: 0,
            },
            cos: Vec::new(),
            sin: Vec::new(),
            k: kernels::best(),
            prefill: pf,
            pk: if std::env::var_os("PGRAPHRAG_NATIVE_PLAIN").is_some() {
                prefill::available().last().expect("plain kernels").1
            } else {
                prefill::available()[0].1
            },
            prefixes: Vec::new(),
            pool: std::sync::Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(rayon::current_num_threads())
                    .thread_name(|i| format!("pgraphrag-native-{i}"))
                    .build()
                    .map_err(|e| invalid(path, format!("starting the worker threads: {e}")))?,
            ),
        })
    }

    /// Vocabulary size (rows of the embedding matrix).
    pub(crate) fn vocab(&self) -> usize {
        self.cfg.vocab
    }

    /// The model's thread pool (run generation inside `pool.install`).
    pub(crate) fn pool(&self) -> std::sync::Arc<rayon::ThreadPool> {
        self.pool.clone()
    }

    /// Empties the single-sequence KV cache.
    pub(crate) fn reset(&mut self) {
        self.seq.reset();
    }

    /// A new, empty sequence for [`Self::step`].
    pub(crate) fn new_seq(&self) -> Seq {
        Seq {
            cache: (0..self.layers.len()).map(|_| KvCache::default()).collect(),
            len: 0,
        }
    }

    /// A sequence holding the longest prefix of `ids` (at most all but its last token) whose KV
    /// cache a recent prompt left ([`Self::remember`]); empty without [`Prefill::Rowwise`],
    /// whose results do not depend on where a prompt is split.
    pub(crate) fn cached_prefix(&self, ids: &[u32]) -> Seq {
        let best = self
            .prefixes
            .iter()
            .map(|(toks, seq)| {
                let n = toks.iter().zip(ids).take_while(|(a, b)| a == b).count();
                (n.min(ids.len().saturating_sub(1)).min(seq.len), seq)
            })
            .max_by_key(|(n, _)| *n);
        match best {
            Some((n, seq)) if n > 0 && self.prefill == Prefill::Rowwise => seq.prefix(n),
            _ => self.new_seq(),
        }
    }

    /// Keeps the KV cache of a processed prompt `ids` (`seq` before any decoding) for
    /// [`Self::cached_prefix`], dropping the oldest beyond a memory budget.
    pub(crate) fn remember(&mut self, ids: &[u32], seq: &Seq) {
        if self.prefill != Prefill::Rowwise || seq.len != ids.len() {
            return;
        }
        self.prefixes.push((ids.to_vec(), seq.clone()));
        let mut total: usize = self.prefixes.iter().map(|(_, s)| s.bytes()).sum();
        while total > PREFIX_CACHE_BYTES && !self.prefixes.is_empty() {
            total -= self.prefixes.remove(0).1.bytes();
        }
    }

    /// Forgets the KV caches of earlier prompts.
    pub(crate) fn clear_prefixes(&mut self) {
        self.prefixes.clear();
    }

    /// Makes the RoPE tables cover positions `0..n` (call before [`Self::step`] from `&self`).
    pub(crate) fn reserve(&mut self, n: usize) {
        self.ensure_rope(n);
    }

    /// Runs `tokens` on the single sequence (appending to its KV cache) and returns the
    /// logits after the last token.
    pub(crate) fn forward(&mut self, tokens: &[u32]) -> std::result::Result<Vec<f32>, String> {
        let end = self.seq.len + tokens.len();
        self.ensure_rope(end);
        let mut seq = std::mem::take(&mut self.seq);
        let pool = self.pool.clone();
        let prefill = tokens.len() > 1;
        let r = pool.install(|| self.step(&mut [&mut seq], &[tokens], prefill));
        self.seq = seq;
        r.map(|mut v| v.pop().unwrap_or_default())
    }

    /// Extends the RoPE tables to cover positions `0..n`, computed as candle does:
    /// `θ_i = 1 / base^(2i/d)` and `angle = pos · θ_i` in f32.
    fn ensure_rope(&mut self, n: usize) {
        let half = self.cfg.rope_dim / 2;
        let have = self.cos.len() / half.max(1);
        if have >= n || half == 0 {
            return;
        }
        let d = self.cfg.rope_dim as f32;
        let theta: Vec<f32> = (0..half)
            .map(|i| 1f32 / self.cfg.rope_base.powf((2 * i) as f32 / d))
            .collect();
        let n = n.max(have * 2).max(512);
        for pos in have..n {
            for &t in &theta {
                let a = pos as f32 * t;
                self.cos.push(a.cos());
                self.sin.push(a.sin());
            }
        }
    }

    fn rms_norm(&self, x: &[f32], w: &[f32], out: &mut [f32]) {
        for (xr, or) in x
            .chunks_exact(self.cfg.n_embd)
            .zip(out.chunks_exact_mut(self.cfg.n_embd))
        {
            let ss: f32 = xr.iter().map(|v| v * v).sum();
            let m = (ss / self.cfg.n_embd as f32 + self.cfg.eps).sqrt();
            for ((o, &v), &a) in or.iter_mut().zip(xr).zip(w) {
                *o = v / m * a;
            }
        }
    }

    /// `y (t × rows) = x (t × cols) · Wᵀ`: one sequence's prompt (the packed row-wise kernel,
    /// or `gemm` on the f32 copy) or one token of each of `t` sequences (the stored blocks).
    fn linear(&self, lin: &Linear, x: &[f32], t: usize, prompt: bool, y: &mut [f32]) {
        let (rows, cols) = (lin.q.rows, lin.q.cols);
        debug_assert_eq!(x.len(), t * cols);
        debug_assert_eq!(y.len(), t * rows);
        if let (true, Some(p)) = (prompt, &lin.packed) {
            prefill::matmul(self.pk.block, p, x, t, y);
        } else if prompt && t >= GEMM_MIN_ROWS {
            // SAFETY: the pointers cover t×cols, rows×cols and t×rows f32 values with the
            // strides given (row-major x and y, W read as its transpose).
            unsafe {
                gemm::gemm(
                    t,
                    rows,
                    cols,
                    y.as_mut_ptr(),
                    1,
                    rows as isize,
                    false,
                    x.as_ptr(),
                    1,
                    cols as isize,
                    lin.dense.as_ptr(),
                    cols as isize,
                    1,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    Parallelism::Rayon(0),
                );
            }
        } else {
            self.matvecs(&lin.q, lin.i8.as_ref(), x, t, y);
        }
    }

    /// `y_v = W · x_v` for `n` vectors (row-major `n × cols` in, `n × rows` out) with the
    /// stored blocks (or their 8-bit-activation repacking `w8`, when given); rows are split
    /// across the rayon pool and each block of weights is read once for all vectors.
    fn matvecs(&self, w: &QRows, w8: Option<&q8::I8Rows>, x: &[f32], n: usize, y: &mut [f32]) {
        let rows_per_task = (w.rows / (rayon::current_num_threads() * 4)).clamp(16, 1024);
        let mut tmp = Vec::new();
        let out: &mut [f32] = if n == 1 {
            y
        } else {
            tmp.resize(w.rows * n, 0f32);
            &mut tmp
        };
        if let Some(w8) = w8 {
            let mut qx = q8::QuantX::default();
            qx.quantize(x, w.cols, n);
            let f = self.k8;
            out.par_chunks_mut(rows_per_task * n)
                .enumerate()
                .for_each(|(c, o)| f(w8, c * rows_per_task, &qx, n, o));
        } else {
            let xsum: Vec<f32> = x.chunks_exact(QK).map(|c| c.iter().sum()).collect();
            let f = self.k.rows_dot;
            out.par_chunks_mut(rows_per_task * n)
                .enumerate()
                .for_each(|(c, o)| f(w, c * rows_per_task, x, &xsum, n, o));
        }
        if n > 1 {
            for (r, vals) in tmp.chunks_exact(n).enumerate() {
                for (v, &val) in vals.iter().enumerate() {
                    y[v * w.rows + r] = val;
                }
            }
        }
    }

    fn rope(&self, x: &mut [f32], n_heads: usize, pos: usize) {
        let half = self.cfg.rope_dim / 2;
        let cos = &self.cos[pos * half..(pos + 1) * half];
        let sin = &self.sin[pos * half..(pos + 1) * half];
        for h in x.chunks_exact_mut(self.cfg.head_dim).take(n_heads) {
            for i in 0..half {
                let (a, b) = (h[2 * i], h[2 * i + 1]);
                h[2 * i] = a * cos[i] - b * sin[i];
                h[2 * i + 1] = a * sin[i] + b * cos[i];
            }
        }
    }

    /// One step over several sequences: either one sequence with any number of new tokens
    /// (`prompt`: prompt processing), or sequences with one new token each (decoding, batched
    /// when there are several). Appends to each sequence's KV cache and returns each
    /// sequence's logits after its last token. The RoPE tables must already cover the new
    /// positions ([`Self::reserve`]).
    pub(crate) fn step(
        &self,
        seqs: &mut [&mut Seq],
        tokens: &[&[u32]],
        prompt: bool,
    ) -> std::result::Result<Vec<Vec<f32>>, String> {
        let c = self.cfg;
        if seqs.len() != tokens.len() || seqs.is_empty() {
            return Err("one token list per sequence is needed".into());
        }
        if prompt && seqs.len() != 1 {
            return Err("a prompt step takes one sequence".into());
        }
        if !prompt && tokens.iter().any(|t| t.len() != 1) {
            return Err("decoding steps take exactly one token per sequence".into());
        }
        let t: usize = tokens.iter().map(|t| t.len()).sum();
        if t == 0 {
            return Err("no tokens to process".into());
        }
        for &id in tokens.iter().flat_map(|t| t.iter()) {
            if id as usize >= c.vocab {
                return Err(format!(
                    "token id {id} is outside the vocabulary of {}",
                    c.vocab
                ));
            }
        }
        let half = (c.rope_dim / 2).max(1);
        for (s, tk) in seqs.iter().zip(tokens) {
            if s.cache.len() != self.layers.len() {
                return Err("the sequence was made for another model".into());
            }
            if (s.len + tk.len()) * half > self.cos.len() && c.rope_dim > 0 {
                return Err(format!(
                    "position {} is beyond the prepared RoPE table",
                    s.len + tk.len()
                ));
            }
        }
        // Position of each row.
        let pos: Vec<usize> = seqs
            .iter()
            .zip(tokens)
            .flat_map(|(s, tk)| (0..tk.len()).map(move |i| s.len + i))
            .collect();
        let (q_dim, kv_dim) = (c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let qkv_dim = q_dim + 2 * kv_dim;
        let mut x = vec![0f32; t * c.n_embd];
        for (row, &id) in x
            .chunks_exact_mut(c.n_embd)
            .zip(tokens.iter().flat_map(|t| t.iter()))
        {
            self.tok_embd.dequant_row(id as usize, row);
        }
        let mut h = vec![0f32; t * c.n_embd];
        let mut qkv = vec![0f32; t * qkv_dim];
        let mut att = vec![0f32; t * q_dim];
        let mut proj = vec![0f32; t * c.n_embd];
        let mut gu = vec![0f32; t * 2 * c.n_ff];
        let mut act = vec![0f32; t * c.n_ff];
        let scale = 1f32 / (c.head_dim as f32).sqrt();
        for (li, layer) in self.layers.iter().enumerate() {
            self.rms_norm(&x, &layer.attn_norm, &mut h);
            self.linear(&layer.qkv, &h, t, prompt, &mut qkv);
            for (row, &p) in qkv.chunks_exact_mut(qkv_dim).zip(&pos) {
                let (q, kv) = row.split_at_mut(q_dim);
                self.rope(q, c.n_head, p);
                self.rope(&mut kv[..kv_dim], c.n_kv_head, p);
            }
            let mut r0 = 0;
            for (s, tk) in seqs.iter_mut().zip(tokens) {
                let n = tk.len();
                let cache = &mut s.cache[li];
                for row in qkv[r0 * qkv_dim..(r0 + n) * qkv_dim].chunks_exact(qkv_dim) {
                    cache.k.extend_from_slice(&row[q_dim..q_dim + kv_dim]);
                    cache.v.extend_from_slice(&row[q_dim + kv_dim..]);
                }
                r0 += n;
            }
            if prompt && self.prefill == Prefill::Rowwise {
                let s = &mut seqs[0];
                let cache = &s.cache[li];
                self.attention_rowwise(&qkv, &cache.k, &cache.v, t, s.len, scale, &mut att);
            } else if t == seqs.len() {
                // One new token per sequence: every (sequence, head) pair in parallel.
                let caches: Vec<(&[f32], &[f32])> = seqs
                    .iter()
                    .map(|s| (&s.cache[li].k[..], &s.cache[li].v[..]))
                    .collect();
                self.attend_decode(&qkv, &caches, scale, &mut att);
            } else {
                let s = &mut seqs[0];
                let cache = &s.cache[li];
                self.attention(&qkv, &cache.k, &cache.v, t, s.len, scale, &mut att);
            }
            self.linear(&layer.wo, &att, t, prompt, &mut proj);
            for (a, b) in x.iter_mut().zip(&proj) {
                *a += b;
            }
            self.rms_norm(&x, &layer.ffn_norm, &mut h);
            self.linear(&layer.gate_up, &h, t, prompt, &mut gu);
            for (row, a) in gu
                .chunks_exact(2 * c.n_ff)
                .zip(act.chunks_exact_mut(c.n_ff))
            {
                let (g, u) = row.split_at(c.n_ff);
                for ((o, &gv), &uv) in a.iter_mut().zip(g).zip(u) {
                    *o = gv / (1.0 + (-gv).exp()) * uv;
                }
            }
            self.linear(&layer.down, &act, t, prompt, &mut proj);
            for (a, b) in x.iter_mut().zip(&proj) {
                *a += b;
            }
        }
        // The last row of each sequence.
        let mut last = Vec::with_capacity(seqs.len() * c.n_embd);
        let mut r = 0;
        for (s, tk) in seqs.iter_mut().zip(tokens) {
            r += tk.len();
            s.len += tk.len();
            last.extend_from_slice(&x[(r - 1) * c.n_embd..r * c.n_embd]);
        }
        let mut hn = vec![0f32; last.len()];
        self.rms_norm(&last, &self.out_norm, &mut hn);
        let n = seqs.len();
        let mut logits = vec![0f32; n * c.vocab];
        let out = self.output.as_ref().unwrap_or(&self.tok_embd);
        self.matvecs(out, self.output_i8.as_ref(), &hn, n, &mut logits);
        Ok(logits.chunks_exact(c.vocab).map(|l| l.to_vec()).collect())
    }

    /// Attention of one new query per sequence (row `i` of `qkv` belongs to sequence `i`, whose
    /// K/V cache already holds the new position) for every (sequence, head) pair in parallel.
    /// Each head computes exactly what the single-query case of [`Self::attention`] does.
    fn attend_decode(&self, qkv: &[f32], caches: &[(&[f32], &[f32])], scale: f32, out: &mut [f32]) {
        let c = self.cfg;
        let (hd, q_dim, kv_dim) = (c.head_dim, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let qkv_dim = q_dim + 2 * kv_dim;
        let group = c.n_head / c.n_kv_head;
        out.par_chunks_mut(hd).enumerate().for_each(|(i, o)| {
            let (si, h) = (i / c.n_head, i % c.n_head);
            let (kc, vc) = caches[si];
            let kvh = h / group;
            let qh = &qkv[si * qkv_dim + h * hd..si * qkv_dim + (h + 1) * hd];
            let l = kc.len() / kv_dim;
            let mut s = vec![0f32; l];
            (self.k.attend)(qh, kc, vc, kv_dim, kvh * hd, scale, &mut s, o);
        });
    }

    /// [`Self::attention`] for [`Prefill::Rowwise`]: each (query, head) pair is computed over
    /// its causal positions by [`prefill::Kernels::attend`] (keys transposed once per KV head),
    /// so a row's result does not depend on the other rows of the call.
    #[allow(clippy::too_many_arguments)]
    fn attention_rowwise(
        &self,
        qkv: &[f32],
        kc: &[f32],
        vc: &[f32],
        t: usize,
        p0: usize,
        scale: f32,
        out: &mut [f32],
    ) {
        let c = self.cfg;
        let (hd, q_dim, kv_dim) = (c.head_dim, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let qkv_dim = q_dim + 2 * kv_dim;
        let group = c.n_head / c.n_kv_head;
        debug_assert_eq!(out.len(), t * q_dim);
        let l = p0 + t;
        let kts: Vec<(Vec<f32>, usize)> = (0..c.n_kv_head)
            .into_par_iter()
            .map(|kvh| prefill::transpose_keys(kc, l, kv_dim, kvh * hd, hd))
            .collect();
        let attend = self.pk.attend;
        out.par_chunks_mut(hd)
            .enumerate()
            .for_each_init(Vec::new, |s: &mut Vec<f32>, (idx, o)| {
                let (i, h) = (idx / c.n_head, idx % c.n_head);
                let n = p0 + i + 1;
                if s.len() < n {
                    s.resize(n, 0.0);
                }
                let q = &qkv[i * qkv_dim + h * hd..i * qkv_dim + (h + 1) * hd];
                let (kt, lp) = &kts[h / group];
                attend(
                    q,
                    kt,
                    *lp,
                    vc,
                    kv_dim,
                    (h / group) * hd,
                    scale,
                    &mut s[..n],
                    o,
                );
            });
    }

    /// Causal grouped-query attention of the `t > 1` new queries of one sequence against its
    /// cache (`p0` earlier positions plus the `t` new ones).
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        qkv: &[f32],
        kc: &[f32],
        vc: &[f32],
        t: usize,
        p0: usize,
        scale: f32,
        out: &mut [f32],
    ) {
        let c = self.cfg;
        let (hd, q_dim, kv_dim) = (c.head_dim, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let qkv_dim = q_dim + 2 * kv_dim;
        let group = c.n_head / c.n_kv_head;
        let l = p0 + t;
        let out_ptr = SyncPtr(out.as_mut_ptr());
        (0..c.n_head).into_par_iter().for_each(|h| {
            let kvh = h / group;
            let mut s = vec![0f32; t * l];
            // S = Q_h · K_hᵀ · scale   (t × l)
            // SAFETY: every pointer/stride pair stays inside its buffer: q rows of qkv_dim,
            // cache rows of kv_dim (l rows), s is t×l.
            unsafe {
                gemm::gemm(
                    t,
                    l,
                    hd,
                    s.as_mut_ptr(),
                    1,
                    l as isize,
                    false,
                    qkv.as_ptr().add(h * hd),
                    1,
                    qkv_dim as isize,
                    kc.as_ptr().add(kvh * hd),
                    kv_dim as isize,
                    1,
                    0.0,
                    scale,
                    false,
                    false,
                    false,
                    Parallelism::None,
                );
            }
            for (i, row) in s.chunks_exact_mut(l).enumerate() {
                let n = p0 + i + 1;
                softmax(&mut row[..n]);
                row[n..].fill(0.0);
            }
            // O_h = P · V_h   (t × hd), written into columns h·hd.. of out.
            // SAFETY: heads write disjoint column ranges of `out` (t × q_dim).
            unsafe {
                gemm::gemm(
                    t,
                    hd,
                    l,
                    out_ptr.get().add(h * hd),
                    1,
                    q_dim as isize,
                    false,
                    s.as_ptr(),
                    1,
                    l as isize,
                    vc.as_ptr().add(kvh * hd),
                    1,
                    kv_dim as isize,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    Parallelism::None,
                );
            }
        });
    }
}

/// A raw pointer shared by the attention heads, which write disjoint columns.
#[derive(Clone, Copy)]
struct SyncPtr(*mut f32);
// SAFETY: used only for disjoint writes inside one rayon scope.
unsafe impl Send for SyncPtr {}
unsafe impl Sync for SyncPtr {}
impl SyncPtr {
    fn get(self) -> *mut f32 {
        self.0
    }
}

fn softmax(s: &mut [f32]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Tensor;

    pub(super) fn pseudo_random(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// Causal attention of one query over `n` positions in f64: `softmax(scale·q·k_j)·v_j`,
    /// with `k_j = kc[j·stride + off..][..q.len()]` (and `v_j` likewise).
    pub(super) fn attention_reference(
        q: &[f32],
        kc: &[f32],
        vc: &[f32],
        n: usize,
        stride: usize,
        off: usize,
        scale: f64,
    ) -> Vec<f64> {
        let hd = q.len();
        let sc: Vec<f64> = (0..n)
            .map(|j| {
                (0..hd)
                    .map(|i| q[i] as f64 * kc[j * stride + off + i] as f64)
                    .sum::<f64>()
                    * scale
            })
            .collect();
        let m = sc.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = sc.iter().map(|x| (x - m).exp()).sum();
        (0..hd)
            .map(|i| {
                (0..n)
                    .map(|j| (sc[j] - m).exp() / z * vc[j * stride + off + i] as f64)
                    .sum()
            })
            .collect()
    }

    pub(super) fn quantized(rows: usize, cols: usize, dtype: GgmlDType, seed: u64) -> QTensor {
        let v = pseudo_random(rows * cols, seed);
        let t = Tensor::from_vec(v, (rows, cols), &Device::Cpu).unwrap();
        QTensor::quantize(&t, dtype).unwrap()
    }

    #[test]
    fn blocks_dequantize_exactly_as_candle() {
        for dtype in [
            GgmlDType::Q4_1,
            GgmlDType::Q8_0,
            GgmlDType::Q4K,
            GgmlDType::F32,
        ] {
            let qt = quantized(7, 256, dtype, 3);
            let q = QRows::from_qtensor(&qt, "t", Path::new("x")).unwrap();
            let want: Vec<f32> = qt
                .dequantize(&Device::Cpu)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap();
            assert_eq!(q.dense(), want, "{dtype:?}");
        }
    }

    #[test]
    fn every_kernel_matches_the_dequantized_dot_product() {
        let all = kernels::available();
        for dtype in [GgmlDType::Q4_1, GgmlDType::Q8_0, GgmlDType::Q6K] {
            let (rows, cols) = (37, 768);
            let qt = quantized(rows, cols, dtype, 11);
            let q = QRows::from_qtensor(&qt, "t", Path::new("x")).unwrap();
            let dense = q.dense();
            let x = pseudo_random(cols, 5);
            let xsum: Vec<f32> = x.chunks_exact(QK).map(|c| c.iter().sum()).collect();
            for (name, k) in &all {
                let mut out = vec![0f32; rows - 3];
                (k.rows_dot)(&q, 3, &x, &xsum, 1, &mut out);
                for (i, got) in out.iter().enumerate() {
                    let row = &dense[(i + 3) * cols..(i + 4) * cols];
                    let want: f64 = row.iter().zip(&x).map(|(a, b)| *a as f64 * *b as f64).sum();
                    assert!(
                        (*got as f64 - want).abs() < 1e-4 * (1.0 + want.abs()),
                        "{name} {dtype:?} row {i}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_attention_kernel_is_bit_identical_and_correct() {
        let (hd, kv_heads, l) = (64, 3, 77);
        let stride = hd * kv_heads;
        let (kc, vc) = (pseudo_random(l * stride, 1), pseudo_random(l * stride, 2));
        let q = pseudo_random(hd, 3);
        let mut first: Option<Vec<f32>> = None;
        for (name, k) in kernels::available() {
            let (mut s, mut o) = (vec![0f32; l], vec![0f32; hd]);
            (k.attend)(&q, &kc, &vc, stride, hd, 0.125, &mut s, &mut o);
            let want = attention_reference(&q, &kc, &vc, l, stride, hd, 0.125);
            for i in 0..hd {
                let want = want[i];
                assert!(
                    (o[i] as f64 - want).abs() < 1e-5,
                    "{name} {i}: {} vs {want}",
                    o[i]
                );
            }
            match &first {
                None => first = Some(o),
                Some(f) => assert!(
                    f.iter().zip(&o).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{name}"
                ),
            }
        }
    }

    #[test]
    fn stacking_mixed_formats_falls_back_to_f32_rows() {
        let a = QRows::from_qtensor(&quantized(2, 64, GgmlDType::Q4_1, 1), "a", Path::new("x"))
            .unwrap();
        let b = QRows::from_qtensor(&quantized(3, 64, GgmlDType::Q8_0, 2), "b", Path::new("x"))
            .unwrap();
        let (da, db) = (a.dense(), b.dense());
        let s = QRows::stack(vec![a, b]);
        assert_eq!(s.rows, 5);
        assert!(matches!(s.data, QData::F32(_)));
        assert_eq!(s.dense(), [da, db].concat());
    }

    #[test]
    fn softmax_is_a_distribution() {
        let mut s = vec![1.0, 2.0, 3.0, -1e30];
        softmax(&mut s);
        assert!((s.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(s[3], 0.0);
        assert!(s[2] > s[1] && s[1] > s[0]);
    }

    /// Under `Prefill::Rowwise`, a prompt processed in two pieces (the first from a cached
    /// prefix) leaves exactly the KV cache and logits of processing it at once.
    #[test]
    fn split_prompts_are_bit_identical() {
        let path = crate::default_model_path();
        assert!(
            path.exists(),
            "SmolLM2 model {} is missing: run scripts/fetch-llms.sh --smollm-only",
            path.display()
        );
        let mut f = std::fs::File::open(&path).unwrap();
        let ct = Content::read(&mut f).unwrap();
        let mut m =
            NativeLlama::load(&ct, &mut f, &path, Activations::F32, Prefill::Rowwise).unwrap();
        let ids: Vec<u32> = (0..300u32).map(|i| (i * 7919 + 13) % 40000 + 100).collect();
        m.reserve(ids.len() + 1);
        let pool = m.pool();
        pool.install(|| {
            let mut whole = m.new_seq();
            let want = m.step(&mut [&mut whole], &[&ids], true).unwrap();
            for cut in [1, 37, 128, 299] {
                let mut a = m.new_seq();
                m.step(&mut [&mut a], &[&ids[..cut]], true).unwrap();
                let got = m.step(&mut [&mut a], &[&ids[cut..]], true).unwrap();
                assert!(got == want, "logits after a split at {cut}");
                for (x, y) in a.cache.iter().zip(&whole.cache) {
                    assert!(x.k == y.k && x.v == y.v, "KV cache after a split at {cut}");
                }
            }
            // Through the prefix cache: a prompt sharing 200 tokens reuses them.
            m.remember(&ids, &whole);
            let mut other = ids[..200].to_vec();
            other.extend([5u32, 6, 7]);
            let mut s = m.cached_prefix(&other);
            assert_eq!(s.len(), 200);
            let got = m.step(&mut [&mut s], &[&other[200..]], true).unwrap();
            let mut fresh = m.new_seq();
            let want = m.step(&mut [&mut fresh], &[&other], true).unwrap();
            assert!(got == want, "logits through the prefix cache");
            // The whole prompt again: all but its last token are reused.
            assert_eq!(m.cached_prefix(&ids).len(), ids.len() - 1);
        });
    }
}
