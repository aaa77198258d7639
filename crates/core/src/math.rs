//! Float functions written so that LLVM vectorises the loops that call them (no calls into
//! the C library, no branches): the native encoders' and the training kernels' `exp`.

/// `exp(x)` in f32 (Cephes' `expf` reduction and polynomial, about 1 ulp), valid for
/// `x ≤ 88`; inputs below -87 return `exp(-87)` (≈ 1.6e-38, a harmless stand-in for 0 in a
/// softmax). Written with bit operations only, so that it vectorises.
///
/// ```
/// let e = pgraphrag_core::math::exp(1.0);
/// assert!((e - std::f32::consts::E).abs() < 1e-6);
/// ```
#[inline(always)]
pub fn exp(x: f32) -> f32 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
