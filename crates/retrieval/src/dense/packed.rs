//! The native encoder's packed matrix product as a public type, for other f32 forward and
//! backward passes over frozen weights (`pgraphrag-train`'s frozen projections).
use rayon::prelude::*;

use pgraphrag_core::simd::{CpuFeatures, SendPtr};

use super::kernels::Kernels;
use super::matmul::{MR, Matmul, NR, pack_panels, pack_panels_transposed};
use crate::{Error, Result};

/// A frozen `n × k` matrix `W` (row-major, PyTorch's `Linear.weight` layout) packed once into
/// the panels of the encoder's AVX-512 or AVX2 register tiles, for products `x · Wᵀ` on the
/// threads of the current rayon pool.
///
/// Each output value is computed by one task over the inputs in a fixed order, so results do
/// not depend on the thread count. Results match a naive product to float rounding; they
/// are not bit-identical across the AVX-512 and AVX2 tiles.
///
/// ```
/// use pgraphrag_retrieval::dense::PackedMatrix;
/// let (n, k) = (32, 3);
/// let w: Vec<f32> = (0..n * k).map(|i| i as f32).collect();
/// // `None` on CPUs without AVX2 + FMA (the caller keeps its own product there).
/// if let Some(p) = PackedMatrix::new(&w, n, k).unwrap() {
///     let x = [1.0f32, 0.0, 2.0]; // one row
///     let mut y = vec![0f32; n];
///     p.matmul_t(&x, 1, &mut y).unwrap();
///     assert_eq!(y[1], w[3] + 2.0 * w[5]);
/// }
/// ```
pub struct PackedMatrix {
    n: usize,
    k: usize,
    panels: Vec<f32>,
    zeros: Vec<f32>,
    matmul: Matmul,
    isa: &'static str,
}

impl std::fmt::Debug for PackedMatrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedMatrix")
            .field("n", &self.n)
            .field("k", &self.k)
            .field("isa", &self.isa)
            .finish_non_exhaustive()
    }
}

impl PackedMatrix {
    /// Packs `w` (`n × k`) for this CPU ([`CpuFeatures::detect`]). `Ok(None)` where the
    /// packed product does not apply: no AVX2 + FMA, or `n` not a multiple of 32.
    pub fn new(w: &[f32], n: usize, k: usize) -> Result<Option<Self>> {
        Self::with_features(w, n, k, CpuFeatures::detect())
    }

    /// As [`PackedMatrix::new`] with the kernels for `cpu` (e.g.
    /// `CpuFeatures::detect().without_avx512()` for the AVX2 tiles). An error when `w` does not
    /// hold `n × k` values.
    pub fn with_features(w: &[f32], n: usize, k: usize, cpu: CpuFeatures) -> Result<Option<Self>> {
        Self::build(w, n, k, cpu, false)
    }

    /// Packs the transpose of `w` (`k × n`, row-major): the matrix `Wᵀ` (`n × k`) for
    /// products `x · (Wᵀ)ᵀ = x · W`, e.g. a backward pass through a frozen layer, without
    /// transposing `w` first. `Ok(None)` as for [`PackedMatrix::new`].
    ///
    /// ```
    /// use pgraphrag_retrieval::dense::PackedMatrix;
    /// let (k, n) = (2, 32); // w is 2 x 32
    /// let w: Vec<f32> = (0..k * n).map(|i| i as f32).collect();
    /// if let Some(p) = PackedMatrix::transposed(&w, k, n).unwrap() {
    ///     let mut y = vec![0f32; n];
    ///     p.matmul_t(&[1.0, 2.0], 1, &mut y).unwrap(); // y = [1, 2] · w
    ///     assert_eq!(y[3], w[3] + 2.0 * w[32 + 3]);
    /// }
    /// ```
    pub fn transposed(w: &[f32], k: usize, n: usize) -> Result<Option<Self>> {
        Self::build(w, n, k, CpuFeatures::detect(), true)
    }

    fn build(w: &[f32], n: usize, k: usize, cpu: CpuFeatures, t: bool) -> Result<Option<Self>> {
        if w.len() != n * k || k == 0 {
            return Err(Error::InvalidInput(format!(
                "a packed matrix of {n} x {k} needs {} values and at least one column, got {}",
                n * k,
                w.len()
            )));
        }
        let kernels = Kernels::for_cpu(cpu);
        let Some(matmul) = kernels.matmul else {
            return Ok(None);
        };
        if n == 0 || !n.is_multiple_of(NR) {
            return Ok(None);
        }
        let panels = if t {
            pack_panels_transposed(w, k, n)
        } else {
            pack_panels(w, n, k)
        };
        Ok(Some(PackedMatrix {
            n,
            k,
            panels,
            zeros: vec![0.0; n],
            matmul,
            isa: kernels.name,
        }))
    }

    /// Rows of `W` (outputs of the product).
    pub fn rows(&self) -> usize {
        self.n
    }

    /// Columns of `W` (inputs of the product).
    pub fn cols(&self) -> usize {
        self.k
    }

    /// The register tiles in use: `avx512` or `avx2`.
    pub fn isa(&self) -> &'static str {
        self.isa
    }

    /// `y (m × n) = x (m × k) · Wᵀ`, both row-major. An error when the lengths do not match.
    pub fn matmul_t(&self, x: &[f32], m: usize, y: &mut [f32]) -> Result<()> {
        self.product(x, m, y, false)
    }

    /// `y (m × n) += x (m × k) · Wᵀ`: [`PackedMatrix::matmul_t`] adding to what `y` holds
    /// (each value's sum starts from `y`'s value), e.g. the gradient of an input read by
    /// several frozen layers.
    ///
    /// ```
    /// use pgraphrag_retrieval::dense::PackedMatrix;
    /// let w = vec![1.0f32; 32 * 2];
    /// if let Some(p) = PackedMatrix::new(&w, 32, 2).unwrap() {
    ///     let mut y = vec![10.0f32; 32];
    ///     p.matmul_t_add(&[1.0, 2.0], 1, &mut y).unwrap();
    ///     assert_eq!(y[0], 13.0);
    /// }
    /// ```
    pub fn matmul_t_add(&self, x: &[f32], m: usize, y: &mut [f32]) -> Result<()> {
        self.product(x, m, y, true)
    }

    fn product(&self, x: &[f32], m: usize, y: &mut [f32], acc: bool) -> Result<()> {
        self.check(x, m, Some(y.len()))?;
        // SAFETY: the lengths were checked; `y` is initialised.
        unsafe { self.run(x, m, acc, y.as_mut_ptr()) };
        Ok(())
    }

    /// `x (m × k) · Wᵀ` as a new `m × n` vector (row-major), written once by the product
    /// (no zeroing pass first). An error when `x` does not hold `m × k` values.
    ///
    /// ```
    /// use pgraphrag_retrieval::dense::PackedMatrix;
    /// let w = vec![0.5f32; 32 * 2];
    /// if let Some(p) = PackedMatrix::new(&w, 32, 2).unwrap() {
    ///     let y = p.matmul_t_new(&[1.0, 3.0], 1).unwrap();
    ///     assert_eq!((y.len(), y[31]), (32, 2.0));
    /// }
    /// ```
    pub fn matmul_t_new(&self, x: &[f32], m: usize) -> Result<Vec<f32>> {
        self.check(x, m, None)?;
        let mut y: Vec<f32> = Vec::with_capacity(m * self.n);
        // SAFETY: the length of x was checked and y has room for m × n values; without `acc`
        // every one of them is written (from the bias at the first block of inputs) before
        // anything reads it, and no row callback runs, so no reference to unwritten values
        // is made.
        unsafe {
            self.run(
                x,
                m,
                false,
                y.spare_capacity_mut().as_mut_ptr().cast::<f32>(),
            );
            y.set_len(m * self.n);
        }
        Ok(y)
    }

    /// An error unless `x` holds `m × k` values and `y` (when given) `m × n`.
    fn check(&self, x: &[f32], m: usize, y: Option<usize>) -> Result<()> {
        if x.len() != m * self.k || y.is_some_and(|y| y != m * self.n) {
            return Err(Error::InvalidInput(format!(
                "x · Wᵀ with W {} x {}: x needs {} values (got {}), y {} (got {})",
                self.n,
                self.k,
                m * self.k,
                x.len(),
                m * self.n,
                y.map_or("none".to_string(), |y| y.to_string())
            )));
        }
        Ok(())
    }

    /// [`par_matmul`] of `x` (`m × k`, checked) into `y`.
    ///
    /// # Safety
    /// `y` has room for `m × n` values, initialised where `acc` reads them.
    unsafe fn run(&self, x: &[f32], m: usize, acc: bool, y: *mut f32) {
        // SAFETY: `matmul` was picked for this CPU's features, the panels and bias were made
        // for n × k, x was checked and y is as the contract says.
        unsafe {
            par_matmul(
                self.matmul,
                x,
                m,
                self.k,
                self.n,
                &self.panels,
                &self.zeros,
                acc,
                y,
                None,
            )
        }
    }
}

/// What [`par_matmul`] runs on each finished row segment of its output.
pub(crate) type RowSegment<'a> = &'a (dyn Fn(&mut [f32]) + Sync);

/// `y (m × n) = x (m × k) · Wᵀ + bias` (with `acc`: `y += x · Wᵀ`), then `after` (if any) on
/// each finished row segment, over tasks of row chunks × panel groups (about 4 per thread of
/// the current rayon pool).
///
/// # Safety
/// `matmul` must run on this CPU; `x` holds `m × k` values, `panels` the [`pack_panels`] of an
/// `n × k` matrix (`n` a multiple of [`NR`]), `bias` `n` and `y` room for `m × n` values,
/// initialised where `acc` or `after` reads them.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn par_matmul(
    matmul: Matmul,
    x: &[f32],
    m: usize,
    k: usize,
    n: usize,
    panels: &[f32],
    bias: &[f32],
    acc: bool,
    y: *mut f32,
    after: Option<RowSegment<'_>>,
) {
    let threads = rayon::current_num_threads().max(1);
    let n_panels = n / NR;
    let want = threads * 4;
    // Row chunks of whole tiles, at most 8 tiles each, their sizes differing by at most one
    // tile: at 512 rows on 2 threads, chunks of a fixed 6 tiles (7 and a sliver) left one
    // thread a quarter more rows than the other.
    let tiles = m.div_ceil(MR);
    let row_chunks = tiles.min(want.max(tiles.div_ceil(8)));
    let groups = (want.div_ceil(row_chunks)).clamp(1, n_panels);
    let per_group = n_panels.div_ceil(groups);
    let yp = SendPtr::new(y);
    (0..row_chunks * groups).into_par_iter().for_each(|task| {
        let (rc, g) = (task / groups, task % groups);
        let r0 = rc * tiles / row_chunks * MR;
        let rows = ((rc + 1) * tiles / row_chunks * MR).min(m) - r0;
        let p0 = g * per_group;
        let p1 = ((g + 1) * per_group).min(n_panels);
        if p0 >= p1 {
            return;
        }
        // SAFETY: by the contract x holds m×k, the panels k×n, the bias n and y m×n floats;
        // this task writes rows r0..r0+rows, columns p0·NR..p1·NR of y, which no other task
        // writes.
        unsafe {
            matmul(
                x.as_ptr().add(r0 * k),
                k,
                rows,
                k,
                panels.as_ptr(),
                bias.as_ptr(),
                acc,
                p0,
                p1,
                yp.get().add(r0 * n),
                n,
            );
            if let Some(after) = after {
                for r in r0..r0 + rows {
                    let seg = std::slice::from_raw_parts_mut(
                        yp.get().add(r * n + p0 * NR),
                        (p1 - p0) * NR,
                    );
                    after(seg);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_naive_product_on_every_tile_set() {
        let (m, k, n) = (37, 200, 96);
        let x: Vec<f32> = (0..m * k)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0)
            .collect();
        let w: Vec<f32> = (0..n * k)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 7.0)
            .collect();
        let cpu = CpuFeatures::detect();
        for cpu in [cpu, cpu.without_avx512()] {
            let Some(p) = PackedMatrix::with_features(&w, n, k, cpu).unwrap() else {
                continue;
            };
            let mut y = vec![0f32; m * n];
            p.matmul_t(&x, m, &mut y).unwrap();
            for r in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|kk| x[r * k + kk] as f64 * w[j * k + kk] as f64)
                        .sum();
                    let got = y[r * n + j] as f64;
                    assert!(
                        (got - want).abs() < 1e-4 * (1.0 + want.abs()),
                        "{}",
                        p.isa()
                    );
                }
            }
        }
    }

    #[test]
    fn the_adding_product_adds_to_what_y_holds() {
        // k over two blocks of inputs, rows leaving a partial tile.
        let (m, k, n) = (17, 300, 64);
        let x: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.13).sin()).collect();
        let w: Vec<f32> = (0..n * k).map(|i| (i as f32 * 0.07).cos()).collect();
        let Some(p) = PackedMatrix::new(&w, n, k).unwrap() else {
            return;
        };
        let y0: Vec<f32> = (0..m * n).map(|i| i as f32 * 0.5 - 3.0).collect();
        let mut plain = vec![0f32; m * n];
        p.matmul_t(&x, m, &mut plain).unwrap();
        let mut y = y0.clone();
        p.matmul_t_add(&x, m, &mut y).unwrap();
        for ((a, b), c) in y.iter().zip(&plain).zip(&y0) {
            assert!(
                (a - (b + c)).abs() < 1e-4 * (1.0 + c.abs()),
                "{a} vs {b} + {c}"
            );
        }
    }

    #[test]
    fn transposed_packs_the_transpose() {
        let (k, n) = (5, 64);
        let w: Vec<f32> = (0..k * n).map(|i| (i as f32 * 0.3).sin()).collect();
        let mut wt = vec![0f32; n * k];
        for r in 0..k {
            for c in 0..n {
                wt[c * k + r] = w[r * n + c];
            }
        }
        let (Some(a), Some(b)) = (
            PackedMatrix::transposed(&w, k, n).unwrap(),
            PackedMatrix::new(&wt, n, k).unwrap(),
        ) else {
            return;
        };
        assert_eq!((a.rows(), a.cols()), (n, k));
        let x: Vec<f32> = (0..3 * k).map(|i| i as f32 - 4.0).collect();
        let (mut ya, mut yb) = (vec![0f32; 3 * n], vec![0f32; 3 * n]);
        a.matmul_t(&x, 3, &mut ya).unwrap();
        b.matmul_t(&x, 3, &mut yb).unwrap();
        assert_eq!(ya, yb);
    }

    #[test]
    fn bad_shapes_are_errors_and_odd_widths_are_not_packed() {
        assert!(PackedMatrix::new(&[1.0; 5], 32, 1).is_err());
        assert!(PackedMatrix::new(&[1.0; 33], 33, 1).unwrap().is_none());
        if let Some(p) = PackedMatrix::new(&[1.0; 64], 32, 2).unwrap() {
            let mut y = vec![0f32; 32];
            assert!(p.matmul_t(&[1.0; 3], 1, &mut y).is_err());
            assert!(p.matmul_t(&[1.0; 2], 2, &mut y).is_err());
        }
    }

    /// The training shapes of SmolLM2-135M (4 × 128 tokens), forward and backward, on the
    /// rayon pool: `RAYON_NUM_THREADS=2 cargo test -p pgraphrag-retrieval --lib packed_gflops
    /// -- --ignored --nocapture`
    #[test]
    #[ignore = "a timing probe, not a test"]
    fn packed_gflops() {
        let m = 512;
        let mut total = 0.0;
        let mut flops = 0.0;
        for (n, k) in [(576, 576), (192, 576), (576, 192), (576, 1536), (1536, 576)] {
            let w: Vec<f32> = (0..n * k).map(|i| (i % 5) as f32 * 0.1).collect();
            let x: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 * 0.1).collect();
            let Some(p) = PackedMatrix::new(&w, n, k).unwrap() else {
                return;
            };
            let mut y = vec![0f32; m * n];
            p.matmul_t(&x, m, &mut y).unwrap();
            let reps = 20;
            let t = std::time::Instant::now();
            for _ in 0..reps {
                p.matmul_t(&x, m, &mut y).unwrap();
            }
            let s = t.elapsed().as_secs_f64();
            total += s;
            flops += 2.0 * (m * n * k * reps) as f64;
            eprintln!(
                "{} m={m} n={n} k={k} threads={}: {:.1} GFLOP/s",
                p.isa(),
                rayon::current_num_threads(),
                2.0 * (m * n * k * reps) as f64 / s / 1e9
            );
        }
        eprintln!("all: {:.1} GFLOP/s", flops / total / 1e9);
    }
}
