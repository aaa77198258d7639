//! A benchmark workload for the live index and the service: any number of documents whose
//! titles and texts are real reviews (cycled), laid on a synthetic user-item graph whose users
//! and items are drawn from Zipf laws (exponents 0.7 and 0.9; 2 reviews per user and 10 per
//! item on average), so that profiles have the long tail of the PGraphRAG benchmark. The
//! same seed gives the same documents.
//!
//! ```
//! use pgraphrag_retrieval::live::workload::{SplitMix64, Workload};
//! let texts = vec![(Some("Great".to_string()), "Lavender soap that lasts".to_string())];
//! let w = Workload::new(texts, 1_000).unwrap();
//! let mut rng = SplitMix64::new(7);
//! let docs: Vec<_> = (0..1_000).map(|i| w.document(i, &mut rng)).collect();
//! assert!(docs.iter().all(|d| d.user.starts_with('u') && d.item.as_deref().unwrap().starts_with('p')));
//! assert_eq!(docs[0].text, "Lavender soap that lasts");
//! ```

use crate::live::Document;

/// splitmix64: a small, fast, seedable generator (not for cryptography).
///
/// ```
/// let mut r = pgraphrag_retrieval::live::workload::SplitMix64::new(1);
/// assert!(r.below(10) < 10);
/// assert!((0.0..1.0).contains(&r.unit()));
/// ```
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in 0..n (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// A Zipf-like draw in 0..n with exponent `s` (≠ 1): the inverse transform of a
    /// continuous power law.
    ///
    /// ```
    /// let mut r = pgraphrag_retrieval::live::workload::SplitMix64::new(3);
    /// let small = (0..1000).filter(|_| r.zipf(1000, 0.9) < 10).count();
    /// assert!(small > 100); // far more than the uniform 1 %
    /// ```
    pub fn zipf(&mut self, n: usize, s: f64) -> usize {
        let u = self.unit();
        let x = ((n as f64).powf(1.0 - s) * u + (1.0 - u)).powf(1.0 / (1.0 - s));
        (x as usize).saturating_sub(1).min(n - 1)
    }
}

/// Real (title, text) pairs laid on a synthetic Zipf user-item graph of a given size.
#[derive(Debug, Clone)]
pub struct Workload {
    texts: Vec<(Option<String>, String)>,
    users: usize,
    items: usize,
}

impl Workload {
    /// A workload of about `documents` documents over `texts` (`None` when `texts` is
    /// empty): `documents / 2` users and `documents / 10` items.
    pub fn new(texts: Vec<(Option<String>, String)>, documents: usize) -> Option<Self> {
        if texts.is_empty() {
            return None;
        }
        Some(Workload {
            texts,
            users: (documents / 2).max(1),
            items: (documents / 10).max(1),
        })
    }

    /// Document `i`: text `i` (cycled; an empty text becomes `-`), by a Zipf-drawn user,
    /// about a Zipf-drawn item, with id `i`.
    pub fn document(&self, i: usize, rng: &mut SplitMix64) -> Document {
        let (title, text) = self.texts[i % self.texts.len()].clone();
        let text = if text.trim().is_empty() {
            "-".to_string()
        } else {
            text
        };
        Document {
            user: format!("u{}", rng.zipf(self.users, 0.7)),
            id: i.to_string(),
            item: Some(format!("p{}", rng.zipf(self.items, 0.9))),
            title,
            text,
            ..Default::default()
        }
    }
}

/// The `p`-quantile (0..=1) of sorted values, nearest rank; `NaN` when empty.
///
/// ```
/// use pgraphrag_retrieval::live::workload::percentile;
/// assert_eq!(percentile(&[1.0, 2.0, 3.0], 0.5), 2.0);
/// assert!(percentile(&[], 0.5).is_nan());
/// ```
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p.clamp(0.0, 1.0)).round() as usize]
}
