//! Candidate sets: the target and M − 1 seeded negatives, shuffled into option letters.
use std::collections::{BTreeMap, BTreeSet};

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::rows::Row;
use crate::{Error, Result};

/// The option letters, `A` to `Z`; a candidate set of M items uses the first M.
pub const LETTERS: [char; 26] = [
    'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P', 'Q', 'R', 'S',
    'T', 'U', 'V', 'W', 'X', 'Y', 'Z',
];

/// A candidate set: `items[i]` is the option with letter `LETTERS[i]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateSet {
    /// The candidates in option order (A first).
    pub items: Vec<u32>,
    /// The target's position in `items`.
    pub target_index: usize,
}

impl CandidateSet {
    /// The target's option letter.
    ///
    /// ```
    /// let c = pgraphrag_recsys::CandidateSet { items: vec![7, 3], target_index: 1 };
    /// assert_eq!(c.target_letter(), 'B');
    /// ```
    pub fn target_letter(&self) -> char {
        LETTERS[self.target_index]
    }

    /// The item behind an option letter (upper case), if the set has that option.
    ///
    /// ```
    /// let c = pgraphrag_recsys::CandidateSet { items: vec![7, 3], target_index: 1 };
    /// assert_eq!((c.item('A'), c.item('C')), (Some(7), None));
    /// ```
    pub fn item(&self, letter: char) -> Option<u32> {
        let i = LETTERS.iter().position(|&l| l == letter)?;
        self.items.get(i).copied()
    }

    /// `(letter, item)` for every option, A first.
    ///
    /// ```
    /// let c = pgraphrag_recsys::CandidateSet { items: vec![7, 3], target_index: 1 };
    /// assert_eq!(c.options().collect::<Vec<_>>(), [('A', 7), ('B', 3)]);
    /// ```
    pub fn options(&self) -> impl Iterator<Item = (char, u32)> + '_ {
        LETTERS.iter().copied().zip(self.items.iter().copied())
    }
}

/// Draws candidate sets: M items, the target and M − 1 negatives drawn uniformly without
/// replacement from the catalogue items the user never interacted with, shuffled into option
/// letters.
///
/// **Randomness.** Every row gets its own `rand::rngs::ChaCha8Rng`, seeded with
/// `seed_from_u64(seed)` and set to stream `row_index` (`set_stream`), so a row's set
/// depends only on the seed, the row's index, the catalogue and what the user interacted
/// with — not on which other rows were drawn or in what order. From it, the negatives are
/// `rand::seq::index::sample(rng, pool.len(), M − 1)` over the eligible items in ascending id
/// order, then `[target, negatives…]` is shuffled (`SliceRandom::shuffle`). ChaCha8's stream
/// is fixed for a seed; the sampling and shuffling algorithms are rand 0.10's (the workspace
/// pins the version in `Cargo.lock`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateSampler {
    catalogue: Vec<u32>,
    m: usize,
    seed: u64,
}

impl CandidateSampler {
    /// A sampler of `m` candidates (2 ≤ m ≤ 26; the paper's M = 20, A–T, or M = 10, A–J) over
    /// `catalogue` (duplicates removed).
    ///
    /// ```
    /// use pgraphrag_recsys::CandidateSampler;
    /// assert!(CandidateSampler::new(1..=100, 20, 42).is_ok());
    /// assert!(CandidateSampler::new(1..=100, 27, 42).is_err());
    /// ```
    pub fn new(catalogue: impl IntoIterator<Item = u32>, m: usize, seed: u64) -> Result<Self> {
        if !(2..=LETTERS.len()).contains(&m) {
            return Err(Error::Option {
                name: "m",
                value: m.to_string(),
                expected: "2 to 26 candidates (one option letter each)",
            });
        }
        let catalogue: BTreeSet<u32> = catalogue.into_iter().collect();
        Ok(CandidateSampler {
            catalogue: catalogue.into_iter().collect(),
            m,
            seed,
        })
    }

    /// M, the number of candidates.
    ///
    /// ```
    /// assert_eq!(pgraphrag_recsys::CandidateSampler::new(1..=30, 10, 0).unwrap().m(), 10);
    /// ```
    pub fn m(&self) -> usize {
        self.m
    }

    /// The candidate set of row `row_index` (user `user`, target `target`); `interacted`
    /// holds every item the user interacted with (the target need not be in it). Fails with
    /// [`Error::TooFewCandidates`] when fewer than M − 1 catalogue items are eligible.
    ///
    /// ```
    /// use std::collections::{BTreeMap, BTreeSet};
    /// use pgraphrag_recsys::CandidateSampler;
    /// let s = CandidateSampler::new(1..=100, 20, 42).unwrap();
    /// let seen: BTreeSet<u32> = [1, 2, 3].into();
    /// let c = s.sample(0, 7, 3, &seen).unwrap();
    /// assert_eq!(c.items.len(), 20);
    /// assert_eq!(c.item(c.target_letter()), Some(3));
    /// assert!(c.items.iter().all(|i| *i == 3 || !seen.contains(i)));
    /// assert_eq!(c, s.sample(0, 7, 3, &seen).unwrap()); // same seed and row: same set
    /// ```
    pub fn sample(
        &self,
        row_index: u64,
        user: u32,
        target: u32,
        interacted: &BTreeSet<u32>,
    ) -> Result<CandidateSet> {
        let pool: Vec<u32> = self
            .catalogue
            .iter()
            .copied()
            .filter(|i| *i != target && !interacted.contains(i))
            .collect();
        let needed = self.m - 1;
        if pool.len() < needed {
            return Err(Error::TooFewCandidates {
                user,
                needed,
                available: pool.len(),
            });
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(row_index);
        let mut items = Vec::with_capacity(self.m);
        items.push(target);
        items.extend(
            rand::seq::index::sample(&mut rng, pool.len(), needed)
                .into_iter()
                .map(|k| pool[k]),
        );
        items.shuffle(&mut rng);
        let target_index = items.iter().position(|&i| i == target).unwrap_or(0);
        Ok(CandidateSet {
            items,
            target_index,
        })
    }

    /// Candidate sets for `rows`, row `i` drawn with row index `i` ([`CandidateSampler::sample`]).
    ///
    /// ```
    /// use pgraphrag_recsys::{CandidateSampler, Interacted, Row};
    /// let rows = [Row { user: 1, history: vec![1, 2], target: 3 }];
    /// let s = CandidateSampler::new(1..=30, 10, 7).unwrap();
    /// let sets = s.sample_rows(&rows, Interacted::Row).unwrap();
    /// assert!(sets[0].items.iter().all(|i| ![1, 2].contains(i)));
    /// ```
    pub fn sample_rows(
        &self,
        rows: &[Row],
        interacted: Interacted<'_>,
    ) -> Result<Vec<CandidateSet>> {
        let empty = BTreeSet::new();
        rows.iter()
            .enumerate()
            .map(|(i, r)| {
                let own: BTreeSet<u32>;
                let seen = match interacted {
                    Interacted::Ever(map) => map.get(&r.user).unwrap_or(&empty),
                    Interacted::Row => {
                        own = r.history.iter().copied().chain([r.target]).collect();
                        &own
                    }
                };
                self.sample(i as u64, r.user, r.target, seen)
            })
            .collect()
    }
}

/// What "the user interacted with" means when drawing negatives.
#[derive(Debug, Clone, Copy)]
pub enum Interacted<'a> {
    /// Every item the user ever interacted with, by user (ML-100K: [`crate::Ml100k::interacted`]).
    Ever(&'a BTreeMap<u32, BTreeSet<u32>>),
    /// Only the row's own history and target (the ML-1M slice, which comes without
    /// `ratings.dat`).
    Row,
}
