//! Sampling and stopping: the per-sequence state of a generation.

use std::time::{Duration, Instant};

use pgraphrag_core::GenParams;
use pgraphrag_core::simd::CpuFeatures;
use rand::SeedableRng;
use rand::distr::Distribution;
use rand::distr::weighted::WeightedIndex;

use super::GgufModel;
use super::options::{FinishReason, Generation};
use crate::error::{LlmError, Result};

pub(super) fn validate_params(params: &GenParams) -> Result<()> {
    if !(params.temperature >= 0.0 && params.temperature.is_finite()) {
        return Err(LlmError::InvalidParams(format!(
            "temperature must be finite and >= 0, got {}",
            params.temperature
        )));
    }
    if let Some(p) = params.top_p
        && !(p > 0.0 && p <= 1.0)
    {
        return Err(LlmError::InvalidParams(format!(
            "top_p must be in (0, 1], got {p}"
        )));
    }
    Ok(())
}

/// The sampling and stopping state of one sequence being generated.
pub(super) struct SeqGen {
    sampler: Sampler,
    pub(super) out: Generation,
    t0: Instant,
    t_decode: Instant,
    /// Tokens in the KV cache.
    pub(super) pos: usize,
    max_tokens: usize,
    stop: Vec<String>,
}

impl SeqGen {
    pub(super) fn new(prompt_tokens: usize, params: &GenParams) -> Self {
        SeqGen {
            sampler: Sampler::new(params),
            out: Generation {
                text: String::new(),
                tokens: Vec::new(),
                prompt_tokens,
                finish: FinishReason::Length,
                prompt_time: Duration::ZERO,
                decode_time: Duration::ZERO,
            },
            t0: Instant::now(),
            t_decode: Instant::now(),
            pos: prompt_tokens,
            max_tokens: params.max_tokens,
            stop: params
                .stop
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect(),
        }
    }

    /// Samples from `logits`; returns the token to feed next, or `None` when the sequence is
    /// finished (then `self.out` is complete).
    pub(super) fn push(&mut self, m: &GgufModel, logits: &[f32]) -> Result<Option<u32>> {
        let next = self
            .sampler
            .sample(logits)
            .map_err(|e| LlmError::model("sampling", e))?;
        if self.out.tokens.is_empty() {
            self.out.prompt_time = self.t0.elapsed();
            self.t_decode = Instant::now();
        }
        if m.stop_ids.contains(&next) {
            self.out.finish = FinishReason::EndOfTurn;
            return self.finish(m).map(|_| None);
        }
        self.out.tokens.push(next);
        if !self.stop.is_empty() {
            let text = m.tokenizer.decode(&self.out.tokens)?;
            if let Some(i) = find_stop(&text, &self.stop) {
                self.out.text = text[..i].to_string();
                self.out.finish = FinishReason::StopString;
                self.out.decode_time = self.t_decode.elapsed();
                return Ok(None);
            }
        }
        if self.out.tokens.len() >= self.max_tokens || self.pos >= m.context {
            self.out.finish = FinishReason::Length;
            return self.finish(m).map(|_| None);
        }
        Ok(Some(next))
    }

    fn finish(&mut self, m: &GgufModel) -> Result<()> {
        self.out.decode_time = self.t_decode.elapsed();
        self.out.text = m.tokenizer.decode(&self.out.tokens)?;
        Ok(())
    }
}

/// Byte offset of the earliest stop string in `text`.
fn find_stop(text: &str, stop: &[String]) -> Option<usize> {
    stop.iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min()
}

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// The most likely token (the first of equal ones).
    ArgMax,
    /// A draw from `softmax(logits / temperature)`.
    All { temperature: f64 },
    /// A draw from the smallest set of most likely tokens whose probability reaches `p`.
    TopP { p: f64, temperature: f64 },
}

/// Seeded token sampling. It draws exactly the tokens candle-transformers' `LogitsProcessor`
/// (`ArgMax`, `All`, `TopP`) draws on the CPU for the same seed, which is what generated the
/// cached outputs: the same `StdRng` stream and `WeightedIndex`, and probabilities computed
/// with the same floating-point operations in the same order (the logits scaled by
/// `1 / temperature` in f32, the maximum, `exp`, the sum in candle's order, a division).
pub(super) struct Sampler {
    rng: rand::rngs::StdRng,
    mode: Mode,
    /// The order in which candle's `vec_sum` adds the probabilities on this CPU.
    sum: SumOrder,
}

/// The addition order of candle's CPU `vec_sum` (its kernel picked from the CPU's features).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SumOrder {
    /// x86 with AVX2: [`sum_avx2_order`].
    Avx2,
    /// AArch64 with NEON: [`sum_neon_order`].
    Neon,
    /// One value after another.
    Sequential,
}

impl SumOrder {
    fn detect() -> Self {
        let cpu = CpuFeatures::detect();
        if cpu.avx2() {
            SumOrder::Avx2
        } else if cpu.neon() {
            SumOrder::Neon
        } else {
            SumOrder::Sequential
        }
    }

    fn sum(self, x: &[f32]) -> f32 {
        match self {
            SumOrder::Avx2 => sum_avx2_order(x),
            SumOrder::Neon => sum_neon_order(x),
            SumOrder::Sequential => x.iter().fold(0f32, |a, &v| a + v),
        }
    }
}

impl Sampler {
    pub(super) fn new(params: &GenParams) -> Self {
        let mode = if params.temperature == 0.0 {
            Mode::ArgMax
        } else {
            match params.top_p {
                Some(p) if p < 1.0 => Mode::TopP {
                    p,
                    temperature: params.temperature,
                },
                _ => Mode::All {
                    temperature: params.temperature,
                },
            }
        };
        Sampler {
            rng: rand::rngs::StdRng::seed_from_u64(params.seed),
            mode,
            sum: SumOrder::detect(),
        }
    }

    /// The next token for `logits` (one per vocabulary entry).
    pub(super) fn sample(&mut self, logits: &[f32]) -> std::result::Result<u32, String> {
        if logits.is_empty() {
            return Err("no logits to sample from".into());
        }
        match self.mode {
            Mode::ArgMax => {
                let mut best = (0, logits[0]);
                for (i, &v) in logits.iter().enumerate() {
                    if best.1 < v {
                        best = (i, v);
                    }
                }
                Ok(best.0 as u32)
            }
            Mode::All { temperature } => {
                let prs = self.probabilities(logits, temperature);
                self.multinomial(&prs)
            }
            Mode::TopP { p, temperature } => {
                let mut prs = self.probabilities(logits, temperature);
                if p <= 0.0 || p >= 1.0 {
                    return self.multinomial(&prs);
                }
                let top_p = p as f32;
                let mut order: Vec<usize> = (0..prs.len()).collect();
                order.sort_by(|&i, &j| prs[j].total_cmp(&prs[i]));
                let mut cumsum = 0f32;
                for &i in &order {
                    if cumsum >= top_p {
                        prs[i] = 0.0;
                    } else {
                        cumsum += prs[i];
                    }
                }
                self.multinomial(&prs)
            }
        }
    }

    fn multinomial(&mut self, prs: &[f32]) -> std::result::Result<u32, String> {
        let d = WeightedIndex::new(prs).map_err(|e| e.to_string())?;
        Ok(d.sample(&mut self.rng) as u32)
    }

    /// `softmax(logits / temperature)` as candle computes it on the CPU.
    fn probabilities(&self, logits: &[f32], temperature: f64) -> Vec<f32> {
        let mul = (1.0 / temperature) as f32;
        let mut p: Vec<f32> = logits.iter().map(|&x| x * mul + 0.0).collect();
        let max = p[1..].iter().fold(p[0], |m, &x| m.max(x));
        for v in p.iter_mut() {
            *v = (*v - max).exp();
        }
        let sum = self.sum.sum(&p);
        for v in p.iter_mut() {
            *v /= sum;
        }
        p
    }
}

/// The sum of `x` with the additions in the order of candle's AVX2 `vec_sum`: four 8-lane
/// accumulators over blocks of 32 values, combined pairwise, the 8 lanes folded to one, then
/// the values after the last whole block added one by one.
fn sum_avx2_order(x: &[f32]) -> f32 {
    let np = x.len() & !31;
    let mut acc = [[0f32; 8]; 4];
    for block in x[..np].chunks_exact(32) {
        for (j, a) in acc.iter_mut().enumerate() {
            for (l, v) in a.iter_mut().enumerate() {
                *v += block[j * 8 + l];
            }
        }
    }
    let mut s = [0f32; 8];
    for l in 0..8 {
        let (a01, a23) = (acc[0][l] + acc[1][l], acc[2][l] + acc[3][l]);
        s[l] = a01 + a23;
    }
    let t: [f32; 4] = [s[0] + s[4], s[1] + s[5], s[2] + s[6], s[3] + s[7]];
    let mut sum = (t[0] + t[1]) + (t[2] + t[3]);
    for &v in &x[np..] {
        sum += v;
    }
    sum
}

/// The sum of `x` with the additions in the order of candle's NEON `vec_sum`: eight 4-lane
/// accumulators over blocks of 32 values, combined pairwise (0+1, 2+3, …, then 0+2, 4+6, then
/// 0+4), the 4 lanes folded as `faddp` does ((l0+l1)+(l2+l3)), then the values after the last
/// whole block added one by one.
fn sum_neon_order(x: &[f32]) -> f32 {
    let np = x.len() & !31;
    let mut acc = [[0f32; 4]; 8];
    for block in x[..np].chunks_exact(32) {
        for (j, a) in acc.iter_mut().enumerate() {
            for (l, v) in a.iter_mut().enumerate() {
                *v += block[j * 4 + l];
            }
        }
    }
    let add = |a: [f32; 4], b: [f32; 4]| -> [f32; 4] { std::array::from_fn(|l| a[l] + b[l]) };
    let p: [[f32; 4]; 4] = std::array::from_fn(|i| add(acc[2 * i], acc[2 * i + 1]));
    let q = [add(p[0], p[1]), add(p[2], p[3])];
    let r = add(q[0], q[1]);
    let mut sum = (r[0] + r[1]) + (r[2] + r[3]);
    for &v in &x[np..] {
        sum += v;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random logits in [-8, 8) for the test against candle's sampler (the native
    /// kernels' test stream, scaled by a power of two, so exactly `x * 16 - 8`).
    #[cfg(feature = "candle")]
    fn logits(n: usize, seed: u64) -> Vec<f32> {
        crate::native::pseudo_random(n, seed)
            .into_iter()
            .map(|x| x * 8.0)
            .collect()
    }

    fn params(temperature: f64, top_p: Option<f64>, seed: u64) -> GenParams {
        GenParams {
            temperature,
            top_p,
            seed,
            ..Default::default()
        }
    }

    #[test]
    fn argmax_takes_the_first_maximum() {
        let mut s = Sampler::new(&params(0.0, None, 1));
        assert_eq!(s.sample(&[1.0, 3.0, 3.0, 2.0]).unwrap(), 1);
        assert!(s.sample(&[]).is_err());
    }

    #[test]
    fn candle_order_sums_are_sums() {
        for n in [0usize, 1, 31, 32, 33, 100, 49152] {
            let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
            let want: f32 = x.iter().sum();
            assert_eq!(sum_avx2_order(&x), want, "{n}");
            assert_eq!(sum_neon_order(&x), want, "{n}");
        }
    }

    /// Exactly candle-transformers' `LogitsProcessor` on the CPU: the same tokens for every
    /// seed, temperature and top-p, over a long stream of draws.
    #[cfg(feature = "candle")]
    #[test]
    fn draws_exactly_what_candle_draws() {
        use candle_core::{Device, Tensor};
        use candle_transformers::generation::{LogitsProcessor, Sampling};
        for (t, p) in [
            (0.0, None),
            (0.4, None),
            (0.8, Some(0.9)),
            (1.3, Some(0.5)),
            (0.7, Some(1.0)),
        ] {
            for seed in [0u64, 42, 7] {
                let gp = params(t, p, seed);
                let mut ours = Sampler::new(&gp);
                let sampling = match ours.mode {
                    Mode::ArgMax => Sampling::ArgMax,
                    Mode::All { temperature } => Sampling::All { temperature },
                    Mode::TopP { p, temperature } => Sampling::TopP { p, temperature },
                };
                let mut theirs = LogitsProcessor::from_sampling(seed, sampling);
                for step in 0..40u64 {
                    let n = [49152usize, 1000, 77][step as usize % 3];
                    let l = logits(n, step * 31 + seed);
                    let tl = Tensor::from_vec(l.clone(), n, &Device::Cpu).unwrap();
                    if t > 0.0 {
                        let want: Vec<f32> = candle_nn::ops::softmax_last_dim(&(&tl / t).unwrap())
                            .unwrap()
                            .to_vec1()
                            .unwrap();
                        let got = ours.probabilities(&l, t);
                        assert!(
                            got.iter()
                                .zip(&want)
                                .all(|(a, b)| a.to_bits() == b.to_bits()),
                            "probabilities, t {t} n {n}"
                        );
                    }
                    assert_eq!(
                        ours.sample(&l).unwrap(),
                        theirs.sample(&tl).unwrap(),
                        "t {t} p {p:?} seed {seed} step {step}"
                    );
                }
            }
        }
    }
}
