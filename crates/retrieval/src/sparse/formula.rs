//! The BM25Okapi formula of `rank_bm25` 0.2.2, term by term, in its exact floating-point
//! operation order. Every BM25Okapi path of the workspace ([`super::Bm25Okapi`], the
//! profile ranker's cached fit, the impact-ordered [`crate::token_graph::TokenGraph`] and the
//! reference [`crate::token_graph::bm25okapi_scores`]) computes its scores through these
//! functions, so that they agree bit for bit wherever they sum in the same order.
//!
//! For a term in `df` of `n` documents and a document of `dl` tokens holding it `tf` times,
//! in a corpus of average length `avgdl`:
//!
//! * raw idf: [`idf`] `= ln(n - df + 0.5) - ln(df + 0.5)`;
//! * the floor of negative idfs: [`idf_floor`] `= epsilon * (Σ raw idf / vocabulary size)`,
//!   applied by [`floored`];
//! * the term-frequency part: [`tf_part`] `= tf * (k1 + 1) / (tf + norm)` with the length
//!   normaliser [`length_norm`] `= k1 * ((1 - b) + b * dl / avgdl)`.
//!
//! ```
//! use pgraphrag_retrieval::sparse::formula;
//! // "a" in 1 of 3 documents; documents of 2 tokens, average 2.
//! let w = formula::idf(3.0, 1.0);
//! assert_eq!(w, 2.5f64.ln() - 1.5f64.ln());
//! let norm = formula::length_norm(1.5, 0.75, 2.0, 2.0);
//! assert_eq!(norm, 1.5);
//! assert_eq!(formula::tf_part(1.0, 1.5, norm), 1.0);
//! assert_eq!(formula::floored(-0.2, 0.1), 0.1);
//! ```

/// `ln(x + 0.5)`: `math.log(x + 0.5)`, the two logarithms of rank_bm25's idf.
///
/// ```
/// assert_eq!(pgraphrag_retrieval::sparse::formula::ln_half(1.0), 1.5f64.ln());
/// ```
#[inline]
pub fn ln_half(x: f64) -> f64 {
    (x + 0.5).ln()
}

/// rank_bm25's raw idf of a term in `df` of `n` documents:
/// `math.log(n - df + 0.5) - math.log(df + 0.5)` (negative past half of the documents).
///
/// ```
/// use pgraphrag_retrieval::sparse::formula::idf;
/// assert_eq!(idf(4.0, 2.0), 0.0);
/// assert!(idf(4.0, 3.0) < 0.0);
/// ```
#[inline]
pub fn idf(n: f64, df: f64) -> f64 {
    ln_half(n - df) - ln_half(df)
}

/// The value every negative idf is replaced by: `epsilon * average_idf`, where `average_idf =
/// idf_sum / vocabulary` is the mean raw idf (rank_bm25 sums it in first-appearance order).
///
/// ```
/// use pgraphrag_retrieval::sparse::formula::idf_floor;
/// assert_eq!(idf_floor(0.25, 3.0, 2), 0.25 * 1.5);
/// ```
#[inline]
pub fn idf_floor(epsilon: f64, idf_sum: f64, vocabulary: usize) -> f64 {
    epsilon * (idf_sum / vocabulary as f64)
}

/// A raw idf after flooring: `floor` when `raw < 0`, else `raw` (a term in exactly half of
/// the documents keeps idf 0).
///
/// ```
/// use pgraphrag_retrieval::sparse::formula::floored;
/// assert_eq!(floored(0.0, 0.3), 0.0);
/// assert_eq!(floored(-1.0, 0.3), 0.3);
/// ```
#[inline]
pub fn floored(raw: f64, floor: f64) -> f64 {
    if raw < 0.0 { floor } else { raw }
}

/// rank_bm25's length normaliser of a document of `dl` tokens:
/// `k1 * (1 - b + b * dl / avgdl)`, evaluated as numpy does (`(1 - b) + (b * dl) / avgdl`).
///
/// ```
/// use pgraphrag_retrieval::sparse::formula::length_norm;
/// assert_eq!(length_norm(1.5, 0.75, 4.0, 2.0), 1.5 * (0.25 + 1.5));
/// ```
#[inline]
pub fn length_norm(k1: f64, b: f64, dl: f64, avgdl: f64) -> f64 {
    k1 * ((1.0 - b) + b * dl / avgdl)
}

/// rank_bm25's term-frequency part `tf * (k1 + 1) / (tf + norm)`, with `norm` from
/// [`length_norm`]. A document's score is the sum over query tokens of `idf * tf_part`.
///
/// ```
/// use pgraphrag_retrieval::sparse::formula::tf_part;
/// assert_eq!(tf_part(0.0, 1.5, 1.2), 0.0);
/// assert_eq!(tf_part(2.0, 1.5, 1.5), 2.0 * 2.5 / 3.5);
/// ```
#[inline]
pub fn tf_part(tf: f64, k1: f64, norm: f64) -> f64 {
    tf * (k1 + 1.0) / (tf + norm)
}

/// [`tf_part`] for a document of `dl` tokens: `tf_part(tf, k1, length_norm(k1, b, dl, avgdl))`.
///
/// ```
/// use pgraphrag_retrieval::sparse::formula::{length_norm, tf_part, tf_part_at};
/// assert_eq!(tf_part_at(3, 7, 1.5, 0.75, 5.0), tf_part(3.0, 1.5, length_norm(1.5, 0.75, 7.0, 5.0)));
/// ```
#[inline]
pub fn tf_part_at(tf: u32, dl: u32, k1: f64, b: f64, avgdl: f64) -> f64 {
    tf_part(f64::from(tf), k1, length_norm(k1, b, f64::from(dl), avgdl))
}

/// A growing table of [`ln_half`]`(i)` for integer `i`, so that fitting many small corpora
/// takes each logarithm once; [`IdfTable::idf`] equals [`idf`] bit for bit.
///
/// ```
/// use pgraphrag_retrieval::sparse::formula::{IdfTable, idf};
/// let mut t = IdfTable::default();
/// t.reserve(10);
/// assert_eq!(t.idf(10, 3), idf(10.0, 3.0));
/// ```
#[derive(Debug, Clone, Default)]
pub struct IdfTable {
    ln_half: Vec<f64>,
}

impl IdfTable {
    /// Makes sure the table covers `0..=n` (it grows at least geometrically).
    pub fn reserve(&mut self, n: usize) {
        if self.ln_half.len() <= n {
            let from = self.ln_half.len();
            self.ln_half
                .extend((from..=n.max(2 * from)).map(|i| ln_half(i as f64)));
        }
    }

    /// [`idf`]`(n, df)` from the table. Panics unless [`IdfTable::reserve`] covered `n` and
    /// `df <= n`, like slice indexing.
    #[inline]
    pub fn idf(&self, n: usize, df: usize) -> f64 {
        self.ln_half[n - df] - self.ln_half[df]
    }
}
