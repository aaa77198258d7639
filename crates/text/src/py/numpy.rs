//! numpy's legacy `RandomState`, bit-exact for the draws the workspace makes.

use super::Mt19937;

/// numpy's legacy `RandomState` (MT19937 seeded with `init_genrand`), enough of it for
/// `randint(0, n)` and `choice(arange(n), size=n)` (masked rejection sampling, as numpy's
/// legacy bounded integers).
///
/// ```
/// use pgraphrag_text::py::RandomState;
/// // Python: np.random.RandomState(42).choice(np.arange(5), size=5)
/// assert_eq!(RandomState::new(42).choice(5), [3, 4, 2, 4, 4]);
/// ```
#[derive(Debug, Clone)]
pub struct RandomState {
    mt: Mt19937,
}

impl RandomState {
    /// `np.random.RandomState(seed)` / `np.random.seed(seed)` for an integer seed.
    ///
    /// ```
    /// let mut rs = pgraphrag_text::py::RandomState::new(5489);
    /// assert_eq!(rs.next_u32(), 3499211612);
    /// ```
    pub fn new(seed: u32) -> Self {
        RandomState {
            mt: Mt19937::new(seed),
        }
    }

    /// The next raw 32-bit output (numpy's `rk_random`).
    ///
    /// ```
    /// let mut rs = pgraphrag_text::py::RandomState::new(0);
    /// assert_eq!(rs.next_u32(), 2357136044);
    /// ```
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.mt.next_u32()
    }

    /// `randint(0, n)` for one value, numpy legacy style (masked rejection); `n` must be ≥ 1
    /// and at most 2^32 (0 is returned for `n <= 1`).
    ///
    /// ```
    /// let mut rs = pgraphrag_text::py::RandomState::new(1);
    /// assert!(rs.randint(10) < 10);
    /// ```
    pub fn randint(&mut self, n: u64) -> u64 {
        let rng = n.saturating_sub(1);
        if rng == 0 {
            return 0;
        }
        if rng == 0xFFFF_FFFF {
            return self.next_u32() as u64;
        }
        let mask = mask_of(rng);
        loop {
            let v = (self.next_u32() as u64) & mask;
            if v <= rng {
                return v;
            }
        }
    }

    /// `np.random.choice(np.arange(n), size=n)` (with replacement): `n` indices in `0..n`.
    ///
    /// ```
    /// let c = pgraphrag_text::py::RandomState::new(0).choice(4);
    /// assert_eq!(c.len(), 4);
    /// assert!(c.iter().all(|&i| i < 4));
    /// ```
    pub fn choice(&mut self, n: usize) -> Vec<usize> {
        let mut out = vec![0; n];
        self.fill_randint(n as u64, &mut out);
        out
    }

    /// `randint(n)` for every element of `out`, in order (the same draws as repeated
    /// [`RandomState::randint`] calls).
    ///
    /// ```
    /// use pgraphrag_text::py::RandomState;
    /// let mut out = [0usize; 6];
    /// RandomState::new(3).fill_randint(7, &mut out);
    /// let mut rs = RandomState::new(3);
    /// assert!(out.iter().all(|&v| v as u64 == rs.randint(7)));
    /// ```
    pub fn fill_randint(&mut self, n: u64, out: &mut [usize]) {
        let rng = n.saturating_sub(1);
        if rng == 0 || rng >= 0xFFFF_FFFF {
            for o in out.iter_mut() {
                *o = self.randint(n) as usize;
            }
            return;
        }
        let mask = mask_of(rng);
        // Masked rejection without a data-dependent branch: every candidate is written, and
        // the position only advances when it is accepted.
        let mt = &mut self.mt;
        let mut j = 0;
        while j < out.len() {
            if mt.pos >= mt.out.len() {
                mt.generate();
            }
            for &y in &mt.out[mt.pos..] {
                mt.pos += 1;
                let v = (y as u64) & mask;
                out[j] = v as usize;
                j += (v <= rng) as usize;
                if j == out.len() {
                    break;
                }
            }
        }
    }
}

/// The smallest all-ones mask covering `rng`.
#[inline]
fn mask_of(rng: u64) -> u64 {
    let mut mask = rng;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask
}
