//! Building a [`TokenGraph`]: the forward index, both sides' review lists and per-node
//! indexes, and the heavy (user, item) pairs.

use super::node::{NodeIndex, NodeSide, Segment, degree_max, dl_bucket, tf_bucket};
use super::scratch::Scratch;
use super::{IndexOptions, PairStats, Side, TokenGraph, TokenReview};
use crate::sparse::Bm25Params;
use crate::sparse::formula;
use crate::{Error, Result};

impl TokenGraph {
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
                return Err(Error::GraphFull {
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

    pub(super) fn build_side(&self, node_of: &[u32], other_of: &[u32]) -> NodeSide {
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
    pub(super) const IDF_CACHE_MAX_EXCLUDED: usize = 16;

    /// Postings shorter than this form a single segment.
    pub(super) const SEGMENT_MIN_DF: usize = 16;

    /// The inverted index of one node from its sorted (key, local, tf) pairs.
    pub(super) fn node_index(
        &self,
        rs: &[u32],
        pairs: &[(u64, u32, u32)],
        avgdl: f64,
    ) -> NodeIndex {
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
                let bound = formula::tf_part_at(tf_max, dl_min, p.k1, p.b, avgdl);
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
                        s + f64::from(c) * formula::idf(nf, f64::from(d)),
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

    /// The (user, item) pairs with more than [`Self::IDF_CACHE_MAX_EXCLUDED`] reviews, with
    /// their exclusion precomputed.
    pub(super) fn heavy_pairs(&self) -> std::collections::HashMap<(u32, u32), PairStats> {
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
}
