//! CPU kernels of the native BERT forward pass ([`super::native`]): element-wise maps (GELU
//! with a vectorisable `erf`, softmax with a vectorisable `exp`, residual + LayerNorm) and an
//! AVX-512 matrix multiply with the bias (and optionally GELU) fused in.
//!
//! The element-wise bodies are plain Rust written so that LLVM vectorises them; each is
//! compiled three times (AVX-512, AVX2+FMA, the target's baseline) and the best one the CPU
//! supports is picked at run time (`pgraphrag_core::simd::CpuFeatures`). The matrix multiply uses
//! AVX-512 intrinsics where the CPU has AVX-512F and the `gemm` crate everywhere else.

// The kernels index several fixed-size arrays in lockstep; that is clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]

/// `erf(x)` for f32 inputs: the rational minimax approximation `x·P(x²)/Q(x²)` on [-4, 4]
/// used by Eigen and XLA (outside, `erf(±4)` rounds to ±1 in f32), evaluated in f64 so that
/// f32 rounding inside the evaluation does not add to its approximation error (9.5e-8 at
/// most, before the final rounding of the result to f32). Branch-free: it vectorises.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0) as f64;
    let x2 = x * x;
    let mut p = x2 * -2.726_142_258_013_06e-10 + 2.770_681_424_959_02e-8;
    p = p * x2 + -2.101_024_020_825_08e-6;
    p = p * x2 + -5.692_506_394_623_46e-5;
    p = p * x2 + -7.349_906_303_268_55e-4;
    p = p * x2 + -2.954_599_808_540_25e-3;
    p = p * x2 + -1.609_603_332_624_15e-2;
    p *= x;
    let mut q = x2 * -1.456_607_184_649_96e-5 + -2.133_740_552_789_05e-4;
    q = q * x2 + -1.682_826_974_382_03e-3;
    q = q * x2 + -7.373_329_167_204_68e-3;
    q = q * x2 + -1.426_473_905_141_89e-2;
    (p / q) as f32
}

/// `exp(x)` in f32 (Cephes' `expf` reduction and polynomial, about 1 ulp), valid for
/// `x ≤ 88`; inputs below -87 return `exp(-87)` (≈ 1.6e-38, a harmless stand-in for 0 in a
/// softmax). Written with bit operations only, so that it vectorises.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // n = round(x / ln 2) with the 1.5·2^23 trick (round to nearest even).
    const MAGIC: f32 = 12_582_912.0;
    let t = x * std::f32::consts::LOG2_E + MAGIC;
    let n = t - MAGIC;
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let r2 = r * r;
    let mut p = r * 1.987_569_1e-4 + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5; // Cephes: 5.0000001201e-1, which rounds to 0.5 in f32
    let y = p * r2 + r + 1.0;
    // 2^n: n's integer value sits in t's low mantissa bits.
    let ni = (t.to_bits() as i32).wrapping_sub(0x4B40_0000);
    let scale = f32::from_bits(((ni + 127) as u32) << 23);
    y * scale
}

#[inline(always)]
fn gelu_erf_body(x: &mut [f32]) {
    for v in x.iter_mut() {
        let a = *v;
        *v = 0.5 * a * (1.0 + erf(a * std::f32::consts::FRAC_1_SQRT_2));
    }
}

#[inline(always)]
fn gelu_tanh_body(x: &mut [f32]) {
    // 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))), tanh(y) = 1 − 2/(exp(2y) + 1).
    for v in x.iter_mut() {
        let a = *v;
        let y = 0.797_884_6 * (a + 0.044_715 * a * a * a);
        let th = 1.0 - 2.0 / (exp(2.0 * y) + 1.0);
        *v = 0.5 * a * (1.0 + th);
    }
}

#[inline(always)]
fn relu_body(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = v.max(0.0);
    }
}

/// Sum of a slice with 16 independent lanes (vectorises; order differs from a serial sum).
#[inline(always)]
fn lane_sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    let mut chunks = x.chunks_exact(16);
    for c in &mut chunks {
        for i in 0..16 {
            acc[i] += c[i];
        }
    }
    let mut s = 0f32;
    for v in chunks.remainder() {
        s += v;
    }
    acc.iter().sum::<f32>() + s
}

#[inline(always)]
fn lane_max(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 16];
    let mut chunks = x.chunks_exact(16);
    for c in &mut chunks {
        for i in 0..16 {
            acc[i] = acc[i].max(c[i]);
        }
    }
    let mut m = f32::NEG_INFINITY;
    for v in chunks.remainder() {
        m = m.max(*v);
    }
    acc.iter().fold(m, |a, b| a.max(*b))
}

/// Softmax of each `n`-long row of `x`, in place.
#[inline(always)]
fn softmax_body(x: &mut [f32], n: usize) {
    for row in x.chunks_exact_mut(n) {
        let m = lane_max(row);
        for v in row.iter_mut() {
            *v = exp(*v - m);
        }
        let inv = 1.0 / lane_sum(row);
        for v in row.iter_mut() {
            *v *= inv;
        }
    }
}

/// `x ← LayerNorm(x + y)` for each `g.len()`-long row (`y` may be empty: no residual).
#[inline(always)]
fn add_ln_body(x: &mut [f32], y: &[f32], g: &[f32], b: &[f32], eps: f32) {
    let n = g.len();
    for (r, row) in x.chunks_exact_mut(n).enumerate() {
        if !y.is_empty() {
            for (v, w) in row.iter_mut().zip(&y[r * n..(r + 1) * n]) {
                *v += *w;
            }
        }
        let mean = lane_sum(row) / n as f32;
        let mut acc = [0f32; 16];
        let mut chunks = row.chunks_exact(16);
        for c in &mut chunks {
            for i in 0..16 {
                let d = c[i] - mean;
                acc[i] += d * d;
            }
        }
        let mut var = 0f32;
        for v in chunks.remainder() {
            var += (v - mean) * (v - mean);
        }
        let var = (acc.iter().sum::<f32>() + var) / n as f32;
        let rstd = 1.0 / (var + eps).sqrt();
        for ((v, gg), bb) in row.iter_mut().zip(g).zip(b) {
            *v = (*v - mean) * rstd * gg + bb;
        }
    }
}

/// The activation of BERT's intermediate layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Act {
    /// `x·Φ(x)` with the exact `erf` (`hidden_act: "gelu"`).
    GeluErf,
    /// The tanh approximation (`gelu_new`, `gelu_approximate`).
    GeluTanh,
    /// `max(x, 0)`.
    Relu,
}

/// `x ← LayerNorm(x + y)` row-wise: `(x, y or empty, gamma, beta, eps)`.
pub(crate) type AddLn = fn(&mut [f32], &[f32], &[f32], &[f32], f32);

/// The element-wise kernels compiled for one instruction set.
#[derive(Clone, Copy)]
pub(crate) struct Kernels {
    pub gelu_erf: fn(&mut [f32]),
    pub gelu_tanh: fn(&mut [f32]),
    pub relu: fn(&mut [f32]),
    /// Row-wise softmax: `(x, row length)`.
    pub softmax: fn(&mut [f32], usize),
    /// `x ← LayerNorm(x + y)` row-wise: `(x, y or empty, gamma, beta, eps)`.
    pub add_ln: AddLn,
    /// AVX-512F is available: [`matmul_avx512`] may be used.
    pub avx512: bool,
    /// Which instruction set (for `Debug` and the docs).
    pub name: &'static str,
}

impl Kernels {
    /// Applies `act` in place.
    pub fn act(&self, act: Act, x: &mut [f32]) {
        match act {
            Act::GeluErf => (self.gelu_erf)(x),
            Act::GeluTanh => (self.gelu_tanh)(x),
            Act::Relu => (self.relu)(x),
        }
    }

    /// The portable kernels (the target's baseline instruction set).
    pub fn portable() -> Kernels {
        Kernels {
            gelu_erf: gelu_erf_body,
            gelu_tanh: gelu_tanh_body,
            relu: relu_body,
            softmax: softmax_body,
            add_ln: add_ln_body,
            avx512: false,
            name: "portable",
        }
    }

    /// The best kernels this CPU runs: AVX-512 (F, BW, VL), else AVX2 + FMA, else portable.
    pub fn best() -> Kernels {
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(k) = x86::avx512() {
                return k;
            }
            if let Some(k) = x86::avx2() {
                return k;
            }
        }
        Kernels::portable()
    }
}

/// The AVX2 + FMA kernels, when the CPU has them (tests compare them on AVX-512 machines).
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn avx2_kernels() -> Option<Kernels> {
    x86::avx2()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;
    use pgraphrag_core::simd::CpuFeatures;

    macro_rules! variant {
        ($feat:literal, $gelu:ident, $gelut:ident, $relu:ident, $sm:ident, $ln:ident) => {
            #[target_feature(enable = $feat)]
            unsafe fn $gelu(x: &mut [f32]) {
                gelu_erf_body(x)
            }
            #[target_feature(enable = $feat)]
            unsafe fn $gelut(x: &mut [f32]) {
                gelu_tanh_body(x)
            }
            #[target_feature(enable = $feat)]
            unsafe fn $relu(x: &mut [f32]) {
                relu_body(x)
            }
            #[target_feature(enable = $feat)]
            unsafe fn $sm(x: &mut [f32], n: usize) {
                softmax_body(x, n)
            }
            #[target_feature(enable = $feat)]
            unsafe fn $ln(x: &mut [f32], y: &[f32], g: &[f32], b: &[f32], eps: f32) {
                add_ln_body(x, y, g, b, eps)
            }
        };
    }
    variant!(
        "avx512f,avx512bw,avx512vl,avx2,fma",
        gelu_512,
        gelut_512,
        relu_512,
        softmax_512,
        ln_512
    );
    variant!(
        "avx2,fma",
        gelu_256,
        gelut_256,
        relu_256,
        softmax_256,
        ln_256
    );

    pub(super) fn avx512() -> Option<Kernels> {
        if CpuFeatures::detect().avx512() {
            // SAFETY (every closure): the CPU has every feature these functions are compiled
            // for, checked just above.
            return Some(Kernels {
                gelu_erf: |x| unsafe { gelu_512(x) },
                gelu_tanh: |x| unsafe { gelut_512(x) },
                relu: |x| unsafe { relu_512(x) },
                softmax: |x, n| unsafe { softmax_512(x, n) },
                add_ln: |x, y, g, b, e| unsafe { ln_512(x, y, g, b, e) },
                avx512: true,
                name: "avx512",
            });
        }
        None
    }

    pub(super) fn avx2() -> Option<Kernels> {
        if CpuFeatures::detect().avx2_fma() {
            // SAFETY (every closure): as above.
            return Some(Kernels {
                gelu_erf: |x| unsafe { gelu_256(x) },
                gelu_tanh: |x| unsafe { gelut_256(x) },
                relu: |x| unsafe { relu_256(x) },
                softmax: |x, n| unsafe { softmax_256(x, n) },
                add_ln: |x, y, g, b, e| unsafe { ln_256(x, y, g, b, e) },
                avx512: false,
                name: "avx2",
            });
        }
        None
    }
}

/// Columns of one packed weight panel of the AVX-512 matrix multiply.
pub(crate) const NR: usize = 32;
/// Rows of one AVX-512 micro-tile (24 accumulators of 16 lanes).
pub(crate) const MR: usize = 12;

/// Packs `w` (`n × k`, row-major, PyTorch's `Linear.weight` layout) into `n / NR` panels of
/// `k × NR` (row `kk` of panel `p` holds `w[p·NR .. p·NR+NR][kk]`). `n` must be a multiple of
/// [`NR`].
pub(crate) fn pack_panels(w: &[f32], n: usize, k: usize) -> Vec<f32> {
    debug_assert_eq!(w.len(), n * k);
    debug_assert_eq!(n % NR, 0);
    let mut out = vec![0f32; n * k];
    for p in 0..n / NR {
        let panel = &mut out[p * k * NR..(p + 1) * k * NR];
        for j in 0..NR {
            let row = &w[(p * NR + j) * k..(p * NR + j + 1) * k];
            for (kk, v) in row.iter().enumerate() {
                panel[kk * NR + j] = *v;
            }
        }
    }
    out
}

/// `c[r][p·NR..p·NR+NR] = bias + a[r] · panel_p` for `rows` rows starting at `a` (row stride
/// `lda`) and panels `p0..p1`.
///
/// # Safety
/// The CPU must have AVX-512F; `a` must hold `rows` rows of `k` floats at stride `lda`,
/// `packed` the panels of [`pack_panels`] for `k` inputs, `bias` `p1·NR` floats, and `c`
/// `rows` rows of at least `p1·NR` floats at stride `ldc`, not aliasing `a`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn matmul_avx512(
    a: *const f32,
    lda: usize,
    rows: usize,
    k: usize,
    packed: *const f32,
    bias: *const f32,
    p0: usize,
    p1: usize,
    c: *mut f32,
    ldc: usize,
) {
    // k is cut into blocks of KC so that a block of one panel (KC·NR floats, 16 KiB) stays in
    // L1 while every row tile of this call streams past it; tiles accumulate in `c`.
    const KC: usize = 128;
    for p in p0..p1 {
        // SAFETY: all offsets stay inside the buffers described in the contract.
        unsafe {
            let bias = bias.add(p * NR);
            let mut k0 = 0;
            while k0 < k {
                let kc = KC.min(k - k0);
                let panel = packed.add(p * k * NR + k0 * NR);
                let first = k0 == 0;
                let mut r = 0;
                while r + MR <= rows {
                    tile::<MR>(
                        a.add(r * lda + k0),
                        lda,
                        kc,
                        panel,
                        bias,
                        first,
                        c.add(r * ldc + p * NR),
                        ldc,
                    );
                    r += MR;
                }
                let a = a.add(r * lda + k0);
                let c = c.add(r * ldc + p * NR);
                let f = first;
                match rows - r {
                    0 => {}
                    1 => tile::<1>(a, lda, kc, panel, bias, f, c, ldc),
                    2 => tile::<2>(a, lda, kc, panel, bias, f, c, ldc),
                    3 => tile::<3>(a, lda, kc, panel, bias, f, c, ldc),
                    4 => tile::<4>(a, lda, kc, panel, bias, f, c, ldc),
                    5 => tile::<5>(a, lda, kc, panel, bias, f, c, ldc),
                    6 => tile::<6>(a, lda, kc, panel, bias, f, c, ldc),
                    7 => tile::<7>(a, lda, kc, panel, bias, f, c, ldc),
                    8 => tile::<8>(a, lda, kc, panel, bias, f, c, ldc),
                    9 => tile::<9>(a, lda, kc, panel, bias, f, c, ldc),
                    10 => tile::<10>(a, lda, kc, panel, bias, f, c, ldc),
                    _ => tile::<11>(a, lda, kc, panel, bias, f, c, ldc),
                }
                k0 += kc;
            }
        }
    }
}

/// One `R × NR` tile over `k` inputs: 2·R zmm accumulators, seeded with the bias (`first`)
/// or with what `c` holds (a later block of inputs).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn tile<const R: usize>(
    a: *const f32,
    lda: usize,
    k: usize,
    panel: *const f32,
    bias: *const f32,
    first: bool,
    c: *mut f32,
    ldc: usize,
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller guarantees the extents (see `matmul_avx512`).
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
        let mut rows = [a; R];
        for i in 0..R {
            rows[i] = a.add(i * lda);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// erf by its Taylor series in f64 (|x| ≤ 4; accurate to ~1e-9 there).
    fn erf_ref(x: f64) -> f64 {
        if x.abs() > 4.0 {
            return x.signum();
        }
        let (mut term, mut sum, mut n) = (x, x, 0.0f64);
        loop {
            n += 1.0;
            term *= -x * x / n;
            let t = term / (2.0 * n + 1.0);
            sum += t;
            if t.abs() < 1e-17 {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn erf_is_accurate() {
        let mut worst = 0f64;
        for i in -60_000..=60_000 {
            let x = i as f64 / 10_000.0;
            let e = (erf(x as f32) as f64 - erf_ref(x)).abs();
            worst = worst.max(e);
        }
        // 9.5e-8 at most, final rounding to f32 included (measured 9.46e-8 against libm);
        // the f64 series loses ~1e-8 to cancellation near |x| = 4.
        assert!(worst < 1.1e-7, "max |erf error| {worst}");
    }

    #[test]
    fn exp_is_accurate() {
        let mut worst = 0f64;
        for i in -87_000..=80_000 {
            let x = i as f32 / 1000.0;
            let r = (x as f64).exp();
            let rel = ((exp(x) as f64 - r) / r).abs();
            worst = worst.max(rel);
        }
        assert!(worst < 5e-7, "max relative exp error {worst}");
    }

    #[test]
    fn every_variant_agrees_with_the_scalar_definitions() {
        let xs: Vec<f32> = (0..1000).map(|i| (i as f32 - 500.0) / 61.0).collect();
        for k in [Kernels::portable(), Kernels::best()] {
            let mut g = xs.clone();
            (k.gelu_erf)(&mut g);
            for (x, y) in xs.iter().zip(&g) {
                let r = 0.5 * *x as f64 * (1.0 + erf_ref(*x as f64 / 2f64.sqrt()));
                assert!((*y as f64 - r).abs() < 1e-6, "{} gelu({x})", k.name);
            }
            let mut t = xs.clone();
            (k.gelu_tanh)(&mut t);
            for (x, y) in xs.iter().zip(&t) {
                let x = *x as f64;
                let r = 0.5 * x * (1.0 + (0.797_884_560_8 * (x + 0.044715 * x * x * x)).tanh());
                assert!((*y as f64 - r).abs() < 1e-5, "{} gelu_tanh({x})", k.name);
            }
            let mut s = xs[..200].to_vec();
            (k.softmax)(&mut s, 100);
            for (row, src) in s.chunks(100).zip(xs[..200].chunks(100)) {
                let m = src.iter().fold(f64::MIN, |a, b| a.max(*b as f64));
                let z: f64 = src.iter().map(|v| (*v as f64 - m).exp()).sum();
                for (p, v) in row.iter().zip(src) {
                    assert!((*p as f64 - (*v as f64 - m).exp() / z).abs() < 1e-7);
                }
            }
            let (g1, b1) = (vec![1.5f32; 40], vec![0.25f32; 40]);
            let mut x = xs[..80].to_vec();
            let y = xs[100..180].to_vec();
            (k.add_ln)(&mut x, &y, &g1, &b1, 1e-12);
            for r in 0..2 {
                let v: Vec<f64> = (0..40)
                    .map(|i| xs[r * 40 + i] as f64 + xs[100 + r * 40 + i] as f64)
                    .collect();
                let mean = v.iter().sum::<f64>() / 40.0;
                let var = v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / 40.0;
                for i in 0..40 {
                    let want = (v[i] - mean) / (var + 1e-12).sqrt() * 1.5 + 0.25;
                    assert!((x[r * 40 + i] as f64 - want).abs() < 1e-5);
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_matmul_matches_a_naive_product() {
        if !Kernels::best().avx512 {
            return; // nothing to compare on this CPU; the gemm path is covered elsewhere
        }
        let (m, k, n) = (29, 40, 64);
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0)
            .collect();
        let w: Vec<f32> = (0..n * k)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 7.0)
            .collect();
        let bias: Vec<f32> = (0..n).map(|i| i as f32 / 10.0).collect();
        let packed = pack_panels(&w, n, k);
        let mut c = vec![0f32; m * n];
        // SAFETY: AVX-512F checked above; the buffers have the sizes of the contract.
        unsafe {
            matmul_avx512(
                a.as_ptr(),
                k,
                m,
                k,
                packed.as_ptr(),
                bias.as_ptr(),
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
                assert!((c[r * n + j] as f64 - want).abs() < 1e-4, "({r},{j})");
            }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod timing {
    use super::*;

    /// `cargo test --release -p pgraphrag-retrieval --lib matmul_gflops -- --ignored --nocapture`
    #[test]
    #[ignore = "a timing probe, not a test"]
    fn matmul_gflops() {
        if !Kernels::best().avx512 {
            return;
        }
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
                    // SAFETY: AVX-512F checked; sizes as in the contract.
                    unsafe {
                        matmul_avx512(
                            a.as_ptr().add(r0 * k),
                            k,
                            96.min(m - r0),
                            k,
                            packed.as_ptr(),
                            bias.as_ptr(),
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
                "m={m} k={k} n={n}: {:.1} GFLOP/s",
                2.0 * (m * k * n * reps) as f64 / s / 1e9
            );
        }
    }
}
