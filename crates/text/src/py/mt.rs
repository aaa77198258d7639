//! MT19937, the Mersenne Twister of CPython's `random` and numpy's legacy `RandomState`.

const N: usize = 624;
const M: usize = 397;

/// The 32-bit Mersenne Twister MT19937 (Matsumoto & Nishimura's reference `genrand_int32`),
/// with both reference seedings: [`Mt19937::new`] (`init_genrand`, numpy's
/// `RandomState(int)`) and [`Mt19937::from_key`] (`init_by_array`, CPython's
/// `random.seed(int)`). [`Random`](super::Random) and [`RandomState`](super::RandomState) are
/// built on it.
///
/// ```
/// use pgraphrag_text::py::Mt19937;
/// // The reference implementation's first output for init_genrand(5489).
/// assert_eq!(Mt19937::new(5489).next_u32(), 3499211612);
/// ```
#[derive(Clone)]
pub struct Mt19937 {
    mt: [u32; N],
    /// The tempered outputs of the current state (filled by `generate`).
    pub(super) out: [u32; N],
    /// The next output of `out`; `N` when the state must be twisted first.
    pub(super) pos: usize,
}

impl std::fmt::Debug for Mt19937 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mt19937")
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

impl Mt19937 {
    /// `init_genrand(seed)`.
    ///
    /// ```
    /// let mut a = pgraphrag_text::py::Mt19937::new(1);
    /// let mut b = a.clone();
    /// assert_eq!(a.next_u32(), b.next_u32());
    /// ```
    pub fn new(seed: u32) -> Self {
        let mut mt = [0u32; N];
        mt[0] = seed;
        for i in 1..N {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 {
            mt,
            out: [0; N],
            pos: N,
        }
    }

    /// `init_by_array(key)`; an empty key is read as `[0]` (what CPython passes for seed 0).
    ///
    /// ```
    /// use pgraphrag_text::py::Mt19937;
    /// // The reference mt19937ar.c test vector: init_by_array({0x123, 0x234, 0x345, 0x456}).
    /// assert_eq!(Mt19937::from_key(&[0x123, 0x234, 0x345, 0x456]).next_u32(), 1067595299);
    /// ```
    pub fn from_key(key: &[u32]) -> Self {
        let key = if key.is_empty() { &[0][..] } else { key };
        let mut r = Mt19937::new(19_650_218);
        let mt = &mut r.mt;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        r
    }

    /// Twists the state and tempers the whole next block of 624 outputs.
    pub(super) fn generate(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        #[inline(always)]
        fn twist(cur: u32, next: u32, far: u32) -> u32 {
            let y = (cur & UPPER) | (next & LOWER);
            far ^ (y >> 1) ^ (if y & 1 == 1 { 0x9908_b0df } else { 0 })
        }
        // The reference loop `mt[i] = twist(mt[i], mt[(i+1)%N], mt[(i+M)%N])` in place, split
        // so that no index needs a modulo (same values: the wrapped reads see updated words).
        let mt = &mut self.mt;
        for i in 0..N - M {
            mt[i] = twist(mt[i], mt[i + 1], mt[i + M]);
        }
        for i in N - M..N - 1 {
            mt[i] = twist(mt[i], mt[i + 1], mt[i + M - N]);
        }
        mt[N - 1] = twist(mt[N - 1], mt[0], mt[M - 1]);
        // Temper the whole block at once (a loop the compiler vectorizes).
        for (o, &m) in self.out.iter_mut().zip(mt.iter()) {
            let mut y = m;
            y ^= y >> 11;
            y ^= (y << 7) & 0x9d2c_5680;
            y ^= (y << 15) & 0xefc6_0000;
            y ^= y >> 18;
            *o = y;
        }
        self.pos = 0;
    }

    /// The next 32-bit output (`genrand_int32`, numpy's `rk_random`).
    ///
    /// ```
    /// let mut mt = pgraphrag_text::py::Mt19937::new(5489);
    /// let first: Vec<u32> = (0..3).map(|_| mt.next_u32()).collect();
    /// assert_eq!(first, [3499211612, 581869302, 3890346734]);
    /// ```
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.pos >= N {
            self.generate();
        }
        let y = self.out[self.pos];
        self.pos += 1;
        y
    }
}
