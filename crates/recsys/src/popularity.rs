//! Item popularity and K-RagRec's popularity-selective retrieval gate; the training
//! interactions the no-LLM baselines count ([`Training`]).
use std::collections::{BTreeMap, HashMap, HashSet};

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

/// The training interactions of a dataset, as the no-LLM baselines count them
/// ([`crate::Method::Popularity`], [`crate::Method::History`]), with each row's cut-off.
///
/// **What is counted for row `r`**: a (user, item) interaction counts iff it is *no* row's
/// held-out target (the leave-one-out training part: the `(user, target)` pair of every row of
/// the dataset is left out, whichever rows are evaluated) *and* it happened strictly before row
/// `r`'s target (its cut-off). So neither `r`'s own target interaction nor anything at or after
/// it is ever counted. A (user, item) pair counts once, at its earliest time.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Training {
    /// Item → `(user, time)` of its training interactions, one per user, sorted by user.
    by_item: HashMap<u32, Vec<(u32, i64)>>,
    /// Row index → the row's cut-off (its target's time).
    cutoffs: Vec<i64>,
}

impl Training {
    /// `interactions` as `(user, item, time)` (a time may be an upper bound: the cut-off then
    /// errs towards not counting), less every `(user, item)` of `held_out`; `cutoffs[i]` is row
    /// `i`'s target time.
    pub(crate) fn new(
        interactions: impl IntoIterator<Item = (u32, u32, i64)>,
        held_out: &HashSet<(u32, u32)>,
        cutoffs: Vec<i64>,
    ) -> Self {
        let mut earliest: HashMap<(u32, u32), i64> = HashMap::new();
        for (user, item, t) in interactions {
            if held_out.contains(&(user, item)) {
                continue;
            }
            earliest
                .entry((user, item))
                .and_modify(|e| *e = (*e).min(t))
                .or_insert(t);
        }
        let mut by_item: HashMap<u32, Vec<(u32, i64)>> = HashMap::new();
        for ((user, item), t) in earliest {
            by_item.entry(item).or_default().push((user, t));
        }
        for v in by_item.values_mut() {
            v.sort_unstable();
        }
        Training { by_item, cutoffs }
    }

    /// ML-100K's: `interactions` (`ml-100k.inter`) less every leave-one-out row's `(user,
    /// target)`, each row's cut-off its target rating's timestamp (`rows` in dataset order).
    pub(crate) fn leave_one_out(interactions: &[crate::Interaction], rows: &[crate::Row]) -> Self {
        let held_out: HashSet<(u32, u32)> = rows.iter().map(|r| (r.user, r.target)).collect();
        let mut target_time: HashMap<(u32, u32), i64> = HashMap::new();
        for x in interactions {
            if held_out.contains(&(x.user, x.item)) {
                target_time
                    .entry((x.user, x.item))
                    .and_modify(|t| *t = (*t).min(x.timestamp))
                    .or_insert(x.timestamp);
            }
        }
        // A target is one of the user's interactions, so every row has its time; a row
        // without one would count nothing.
        let cutoffs = rows
            .iter()
            .map(|r| {
                target_time
                    .get(&(r.user, r.target))
                    .copied()
                    .unwrap_or(i64::MIN)
            })
            .collect();
        Training::new(
            interactions.iter().map(|x| (x.user, x.item, x.timestamp)),
            &held_out,
            cutoffs,
        )
    }

    /// The ML-1M slice's (no other ratings come with it): every row's history items, each at
    /// its row's target time (an upper bound of its own), less every row's `(user, target)`;
    /// each row's cut-off its target time.
    pub(crate) fn ml1m(rows: &[crate::Ml1mRow]) -> Self {
        Training::new(
            rows.iter()
                .flat_map(|r| r.history.iter().map(move |&h| (r.user, h, r.timestamp))),
            &rows.iter().map(|r| (r.user, r.target)).collect(),
            rows.iter().map(|r| r.timestamp).collect(),
        )
    }

    /// Row `row`'s cut-off; a row the dataset does not have is an [`Error::ScoreOutput`].
    fn cutoff(&self, row: usize) -> Result<i64> {
        self.cutoffs
            .get(row)
            .copied()
            .ok_or_else(|| Error::ScoreOutput {
                problem: format!(
                    "row {row} has no training cut-off (the dataset has {} rows)",
                    self.cutoffs.len()
                ),
            })
    }

    /// The users with a training interaction on `item` before `cutoff`.
    fn users(&self, item: u32, cutoff: i64) -> impl Iterator<Item = u32> + '_ {
        self.by_item
            .get(&item)
            .into_iter()
            .flatten()
            .filter(move |&&(_, t)| t < cutoff)
            .map(|&(u, _)| u)
    }

    /// The popularity baseline's primary score of each of `candidates` for row `row`: its
    /// number of counted interactions (users).
    pub(crate) fn popularity(&self, row: usize, candidates: &[u32]) -> Result<Vec<f64>> {
        let cutoff = self.cutoff(row)?;
        Ok(candidates
            .iter()
            .map(|&c| self.users(c, cutoff).count() as f64)
            .collect())
    }

    /// The history baseline's primary score of each of `candidates` for row `row` (item-based
    /// collaborative filtering, item-kNN with cosine similarity over all items): the sum over
    /// the distinct `history` items `h` of `co(c, h) / √(n(c) · n(h))`, where `n(x)` is the
    /// number of users with a counted interaction on `x` and `co(c, h)` the number with counted
    /// interactions on both (a term with `n = 0` is 0).
    pub(crate) fn history(
        &self,
        row: usize,
        history: &[u32],
        candidates: &[u32],
    ) -> Result<Vec<f64>> {
        let cutoff = self.cutoff(row)?;
        let mut seen = HashSet::new();
        let sets: Vec<HashSet<u32>> = history
            .iter()
            .filter(|h| seen.insert(**h))
            .map(|&h| self.users(h, cutoff).collect::<HashSet<u32>>())
            .filter(|s| !s.is_empty())
            .collect();
        Ok(candidates
            .iter()
            .map(|&c| {
                let mut n_c = 0usize;
                let mut co = vec![0usize; sets.len()];
                for u in self.users(c, cutoff) {
                    n_c += 1;
                    for (k, s) in sets.iter().enumerate() {
                        co[k] += usize::from(s.contains(&u));
                    }
                }
                if n_c == 0 {
                    return 0.0;
                }
                co.iter()
                    .zip(&sets)
                    .map(|(&k, s)| k as f64 / ((n_c * s.len()) as f64).sqrt())
                    .sum()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every interaction of [`training`] but row 0's held-out target `(1, 9, 10)`: user 2's 9
    /// (time 4) is before row 0's cut-off (10), user 3's (15) after; `(2, 8, 20)` is row 1's
    /// held-out target.
    const OTHERS: [(u32, u32, i64); 8] = [
        (1, 5, 1),
        (2, 5, 2),
        (2, 6, 3),
        (2, 9, 4),
        (2, 8, 20),
        (3, 9, 15),
        (3, 6, 5),
        (3, 5, 6),
    ];

    /// Users 1–3; user 1's row (index 0) has target 9 at time 10, user 2's (index 1) target 8
    /// at time 20.
    fn training() -> Training {
        let held_out = HashSet::from([(1, 9), (2, 8)]);
        Training::new(
            OTHERS.into_iter().chain([(1, 9, 10)]),
            &held_out,
            vec![10, 20],
        )
    }

    #[test]
    fn popularity_counts_training_interactions_before_the_cutoff() {
        let t = training();
        // Row 0 (cut-off 10): item 9 only by user 2 (user 1's is held out, user 3's is later).
        assert_eq!(
            t.popularity(0, &[9, 5, 6, 8]).unwrap(),
            [1.0, 3.0, 2.0, 0.0]
        );
        // Row 1 (cut-off 20): user 3's 9 now counts; user 1's 9 (a held-out target) never does,
        // nor row 1's own target 8.
        assert_eq!(t.popularity(1, &[9, 8]).unwrap(), [2.0, 0.0]);
        assert!(t.popularity(2, &[9]).is_err());
    }

    #[test]
    fn the_held_out_target_does_not_raise_its_own_score() {
        let t = training();
        let c = [9, 5, 6];
        let same = |other: &Training| {
            assert_eq!(
                t.popularity(0, &c).unwrap(),
                other.popularity(0, &c).unwrap()
            );
            assert_eq!(
                t.history(0, &[5], &c).unwrap(),
                other.history(0, &[5], &c).unwrap()
            );
        };
        // The same data without row 0's target interaction: row 0's scores agree.
        same(&Training::new(
            OTHERS,
            &HashSet::from([(2, 8)]),
            vec![10, 20],
        ));
        // Nor does an interaction with the target at the cut-off or after it count.
        let later = OTHERS
            .into_iter()
            .chain([(1, 9, 10), (4, 9, 10), (5, 9, 11)]);
        same(&Training::new(
            later,
            &HashSet::from([(1, 9), (2, 8)]),
            vec![10, 20],
        ));
    }

    #[test]
    fn leave_one_out_holds_out_every_target_and_cuts_at_its_time() {
        use crate::{Interaction, leave_one_out};
        let x = |user, item, timestamp| Interaction {
            user,
            item,
            rating: 4.0,
            timestamp,
            line: 0,
        };
        // User 1: 5 then target 6 at time 10; user 2: 6 at 5, 7 at 12, target 5 at 30.
        let data = [
            x(1, 5, 1),
            x(1, 6, 10),
            x(2, 6, 5),
            x(2, 7, 12),
            x(2, 5, 30),
        ];
        let rows = leave_one_out(&data, 1).rows;
        assert_eq!(
            rows.iter().map(|r| (r.user, r.target)).collect::<Vec<_>>(),
            [(1, 6), (2, 5)]
        );
        let t = Training::leave_one_out(&data, &rows);
        assert_eq!(t.cutoffs, [10, 30]);
        // Row 0 (before 10): 6 by user 2 only (user 1's is the target), 7 not yet, 5 by user 1.
        assert_eq!(t.popularity(0, &[6, 7, 5]).unwrap(), [1.0, 0.0, 1.0]);
        // Row 1 (before 30): user 2's target 5 is held out, user 1's 6 too.
        assert_eq!(t.popularity(1, &[6, 7, 5]).unwrap(), [1.0, 1.0, 1.0]);
    }

    #[test]
    fn the_ml1m_slice_counts_histories_at_their_row_time() {
        let r = |user, history: Vec<u32>, target, timestamp| crate::Ml1mRow {
            user,
            history_liked: vec![true; history.len()],
            history,
            target,
            target_liked: true,
            timestamp,
            line: 0,
        };
        let rows = [
            r(1, vec![5, 6], 7, 100),
            r(2, vec![7, 5], 8, 200),
            r(3, vec![9], 5, 300),
        ];
        let t = Training::ml1m(&rows);
        assert_eq!(t.cutoffs, [100, 200, 300]);
        // Row 0 sees nothing (its own history is at its own time); row 1 sees row 0's history;
        // row 2 also row 1's, less (1, 7) and (2, 8) and (3, 5): 7 by user 2 counts, 5 by 1 and 2.
        assert_eq!(t.popularity(0, &[5, 6, 7]).unwrap(), [0.0, 0.0, 0.0]);
        assert_eq!(t.popularity(1, &[5, 6, 7]).unwrap(), [1.0, 1.0, 0.0]);
        assert_eq!(
            t.popularity(2, &[5, 6, 7, 9]).unwrap(),
            [2.0, 1.0, 1.0, 0.0]
        );
    }

    #[test]
    fn history_is_item_knn_cosine() {
        let t = training();
        // Row 0, history [5, 5] (counted once): n(5) = 3 (users 1, 2, 3), n(6) = 2 (2, 3),
        // co(6, 5) = 2; n(9) = 1 (user 2), co(9, 5) = 1; item 7 was never seen.
        let s = t.history(0, &[5, 5], &[6, 9, 7]).unwrap();
        assert!((s[0] - 2.0 / 6f64.sqrt()).abs() < 1e-12);
        assert!((s[1] - 1.0 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(s[2], 0.0);
        // A history item nobody else saw before the cut-off adds nothing.
        assert_eq!(t.history(0, &[7], &[6, 9]).unwrap(), [0.0, 0.0]);
    }
}
