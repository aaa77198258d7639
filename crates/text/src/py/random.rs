//! CPython's `random.Random`, bit-exact.

use super::Mt19937;

/// A port of CPython's `random.Random` (3.11) for integer seeds: `seed`, `getrandbits`,
/// `_randbelow`, `randrange`, `choice`, `shuffle`, `sample` and `random`, drawing exactly the
/// words CPython draws.
///
/// ```
/// use pgraphrag_text::py::Random;
/// let mut r = Random::new(42);
/// // Python: random.seed(42); random.getrandbits(32)
/// assert_eq!(r.getrandbits(32), 2746317213);
/// assert_eq!(Random::new(42).random(), 0.6394267984578837);
/// ```
#[derive(Debug, Clone)]
pub struct Random {
    mt: Mt19937,
}

impl Random {
    /// `random.Random(seed)` / `random.seed(seed)` for a non-negative integer seed (CPython
    /// uses `abs(seed)`, so pass `seed.unsigned_abs()` for a negative one).
    ///
    /// ```
    /// let mut a = pgraphrag_text::py::Random::new(7);
    /// let mut b = pgraphrag_text::py::Random::new(7);
    /// assert_eq!(a.getrandbits(64), b.getrandbits(64));
    /// ```
    pub fn new(seed: u64) -> Self {
        // CPython's key: the 32-bit words of the seed, least significant first, at least one.
        let key: &[u32] = if seed >> 32 == 0 {
            &[seed as u32]
        } else {
            &[seed as u32, (seed >> 32) as u32]
        };
        Random {
            mt: Mt19937::from_key(key),
        }
    }

    /// `random.seed(seed)` on an existing generator (same as replacing it by
    /// [`Random::new`]).
    ///
    /// ```
    /// let mut r = pgraphrag_text::py::Random::new(1);
    /// let first = r.getrandbits(32);
    /// r.seed(1);
    /// assert_eq!(r.getrandbits(32), first);
    /// ```
    pub fn seed(&mut self, seed: u64) {
        *self = Random::new(seed);
    }

    /// The next raw 32-bit word of the generator.
    ///
    /// ```
    /// let mut r = pgraphrag_text::py::Random::new(42);
    /// assert_eq!(r.next_u32(), 2746317213);
    /// ```
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.mt.next_u32()
    }

    /// `random.getrandbits(k)` for `k <= 64` (0 for `k == 0`, as CPython ≥ 3.9; a larger `k`
    /// is read as 64).
    ///
    /// ```
    /// let mut r = pgraphrag_text::py::Random::new(0);
    /// assert!(r.getrandbits(5) < 32);
    /// ```
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        let k = k.min(64);
        if k == 0 {
            return 0;
        }
        if k <= 32 {
            return u64::from(self.mt.next_u32() >> (32 - k));
        }
        let lo = u64::from(self.mt.next_u32());
        let hi = u64::from(self.mt.next_u32() >> (64 - k));
        lo | (hi << 32)
    }

    /// `random._randbelow(n)` (rejection sampling on `getrandbits(n.bit_length())`); 0 for
    /// `n == 0` (drawing nothing).
    ///
    /// ```
    /// let mut r = pgraphrag_text::py::Random::new(42);
    /// assert!(r.randbelow(10) < 10);
    /// ```
    pub fn randbelow(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `random.randrange(start, stop)`; `None` for an empty range (Python raises
    /// `ValueError` and draws nothing). `random.randrange(n)` is `randrange(0, n)`, i.e.
    /// [`Random::randbelow`].
    ///
    /// ```
    /// let mut r = pgraphrag_text::py::Random::new(42);
    /// assert!((5..9).contains(&r.randrange(5, 9).unwrap()));
    /// assert_eq!(r.randrange(3, 3), None);
    /// ```
    pub fn randrange(&mut self, start: i64, stop: i64) -> Option<i64> {
        let width = i128::from(stop) - i128::from(start);
        if width <= 0 {
            return None;
        }
        let r = self.randbelow(width as u64);
        Some((i128::from(start) + i128::from(r)) as i64)
    }

    /// `random.choice(seq)`: an index into a sequence of length `len`, `None` when empty
    /// (Python raises `IndexError` and draws nothing).
    ///
    /// ```
    /// let mut r = pgraphrag_text::py::Random::new(42);
    /// // Python: random.seed(42); random.choice(range(3)) -> 0 ... (see the golden tests)
    /// assert!(r.choice(3).unwrap() < 3);
    /// assert_eq!(r.choice(0), None);
    /// ```
    pub fn choice(&mut self, len: usize) -> Option<usize> {
        (len > 0).then(|| self.randbelow(len as u64) as usize)
    }

    /// `random.shuffle(x)` in place (Fisher–Yates from the end, as CPython).
    ///
    /// ```
    /// let mut v = vec![1, 2, 3, 4];
    /// pgraphrag_text::py::Random::new(42).shuffle(&mut v);
    /// v.sort();
    /// assert_eq!(v, [1, 2, 3, 4]);
    /// ```
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.randbelow(i as u64 + 1) as usize;
            x.swap(i, j);
        }
    }

    /// `random.sample(range(n), k)`: `k` distinct indices in `0..n`, in selection order;
    /// `None` when `k > n` (Python raises `ValueError`). Follows CPython's choice between a
    /// pool and a set of selected indices, so the draws are the same.
    ///
    /// ```
    /// let s = pgraphrag_text::py::Random::new(42).sample(10, 3).unwrap();
    /// assert_eq!(s.len(), 3);
    /// assert!(s.iter().all(|&i| i < 10));
    /// ```
    pub fn sample(&mut self, n: usize, k: usize) -> Option<Vec<usize>> {
        if k > n {
            return None;
        }
        let mut setsize: f64 = 21.0;
        if k > 5 {
            // 4 ** ceil(log(k * 3, 4)), with math.log(x, b) = log(x) / log(b).
            let e = ((k as f64 * 3.0).ln() / 4f64.ln()).ceil();
            setsize += 4f64.powf(e);
        }
        let mut result = Vec::with_capacity(k);
        if (n as f64) <= setsize {
            let mut pool: Vec<usize> = (0..n).collect();
            for i in 0..k {
                let j = self.randbelow((n - i) as u64) as usize;
                result.push(pool[j]);
                pool[j] = pool[n - i - 1];
            }
        } else {
            let mut selected = std::collections::HashSet::with_capacity(k);
            for _ in 0..k {
                let mut j = self.randbelow(n as u64) as usize;
                while !selected.insert(j) {
                    j = self.randbelow(n as u64) as usize;
                }
                result.push(j);
            }
        }
        Some(result)
    }

    /// `random.random()`: a float in `[0, 1)` with 53 random bits (`genrand_res53`).
    ///
    /// ```
    /// let x = pgraphrag_text::py::Random::new(0).random();
    /// assert_eq!(x, 0.8444218515250481);
    /// ```
    pub fn random(&mut self) -> f64 {
        let a = self.mt.next_u32() >> 5;
        let b = self.mt.next_u32() >> 6;
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }
}
