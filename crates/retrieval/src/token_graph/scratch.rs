//! Per-thread query scratch space and the top-k heap of [`super::TokenGraph`] queries.

/// Reusable per-thread scratch space for queries (sized to the largest node).
#[derive(Debug, Default)]
pub struct Scratch {
    pub(super) stamp: Vec<u32>,
    pub(super) excl: Vec<u32>,
    pub(super) gen_: u32,
    /// Per query term and segment: the largest bound of this and the later segments.
    pub(super) head: Vec<f64>,
    /// Per query term: (next segment, end segment, offset in `head`).
    pub(super) cursor: Vec<(usize, usize, usize)>,
    pub(super) heap: std::collections::BinaryHeap<Cand>,
    /// Per term id: how many excluded reviews hold it (0 between queries), and the terms
    /// touched.
    pub(super) dec_count: Vec<u32>,
    pub(super) dec_touched: Vec<u32>,
    /// Reviews scored exactly by the last indexed query (a diagnostic).
    pub(super) scored: usize,
    /// Bound pass: per review (local position), an upper bound of its score.
    pub(super) bound: Vec<f32>,
    /// Bound pass: (bound, local position) of the reviews that may reach the top k.
    pub(super) cands: Vec<(f32, u32)>,
    /// Bound pass: (dense column, weight) of the query terms that have one.
    pub(super) cols: Vec<(usize, f32)>,
}

impl Scratch {
    /// How many reviews the last query on an indexed node scored exactly (the others were
    /// ruled out by bounds); a diagnostic for benchmarks.
    pub fn last_scored(&self) -> usize {
        self.scored
    }

    pub(super) fn next_gen(&mut self, n: usize) -> u32 {
        if self.stamp.len() < n {
            self.stamp.resize(n, 0);
            self.bound.resize(n, 0.0);
            self.excl.resize(n, 0);
        }
        self.scored = 0;
        self.gen_ = self.gen_.wrapping_add(1);
        if self.gen_ == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.excl.iter_mut().for_each(|s| *s = 0);
            self.gen_ = 1;
        }
        self.gen_
    }
}

/// A scored candidate: (score, local position, review id). Ordered so that the *worse*
/// candidate is the greater one (lower score, then later position): a max-heap of `Cand`
/// keeps the current k-th best on top.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cand(pub(super) f64, pub(super) u32, pub(super) u32);

impl PartialEq for Cand {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == std::cmp::Ordering::Equal
    }
}
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cand {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.total_cmp(&self.0).then(self.1.cmp(&o.1))
    }
}

/// Adds `c` to the top-k heap if it beats the current k-th best.
#[inline]
pub(super) fn offer(heap: &mut std::collections::BinaryHeap<Cand>, k: usize, c: Cand) {
    if heap.len() < k {
        heap.push(c);
    } else if heap.peek().is_some_and(|worst| c < *worst) {
        heap.pop();
        heap.push(c);
    }
}

/// Sorts (review, score, local) by score desc then local asc, keeps k.
pub(super) fn select_top(out: &mut Vec<(u32, f64, u32)>, k: usize) -> Vec<(u32, f64)> {
    let cmp = |a: &(u32, f64, u32), b: &(u32, f64, u32)| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2));
    if out.len() > k {
        out.select_nth_unstable_by(k - 1, cmp);
        out.truncate(k);
    }
    out.sort_by(cmp);
    out.iter().map(|x| (x.0, x.1)).collect()
}
