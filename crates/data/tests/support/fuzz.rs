//! The fuzz targets' shared harness (included with `#[path = ...] mod fuzz;` by every
//! `fuzz_*.rs` test of the workspace): the case budget, structured mutations of real inputs,
//! and a panic check that reports the input.
//!
//! The budget is `default` cases per target, chosen so each target runs for 10 to 20 seconds
//! on one core in the dev profile; `PGRAPHRAG_FUZZ_CASES=N` runs N cases instead (a longer
//! local run). Each target prints its budget.
#![allow(dead_code)]

use std::panic::{AssertUnwindSafe, catch_unwind};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;

/// The proptest configuration of fuzz target `name`: `default` cases unless
/// `PGRAPHRAG_FUZZ_CASES` says otherwise; no regression files (every crash found is kept as
/// a named `#[test]` instead).
pub fn config(name: &str, default: u32) -> ProptestConfig {
    let cases = std::env::var("PGRAPHRAG_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default);
    eprintln!("fuzz target {name}: {cases} cases (PGRAPHRAG_FUZZ_CASES overrides)");
    ProptestConfig {
        cases,
        failure_persistence: None,
        // Shrinking a crash of a large input can take long; the input is printed anyway.
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

/// Runs `f(input)`; a panic fails the case with the panic message and the input (escaped,
/// its first 2,000 bytes), which proptest then shrinks.
pub fn no_panic<T: ?Sized + std::fmt::Debug, R>(
    input: &T,
    f: impl FnOnce(&T) -> R,
) -> Result<R, TestCaseError> {
    catch_unwind(AssertUnwindSafe(|| f(input))).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        let shown = format!("{input:?}");
        let shown: String = shown.chars().take(2000).collect();
        TestCaseError::fail(format!("panicked ({msg}) on input {shown}"))
    })
}

/// One edit of a byte string.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Flip one bit.
    Flip(Index, u8),
    /// Set one byte.
    Set(Index, u8),
    /// Insert bytes.
    Insert(Index, Vec<u8>),
    /// Delete up to `n` bytes.
    Delete(Index, usize),
    /// Cut the input here.
    Truncate(Index),
    /// Overwrite with a token from the dictionary (e.g. a JSON token, a huge length).
    Overwrite(Index, Index),
    /// Insert a token from the dictionary.
    Splice(Index, Index),
    /// Copy a range of the input to another place (repeats structure).
    Duplicate(Index, Index, usize),
}

/// Applies `edits` to `seed`; `dict` supplies tokens for [`Edit::Overwrite`] and
/// [`Edit::Splice`].
pub fn apply(seed: &[u8], edits: &[Edit], dict: &[&[u8]]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for e in edits {
        let at = |i: &Index, n: usize| if n == 0 { 0 } else { i.index(n) };
        match e {
            Edit::Flip(i, bit) => {
                if !b.is_empty() {
                    let p = at(i, b.len());
                    b[p] ^= 1 << (bit % 8);
                }
            }
            Edit::Set(i, v) => {
                if !b.is_empty() {
                    let p = at(i, b.len());
                    b[p] = *v;
                }
            }
            Edit::Insert(i, v) => {
                let p = at(i, b.len() + 1);
                b.splice(p..p, v.iter().copied());
            }
            Edit::Delete(i, n) => {
                if !b.is_empty() {
                    let p = at(i, b.len());
                    let end = (p + n).min(b.len());
                    b.drain(p..end);
                }
            }
            Edit::Truncate(i) => {
                let p = at(i, b.len() + 1);
                b.truncate(p);
            }
            Edit::Overwrite(i, t) => {
                if !dict.is_empty() && !b.is_empty() {
                    let tok = dict[t.index(dict.len())];
                    let p = at(i, b.len());
                    let end = (p + tok.len()).min(b.len());
                    b.splice(p..end, tok.iter().copied());
                }
            }
            Edit::Splice(i, t) => {
                if !dict.is_empty() {
                    let tok = dict[t.index(dict.len())];
                    let p = at(i, b.len() + 1);
                    b.splice(p..p, tok.iter().copied());
                }
            }
            Edit::Duplicate(from, to, n) => {
                if !b.is_empty() {
                    let s = at(from, b.len());
                    let chunk = b[s..(s + n).min(b.len())].to_vec();
                    let p = at(to, b.len() + 1);
                    b.splice(p..p, chunk);
                }
            }
        }
    }
    b
}

/// One random edit.
pub fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
        1 => (any::<Index>(), proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, v)| Edit::Insert(i, v)),
        2 => (any::<Index>(), 1usize..64).prop_map(|(i, n)| Edit::Delete(i, n)),
        1 => any::<Index>().prop_map(Edit::Truncate),
        3 => (any::<Index>(), any::<Index>()).prop_map(|(i, t)| Edit::Overwrite(i, t)),
        3 => (any::<Index>(), any::<Index>()).prop_map(|(i, t)| Edit::Splice(i, t)),
        1 => (any::<Index>(), any::<Index>(), 1usize..256)
            .prop_map(|(f, t, n)| Edit::Duplicate(f, t, n)),
    ]
}

/// One to `max` random edits.
pub fn edits(max: usize) -> impl Strategy<Value = Vec<Edit>> {
    proptest::collection::vec(edit(), 1..=max)
}
