//! CPython's `random` module, bit-exact: the one implementation is
//! [`pgraphrag_text::py::Random`]; this is its historical path.

/// CPython's `random.Random` (`random.seed(int)`, `getrandbits`, `_randbelow`, `choice`, ...),
/// re-exported from [`pgraphrag_text::py::Random`].
///
/// ```
/// use pgraphrag_retrieval::profile::PyRandom;
/// let mut r = PyRandom::new(42);
/// // Python: random.seed(42); random.getrandbits(32)
/// assert_eq!(r.getrandbits(32), 2746317213);
/// ```
pub use pgraphrag_text::py::Random as PyRandom;

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
