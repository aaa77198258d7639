//! [`TokenGraph`]: a compact user-item graph over token-id reviews with per-node BM25Okapi
//! statistics, for exact profile retrieval at scale (millions of reviews).
//!
//! PGraphRAG fits a fresh BM25Okapi (rank_bm25 semantics: k1, b, epsilon flooring of negative
//! idf at `epsilon * average_idf`) on each candidate list: the target user's other reviews, or
//! the other reviews of the target item. Refitting per query costs O(candidates), which is
//! hopeless for a popular item with 10⁵ reviews. `TokenGraph` instead precomputes, per node
//! with at least [`TokenGraph::INDEX_MIN_DEGREE`] reviews, an inverted index (term → postings
//! with term frequencies), the total document length and a histogram of document frequencies.
//! A query then fits the *exact* same BM25 as rank_bm25 would on the candidate list by
//! subtracting the excluded reviews' contributions (document count, lengths, per-term df, the
//! idf sum behind `average_idf`), and scores only the postings of the query terms with
//! term-at-a-time max-score pruning. Small nodes are scored by brute force over their reviews.
//!
//! Scores equal rank_bm25's up to floating-point summation order (≈1e-12 relative); among equal
//! scores the earlier review (graph order) comes first.
//!
//! ```
//! use pgraphrag_graph::tokens::{Bm25Params, Side, TokenGraph, TokenReview};
//! let reviews = vec![
//!     TokenReview { user: 0, item: 0, tokens: vec![1, 2, 3] },
//!     TokenReview { user: 1, item: 0, tokens: vec![2, 4] },
//!     TokenReview { user: 2, item: 0, tokens: vec![5, 6] },
//!     TokenReview { user: 0, item: 1, tokens: vec![2, 2, 7] },
//! ];
//! let g = TokenGraph::build(reviews).unwrap();
//! let mut s = g.scratch();
//! // Neighbours of review 0 (user 0 on item 0): the other reviews of item 0.
//! let top = g.neighbors_top_k(0, &[2], 5, Bm25Params::default(), &mut s);
//! assert_eq!(top.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1, 2]);
//! ```

use crate::{Error, Result};

pub use pgraphrag_core::Bm25Params;

/// One review as token ids.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TokenReview {
    /// Author (dense id, `0..num_users`).
    pub user: u32,
    /// Item (dense id, `0..num_items`).
    pub item: u32,
    /// Token ids of `"{title} {text}"`.
    pub tokens: Vec<u32>,
}

/// Which side of the bipartite graph a node is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// User nodes: their reviews form the user profile.
    User,
    /// Item nodes: their reviews form the neighbour profile.
    Item,
}

#[derive(Debug, Default)]
struct NodeSide {
    /// CSR: reviews of node `v` are `reviews[off[v]..off[v+1]]`, in review order.
    off: Vec<u32>,
    reviews: Vec<u32>,
    /// Per node: total token count of its reviews.
    total_len: Vec<u64>,
    /// Per node: index into `idx` (u32::MAX: no inverted index, small node).
    index_of: Vec<u32>,
    idx: Vec<NodeIndex>,
}

#[derive(Debug, Default)]
struct NodeIndex {
    /// Sorted distinct terms of the node.
    terms: Vec<u32>,
    /// Postings of `terms[i]` are `post_doc[post_off[i]..post_off[i+1]]` (local review
    /// positions, ascending) with `post_tf`.
    post_off: Vec<u32>,
    post_doc: Vec<u32>,
    post_tf: Vec<u32>,
    /// (df, number of terms with that df), ascending df.
    df_hist: Vec<(u32, u32)>,
}

/// Reusable per-thread scratch space for queries (sized to the largest node).
#[derive(Debug, Default)]
pub struct Scratch {
    acc: Vec<f64>,
    stamp: Vec<u32>,
    excl: Vec<u32>,
    gen_: u32,
    touched: Vec<u32>,
}

impl Scratch {
    fn next_gen(&mut self, n: usize) -> u32 {
        if self.acc.len() < n {
            self.acc.resize(n, 0.0);
            self.stamp.resize(n, 0);
            self.excl.resize(n, 0);
        }
        self.gen_ = self.gen_.wrapping_add(1);
        if self.gen_ == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.excl.iter_mut().for_each(|s| *s = 0);
            self.gen_ = 1;
        }
        self.touched.clear();
        self.gen_
    }
}

/// A compact user-item graph over token-id reviews; see the [module docs](self).
#[derive(Debug, Default)]
pub struct TokenGraph {
    review_user: Vec<u32>,
    review_item: Vec<u32>,
    /// Forward index: review `r` has distinct sorted terms `fwd_term[fwd_off[r]..fwd_off[r+1]]`.
    fwd_off: Vec<u64>,
    fwd_term: Vec<u32>,
    fwd_tf: Vec<u32>,
    doc_len: Vec<u32>,
    users: NodeSide,
    items: NodeSide,
    max_degree: usize,
}

#[inline]
fn idf_raw(n: f64, df: f64) -> f64 {
    // rank_bm25: math.log(corpus_size - freq + 0.5) - math.log(freq + 0.5)
    (n - df + 0.5).ln() - (df + 0.5).ln()
}

impl TokenGraph {
    /// Nodes with at least this many reviews get an inverted index; smaller ones are scored
    /// by brute force (cheaper for a handful of reviews).
    pub const INDEX_MIN_DEGREE: usize = 48;

    /// Builds the graph and every node's statistics. Reviews keep their order (review id =
    /// position in `reviews`).
    /// Reviews are consumed one at a time, so a generator never needs to hold them all.
    pub fn build(reviews: impl IntoIterator<Item = TokenReview>) -> Result<Self> {
        let mut g = TokenGraph::default();
        g.fwd_off.push(0);
        let mut buf: Vec<u32> = Vec::new();
        for r in reviews {
            if g.review_user.len() >= u32::MAX as usize - 1 {
                return Err(Error::Full {
                    max: u32::MAX as usize - 1,
                });
            }
            g.review_user.push(r.user);
            g.review_item.push(r.item);
            g.doc_len.push(r.tokens.len().min(u32::MAX as usize) as u32);
            buf.clear();
            buf.extend_from_slice(&r.tokens);
            buf.sort_unstable();
            let mut i = 0;
            while i < buf.len() {
                let mut j = i + 1;
                while j < buf.len() && buf[j] == buf[i] {
                    j += 1;
                }
                g.fwd_term.push(buf[i]);
                g.fwd_tf.push((j - i) as u32);
                i = j;
            }
            g.fwd_off.push(g.fwd_term.len() as u64);
        }
        // The two sides only read the forward index: build them on two threads.
        let (users, items) = std::thread::scope(|sc| {
            let h = sc.spawn(|| g.build_side(&g.review_user));
            let items = g.build_side(&g.review_item);
            (h.join(), items)
        });
        g.users = match users {
            Ok(u) => u,
            Err(e) => std::panic::resume_unwind(e),
        };
        g.items = items;
        g.max_degree = degree_max(&g.users).max(degree_max(&g.items));
        Ok(g)
    }

    fn build_side(&self, node_of: &[u32]) -> NodeSide {
        let nodes = node_of.iter().map(|&v| v as usize + 1).max().unwrap_or(0);
        let mut off = vec![0u32; nodes + 1];
        for &v in node_of {
            off[v as usize + 1] += 1;
        }
        for i in 0..nodes {
            off[i + 1] += off[i];
        }
        let mut pos = off.clone();
        let mut reviews = vec![0u32; node_of.len()];
        for (r, &v) in node_of.iter().enumerate() {
            reviews[pos[v as usize] as usize] = r as u32;
            pos[v as usize] += 1;
        }
        let mut total_len = vec![0u64; nodes];
        let mut index_of = vec![u32::MAX; nodes];
        let mut idx = Vec::new();
        let mut pairs: Vec<(u64, u32)> = Vec::new();
        for v in 0..nodes {
            let rs = &reviews[off[v] as usize..off[v + 1] as usize];
            total_len[v] = rs
                .iter()
                .map(|&r| u64::from(self.doc_len[r as usize]))
                .sum();
            if rs.len() < Self::INDEX_MIN_DEGREE {
                continue;
            }
            pairs.clear();
            for (local, &r) in rs.iter().enumerate() {
                let (a, b) = (
                    self.fwd_off[r as usize] as usize,
                    self.fwd_off[r as usize + 1] as usize,
                );
                for k in a..b {
                    pairs.push((
                        (u64::from(self.fwd_term[k]) << 32) | local as u64,
                        self.fwd_tf[k],
                    ));
                }
            }
            pairs.sort_unstable_by_key(|p| p.0);
            let mut ni = NodeIndex::default();
            let mut dfs: Vec<u32> = Vec::new();
            for (i, &(key, tf)) in pairs.iter().enumerate() {
                let term = (key >> 32) as u32;
                if i == 0 || (pairs[i - 1].0 >> 32) as u32 != term {
                    if !ni.terms.is_empty() {
                        dfs.push(ni.post_doc.len() as u32 - *ni.post_off.last().unwrap_or(&0));
                    }
                    ni.terms.push(term);
                    ni.post_off.push(ni.post_doc.len() as u32);
                }
                ni.post_doc.push(key as u32);
                ni.post_tf.push(tf);
            }
            if !ni.terms.is_empty() {
                dfs.push(ni.post_doc.len() as u32 - *ni.post_off.last().unwrap_or(&0));
            }
            ni.post_off.push(ni.post_doc.len() as u32);
            dfs.sort_unstable();
            for d in dfs {
                match ni.df_hist.last_mut() {
                    Some((x, c)) if *x == d => *c += 1,
                    _ => ni.df_hist.push((d, 1)),
                }
            }
            ni.terms.shrink_to_fit();
            ni.post_doc.shrink_to_fit();
            ni.post_tf.shrink_to_fit();
            index_of[v] = idx.len() as u32;
            idx.push(ni);
        }
        NodeSide {
            off,
            reviews,
            total_len,
            index_of,
            idx,
        }
    }

    /// A scratch buffer big enough for any node of this graph.
    pub fn scratch(&self) -> Scratch {
        let mut s = Scratch::default();
        s.next_gen(self.max_degree);
        s
    }

    /// How many reviews.
    pub fn num_reviews(&self) -> usize {
        self.review_user.len()
    }

    /// The reviews of a node, in review order.
    pub fn node_reviews(&self, side: Side, node: u32) -> &[u32] {
        let s = self.side(side);
        let v = node as usize;
        if v + 1 >= s.off.len() {
            return &[];
        }
        &s.reviews[s.off[v] as usize..s.off[v + 1] as usize]
    }

    /// Author and item of review `r`.
    pub fn review_ends(&self, r: u32) -> (u32, u32) {
        (self.review_user[r as usize], self.review_item[r as usize])
    }

    /// The distinct terms of review `r` with their frequencies.
    pub fn review_terms(&self, r: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let (a, b) = (
            self.fwd_off[r as usize] as usize,
            self.fwd_off[r as usize + 1] as usize,
        );
        (a..b).map(|k| (self.fwd_term[k], self.fwd_tf[k]))
    }

    fn side(&self, side: Side) -> &NodeSide {
        match side {
            Side::User => &self.users,
            Side::Item => &self.items,
        }
    }

    /// Top-k of the user profile for target review `target`: the author's reviews of other
    /// items, ranked against `query`.
    pub fn user_top_k(
        &self,
        target: u32,
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
    ) -> Vec<(u32, f64)> {
        let (u, i) = self.review_ends(target);
        let excl: Vec<u32> =
            self.local_positions(Side::User, u, |r| self.review_item[r as usize] == i);
        self.top_k(Side::User, u, &excl, query, k, p, s)
    }

    /// Top-k of the neighbour profile for target review `target`: the other users' reviews of
    /// its item, ranked against `query`.
    pub fn neighbors_top_k(
        &self,
        target: u32,
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
    ) -> Vec<(u32, f64)> {
        let (u, i) = self.review_ends(target);
        // The author's reviews of the item, found through the (usually short) user list, then
        // located in the item's list by binary search (lists are in review order).
        let item_list = self.node_reviews(Side::Item, i);
        let mut excl: Vec<u32> = self
            .node_reviews(Side::User, u)
            .iter()
            .filter(|&&r| self.review_item[r as usize] == i)
            .filter_map(|r| item_list.binary_search(r).ok().map(|x| x as u32))
            .collect();
        excl.sort_unstable();
        self.top_k(Side::Item, i, &excl, query, k, p, s)
    }

    fn local_positions(&self, side: Side, node: u32, pred: impl Fn(u32) -> bool) -> Vec<u32> {
        self.node_reviews(side, node)
            .iter()
            .enumerate()
            .filter(|(_, r)| pred(**r))
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// Top-k reviews of `node` (excluding the local positions `excl`) for `query`, with
    /// rank_bm25's BM25Okapi fitted on exactly those candidates. Returns (review id, score),
    /// best first; ties by review order; zero-score candidates fill up to `k`.
    #[allow(clippy::too_many_arguments)]
    pub fn top_k(
        &self,
        side: Side,
        node: u32,
        excl: &[u32],
        query: &[u32],
        k: usize,
        p: Bm25Params,
        s: &mut Scratch,
    ) -> Vec<(u32, f64)> {
        let ns = self.side(side);
        let list = self.node_reviews(side, node);
        let n_all = list.len();
        let n = n_all.saturating_sub(excl.len());
        if n == 0 || k == 0 {
            return Vec::new();
        }
        let excl_len: u64 = excl
            .iter()
            .map(|&l| u64::from(self.doc_len[list[l as usize] as usize]))
            .sum();
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
                self.top_k_indexed(&ns.idx[ix as usize], list, excl, query, k, p, s, nf, avgdl)
            }
            _ => self.top_k_brute(list, query, k, p, s, nf, avgdl),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn top_k_brute(
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
        let idf_sum: f64 = df.iter().map(|&(_, d)| idf_raw(nf, f64::from(d))).sum();
        let eps = p.epsilon * idf_sum / df.len() as f64;
        let idf = |t: u32| -> f64 {
            match df.binary_search_by_key(&t, |x| x.0) {
                Ok(i) => {
                    let v = idf_raw(nf, f64::from(df[i].1));
                    if v < 0.0 { eps } else { v }
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
            let norm = p.k1 * (1.0 - p.b + p.b * dl / avgdl);
            let mut score = 0.0;
            for &(t, w) in &qidf {
                if w == 0.0 {
                    continue;
                }
                if let Ok(i) = terms.binary_search(&t) {
                    let tf = f64::from(self.fwd_tf[a + i]);
                    score += w * (tf * (p.k1 + 1.0) / (tf + norm));
                }
            }
            out.push((r, score, l as u32));
        }
        select_top(&mut out, k)
    }

    #[allow(clippy::too_many_arguments)]
    fn top_k_indexed(
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
    ) -> Vec<(u32, f64)> {
        let gen_ = s.gen_;
        // Per-term df decrements from the excluded reviews.
        let mut dec: Vec<(u32, u32)> = Vec::new();
        for &l in excl {
            dec.extend(self.review_terms(list[l as usize]).map(|(t, _)| (t, 1)));
        }
        dec.sort_unstable_by_key(|x| x.0);
        dec.dedup_by(|a, b| {
            if a.0 == b.0 {
                b.1 += a.1;
                true
            } else {
                false
            }
        });
        let df_of = |t: u32| -> u32 {
            match ni.terms.binary_search(&t) {
                Ok(i) => ni.post_off[i + 1] - ni.post_off[i],
                Err(_) => 0,
            }
        };
        let dec_of = |t: u32| -> u32 {
            match dec.binary_search_by_key(&t, |x| x.0) {
                Ok(i) => dec[i].1,
                Err(_) => 0,
            }
        };
        // idf sum over the candidate vocabulary: the df histogram with the excluded reviews'
        // terms moved from df to df - dec (or out of the vocabulary at 0), summed at n.
        let mut delta: Vec<(u32, i64)> = Vec::with_capacity(dec.len() * 2);
        for &(t, d_minus) in &dec {
            let d = df_of(t);
            delta.push((d, -1));
            if d > d_minus {
                delta.push((d - d_minus, 1));
            }
        }
        delta.sort_unstable_by_key(|x| x.0);
        let mut idf_sum = 0.0;
        let mut vocab: i64 = 0;
        let (mut hi, mut di) = (0usize, 0usize);
        while hi < ni.df_hist.len() || di < delta.len() {
            let d = match (ni.df_hist.get(hi), delta.get(di)) {
                (Some(h), Some(x)) => h.0.min(x.0),
                (Some(h), None) => h.0,
                (None, Some(x)) => x.0,
                (None, None) => break,
            };
            let mut c: i64 = 0;
            while hi < ni.df_hist.len() && ni.df_hist[hi].0 == d {
                c += i64::from(ni.df_hist[hi].1);
                hi += 1;
            }
            while di < delta.len() && delta[di].0 == d {
                c += delta[di].1;
                di += 1;
            }
            if c > 0 {
                idf_sum += c as f64 * idf_raw(nf, f64::from(d));
                vocab += c;
            }
        }
        let eps = p.epsilon * idf_sum / vocab.max(1) as f64;
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
            let v = idf_raw(nf, f64::from(d));
            let w = if v < 0.0 { eps } else { v };
            match qt.iter_mut().find(|x| x.0 == t) {
                Some(x) => x.1 += w,
                None => qt.push((t, w, ti)),
            }
        }
        qt.retain(|x| x.1 != 0.0);
        let all_pos = qt.iter().all(|x| x.1 > 0.0);
        let ub = |w: f64| w * (p.k1 + 1.0);
        // Highest upper bound first.
        qt.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut remaining: f64 = qt.iter().map(|x| ub(x.1)).sum();
        let mut pruning = false;
        let k1 = p.k1;
        let b = p.b;
        let tfn = |tf: u32, r: u32| {
            let tf = f64::from(tf);
            let dl = f64::from(self.doc_len[r as usize]);
            tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / avgdl))
        };
        for (qi, &(_, w, ti)) in qt.iter().enumerate() {
            let (a, e) = (ni.post_off[ti] as usize, ni.post_off[ti + 1] as usize);
            let docs = &ni.post_doc[a..e];
            let tfs = &ni.post_tf[a..e];
            remaining -= ub(w);
            if !pruning {
                for (j, &l) in docs.iter().enumerate() {
                    let li = l as usize;
                    if s.excl[li] == gen_ {
                        continue;
                    }
                    if s.stamp[li] != gen_ {
                        s.stamp[li] = gen_;
                        s.acc[li] = 0.0;
                        s.touched.push(l);
                    }
                    s.acc[li] += w * tfn(tfs[j], list[li]);
                }
                // Can a review not yet touched still reach the top k?
                if all_pos && s.touched.len() >= k && qi + 1 < qt.len() {
                    let theta = kth_largest(&s.touched, &s.acc, k);
                    if remaining < theta {
                        pruning = true;
                    }
                }
            } else if docs.len() <= s.touched.len() * 8 {
                for (j, &l) in docs.iter().enumerate() {
                    let li = l as usize;
                    if s.stamp[li] == gen_ && s.excl[li] != gen_ {
                        s.acc[li] += w * tfn(tfs[j], list[li]);
                    }
                }
            } else {
                for &l in &s.touched {
                    if let Ok(j) = docs.binary_search(&l) {
                        let li = l as usize;
                        s.acc[li] += w * tfn(tfs[j], list[li]);
                    }
                }
            }
        }
        let mut out: Vec<(u32, f64, u32)> = s
            .touched
            .iter()
            .map(|&l| (list[l as usize], s.acc[l as usize], l))
            .collect();
        if !pruning {
            // Every untouched candidate scores exactly 0. With positive weights they only fill
            // up to k (in review order); with negative ones any of them may outrank a touched one.
            let need = if all_pos {
                k.saturating_sub(out.len())
            } else {
                usize::MAX
            };
            let mut added = 0;
            for (li, &r) in list.iter().enumerate() {
                if added >= need {
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

fn degree_max(s: &NodeSide) -> usize {
    s.off
        .windows(2)
        .map(|w| (w[1] - w[0]) as usize)
        .max()
        .unwrap_or(0)
}

fn kth_largest(touched: &[u32], acc: &[f64], k: usize) -> f64 {
    let mut v: Vec<f64> = touched.iter().map(|&l| acc[l as usize]).collect();
    let i = k - 1;
    v.select_nth_unstable_by(i, |a, b| b.total_cmp(a));
    v[i]
}

/// Sorts (review, score, local) by score desc then local asc, keeps k.
fn select_top(out: &mut Vec<(u32, f64, u32)>, k: usize) -> Vec<(u32, f64)> {
    let cmp = |a: &(u32, f64, u32), b: &(u32, f64, u32)| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2));
    if out.len() > k {
        out.select_nth_unstable_by(k - 1, cmp);
        out.truncate(k);
    }
    out.sort_by(cmp);
    out.iter().map(|x| (x.0, x.1)).collect()
}

/// Reference: rank_bm25's BM25Okapi fitted on `docs` (token lists), scores for `query`, in
/// rank_bm25's own order of floating-point operations. Used to check [`TokenGraph`].
pub fn bm25okapi_scores(docs: &[&[u32]], query: &[u32], p: Bm25Params) -> Vec<f64> {
    use std::collections::HashMap;
    let n = docs.len();
    if n == 0 {
        return Vec::new();
    }
    let total: usize = docs.iter().map(|d| d.len()).sum();
    if total == 0 {
        return vec![0.0; n];
    }
    let avgdl = total as f64 / n as f64;
    let mut df: HashMap<u32, u32> = HashMap::new();
    let mut tfs: Vec<HashMap<u32, u32>> = Vec::with_capacity(n);
    for d in docs {
        let mut m: HashMap<u32, u32> = HashMap::new();
        for &t in *d {
            *m.entry(t).or_insert(0) += 1;
        }
        for &t in m.keys() {
            *df.entry(t).or_insert(0) += 1;
        }
        tfs.push(m);
    }
    let mut idf: HashMap<u32, f64> = HashMap::new();
    let mut idf_sum = 0.0;
    for (&t, &d) in &df {
        let v = idf_raw(n as f64, f64::from(d));
        idf_sum += v;
        idf.insert(t, v);
    }
    let eps = p.epsilon * idf_sum / idf.len() as f64;
    for v in idf.values_mut() {
        if *v < 0.0 {
            *v = eps;
        }
    }
    let mut score = vec![0.0; n];
    for &q in query {
        let w = idf.get(&q).copied().unwrap_or(0.0);
        for (i, d) in docs.iter().enumerate() {
            let tf = f64::from(tfs[i].get(&q).copied().unwrap_or(0));
            let dl = d.len() as f64;
            score[i] += w * (tf * (p.k1 + 1.0) / (tf + p.k1 * (1.0 - p.b + p.b * dl / avgdl)));
        }
    }
    score
}
