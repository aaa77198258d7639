//! Ranking order among equal scores, including an exact port of numpy's scalar `argsort`.

use crate::Scored;

/// How documents with equal scores are ordered in a ranking.
///
/// Equal scores are common in PGraphRAG (tiny candidate lists, short queries): every document
/// without a query term scores exactly 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TieOrder {
    /// `np.argsort(scores)[::-1]`, as the PGraphRAG notebook and rank_bm25's `get_top_n` rank,
    /// using numpy's portable (non-SIMD) introsort, ported exactly ([`numpy_argsort`]).
    ///
    /// For up to 16 documents numpy's sort is an insertion sort, which is stable, so after the
    /// reversal **the later document comes first** among ties. For more documents numpy runs a
    /// median-of-three quicksort that is not stable; the order among ties then depends on the
    /// values, and this port reproduces it. numpy builds that dispatch `argsort` to
    /// x86-simd-sort on CPUs with AVX2 or AVX-512 order ties differently (even for 5 items);
    /// numpy does the same as this port when started with those features disabled
    /// (`NPY_DISABLE_CPU_FEATURES`, see `docs/bm25.md`).
    #[default]
    NumpyReversedArgsort,
    /// Stable descending sort: among ties the earlier document comes first.
    InputOrder,
}

/// numpy's `Tag::less` for float64: NaN sorts after every number.
#[inline]
fn less(a: f64, b: f64) -> bool {
    a < b || (b.is_nan() && !a.is_nan())
}

/// `np.argsort(values)` (default `kind="quicksort"`) as numpy's portable C++ implementation
/// computes it: introsort (median-of-three quicksort, insertion sort for partitions of at
/// most 16 elements, heapsort past the depth limit). NaN sorts last.
///
/// ```
/// use pgraphrag_core::numpy_argsort;
/// assert_eq!(numpy_argsort(&[0.5, 0.0, 0.5, 1.0]), vec![1, 0, 2, 3]);
/// ```
pub fn numpy_argsort(values: &[f64]) -> Vec<usize> {
    const SMALL_QUICKSORT: usize = 15;
    let num = values.len();
    let mut tosort: Vec<usize> = (0..num).collect();
    if num < 2 {
        return tosort;
    }
    let v = values;
    let a = &mut tosort[..];
    // Index-based translation of numpy's pointer code: pl, pr, pi, pj, pk are positions in `a`.
    let mut pl: usize = 0;
    let mut pr: usize = num - 1;
    let mut stack: Vec<(usize, usize, i64)> = Vec::new();
    // npy_get_msb(num) * 2
    let mut cdepth: i64 = 2 * i64::from(usize::BITS - 1 - num.leading_zeros());
    loop {
        let mut heap_sorted = false;
        if cdepth < 0 {
            aheapsort(v, &mut a[pl..=pr]);
            heap_sorted = true;
        } else {
            while pr - pl > SMALL_QUICKSORT {
                let pm = pl + ((pr - pl) >> 1);
                if less(v[a[pm]], v[a[pl]]) {
                    a.swap(pm, pl);
                }
                if less(v[a[pr]], v[a[pm]]) {
                    a.swap(pr, pm);
                }
                if less(v[a[pm]], v[a[pl]]) {
                    a.swap(pm, pl);
                }
                let vp = v[a[pm]];
                let mut pi = pl;
                let mut pj = pr - 1;
                a.swap(pm, pj);
                loop {
                    loop {
                        pi += 1;
                        if !less(v[a[pi]], vp) {
                            break;
                        }
                    }
                    loop {
                        pj -= 1;
                        if !less(vp, v[a[pj]]) {
                            break;
                        }
                    }
                    if pi >= pj {
                        break;
                    }
                    a.swap(pi, pj);
                }
                let pk = pr - 1;
                a.swap(pi, pk);
                // Push the larger partition, continue with the smaller one.
                cdepth -= 1;
                if pi - pl < pr - pi {
                    stack.push((pi + 1, pr, cdepth));
                    pr = pi - 1;
                } else {
                    stack.push((pl, pi - 1, cdepth));
                    pl = pi + 1;
                }
            }
        }
        if !heap_sorted {
            // Insertion sort of a[pl..=pr].
            for pi in pl + 1..=pr {
                let vi = a[pi];
                let vp = v[vi];
                let mut pj = pi;
                while pj > pl && less(vp, v[a[pj - 1]]) {
                    a[pj] = a[pj - 1];
                    pj -= 1;
                }
                a[pj] = vi;
            }
        }
        match stack.pop() {
            Some((l, r, d)) => {
                pl = l;
                pr = r;
                cdepth = d;
            }
            None => break,
        }
    }
    tosort
}

/// numpy's `aheapsort_` on the index slice `a` (1-based heap over `a`).
fn aheapsort(v: &[f64], a: &mut [usize]) {
    let n0 = a.len();
    if n0 < 2 {
        return;
    }
    // at(k) = a[k - 1]
    let mut l = n0 >> 1;
    while l > 0 {
        let tmp = a[l - 1];
        let mut i = l;
        let mut j = l << 1;
        while j <= n0 {
            if j < n0 && less(v[a[j - 1]], v[a[j]]) {
                j += 1;
            }
            if less(v[tmp], v[a[j - 1]]) {
                a[i - 1] = a[j - 1];
                i = j;
                j += j;
            } else {
                break;
            }
        }
        a[i - 1] = tmp;
        l -= 1;
    }
    let mut n = n0;
    while n > 1 {
        let tmp = a[n - 1];
        a[n - 1] = a[0];
        n -= 1;
        let mut i = 1;
        let mut j = 2;
        while j <= n {
            if j < n && less(v[a[j - 1]], v[a[j]]) {
                j += 1;
            }
            if less(v[tmp], v[a[j - 1]]) {
                a[i - 1] = a[j - 1];
                i = j;
                j += j;
            } else {
                break;
            }
        }
        a[i - 1] = tmp;
    }
}

/// All indices of `scores`, best first, ties ordered by `ties`. NaN ranks first under
/// [`TieOrder::NumpyReversedArgsort`] (numpy sorts it last, then the order is reversed) and
/// last under [`TieOrder::InputOrder`].
///
/// ```
/// use pgraphrag_core::{rank_order, TieOrder};
/// let s = [1.0, 2.0, 1.0, 0.0];
/// assert_eq!(rank_order(&s, TieOrder::NumpyReversedArgsort), vec![1, 2, 0, 3]);
/// assert_eq!(rank_order(&s, TieOrder::InputOrder), vec![1, 0, 2, 3]);
/// ```
pub fn rank_order(scores: &[f64], ties: TieOrder) -> Vec<usize> {
    match ties {
        TieOrder::NumpyReversedArgsort => {
            let mut o = numpy_argsort(scores);
            o.reverse();
            o
        }
        TieOrder::InputOrder => {
            let mut o: Vec<usize> = (0..scores.len()).collect();
            o.sort_by(|&x, &y| {
                let (a, b) = (scores[x], scores[y]);
                b.partial_cmp(&a)
                    .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
            });
            o
        }
    }
}

/// Past this `k`, [`top_k`] sorts; up to it, it keeps a sorted buffer of `k` in one pass.
const LINEAR_TOP_K: usize = 32;

/// Whether `(a, i)` ranks before `(b, j)` under [`TieOrder::InputOrder`]: the higher score,
/// NaN after every number, then the lower index (what the stable descending sort gives).
#[inline]
fn input_order_before(a: f64, i: usize, b: f64, j: usize) -> bool {
    match b
        .partial_cmp(&a)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
    {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => i < j,
    }
}

/// [`top_k`] under [`TieOrder::InputOrder`], for a small `k`:
/// one pass over `scores` keeping the best `k` seen, sorted.
fn linear_top_k(scores: &[f64], k: usize) -> Vec<Scored<usize>> {
    if k == 0 {
        return Vec::new();
    }
    let mut best: Vec<(usize, f64)> = Vec::with_capacity(k + 1);
    for (i, &s) in scores.iter().enumerate() {
        if best.len() == k {
            let (j, b) = best[k - 1];
            if !input_order_before(s, i, b, j) {
                continue;
            }
        }
        let pos = best
            .iter()
            .position(|&(j, b)| input_order_before(s, i, b, j))
            .unwrap_or(best.len());
        best.insert(pos, (i, s));
        best.truncate(k);
    }
    best.into_iter().map(|(i, s)| Scored::new(i, s)).collect()
}

/// The best `k` (all when `None`) of `scores` as [`Scored`] indices, ties ordered by `ties`:
/// what [`crate::Retriever::rank`] returns for [`crate::Retriever::scores`].
/// [`TieOrder::InputOrder`] is a stable descending sort (NaN last), as [`crate::sort_desc`].
///
/// ```
/// use pgraphrag_core::{top_k, TieOrder};
/// let top = top_k(&[0.1, 0.7, 0.3], Some(2), TieOrder::InputOrder);
/// assert_eq!(top.iter().map(|s| s.item).collect::<Vec<_>>(), vec![1, 2]);
/// ```
///
/// A small `k` under [`TieOrder::InputOrder`] is one linear pass keeping the best `k` (the same
/// result as the sort, without sorting every score): top 3 of 34,628 scores is a few tens of
/// microseconds instead of milliseconds.
pub fn top_k(scores: &[f64], k: Option<usize>, ties: TieOrder) -> Vec<Scored<usize>> {
    if let (TieOrder::InputOrder, Some(k)) = (ties, k)
        && k <= LINEAR_TOP_K
        && k < scores.len()
    {
        return linear_top_k(scores, k);
    }
    let mut order = rank_order(scores, ties);
    order.truncate(k.unwrap_or(usize::MAX));
    order
        .into_iter()
        .map(|i| Scored::new(i, scores[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Scores with many ties, NaN and both zeros, which is where a selection could disagree
    /// with the stable sort.
    fn score() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-3i8..=3).prop_map(f64::from),
            Just(f64::NAN),
            Just(-0.0),
            -1.0f64..1.0,
        ]
    }

    proptest! {
        #[test]
        fn linear_top_k_is_the_sort_truncated(
            scores in proptest::collection::vec(score(), 0..80),
            k in 0usize..40,
        ) {
            let mut sorted = rank_order(&scores, TieOrder::InputOrder);
            sorted.truncate(k);
            let fast: Vec<usize> = top_k(&scores, Some(k), TieOrder::InputOrder)
                .into_iter()
                .map(|s| s.item)
                .collect();
            prop_assert_eq!(fast, sorted);
        }
    }
}
