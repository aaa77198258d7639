//! CPython's `random` module: MT19937 seeded like `random.seed(int)`, `getrandbits` and
//! `choice`, bit-exact.

/// A port of CPython's `random.Random` (the parts PGraphRAG's notebook uses).
///
/// ```
/// use pgraphrag_retrieval::profile::PyRandom;
/// let mut r = PyRandom::new(42);
/// // Python: random.seed(42); random.getrandbits(32)
/// assert_eq!(r.getrandbits(32), 2746317213);
/// ```
#[derive(Clone)]
pub struct PyRandom {
    mt: Box<[u32; 624]>,
    idx: usize,
}

impl std::fmt::Debug for PyRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyRandom")
            .field("idx", &self.idx)
            .finish_non_exhaustive()
    }
}

impl PyRandom {
    /// `random.seed(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> Self {
        let key: Vec<u32> = if seed >> 32 == 0 {
            vec![seed as u32]
        } else {
            vec![seed as u32, (seed >> 32) as u32]
        };
        let mut r = PyRandom {
            mt: Box::new([0; 624]),
            idx: 624,
        };
        r.init_genrand(19_650_218);
        let mt = &mut r.mt;
        let (mut i, mut j) = (1usize, 0usize);
        let n = 624;
        for _ in 0..n.max(key.len()) {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= n {
                mt[0] = mt[n - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..n - 1 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= n {
                mt[0] = mt[n - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        r
    }

    fn init_genrand(&mut self, s: u32) {
        self.mt[0] = s;
        for i in 1..624 {
            self.mt[i] = 1_812_433_253u32
                .wrapping_mul(self.mt[i - 1] ^ (self.mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        self.idx = 624;
    }

    fn genrand_u32(&mut self) -> u32 {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX_A: u32 = 0x9908_b0df;
        if self.idx >= 624 {
            let mt = &mut self.mt;
            for kk in 0..624 {
                let y = (mt[kk] & UPPER) | (mt[(kk + 1) % 624] & LOWER);
                mt[kk] = mt[(kk + 397) % 624] ^ (y >> 1) ^ if y & 1 == 1 { MATRIX_A } else { 0 };
            }
            self.idx = 0;
        }
        let mut y = self.mt[self.idx];
        self.idx += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `random.getrandbits(k)` for `0 < k <= 64`.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        debug_assert!(k > 0 && k <= 64);
        if k <= 32 {
            return u64::from(self.genrand_u32() >> (32 - k));
        }
        let lo = u64::from(self.genrand_u32());
        let hi = u64::from(self.genrand_u32() >> (64 - k));
        lo | (hi << 32)
    }

    /// `random._randbelow(n)` (rejection sampling on `getrandbits(n.bit_length())`); 0 for
    /// `n == 0`.
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

    /// `random.choice(seq)`: an index into a sequence of length `len`, `None` when empty
    /// (Python raises `IndexError` and draws nothing).
    pub fn choice(&mut self, len: usize) -> Option<usize> {
        (len > 0).then(|| self.randbelow(len as u64) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_cpython() {
        // python3 -c "import random; random.seed(42);
        //   print([random.choice(range(n)) for n in [1,2,3,5,7,100,1000,2499,2499,70000,1,3]])"
        let mut r = PyRandom::new(42);
        let got: Vec<usize> = [1, 2, 3, 5, 7, 100, 1000, 2499, 2499, 70000, 1, 3]
            .iter()
            .map(|&n| r.choice(n).unwrap())
            .collect();
        assert_eq!(got, vec![0, 0, 2, 2, 1, 28, 142, 419, 2233, 11395, 0, 0]);
        let mut r = PyRandom::new(42);
        let bits: Vec<u64> = (0..3).map(|_| r.getrandbits(32)).collect();
        assert_eq!(bits, vec![2746317213, 478163327, 107420369]);
        assert_eq!(r.choice(0), None);
    }
}
