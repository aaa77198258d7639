//! Answering a [`TokenGraph`] query: the exclusion of the target's own reviews, brute
//! force over small nodes, and the exact threshold algorithm over indexed ones.

use super::bounds::dense_bounds;
use super::node::{NodeIndex, NodeSide};
use super::scratch::{Cand, Scratch, offer, select_top};
use super::{PairStats, Side, TokenGraph};
use crate::sparse::Bm25Params;
use crate::sparse::formula;

impl TokenGraph {
    /// The terms of the excluded reviews `excl` (positions in `list`) with how many of them
    /// hold each, ascending by term, into `dec`.
    pub(super) fn excluded_terms(
        &self,
        list: &[u32],
        excl: &[u32],
        dec: &mut Vec<(u32, u32)>,
        s: &mut Scratch,
    ) {
        dec.clear();
        if let [l] = excl {
            // One excluded review (the usual case): its terms are distinct and sorted.
            dec.extend(self.review_terms(list[*l as usize]).map(|(t, _)| (t, 1)));
        } else {
            // Many (a user reviewing the item again and again): count in a per-term array.
            s.dec_touched.clear();
            for &l in excl {
                for (t, _) in self.review_terms(list[l as usize]) {
                    let ti = t as usize;
                    if ti >= s.dec_count.len() {
                        s.dec_count.resize(ti + 1, 0);
                    }
                    if s.dec_count[ti] == 0 {
                        s.dec_touched.push(t);
                    }
                    s.dec_count[ti] += 1;
                }
            }
            s.dec_touched.sort_unstable();
            for &t in &s.dec_touched {
                dec.push((t, std::mem::take(&mut s.dec_count[t as usize])));
            }
        }
    }

    /// Positions in `list` (the reviews of user `u` or of item `i`, per `side`) of the
    /// reviews by user `u` of item `i`, ascending. Scans the other ends of the shorter of the
    /// two review lists (sequentially), then maps to `list` by binary search when needed
    /// (all lists are in review order).
    pub(super) fn pair_positions(&self, side: Side, u: u32, i: u32, list: &[u32]) -> Vec<u32> {
        let span = |s: &NodeSide, v: u32| -> (usize, usize) {
            let v = v as usize;
            if v + 1 >= s.off.len() {
                (0, 0)
            } else {
                (s.off[v] as usize, s.off[v + 1] as usize)
            }
        };
        let (ua, ue) = span(&self.users, u);
        let (ia, ie) = span(&self.items, i);
        let (scan, a, e, want, scanned) = if ue - ua <= ie - ia {
            (&self.users, ua, ue, i, Side::User)
        } else {
            (&self.items, ia, ie, u, Side::Item)
        };
        let hits = scan.other[a..e]
            .iter()
            .enumerate()
            .filter(|&(_, &o)| o == want)
            .map(|(l, _)| l);
        if scanned == side {
            hits.map(|l| l as u32).collect()
        } else {
            // Galloping search from the previous hit (hits ascend), so that many hits cost
            // little more than one merge.
            let mut lo = 0usize;
            let mut out = Vec::new();
            for l in hits {
                let r = scan.reviews[a + l];
                let mut step = 1;
                while lo + step < list.len() && list[lo + step] < r {
                    step *= 2;
                }
                let hi = (lo + step + 1).min(list.len());
                lo += list[lo..hi].partition_point(|&x| x < r);
                if list.get(lo) == Some(&r) {
                    out.push(lo as u32);
                }
            }
            out
        }
    }

    /// [`Self::top_k`], with the exclusion precomputed when `excl` is a heavy pair's.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn top_k_inner(
        &self,
        side: Side,
        node: u32,
        excl: &[u32],
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
        pair: Option<&PairStats>,
    ) -> Vec<(u32, f64)> {
        let ns = self.side(side);
        let list = self.node_reviews(side, node);
        let n_all = list.len();
        let n = n_all.saturating_sub(excl.len());
        if n == 0 || k == 0 {
            return Vec::new();
        }
        let excl_len: u64 = match pair {
            Some(ps) => ps.len,
            None => excl
                .iter()
                .map(|&l| u64::from(self.doc_len[list[l as usize] as usize]))
                .sum(),
        };
        let total = ns.total_len[node as usize] - excl_len;
        let gen_ = s.next_gen(n_all);
        for &l in excl {
            s.excl[l as usize] = gen_;
        }
        if total == 0 {
            // Every candidate is empty: rank_bm25 cannot fit; score all 0 (as the retrievers do).
            return (0..n_all as u32)
                .filter(|&l| s.excl[l as usize] != gen_)
                .take(k)
                .map(|l| (list[l as usize], 0.0))
                .collect();
        }
        let avgdl = total as f64 / n as f64;
        let nf = n as f64;
        match ns.index_of.get(node as usize).copied() {
            Some(ix) if ix != u32::MAX => {
                let slot = usize::from(side == Side::Item);
                let pair = pair.map(|ps| (ps, ps.idf[slot]));
                let ni = &ns.idx[ix as usize];
                self.top_k_indexed(ni, list, excl, query, k, p, s, nf, avgdl, pair)
            }
            _ => self.top_k_brute(list, query, k, p, s, nf, avgdl),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn top_k_brute(
        &self,
        list: &[u32],
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
        nf: f64,
        avgdl: f64,
    ) -> Vec<(u32, f64)> {
        let gen_ = s.gen_;
        // df over candidates.
        let mut df: Vec<(u32, u32)> = Vec::new();
        for (l, &r) in list.iter().enumerate() {
            if s.excl[l] == gen_ {
                continue;
            }
            df.extend(self.review_terms(r).map(|(t, _)| (t, 1)));
        }
        df.sort_unstable_by_key(|x| x.0);
        df.dedup_by(|a, b| {
            if a.0 == b.0 {
                b.1 += a.1;
                true
            } else {
                false
            }
        });
        let idf_sum: f64 = df
            .iter()
            .map(|&(_, d)| formula::idf(nf, f64::from(d)))
            .sum();
        let eps = formula::idf_floor(p.epsilon, idf_sum, df.len());
        let idf = |t: u32| -> f64 {
            match df.binary_search_by_key(&t, |x| x.0) {
                Ok(i) => {
                    let v = formula::idf(nf, f64::from(df[i].1));
                    formula::floored(v, eps)
                }
                Err(_) => 0.0,
            }
        };
        let qidf: Vec<(u32, f64)> = query.iter().map(|&t| (t, idf(t))).collect();
        let mut out: Vec<(u32, f64, u32)> = Vec::with_capacity(list.len());
        for (l, &r) in list.iter().enumerate() {
            if s.excl[l] == gen_ {
                continue;
            }
            let (a, b) = (
                self.fwd_off[r as usize] as usize,
                self.fwd_off[r as usize + 1] as usize,
            );
            let terms = &self.fwd_term[a..b];
            let dl = f64::from(self.doc_len[r as usize]);
            let norm = formula::length_norm(p.k1, p.b, dl, avgdl);
            let mut score = 0.0;
            for &(t, w) in &qidf {
                if w == 0.0 {
                    continue;
                }
                if let Ok(i) = terms.binary_search(&t) {
                    let tf = f64::from(self.fwd_tf[a + i]);
                    score += w * formula::tf_part(tf, p.k1, norm);
                }
            }
            out.push((r, score, l as u32));
        }
        select_top(&mut out, k)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn top_k_indexed(
        &self,
        ni: &NodeIndex,
        list: &[u32],
        excl: &[u32],
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
        nf: f64,
        avgdl: f64,
        pair: Option<(&PairStats, (f64, i64))>,
    ) -> Vec<(u32, f64)> {
        let gen_ = s.gen_;
        // Per-term df decrements from the excluded reviews, and the idf sum: precomputed for
        // a heavy (user, item) pair, else from the excluded reviews' terms.
        let mut dec_own: Vec<(u32, u32)> = Vec::new();
        let (dec, (idf_sum, vocab)): (&[(u32, u32)], (f64, i64)) = match pair {
            Some((ps, idf)) => (&ps.dec, idf),
            None => {
                self.excluded_terms(list, excl, &mut dec_own, s);
                let idf = ni.idf_stats(&dec_own, excl.len(), nf);
                (&dec_own, idf)
            }
        };
        let dec_of = |t: u32| -> u32 {
            match dec.binary_search_by_key(&t, |x| x.0) {
                Ok(i) => dec[i].1,
                Err(_) => 0,
            }
        };
        let eps = formula::idf_floor(p.epsilon, idf_sum, vocab.max(1) as usize);
        // Query terms with their summed weights (repeats add up, as rank_bm25 loops over them).
        let mut qt: Vec<(u32, f64, usize)> = Vec::new(); // (term, weight, term index)
        for &t in query {
            let Ok(ti) = ni.terms.binary_search(&t) else {
                continue;
            };
            let d = ni.post_off[ti + 1] - ni.post_off[ti] - dec_of(t);
            if d == 0 {
                continue;
            }
            let v = formula::idf(nf, f64::from(d));
            let w = formula::floored(v, eps);
            match qt.iter_mut().find(|x| x.0 == t) {
                Some(x) => x.1 += w,
                None => qt.push((t, w, ti)),
            }
        }
        qt.retain(|x| x.1 != 0.0);
        // Every document is scored in the same (term id) order, whichever term found it.
        qt.sort_unstable_by_key(|x| x.0);
        let (k1, b) = (p.k1, p.b);
        // The segment bounds hold (and the early stop is exact) only when every contribution
        // is non-negative and monotone in tf and document length; otherwise visit everything.
        let prune = qt.iter().all(|x| x.1 > 0.0 && x.1.is_finite())
            && k1 > 0.0
            && k1.is_finite()
            && (0.0..=1.0).contains(&b)
            && avgdl.is_finite()
            && avgdl > 0.0;
        let score_of = |r: u32| -> f64 {
            let (a, e) = (
                self.fwd_off[r as usize] as usize,
                self.fwd_off[r as usize + 1] as usize,
            );
            let terms = &self.fwd_term[a..e];
            let dl = self.doc_len[r as usize];
            let mut score = 0.0;
            for &(t, w, _) in &qt {
                if let Ok(j) = terms.binary_search(&t) {
                    score += w * formula::tf_part_at(self.fwd_tf[a + j], dl, k1, b, avgdl);
                }
            }
            score
        };
        // Per query term, the bound of each segment at this avgdl, as a suffix maximum: the
        // head of a term bounds its contribution to every document not yet visited.
        s.head.clear();
        s.cursor.clear();
        for &(_, w, ti) in &qt {
            let (s0, s1) = (ni.seg_off[ti] as usize, ni.seg_off[ti + 1] as usize);
            let base = s.head.len();
            s.head.extend(
                ni.segs[s0..s1]
                    .iter()
                    .map(|g| w * formula::tf_part_at(g.tf_max, g.dl_min, k1, b, avgdl)),
            );
            for j in (base..s.head.len().saturating_sub(1)).rev() {
                if s.head[j] < s.head[j + 1] {
                    s.head[j] = s.head[j + 1];
                }
            }
            s.cursor.push((s0, s1, base));
        }
        // Threshold algorithm with random access: visit segments, the one with the highest
        // bound first; the first time a review is met, score it exactly from the forward
        // index. Stop as soon as the best score a review not met yet can reach (the sum of
        // the terms' current bounds) is below the k-th best exact score.
        s.heap.clear();
        s.scored = 0;
        let mut stopped = false;
        // On a node with dense columns, impact order gets a budget of exact scorings; past
        // it (the query's terms are frequent here), the bound pass takes over. The columns
        // are quantized at the default k1 and b.
        let dense = &ni.dense;
        let defaults = Bm25Params::default();
        let n_all = list.len();
        let budget = if prune && !dense.slots.is_empty() && k1 == defaults.k1 && b == defaults.b {
            self.opts.budget_base + n_all / 8192
        } else {
            usize::MAX
        };
        let mut switched = false;
        'outer: loop {
            let mut threshold = 0.0;
            let mut best: Option<(usize, f64)> = None;
            for (qi, &(j, e, base)) in s.cursor.iter().enumerate() {
                if j < e {
                    let h = s.head[base + j - ni.seg_off[qt[qi].2] as usize];
                    threshold += h;
                    if best.is_none_or(|(_, bh)| h > bh) {
                        best = Some((qi, h));
                    }
                }
            }
            let Some((qi, _)) = best else {
                break; // every posting of every query term visited
            };
            let beaten = |heap: &std::collections::BinaryHeap<Cand>| {
                prune
                    && heap.len() >= k
                    && heap.peek().is_some_and(|w| threshold * (1.0 + 1e-9) < w.0)
            };
            if beaten(&s.heap) {
                stopped = true;
                break;
            }
            let (j, _, _) = s.cursor[qi];
            let ti = qt[qi].2;
            let (start, end) = ni.segment(ti, j);
            s.cursor[qi].0 += 1;
            for &l in &ni.post_local[start..end] {
                let li = l as usize;
                if s.excl[li] == gen_ || s.stamp[li] == gen_ {
                    continue;
                }
                if s.scored >= budget {
                    switched = true;
                    break 'outer;
                }
                s.stamp[li] = gen_;
                s.scored += 1;
                let r = list[li];
                let c = Cand(score_of(r), l, r);
                if s.heap.len() < k {
                    s.heap.push(c);
                } else if s.heap.peek().is_some_and(|worst| c < *worst) {
                    s.heap.pop();
                    s.heap.push(c);
                    if beaten(&s.heap) {
                        stopped = true;
                        break 'outer;
                    }
                }
            }
        }
        if switched {
            // Bound pass: an upper bound of every review's score (dense columns for the
            // frequent query terms, postings for the others), then the reviews whose bound
            // reaches the k-th best score are scored exactly, highest bound first.
            let bound = &mut s.bound[..n_all];
            let scale = (avgdl / dense.avgdl).max(1.0) * (k1 + 1.0) / 255.0;
            s.cols.clear();
            let mut rare = false;
            for &(_, w, ti) in &qt {
                match dense.slots.binary_search(&(ti as u32)) {
                    Ok(c) => s.cols.push((c, (w * scale) as f32)),
                    Err(_) => rare = true,
                }
            }
            if rare {
                bound.fill(0.0);
                for &(_, w, ti) in &qt {
                    if dense.slots.binary_search(&(ti as u32)).is_ok() {
                        continue;
                    }
                    // Each segment's bound for all its reviews (no per-review length).
                    for j in ni.seg_off[ti] as usize..ni.seg_off[ti + 1] as usize {
                        let (a, e) = ni.segment(ti, j);
                        let g = ni.segs[j];
                        let x = (w * formula::tf_part_at(g.tf_max, g.dl_min, k1, b, avgdl)) as f32;
                        for &l in &ni.post_local[a..e] {
                            bound[l as usize] += x;
                        }
                    }
                }
            }
            // f32 rounding: each product and each addition is off by at most 2^-24 relative.
            let margin = 1.0 + (2 * qt.len() + 4) as f64 * 1.2e-7 + 1e-9;
            // A review can reach the top k only if its bound is at least the cut.
            let cut_of = |heap: &std::collections::BinaryHeap<Cand>| -> f32 {
                let theta = match heap.peek() {
                    Some(w) if heap.len() >= k => w.0,
                    _ => 0.0,
                };
                (((theta / margin) * (1.0 - 1e-6)) as f32).max(f32::MIN_POSITIVE)
            };
            let mut cut = cut_of(&s.heap);
            s.cands.clear();
            if !s.cols.is_empty() || rare {
                // Chunk by chunk: bounds, candidates; when candidates pile up (the k-th best
                // score so far is weak), score those with the best bounds to raise it.
                const CHUNK: usize = 2048;
                const LIMIT: usize = 1024;
                const REFINE: usize = 32;
                for start in (0..n_all).step_by(CHUNK) {
                    let end = (start + CHUNK).min(n_all);
                    let cols = (&dense.cols[..], n_all, start);
                    dense_bounds(
                        &mut bound[start..end],
                        cols,
                        &s.cols,
                        !rare,
                        cut,
                        &mut s.cands,
                    );
                    if s.cands.len() > LIMIT {
                        let m = REFINE.min(s.cands.len());
                        s.cands
                            .select_nth_unstable_by(m - 1, |a, b| b.0.total_cmp(&a.0));
                        for &(_, l) in &s.cands[..m] {
                            let li = l as usize;
                            if s.excl[li] == gen_ || s.stamp[li] == gen_ {
                                continue;
                            }
                            s.stamp[li] = gen_;
                            s.scored += 1;
                            let r = list[li];
                            offer(&mut s.heap, k, Cand(score_of(r), l, r));
                        }
                        cut = cut_of(&s.heap);
                        let stamp = &s.stamp;
                        s.cands
                            .retain(|&(x, l)| x >= cut && stamp[l as usize] != gen_);
                    }
                }
            }
            s.cands.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            for &(x, l) in &s.cands {
                if s.heap.len() >= k && s.heap.peek().is_some_and(|w| f64::from(x) * margin < w.0) {
                    break;
                }
                let li = l as usize;
                if s.excl[li] == gen_ || s.stamp[li] == gen_ {
                    continue;
                }
                s.stamp[li] = gen_;
                s.scored += 1;
                let r = list[li];
                offer(&mut s.heap, k, Cand(score_of(r), l, r));
            }
            // Every review with a query term was scored or bounded below the k-th best.
            // (Zero scores can tie with reviews never visited: those are filled in below.)
            stopped = s.heap.len() >= k && s.heap.peek().is_some_and(|w| w.0 > 0.0);
        }
        let mut out: Vec<(u32, f64, u32)> = s.heap.drain().map(|c| (c.2, c.0, c.1)).collect();
        if !stopped {
            // Every candidate not visited scores exactly 0: the earliest k of them compete.
            let mut added = 0;
            for (li, &r) in list.iter().enumerate() {
                if added >= k {
                    break;
                }
                if s.stamp[li] != gen_ && s.excl[li] != gen_ {
                    out.push((r, 0.0, li as u32));
                    added += 1;
                }
            }
        }
        select_top(&mut out, k)
    }
}
