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
//! idf sum behind `average_idf`). Postings are grouped into impact segments (same term
//! frequency and document length, or buckets of them) that order an exact threshold
//! algorithm: segments are visited highest bound first, every review met is scored exactly
//! from the forward index, and the search stops once no review left can reach the top k.
//! Nodes with at least [`TokenGraph::DENSE_MIN_DEGREE`] reviews also keep byte-quantized
//! per-review bounds of their frequent terms; when impact order does not stop early (the
//! query's terms are all frequent there), a vectorized bound pass over every review finds
//! the few that can reach the top k (see `docs/graph.md`). Small nodes are scored by brute
//! force over their reviews.
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
    /// Parallel to `reviews`: the other end of each review (its item on the user side, its
    /// author on the item side), so that a profile's pair reviews are found by a sequential
    /// scan.
    other: Vec<u32>,
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
    /// Postings of `terms[i]` are positions `post_off[i]..post_off[i+1]` of `post_local`
    /// (local review positions) and `post_tf` (term frequencies), grouped into impact
    /// segments.
    post_off: Vec<u32>,
    post_local: Vec<u32>,
    post_tf: Vec<u32>,
    /// Length of each review of the node, by local position.
    dl: Vec<u32>,
    /// Segments of `terms[i]` are `segs[seg_off[i]..seg_off[i+1]]`, in descending order of
    /// their bound at the node's own average document length.
    seg_off: Vec<u32>,
    segs: Vec<Segment>,
    /// (df, number of terms with that df), ascending df.
    df_hist: Vec<(u32, u32)>,
    /// `(Σ count · idf_raw(n − e, df), Σ count)` over the `df_hist` entries with
    /// `df ≤ n − e`, for `e` = 0 ..= [`TokenGraph::IDF_CACHE_MAX_EXCLUDED`] excluded reviews
    /// (more are summed from the histogram at query time). A term with a larger df is in
    /// every excluded review, so a query moves it to a valid df.
    idf_sums: Box<[(f64, i64)]>,
    /// Dense quantized columns of the node's frequent terms (only for nodes with at
    /// least [`TokenGraph::DENSE_MIN_DEGREE`] reviews, else empty): see [`Dense`].
    dense: Dense,
}

/// Dense per-review bounds of a large node's frequent terms (document frequency at least
/// `1 / DENSE_DF_DIV` of the node), for the bound pass of a query whose impact-ordered
/// search did not stop early. Column `c` holds, for every review (local position) `l`, the
/// byte `q = ceil(255 · tf / (tf + k1·(1 − b + b·dl/avgdl)))` at the default `k1`, `b` and
/// the node's own `avgdl`, so that `w · (k1 + 1) · q / 255` bounds the term's contribution
/// (times `max(1, avgdl' / avgdl)` for a query whose candidate list has average length
/// `avgdl'`).
#[derive(Debug, Default)]
struct Dense {
    /// Term slots (ascending) that have a column.
    slots: Vec<u32>,
    /// Column `c` is `cols[c * n..(c + 1) * n]`.
    cols: Vec<u8>,
    /// The node's average document length (the quantization's).
    avgdl: f64,
}

/// A run of postings of one term whose term frequencies are at most `tf_max` and whose
/// documents have at least `dl_min` tokens, so that `w * g(tf_max, dl_min)` bounds the
/// term's contribution to each of them. The run ends at posting `end` (exclusive); it starts
/// where the previous segment of the term ends (or at the term's first posting).
#[derive(Debug, Clone, Copy, Default)]
struct Segment {
    tf_max: u32,
    dl_min: u32,
    end: u32,
}

impl NodeIndex {
    /// The dense columns of this node (see [`Dense`]), at its average length `avgdl`.
    fn build_dense(&self, avgdl: f64, df_div: usize) -> Dense {
        let n = self.dl.len();
        let p = Bm25Params::default();
        let min_df = (n / df_div.max(1)).max(1);
        let mut d = Dense {
            avgdl,
            ..Dense::default()
        };
        for ti in 0..self.terms.len() {
            let (a, e) = (self.post_off[ti] as usize, self.post_off[ti + 1] as usize);
            if e - a < min_df {
                continue;
            }
            d.slots.push(ti as u32);
            let base = d.cols.len();
            d.cols.resize(base + n, 0);
            for (&l, &tf) in self.post_local[a..e].iter().zip(&self.post_tf[a..e]) {
                let x = tf_part(tf, self.dl[l as usize], p.k1, p.b, avgdl) / (p.k1 + 1.0);
                // Rounded up (with a margin for the rounding of x), at most 255 as x < 1.
                d.cols[base + l as usize] =
                    (x * 255.0 * (1.0 + 1e-12)).ceil().clamp(1.0, 255.0) as u8;
            }
        }
        d.slots.shrink_to_fit();
        d.cols.shrink_to_fit();
        d
    }

    /// `(Σ idf_raw(nf, df), vocabulary size)` over the candidate list: the node minus
    /// `n_excl` excluded reviews whose terms are `dec` (term, how many excluded reviews
    /// hold it; ascending), `nf` candidates.
    fn idf_stats(&self, dec: &[(u32, u32)], n_excl: usize, nf: f64) -> (f64, i64) {
        // idf sum over the candidate vocabulary: the df histogram with the excluded reviews'
        // terms moved from df to df - dec (or out of the vocabulary at 0), summed at n.
        let mut delta: Vec<(u32, i64)> = Vec::with_capacity(dec.len() * 2);
        // (`dec` is sorted: each search starts where the previous one ended.)
        let mut lo = 0;
        for &(t, d_minus) in dec {
            lo += self.terms[lo..].partition_point(|&x| x < t);
            let d = match self.terms.get(lo) {
                Some(&x) if x == t => self.post_off[lo + 1] - self.post_off[lo],
                _ => 0,
            };
            delta.push((d, -1));
            if d > d_minus {
                delta.push((d - d_minus, 1));
            }
        }
        match self.idf_sums.get(n_excl) {
            // The cached sum at this n, corrected for the terms that moved.
            Some(&cached) => delta
                .iter()
                .filter(|&&(d, _)| f64::from(d) <= nf)
                .fold(cached, |(s, v), &(d, sign)| {
                    (s + sign as f64 * idf_raw(nf, f64::from(d)), v + sign)
                }),
            None => {
                delta.sort_unstable_by_key(|x| x.0);
                let mut idf_sum = 0.0;
                let mut vocab: i64 = 0;
                let (mut hi, mut di) = (0usize, 0usize);
                while hi < self.df_hist.len() || di < delta.len() {
                    let d = match (self.df_hist.get(hi), delta.get(di)) {
                        (Some(h), Some(x)) => h.0.min(x.0),
                        (Some(h), None) => h.0,
                        (None, Some(x)) => x.0,
                        (None, None) => break,
                    };
                    let mut c: i64 = 0;
                    while hi < self.df_hist.len() && self.df_hist[hi].0 == d {
                        c += i64::from(self.df_hist[hi].1);
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
                (idf_sum, vocab)
            }
        }
    }

    /// Postings range of segment `j` of term slot `ti`.
    fn segment(&self, ti: usize, j: usize) -> (usize, usize) {
        let start = if j == self.seg_off[ti] as usize {
            self.post_off[ti] as usize
        } else {
            self.segs[j - 1].end as usize
        };
        (start, self.segs[j].end as usize)
    }
}

/// Reusable per-thread scratch space for queries (sized to the largest node).
#[derive(Debug, Default)]
pub struct Scratch {
    stamp: Vec<u32>,
    excl: Vec<u32>,
    gen_: u32,
    /// Per query term and segment: the largest bound of this and the later segments.
    head: Vec<f64>,
    /// Per query term: (next segment, end segment, offset in `head`).
    cursor: Vec<(usize, usize, usize)>,
    heap: std::collections::BinaryHeap<Cand>,
    /// Per term id: how many excluded reviews hold it (0 between queries), and the terms
    /// touched.
    dec_count: Vec<u32>,
    dec_touched: Vec<u32>,
    /// Reviews scored exactly by the last indexed query (a diagnostic).
    scored: usize,
    /// Bound pass: per review (local position), an upper bound of its score.
    bound: Vec<f32>,
    /// Bound pass: (bound, local position) of the reviews that may reach the top k.
    cands: Vec<(f32, u32)>,
    /// Bound pass: (dense column, weight) of the query terms that have one.
    cols: Vec<(usize, f32)>,
}

impl Scratch {
    /// How many reviews the last query on an indexed node scored exactly (the others were
    /// ruled out by bounds); a diagnostic for benchmarks.
    pub fn last_scored(&self) -> usize {
        self.scored
    }

    fn next_gen(&mut self, n: usize) -> u32 {
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
struct Cand(f64, u32, u32);

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

/// Bucket of a term frequency for segmenting: exact below 16, then 4 per octave.
#[inline]
fn tf_bucket(tf: u32) -> u32 {
    if tf < 16 {
        tf
    } else {
        let e = 31 - tf.leading_zeros();
        16 + (e - 4) * 4 + ((tf >> (e - 2)) & 3)
    }
}

/// Bucket of a document length for segmenting: exact below 64, then 8 per octave.
#[inline]
fn dl_bucket(dl: u32) -> u32 {
    if dl < 64 {
        dl
    } else {
        let e = 31 - dl.leading_zeros();
        64 + (e - 6) * 8 + ((dl >> (e - 3)) & 7)
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
    opts: IndexOptions,
    /// The (user, item) pairs with more reviews than the per-node idf cache covers.
    heavy: std::collections::HashMap<(u32, u32), PairStats>,
}

/// The exclusion of a (user, item) pair with many reviews (a user reviewing the same item
/// again and again), precomputed so that its queries cost no more than others.
#[derive(Debug, Default)]
struct PairStats {
    /// Total length of the pair's reviews.
    len: u64,
    /// Terms of the pair's reviews with how many of them hold each, ascending by term.
    dec: Vec<(u32, u32)>,
    /// (idf sum, vocabulary size) of the user's and of the item's candidate lists (for an
    /// indexed node with candidates left).
    idf: [(f64, i64); 2],
}

/// Thresholds of [`TokenGraph`]'s indexes. They change speed and memory, never results;
/// [`IndexOptions::default`] is tuned for millions of reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexOptions {
    /// Nodes with at least this many reviews get an inverted index; smaller ones are scored
    /// by brute force. Default [`TokenGraph::INDEX_MIN_DEGREE`].
    pub index_min_degree: usize,
    /// Indexed nodes with at least this many reviews also get dense quantized bounds of
    /// their frequent terms. Default [`TokenGraph::DENSE_MIN_DEGREE`].
    pub dense_min_degree: usize,
    /// A term gets a dense column in a node when at least `1 / dense_df_div` of the node's
    /// reviews hold it. Default [`TokenGraph::DENSE_DF_DIV`].
    pub dense_df_div: usize,
    /// Exact scorings allowed to the impact-ordered search on a node with dense bounds
    /// before the bound pass takes over: `budget_base + reviews / 8192`. Default 16.
    pub budget_base: usize,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            index_min_degree: TokenGraph::INDEX_MIN_DEGREE,
            dense_min_degree: TokenGraph::DENSE_MIN_DEGREE,
            dense_df_div: TokenGraph::DENSE_DF_DIV,
            budget_base: 16,
        }
    }
}

#[inline]
fn idf_raw(n: f64, df: f64) -> f64 {
    // rank_bm25: math.log(corpus_size - freq + 0.5) - math.log(freq + 0.5)
    (n - df + 0.5).ln() - (df + 0.5).ln()
}

/// rank_bm25's term-frequency part `tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`.
#[inline]
fn tf_part(tf: u32, dl: u32, k1: f64, b: f64, avgdl: f64) -> f64 {
    let tf = f64::from(tf);
    tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * f64::from(dl) / avgdl))
}

impl TokenGraph {
    /// Nodes with at least this many reviews get an inverted index; smaller ones are scored
    /// by brute force (cheaper for a handful of reviews).
    pub const INDEX_MIN_DEGREE: usize = 48;

    /// Nodes with at least this many reviews also get dense quantized bounds of their
    /// frequent terms, for queries whose terms are all frequent there.
    pub const DENSE_MIN_DEGREE: usize = 256;

    /// A term gets a dense column in a node when at least `1 / DENSE_DF_DIV` of the node's
    /// reviews hold it.
    pub const DENSE_DF_DIV: usize = 32;

    /// Builds the graph and every node's statistics. Reviews keep their order (review id =
    /// position in `reviews`).
    /// Reviews are consumed one at a time, so a generator never needs to hold them all.
    pub fn build(reviews: impl IntoIterator<Item = TokenReview>) -> Result<Self> {
        Self::build_with(reviews, IndexOptions::default())
    }

    /// [`Self::build`] with explicit index thresholds (same results, other speed/memory).
    pub fn build_with(
        reviews: impl IntoIterator<Item = TokenReview>,
        opts: IndexOptions,
    ) -> Result<Self> {
        let mut g = TokenGraph {
            opts,
            ..TokenGraph::default()
        };
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
            let h = sc.spawn(|| g.build_side(&g.review_user, &g.review_item));
            let items = g.build_side(&g.review_item, &g.review_user);
            (h.join(), items)
        });
        g.users = match users {
            Ok(u) => u,
            Err(e) => std::panic::resume_unwind(e),
        };
        g.items = items;
        g.max_degree = degree_max(&g.users).max(degree_max(&g.items));
        g.heavy = g.heavy_pairs();
        Ok(g)
    }

    fn build_side(&self, node_of: &[u32], other_of: &[u32]) -> NodeSide {
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
        let other: Vec<u32> = reviews.iter().map(|&r| other_of[r as usize]).collect();
        let mut total_len = vec![0u64; nodes];
        let mut index_of = vec![u32::MAX; nodes];
        let mut idx = Vec::new();
        // (term << 32 | segment key, local position, tf); the segment key orders by
        // descending tf bucket, then ascending length bucket.
        let mut pairs: Vec<(u64, u32, u32)> = Vec::new();
        for v in 0..nodes {
            let rs = &reviews[off[v] as usize..off[v + 1] as usize];
            total_len[v] = rs
                .iter()
                .map(|&r| u64::from(self.doc_len[r as usize]))
                .sum();
            if rs.len() < self.opts.index_min_degree.max(1) {
                continue;
            }
            pairs.clear();
            for (local, &r) in rs.iter().enumerate() {
                let (a, b) = (
                    self.fwd_off[r as usize] as usize,
                    self.fwd_off[r as usize + 1] as usize,
                );
                let dlb = u64::from(dl_bucket(self.doc_len[r as usize]));
                for k in a..b {
                    let tf = self.fwd_tf[k];
                    let key = (u64::from(self.fwd_term[k]) << 32)
                        | (u64::from(255 - tf_bucket(tf).min(255)) << 16)
                        | dlb;
                    pairs.push((key, local as u32, tf));
                }
            }
            pairs.sort_unstable();
            let avgdl = total_len[v] as f64 / rs.len() as f64;
            idx.push(self.node_index(rs, &pairs, avgdl));
            index_of[v] = (idx.len() - 1) as u32;
        }
        NodeSide {
            off,
            reviews,
            other,
            total_len,
            index_of,
            idx,
        }
    }

    /// Up to this many excluded reviews (a user's reviews of the target item), a query finds
    /// the idf sum behind `average_idf` in a per-node cache instead of summing the node's
    /// document-frequency histogram.
    const IDF_CACHE_MAX_EXCLUDED: usize = 16;

    /// Postings shorter than this form a single segment.
    const SEGMENT_MIN_DF: usize = 16;

    /// The inverted index of one node from its sorted (key, local, tf) pairs.
    fn node_index(&self, rs: &[u32], pairs: &[(u64, u32, u32)], avgdl: f64) -> NodeIndex {
        let p = Bm25Params::default();
        let mut ni = NodeIndex::default();
        ni.post_off.push(0);
        ni.seg_off.push(0);
        let mut dfs: Vec<u32> = Vec::new();
        ni.dl = rs.iter().map(|&r| self.doc_len[r as usize]).collect();
        // (bound at the node's avgdl, first pair, end pair, tf_max, dl_min).
        let mut segs: Vec<(f64, usize, usize, u32, u32)> = Vec::new();
        let mut a = 0;
        while a < pairs.len() {
            let term = (pairs[a].0 >> 32) as u32;
            let mut e = a + 1;
            while e < pairs.len() && (pairs[e].0 >> 32) as u32 == term {
                e += 1;
            }
            dfs.push((e - a) as u32);
            segs.clear();
            let mut s0 = a;
            while s0 < e {
                let mut s1 = s0 + 1;
                if e - a < Self::SEGMENT_MIN_DF {
                    s1 = e;
                } else {
                    while s1 < e && pairs[s1].0 == pairs[s0].0 {
                        s1 += 1;
                    }
                }
                let mut tf_max = 0;
                let mut dl_min = u32::MAX;
                for &(_, local, tf) in &pairs[s0..s1] {
                    tf_max = tf_max.max(tf);
                    dl_min = dl_min.min(ni.dl[local as usize]);
                }
                let bound = tf_part(tf_max, dl_min, p.k1, p.b, avgdl);
                segs.push((bound, s0, s1, tf_max, dl_min));
                s0 = s1;
            }
            segs.sort_by(|x, y| y.0.total_cmp(&x.0));
            for &(_, s0, s1, tf_max, dl_min) in &segs {
                for &(_, local, tf) in &pairs[s0..s1] {
                    ni.post_local.push(local);
                    ni.post_tf.push(tf);
                }
                ni.segs.push(Segment {
                    tf_max,
                    dl_min,
                    end: ni.post_local.len() as u32,
                });
            }
            ni.terms.push(term);
            ni.post_off.push(ni.post_local.len() as u32);
            ni.seg_off.push(ni.segs.len() as u32);
            a = e;
        }
        dfs.sort_unstable();
        for d in dfs {
            match ni.df_hist.last_mut() {
                Some((x, c)) if *x == d => *c += 1,
                _ => ni.df_hist.push((d, 1)),
            }
        }
        let cached = (Self::IDF_CACHE_MAX_EXCLUDED + 1).min(rs.len());
        ni.idf_sums = vec![(0.0, 0); cached].into_boxed_slice();
        for (e, sum) in ni.idf_sums.iter_mut().enumerate() {
            let n = rs.len().saturating_sub(e);
            let nf = n as f64;
            *sum = ni.df_hist.iter().filter(|&&(d, _)| d as usize <= n).fold(
                (0.0, 0),
                |(s, v), &(d, c)| {
                    (
                        s + f64::from(c) * idf_raw(nf, f64::from(d)),
                        v + i64::from(c),
                    )
                },
            );
        }
        if rs.len() >= self.opts.dense_min_degree {
            ni.dense = ni.build_dense(avgdl, self.opts.dense_df_div);
        }
        ni.terms.shrink_to_fit();
        ni.post_local.shrink_to_fit();
        ni.post_tf.shrink_to_fit();
        ni.segs.shrink_to_fit();
        ni
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
        let list = self.node_reviews(Side::User, u);
        let excl = self.pair_positions(Side::User, u, i, list);
        let pair = self.heavy.get(&(u, i));
        self.top_k_inner(Side::User, u, &excl, query, k, p, s, pair)
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
        let list = self.node_reviews(Side::Item, i);
        let excl = self.pair_positions(Side::Item, u, i, list);
        let pair = self.heavy.get(&(u, i));
        self.top_k_inner(Side::Item, i, &excl, query, k, p, s, pair)
    }

    /// The terms of the excluded reviews `excl` (positions in `list`) with how many of them
    /// hold each, ascending by term, into `dec`.
    fn excluded_terms(
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

    /// The (user, item) pairs with more than [`Self::IDF_CACHE_MAX_EXCLUDED`] reviews, with
    /// their exclusion precomputed.
    fn heavy_pairs(&self) -> std::collections::HashMap<(u32, u32), PairStats> {
        let mut out = std::collections::HashMap::new();
        let min = Self::IDF_CACHE_MAX_EXCLUDED + 1;
        let us = &self.users;
        let mut items: Vec<u32> = Vec::new();
        let mut dec = Vec::new();
        let mut scratch = Scratch::default();
        for u in 0..us.off.len().saturating_sub(1) {
            let (a, e) = (us.off[u] as usize, us.off[u + 1] as usize);
            if e - a < min {
                continue;
            }
            items.clear();
            items.extend_from_slice(&us.other[a..e]);
            items.sort_unstable();
            for run in items.chunk_by(|x, y| x == y) {
                if run.len() < min {
                    continue;
                }
                let i = run[0];
                let list = &us.reviews[a..e];
                let excl: Vec<u32> = (0..e - a)
                    .filter(|&l| us.other[a + l] == i)
                    .map(|l| l as u32)
                    .collect();
                self.excluded_terms(list, &excl, &mut dec, &mut scratch);
                let len = excl
                    .iter()
                    .map(|&l| u64::from(self.doc_len[list[l as usize] as usize]))
                    .sum();
                let mut idf = [(0.0, 0); 2];
                for (slot, (side, node)) in [(Side::User, u as u32), (Side::Item, i)]
                    .into_iter()
                    .enumerate()
                {
                    let ns = self.side(side);
                    let n = self.node_reviews(side, node).len() - excl.len();
                    match ns.index_of.get(node as usize) {
                        Some(&ix) if ix != u32::MAX && n > 0 => {
                            idf[slot] = ns.idx[ix as usize].idf_stats(&dec, excl.len(), n as f64);
                        }
                        _ => {}
                    }
                }
                out.insert(
                    (u as u32, i),
                    PairStats {
                        len,
                        dec: dec.clone(),
                        idf,
                    },
                );
            }
        }
        out
    }

    /// Positions in `list` (the reviews of user `u` or of item `i`, per `side`) of the
    /// reviews by user `u` of item `i`, ascending. Scans the other ends of the shorter of the
    /// two review lists (sequentially), then maps to `list` by binary search when needed
    /// (all lists are in review order).
    fn pair_positions(&self, side: Side, u: u32, i: u32, list: &[u32]) -> Vec<u32> {
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
        self.top_k_inner(side, node, excl, query, k, p, s, None)
    }

    /// [`Self::top_k`], with the exclusion precomputed when `excl` is a heavy pair's.
    #[allow(clippy::too_many_arguments)]
    fn top_k_inner(
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
                    score += w * tf_part(self.fwd_tf[a + j], dl, k1, b, avgdl);
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
                    .map(|g| w * tf_part(g.tf_max, g.dl_min, k1, b, avgdl)),
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
                        let x = (w * tf_part(g.tf_max, g.dl_min, k1, b, avgdl)) as f32;
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

/// Adds `c` to the top-k heap if it beats the current k-th best.
#[inline]
fn offer(heap: &mut std::collections::BinaryHeap<Cand>, k: usize, c: Cand) {
    if heap.len() < k {
        heap.push(c);
    } else if heap.peek().is_some_and(|worst| c < *worst) {
        heap.pop();
        heap.push(c);
    }
}

/// Dense columns of a node: (all columns, reviews per column, first review of the chunk).
type ColChunk<'a> = (&'a [u8], usize, usize);

/// One chunk of the bound pass over a node's dense columns: `bound[i] (+)= Σ w ·
/// col[start + i]` over the query's (column, weight) pairs `cols` (`=` for the first when
/// `init`), then every review with `bound >= cut` is pushed to `cands` with its bound. Uses
/// AVX2 where available.
fn dense_bounds(
    bound: &mut [f32],
    all: ColChunk<'_>,
    cols: &[(usize, f32)],
    init: bool,
    cut: f32,
    cands: &mut Vec<(f32, u32)>,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above); the function only needs it.
            unsafe { dense_bounds_avx2(bound, all, cols, init, cut, cands) };
            return;
        }
    }
    dense_bounds_generic(bound, all, cols, init, cut, cands);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dense_bounds_avx2(
    bound: &mut [f32],
    all: ColChunk<'_>,
    cols: &[(usize, f32)],
    init: bool,
    cut: f32,
    cands: &mut Vec<(f32, u32)>,
) {
    dense_bounds_generic(bound, all, cols, init, cut, cands);
}

#[inline(always)]
fn dense_bounds_generic(
    bound: &mut [f32],
    (all, n, start): ColChunk<'_>,
    cols: &[(usize, f32)],
    init: bool,
    cut: f32,
    cands: &mut Vec<(f32, u32)>,
) {
    const GROUP: usize = 32;
    let len = bound.len();
    for (i, &(c, wf)) in cols.iter().enumerate() {
        let col = &all[c * n + start..c * n + start + len];
        if i == 0 && init {
            for (x, &q) in bound.iter_mut().zip(col) {
                *x = wf * f32::from(q);
            }
        } else {
            for (x, &q) in bound.iter_mut().zip(col) {
                *x += wf * f32::from(q);
            }
        }
    }
    for (g, group) in bound.chunks(GROUP).enumerate() {
        let hit = group.iter().fold(0u32, |a, &x| a | u32::from(x >= cut));
        if hit == 0 {
            continue;
        }
        for (i, &x) in group.iter().enumerate() {
            if x >= cut {
                cands.push((x, (start + g * GROUP + i) as u32));
            }
        }
    }
}

fn degree_max(s: &NodeSide) -> usize {
    s.off
        .windows(2)
        .map(|w| (w[1] - w[0]) as usize)
        .max()
        .unwrap_or(0)
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
