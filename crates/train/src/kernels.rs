//! The element-wise bodies of the fused CPU ops ([`crate::fused`], [`crate::block`],
//! [`crate::attention`]): RMSNorm rows, SwiGLU, the causal softmax rows and residual adds,
//! forward and backward. Each is plain Rust written so that LLVM vectorises it, compiled for
//! AVX-512, for AVX2 + FMA and for the target's baseline; the best set the CPU runs is picked
//! once per process. Sums run over 16 fixed lanes and then in order, `exp` is
//! [`pgraphrag_core::math::exp`] (about 1 ulp) and no multiply-add is fused, so every set
//! computes the same bits (`tests` below compare them).

// The lane loops index fixed-size arrays in lockstep; clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]

use std::sync::OnceLock;

use pgraphrag_core::math::exp;

/// An instruction set the kernels are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    Avx512,
    Avx2,
    Base,
}

impl Isa {
    /// The best set this CPU runs (detected once).
    pub fn detected() -> Isa {
        static ISA: OnceLock<Isa> = OnceLock::new();
        *ISA.get_or_init(|| {
            let cpu = pgraphrag_core::simd::CpuFeatures::detect();
            if cpu.avx512() {
                Isa::Avx512
            } else if cpu.avx2_fma() {
                Isa::Avx2
            } else {
                Isa::Base
            }
        })
    }

    /// Every set this CPU runs.
    #[cfg(test)]
    pub fn available() -> Vec<Isa> {
        match Isa::detected() {
            Isa::Avx512 => vec![Isa::Avx512, Isa::Avx2, Isa::Base],
            Isa::Avx2 => vec![Isa::Avx2, Isa::Base],
            Isa::Base => vec![Isa::Base],
        }
    }
}

/// `pub(crate) fn $name(args)` running `$body` compiled for the detected [`Isa`], and
/// `fn $with(isa, args)` for a given one (which must be one the CPU runs).
macro_rules! kernel {
    ($(#[$m:meta])* fn $name:ident / $with:ident ($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        pub(crate) fn $name($($arg: $ty),*) {
            $with(Isa::detected(), $($arg),*)
        }

        #[allow(unused_variables)]
        fn $with(isa: Isa, $($arg: $ty),*) {
            #[inline(always)]
            fn body($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
                unsafe fn v512($($arg: $ty),*) {
                    body($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn v256($($arg: $ty),*) {
                    body($($arg),*)
                }
                match isa {
                    // SAFETY: `Isa::detected` (or the caller, for a given set) checked that
                    // the CPU has the features.
                    Isa::Avx512 => return unsafe { v512($($arg),*) },
                    // SAFETY: as above.
                    Isa::Avx2 => return unsafe { v256($($arg),*) },
                    Isa::Base => {}
                }
            }
            body($($arg),*)
        }
    };
}

/// `Σ f(a_i, b_i, c_i)` over the common length of the slices, in 16 lanes (lane `l` sums
/// `i ≡ l mod 16` in order), then the lanes in order, then the tail: one fixed order. Slices
/// in chunks, so that the loop has no bounds checks and vectorises.
#[inline(always)]
fn lane_sum3(a: &[f32], b: &[f32], c: &[f32], f: impl Fn(f32, f32, f32) -> f32) -> f32 {
    let n = a.len().min(b.len()).min(c.len());
    let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
    let mut acc = [0f32; 16];
    let (ca, cb, cc) = (a.chunks_exact(16), b.chunks_exact(16), c.chunks_exact(16));
    let (ra, rb, rc) = (ca.remainder(), cb.remainder(), cc.remainder());
    for ((x, y), z) in ca.zip(cb).zip(cc) {
        for l in 0..16 {
            acc[l] += f(x[l], y[l], z[l]);
        }
    }
    let mut s = 0f32;
    for v in acc {
        s += v;
    }
    for ((x, y), z) in ra.iter().zip(rb).zip(rc) {
        s += f(*x, *y, *z);
    }
    s
}

/// The largest value of `x` (exact, so in any order).
#[inline(always)]
fn lane_max(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 16];
    let chunks = x.chunks_exact(16);
    let rest = chunks.remainder();
    for c in chunks {
        for l in 0..16 {
            acc[l] = acc[l].max(c[l]);
        }
    }
    let mut m = f32::NEG_INFINITY;
    for v in acc {
        m = m.max(v);
    }
    for v in rest {
        m = m.max(*v);
    }
    m
}

/// `sqrt(mean(x²) + eps)` of one row.
#[inline(always)]
fn rms(x: &[f32], eps: f32) -> f32 {
    (lane_sum3(x, x, x, |a, _, _| a * a) / x.len() as f32 + eps).sqrt()
}

kernel! {
    /// `out = x · (1 / sqrt(mean(x²) + eps)) · w` for one row (`x`, `w`, `out` of one length).
    fn rms_norm_row / rms_norm_row_with(x: &[f32], w: &[f32], eps: f32, out: &mut [f32]) {
        let d = x.len();
        let (w, out) = (&w[..d], &mut out[..d]);
        let inv = 1.0 / rms(x, eps);
        for i in 0..d {
            out[i] = x[i] * inv * w[i];
        }
    }
}

kernel! {
    /// `∂x` of [`rms_norm_row`] from the output gradient `g`: with `s = sqrt(mean(x²) + eps)`,
    /// `dx = g·w · (1 / s) − x · Σ(g·w·x) / (d · s³)`, plus `add` (the residual's gradient) if
    /// given.
    fn rms_norm_backward_row / rms_norm_backward_row_with(
        x: &[f32],
        g: &[f32],
        w: &[f32],
        eps: f32,
        add: Option<&[f32]>,
        out: &mut [f32],
    ) {
        let d = x.len();
        let (g, w, out) = (&g[..d], &w[..d], &mut out[..d]);
        let s = rms(x, eps);
        let dot = lane_sum3(g, w, x, |g, w, x| g * w * x);
        let (inv, c) = (1.0 / s, dot / (d as f32 * s * s * s));
        for i in 0..d {
            out[i] = g[i] * w[i] * inv - x[i] * c;
        }
        if let Some(a) = add {
            let a = &a[..d];
            for i in 0..d {
                out[i] += a[i];
            }
        }
    }
}

kernel! {
    /// SwiGLU: `out = silu(g) · u` with `silu(g) = g / (1 + exp(−g))`.
    fn swiglu / swiglu_with(g: &[f32], u: &[f32], out: &mut [f32]) {
        let n = out.len();
        let (g, u) = (&g[..n], &u[..n]);
        for i in 0..n {
            out[i] = g[i] / (1.0 + exp(-g[i])) * u[i];
        }
    }
}

kernel! {
    /// SwiGLU's gradients from `(g, u, ∂a)`, one `e = exp(−g)` each: with `σ = 1 / (1 + e)`,
    /// `∂g = ∂a · u · σ · (1 + g · (1 − σ))` and `∂u = ∂a · g / (1 + e)`.
    fn swiglu_backward / swiglu_backward_with(
        g: &[f32],
        u: &[f32],
        da: &[f32],
        dg: &mut [f32],
        du: &mut [f32],
    ) {
        let n = dg.len();
        let (g, u, da, du) = (&g[..n], &u[..n], &da[..n], &mut du[..n]);
        for i in 0..n {
            let one_e = 1.0 + exp(-g[i]);
            let s = 1.0 / one_e;
            dg[i] = da[i] * u[i] * s * (1.0 + g[i] * (1.0 - s));
            du[i] = da[i] * (g[i] / one_e);
        }
    }
}

kernel! {
    /// One row of the causal softmax in place: raw scores in; the first `seen` positions
    /// become `softmax(scale · s)`, the rest 0.
    fn softmax_row / softmax_row_with(row: &mut [f32], seen: usize, scale: f32) {
        let (head, tail) = row.split_at_mut(seen);
        for v in head.iter_mut() {
            *v *= scale;
        }
        let max = lane_max(head);
        for v in head.iter_mut() {
            *v = exp(*v - max);
        }
        let sum = lane_sum3(head, head, head, |v, _, _| v);
        for v in head.iter_mut() {
            *v /= sum;
        }
        tail.fill(0.0);
    }
}

kernel! {
    /// `∂s` of one causal softmax row from `P` and `∂P` (in place in `d`):
    /// `scale · P ⊙ (∂P − Σ_j ∂P_j P_j)` over the first `seen` positions, the rest 0.
    fn softmax_backward_row / softmax_backward_row_with(
        d: &mut [f32],
        p: &[f32],
        seen: usize,
        scale: f32,
    ) {
        let (head, tail) = d.split_at_mut(seen);
        let p = &p[..seen];
        let dot = lane_sum3(p, head, p, |p, d, _| p * d);
        for i in 0..seen {
            head[i] = scale * p[i] * (head[i] - dot);
        }
        tail.fill(0.0);
    }
}

kernel! {
    /// `y += x`.
    fn add / add_with(y: &mut [f32], x: &[f32]) {
        let x = &x[..y.len()];
        for i in 0..y.len() {
            y[i] += x[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, k: f32) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * k).sin() * 4.0).collect()
    }

    /// Every kernel on every set this CPU runs, as bits.
    fn run(isa: Isa) -> Vec<Vec<u32>> {
        let (x, g, w) = (data(203, 0.37), data(203, 0.11), data(203, 0.05));
        let mut outs = vec![vec![0f32; 203]; 8];
        rms_norm_row_with(isa, &x, &w, 1e-5, &mut outs[0]);
        rms_norm_backward_row_with(isa, &x, &g, &w, 1e-5, Some(&x), &mut outs[1]);
        swiglu_with(isa, &x, &g, &mut outs[2]);
        let (a, b) = outs.split_at_mut(4);
        swiglu_backward_with(isa, &x, &g, &w, &mut a[3], &mut b[0]);
        outs[5] = x.clone();
        softmax_row_with(isa, &mut outs[5], 150, 0.125);
        outs[6] = g.clone();
        softmax_backward_row_with(isa, &mut outs[6], &x, 150, 0.125);
        outs[7] = x.clone();
        add_with(isa, &mut outs[7], &g);
        outs.iter()
            .map(|v| v.iter().map(|x| x.to_bits()).collect())
            .collect()
    }

    #[test]
    fn every_instruction_set_computes_the_same_bits() {
        let base = run(Isa::Base);
        for isa in Isa::available() {
            assert_eq!(run(isa), base, "{isa:?}");
        }
    }

    #[test]
    fn the_kernels_compute_their_formulas() {
        let (x, g) = (data(100, 0.37), data(100, 0.11));
        let mut out = vec![0f32; 100];
        swiglu(&x, &g, &mut out);
        for i in 0..100 {
            let want = x[i] as f64 / (1.0 + (-x[i] as f64).exp()) * g[i] as f64;
            assert!((out[i] as f64 - want).abs() < 1e-5 * (1.0 + want.abs()));
        }
        let mut row = x.clone();
        softmax_row(&mut row, 60, 0.5);
        let m = x[..60].iter().fold(f64::MIN, |m, v| m.max(*v as f64 * 0.5));
        let z: f64 = x[..60].iter().map(|v| (*v as f64 * 0.5 - m).exp()).sum();
        for i in 0..60 {
            let want = (x[i] as f64 * 0.5 - m).exp() / z;
            assert!((row[i] as f64 - want).abs() < 1e-6);
        }
        assert!(row[60..].iter().all(|v| *v == 0.0));
    }
}
