//! Item popularity and K-RagRec's popularity-selective retrieval gate.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Interaction counts over a catalogue (items never seen count 0).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Popularity {
    counts: BTreeMap<u32, u32>,
    /// All counts, ascending (for percentiles).
    sorted: Vec<u32>,
}

impl Popularity {
    /// Counts `occurrences` (one item id per interaction) over `catalogue`. An occurrence of
    /// an item outside the catalogue is an [`Error::NotInCatalogue`].
    ///
    /// ```
    /// let p = pgraphrag_recsys::Popularity::count(1..=4, [1, 1, 2]).unwrap();
    /// assert_eq!((p.get(1), p.get(3), p.get(9)), (Some(2), Some(0), None));
    /// assert!(pgraphrag_recsys::Popularity::count(1..=4, [5]).is_err());
    /// ```
    pub fn count(
        catalogue: impl IntoIterator<Item = u32>,
        occurrences: impl IntoIterator<Item = u32>,
    ) -> Result<Self> {
        let mut counts: BTreeMap<u32, u32> = catalogue.into_iter().map(|i| (i, 0)).collect();
        for item in occurrences {
            let n = counts.len();
            match counts.get_mut(&item) {
                Some(c) => *c = c.saturating_add(1),
                None => {
                    return Err(Error::NotInCatalogue { item, catalogue: n });
                }
            }
        }
        let mut sorted: Vec<u32> = counts.values().copied().collect();
        sorted.sort_unstable();
        Ok(Popularity { counts, sorted })
    }

    /// An item's count, `None` outside the catalogue.
    ///
    /// ```
    /// let p = pgraphrag_recsys::Popularity::count([1], [1]).unwrap();
    /// assert_eq!(p.get(1), Some(1));
    /// ```
    pub fn get(&self, item: u32) -> Option<u32> {
        self.counts.get(&item).copied()
    }

    /// The catalogue's size.
    ///
    /// ```
    /// assert_eq!(pgraphrag_recsys::Popularity::count(1..=3, []).unwrap().len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether the catalogue is empty.
    ///
    /// ```
    /// assert!(pgraphrag_recsys::Popularity::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// An item's popularity percentile: the share of catalogue items *strictly less* popular
    /// than it, in `[0, 1)`; `None` outside the catalogue. Items with equal counts share a
    /// percentile, and the least popular items have 0.
    ///
    /// ```
    /// let p = pgraphrag_recsys::Popularity::count(1..=4, [2, 3, 3, 4, 4, 4]).unwrap();
    /// assert_eq!([1, 2, 3, 4].map(|i| p.percentile(i).unwrap()), [0.0, 0.25, 0.5, 0.75]);
    /// ```
    pub fn percentile(&self, item: u32) -> Option<f64> {
        let c = self.get(item)?;
        let below = self.sorted.partition_point(|&x| x < c);
        Some(below as f64 / self.sorted.len() as f64)
    }

    /// Every `(item, count)`, by item id.
    ///
    /// ```
    /// let p = pgraphrag_recsys::Popularity::count([5, 6], [6]).unwrap();
    /// assert_eq!(p.iter().collect::<Vec<_>>(), [(5, 0), (6, 1)]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.counts.iter().map(|(&i, &c)| (i, c))
    }
}

/// How many history items the released code's gate keeps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Take {
    /// A fixed number (the released evaluation passes 5).
    Count(usize),
    /// `⌊ratio × history length⌋` (the released training passes `adaptive_ratio × len`, with
    /// `adaptive_ratio` an integer such as 5, so every item is kept).
    Ratio(f64),
}

/// Which history items get knowledge retrieved (K-RagRec's popularity-selective retrieval).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum PopularityGate {
    /// The paper's text: an item is retrieved iff its popularity is below the threshold `p`,
    /// read as a percentile over the catalogue: its [`Popularity::percentile`] (the share of
    /// catalogue items strictly less popular) is `< p`. The paper sets p = 50% (the less
    /// popular half, ties towards retrieval). Selected items keep history order.
    BelowPercentile {
        /// The threshold, in `[0, 1]`.
        p: f64,
    },
    /// The released code (`retrieve.py: whether_retrieval`): the history sorted by ascending
    /// popularity (a stable sort, so equal counts keep history order; the released code
    /// breaks ties by first appearance in its ratings file, which this crate does not have),
    /// then the first [`Take`] items. No threshold: every history item can be selected.
    Ascending {
        /// How many to keep.
        take: Take,
    },
}

impl Default for PopularityGate {
    /// [`PopularityGate::paper`].
    fn default() -> Self {
        Self::paper()
    }
}

impl PopularityGate {
    /// The paper's gate: [`PopularityGate::BelowPercentile`] with p = 0.5.
    ///
    /// ```
    /// use pgraphrag_recsys::PopularityGate;
    /// assert_eq!(PopularityGate::paper(), PopularityGate::BelowPercentile { p: 0.5 });
    /// ```
    pub fn paper() -> Self {
        PopularityGate::BelowPercentile { p: 0.5 }
    }

    /// No gate: every history item is retrieved for (the paper's "-Popularity" ablation,
    /// appendix A.6). It is [`PopularityGate::BelowPercentile`] with p = 1, since no item's
    /// percentile (the share of the catalogue strictly less popular) reaches 1.
    ///
    /// ```
    /// use pgraphrag_recsys::{Popularity, PopularityGate};
    /// let pop = Popularity::count(1..=3, [3, 3, 3, 2]).unwrap();
    /// assert_eq!(PopularityGate::every_item().select(&pop, &[3, 1, 2]).unwrap(), [3, 1, 2]);
    /// ```
    pub fn every_item() -> Self {
        PopularityGate::BelowPercentile { p: 1.0 }
    }

    /// The history items to retrieve knowledge for. A history item outside the popularity
    /// catalogue is an [`Error::NotInCatalogue`]; `p` outside `[0, 1]` or a negative or
    /// non-finite ratio is an [`Error::Option`].
    ///
    /// ```
    /// use pgraphrag_recsys::{Popularity, PopularityGate, Take};
    /// // counts: 1 → 0, 2 → 1, 3 → 2, 4 → 3
    /// let pop = Popularity::count(1..=4, [2, 3, 3, 4, 4, 4]).unwrap();
    /// let history = [4, 1, 3, 2];
    /// assert_eq!(PopularityGate::paper().select(&pop, &history).unwrap(), [1, 2]);
    /// let released = PopularityGate::Ascending { take: Take::Count(3) };
    /// assert_eq!(released.select(&pop, &history).unwrap(), [1, 2, 3]);
    /// ```
    pub fn select(&self, pop: &Popularity, history: &[u32]) -> Result<Vec<u32>> {
        let mut scored = Vec::with_capacity(history.len());
        for &item in history {
            let c = pop.get(item).ok_or(Error::NotInCatalogue {
                item,
                catalogue: pop.len(),
            })?;
            scored.push((item, c));
        }
        match *self {
            PopularityGate::BelowPercentile { p } => {
                if !(0.0..=1.0).contains(&p) {
                    return Err(Error::Option {
                        name: "p",
                        value: p.to_string(),
                        expected: "a share in [0, 1]",
                    });
                }
                Ok(scored
                    .into_iter()
                    .filter(|&(item, _)| pop.percentile(item).is_some_and(|q| q < p))
                    .map(|(item, _)| item)
                    .collect())
            }
            PopularityGate::Ascending { take } => {
                let k = match take {
                    Take::Count(n) => n,
                    Take::Ratio(r) if r.is_finite() && r >= 0.0 => {
                        (r * history.len() as f64).floor() as usize
                    }
                    Take::Ratio(r) => {
                        return Err(Error::Option {
                            name: "ratio",
                            value: r.to_string(),
                            expected: "a finite, non-negative ratio",
                        });
                    }
                };
                scored.sort_by_key(|&(_, c)| c);
                Ok(scored.into_iter().take(k).map(|(i, _)| i).collect())
            }
        }
    }
}

/// Which interactions a dataset's popularity counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Counted {
    /// Every interaction (the library default).
    #[default]
    All,
    /// Liked ones only: ML-100K ratings ≥ 4, ML-1M slice flags of 1 (the released code counts
    /// `ratings_45.txt`, the ratings of 4 and 5).
    Liked,
}

impl crate::Ml100k {
    /// Item popularity over the catalogue (`ml-100k.item`) from `ml-100k.inter`.
    ///
    /// ```
    /// use pgraphrag_recsys::{Counted, Interaction, Ml100k};
    /// let mut ml = Ml100k::default();
    /// ml.items.insert(1, pgraphrag_recsys::Movie { id: 1, title: "Heat".into(), year: Some(1995), genres: vec![], line: 2 });
    /// ml.interactions.push(Interaction { user: 1, item: 1, rating: 3.0, timestamp: 0, line: 2 });
    /// assert_eq!(ml.popularity(Counted::All).unwrap().get(1), Some(1));
    /// assert_eq!(ml.popularity(Counted::Liked).unwrap().get(1), Some(0));
    /// ```
    pub fn popularity(&self, counted: Counted) -> Result<Popularity> {
        Popularity::count(
            self.items.keys().copied(),
            self.interactions
                .iter()
                .filter(|x| counted == Counted::All || x.rating >= 4.0)
                .map(|x| x.item),
        )
    }
}

impl crate::Ml1m {
    /// Item popularity over the catalogue (`movies.dat`) from the slice itself: every history
    /// item and every target of `test_filtered.csv` is one interaction (no `ratings.dat`
    /// comes with the slice). Movies outside the slice count 0.
    ///
    /// ```
    /// use pgraphrag_recsys::{Counted, Ml1m, Ml1mRow};
    /// let mut ml = Ml1m::default();
    /// for id in 1..=3 {
    ///     ml.movies.insert(id, pgraphrag_recsys::Movie { id, title: "X".into(), year: Some(1995), genres: vec![], line: 1 });
    /// }
    /// ml.rows.push(Ml1mRow { user: 1, history: vec![1, 2], history_liked: vec![true, false],
    ///                        target: 3, target_liked: true, timestamp: 0, line: 2 });
    /// let p = ml.popularity(Counted::Liked).unwrap();
    /// assert_eq!([1, 2, 3].map(|i| p.get(i).unwrap()), [1, 0, 1]);
    /// ```
    pub fn popularity(&self, counted: Counted) -> Result<Popularity> {
        let liked = counted == Counted::Liked;
        Popularity::count(
            self.movies.keys().copied(),
            self.rows.iter().flat_map(|r| {
                r.history
                    .iter()
                    .zip(&r.history_liked)
                    .filter(move |(_, l)| !liked || **l)
                    .map(|(i, _)| *i)
                    .chain((!liked || r.target_liked).then_some(r.target))
            }),
        )
    }
}
