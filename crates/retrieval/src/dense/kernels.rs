//! CPU kernels of the native BERT forward pass ([`super::native`]): element-wise maps (GELU
//! with a vectorisable `erf`, softmax with a vectorisable `exp`, residual + LayerNorm), and the
//! choice of matrix multiply ([`super::matmul`]: AVX-512 or AVX2 tiles with the bias fused in).
//!
//! The element-wise bodies are plain Rust written so that LLVM vectorises them; each is
//! compiled three times (AVX-512, AVX2+FMA, the target's baseline) and the best one the CPU
//! supports is picked at run time (`pgraphrag_core::simd::CpuFeatures`). The matrix multiply uses
//! intrinsics where the CPU has AVX-512F or AVX2 + FMA, and the `gemm` crate everywhere else.

// The kernels index several fixed-size arrays in lockstep; that is clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]

use pgraphrag_core::math::exp;

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
    /// The packed-panel matrix multiply for this CPU (`None`: the `gemm` crate).
    pub matmul: Option<super::matmul::Matmul>,
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
            matmul: None,
            name: "portable",
        }
    }

    /// The best kernels a CPU with the features `cpu` runs: AVX-512 (F, BW, VL), else AVX2 +
    /// FMA, else portable (always for [`CpuFeatures::portable`]).
    ///
    /// [`CpuFeatures::portable`]: pgraphrag_core::simd::CpuFeatures::portable
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    pub fn for_cpu(cpu: pgraphrag_core::simd::CpuFeatures) -> Kernels {
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(k) = x86::avx512(cpu) {
                return k;
            }
            if let Some(k) = x86::avx2(cpu) {
                return k;
            }
        }
        Kernels::portable()
    }
}

/// The AVX2 + FMA kernels, when the CPU has them (tests compare them on AVX-512 machines).
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn avx2_kernels() -> Option<Kernels> {
    x86::avx2(pgraphrag_core::simd::CpuFeatures::detect())
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

    pub(super) fn avx512(cpu: CpuFeatures) -> Option<Kernels> {
        if cpu.avx512() {
            // SAFETY (every closure): the CPU has every feature these functions are compiled
            // for, checked just above.
            return Some(Kernels {
                gelu_erf: |x| unsafe { gelu_512(x) },
                gelu_tanh: |x| unsafe { gelut_512(x) },
                relu: |x| unsafe { relu_512(x) },
                softmax: |x, n| unsafe { softmax_512(x, n) },
                add_ln: |x, y, g, b, e| unsafe { ln_512(x, y, g, b, e) },
                matmul: Some(super::super::matmul::avx512),
                name: "avx512",
            });
        }
        None
    }

    pub(super) fn avx2(cpu: CpuFeatures) -> Option<Kernels> {
        if cpu.avx2_fma() {
            // SAFETY (every closure): as above.
            return Some(Kernels {
                gelu_erf: |x| unsafe { gelu_256(x) },
                gelu_tanh: |x| unsafe { gelut_256(x) },
                relu: |x| unsafe { relu_256(x) },
                softmax: |x, n| unsafe { softmax_256(x, n) },
                add_ln: |x, y, g, b, e| unsafe { ln_256(x, y, g, b, e) },
                matmul: Some(super::super::matmul::avx2),
                name: "avx2",
            });
        }
        None
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
    fn every_variant_agrees_with_the_scalar_definitions() {
        let xs: Vec<f32> = (0..1000).map(|i| (i as f32 - 500.0) / 61.0).collect();
        for k in [
            Kernels::portable(),
            Kernels::for_cpu(pgraphrag_core::simd::CpuFeatures::detect()),
        ] {
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
}
