//! The exact index's kernel: cosine of many queries with every row of a hop matrix in one
//! pass, accumulated in f64 in a fixed order, and the row deduplication that lets a hop with
//! repeated vectors be scanned once per distinct vector.
//!
//! The body is plain Rust written so that LLVM vectorises it; it is compiled for AVX-512,
//! for AVX2 and for the target's baseline, and the best one the CPU supports runs
//! ([`CpuFeatures`]). No variant reorders a sum or fuses a multiply-add, so all three (and
//! any thread count) give the same bits.
use std::collections::HashMap;

use pgraphrag_core::simd::CpuFeatures;
use rayon::prelude::*;

use super::vectors::Fnv;

/// Accumulator lanes of [`dot`]: element `i` of a vector goes to lane `i mod LANES`.
const LANES: usize = 8;

/// Rows per parallel task of [`scan`].
const ROWS_PER_TASK: usize = 512;

/// `Σ aᵢ bᵢ` in f64: element `i` added into lane `i mod 8`, then the lanes summed in order.
/// Every f32 × f32 product is exact in f64, so only the additions round.
#[inline(always)]
fn lane_dot<T: Copy + Into<f64>>(a: &[T], b: &[T]) -> f64 {
    let mut acc = [0f64; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..LANES {
            acc[l] += x[l].into() * y[l].into();
        }
    }
    for (l, (&x, &y)) in ra.iter().zip(rb).enumerate() {
        acc[l] += x.into() * y.into();
    }
    acc.iter().sum()
}

/// [`lane_dot`] of two f64 vectors (the scan's inner loop, on rows widened once).
#[inline(always)]
pub(crate) fn dot_f64(a: &[f64], b: &[f64]) -> f64 {
    lane_dot(a, b)
}

/// [`lane_dot`] of two f32 vectors, the same bits as [`dot_f64`] of them widened: the one
/// cosine of the crate, for the scan, the re-ranking and KAPING's triples alike.
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f64 {
    lane_dot(a, b)
}

/// `v` widened to f64.
pub(crate) fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

#[inline(always)]
fn scan_body(rows: &[f32], d: usize, queries: &[Vec<f64>], out: &mut [f64]) {
    let nq = queries.len();
    let mut row64 = vec![0f64; d];
    for (row, o) in rows.chunks_exact(d).zip(out.chunks_exact_mut(nq)) {
        for (r, &x) in row64.iter_mut().zip(row) {
            *r = f64::from(x);
        }
        for (s, q) in o.iter_mut().zip(queries) {
            *s = dot_f64(&row64, q);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn scan_avx512(rows: &[f32], d: usize, queries: &[Vec<f64>], out: &mut [f64]) {
    scan_body(rows, d, queries, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn scan_avx2(rows: &[f32], d: usize, queries: &[Vec<f64>], out: &mut [f64]) {
    scan_body(rows, d, queries, out)
}

fn scan_chunk(cpu: CpuFeatures, rows: &[f32], d: usize, queries: &[Vec<f64>], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if cpu.avx512f() && cpu.avx2_fma() {
            // SAFETY: the CPU has every feature the variant is compiled for.
            return unsafe { scan_avx512(rows, d, queries, out) };
        }
        if cpu.avx2_fma() {
            // SAFETY: as above.
            return unsafe { scan_avx2(rows, d, queries, out) };
        }
    }
    let _ = cpu;
    scan_body(rows, d, queries, out)
}

/// The [`dot_f64`] of every row of `matrix` (`n × d`, row-major) with every query (each of
/// length `d`), as `n × queries.len()` scores, row-major: row `i`'s score for query `q` at
/// `i * queries.len() + q`. The matrix is read once for all queries; rows are split over
/// rayon's threads.
pub(crate) fn scan(matrix: &[f32], d: usize, queries: &[Vec<f64>]) -> Vec<f64> {
    let nq = queries.len();
    let n = matrix.len().checked_div(d).unwrap_or(0);
    let mut out = vec![0f64; n * nq];
    if nq == 0 || n == 0 {
        return out;
    }
    let cpu = CpuFeatures::detect();
    out.par_chunks_mut(ROWS_PER_TASK * nq)
        .zip(matrix.par_chunks(ROWS_PER_TASK * d))
        .for_each(|(o, rows)| scan_chunk(cpu, rows, d, queries, o));
    out
}

/// A hop matrix's distinct rows (bit for bit), for scanning each once: entities without a
/// name share their role label's vector at hop 0, so ML-100K's 34,628 hop-0 rows hold only
/// about 1,600 distinct vectors.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Distinct {
    /// The distinct rows, in order of first occurrence (`len × d`).
    pub(crate) rows: Vec<f32>,
    /// For every entity, the index of its row in `rows`.
    pub(crate) of: Vec<u32>,
}

impl Distinct {
    /// The distinct rows of `matrix` (`n × d`), or `None` when deduplicating would not save
    /// at least a quarter of the scan (or `d == 0`, or more rows than `u32` counts).
    pub(crate) fn of(matrix: &[f32], d: usize) -> Option<Self> {
        if d == 0 || matrix.len() / d > u32::MAX as usize {
            return None;
        }
        let n = matrix.len() / d;
        let mut by_hash: HashMap<u64, Vec<u32>> = HashMap::new();
        let mut rows: Vec<f32> = Vec::new();
        let mut of = Vec::with_capacity(n);
        let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        for row in matrix.chunks_exact(d) {
            let mut h = Fnv::new();
            for x in row {
                h.update(&x.to_bits().to_le_bytes());
            }
            let bucket = by_hash.entry(h.finish()).or_default();
            let found = bucket
                .iter()
                .copied()
                .find(|&j| same(&rows[j as usize * d..(j as usize + 1) * d], row));
            let j = match found {
                Some(j) => j,
                None => {
                    let j = (rows.len() / d) as u32;
                    rows.extend_from_slice(row);
                    bucket.push(j);
                    j
                }
            };
            of.push(j);
        }
        (rows.len() / d * 4 <= n * 3).then_some(Distinct { rows, of })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq_dot(a: &[f64], b: &[f64]) -> f64 {
        let mut acc = [0f64; LANES];
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            acc[i % LANES] += x * y;
        }
        acc.iter().sum()
    }

    #[test]
    fn every_variant_gives_the_same_bits() {
        let d = 19; // not a multiple of the lanes: the tail runs too
        let matrix: Vec<f32> = (0..d * 1301)
            .map(|i| ((i * 7919 % 1000) as f32 / 997.0 - 0.5) * 1.3)
            .collect();
        let queries: Vec<Vec<f64>> = (0..3)
            .map(|q| (0..d).map(|i| ((i + q * 31) as f64).sin()).collect())
            .collect();
        let all = scan(&matrix, d, &queries);
        let plain = {
            let mut o = vec![0f64; all.len()];
            scan_chunk(CpuFeatures::portable(), &matrix, d, &queries, &mut o);
            o
        };
        // 1,301 rows: several parallel tasks, the last one short.
        assert_eq!(all.len(), 1301 * 3);
        for (i, row) in matrix.chunks_exact(d).enumerate() {
            for (q, query) in queries.iter().enumerate() {
                let want = seq_dot(&widen(row), query);
                assert_eq!(
                    all[i * 3 + q].to_bits(),
                    want.to_bits(),
                    "row {i} query {q}"
                );
                assert_eq!(plain[i * 3 + q].to_bits(), want.to_bits());
                let q32: Vec<f32> = query.iter().map(|&x| x as f32).collect();
                let mixed = seq_dot(&widen(row), &widen(&q32));
                assert_eq!(dot(row, &q32).to_bits(), mixed.to_bits());
            }
        }
        assert!(scan(&matrix, d, &[]).is_empty());
    }

    #[test]
    fn distinct_rows_map_back() {
        let d = 2;
        let m = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, -0.0, 1.0];
        let dd = Distinct::of(&m, d).unwrap();
        // -0.0 and 0.0 differ in bits: three distinct rows of five.
        assert_eq!(dd.of, [0, 1, 0, 0, 2]);
        assert_eq!(dd.rows, [1.0, 0.0, 0.0, 1.0, -0.0, 1.0]);
        // All rows distinct: nothing to save.
        assert_eq!(Distinct::of(&[1.0, 2.0, 3.0], 1), None);
    }
}
