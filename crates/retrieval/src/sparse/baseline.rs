//! Baselines: [`RandomRetriever`] and [`NoRetriever`].

use pgraphrag_core::Retriever;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// Ranks candidates in a seeded random order: each candidate gets a uniform score in
/// `[0, 1)` and the ranking is by score.
///
/// Reproducible across platforms and runs: the generator (xoshiro256++, seeded through
/// `SeedableRng::seed_from_u64`) is seeded with the retriever's seed mixed with a 64-bit FNV-1a
/// hash of the query and the candidate texts, so the same (seed, query, candidates) always
/// gives the same order, independent of call order or threads, while different queries get
/// different orders.
///
/// ```
/// use pgraphrag_core::Retriever;
/// use pgraphrag_retrieval::sparse::RandomRetriever;
/// let r = RandomRetriever::new(42);
/// let a = r.rank("q", &["a", "b", "c", "d"], Some(2)).unwrap();
/// assert_eq!(a.len(), 2);
/// assert_eq!(a, r.rank("q", &["a", "b", "c", "d"], Some(2)).unwrap());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RandomRetriever {
    seed: u64,
}

impl RandomRetriever {
    /// A random retriever with `seed`.
    pub fn new(seed: u64) -> Self {
        RandomRetriever { seed }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

impl Default for RandomRetriever {
    /// Seed 42, as PGraphRAG's notebook (`random.seed(42)`).
    fn default() -> Self {
        RandomRetriever::new(42)
    }
}

impl Retriever for RandomRetriever {
    /// The random score of each candidate, in input order.
    fn scores(&self, query: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        let mut h = Fnv1a::new();
        h.write(query.as_bytes());
        h.write(&[0xff]);
        for d in docs {
            h.write(d.as_bytes());
            h.write(&[0xff]);
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed ^ h.0);
        Ok(docs.iter().map(|_| rng.random::<f64>()).collect())
    }
}

/// 64-bit FNV-1a: a tiny, specified, platform-independent hash.
struct Fnv1a(u64);

impl Fnv1a {
    fn new() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Retrieves nothing: the "no personalization" baseline (PGraphRAG's `none` mode).
///
/// ```
/// use pgraphrag_core::Retriever;
/// let r = pgraphrag_retrieval::sparse::NoRetriever;
/// assert!(r.rank("q", &["a", "b"], None).unwrap().is_empty());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NoRetriever;

impl Retriever for NoRetriever {
    /// No scores: nothing is retrieved.
    fn scores(&self, _query: &str, _docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        Ok(Vec::new())
    }
}
