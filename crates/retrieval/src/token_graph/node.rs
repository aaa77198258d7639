//! Per-node indexes of a [`super::TokenGraph`]: review lists, inverted indexes grouped
//! into impact segments, document-frequency histograms and dense quantized bounds.

use crate::sparse::Bm25Params;
use crate::sparse::formula;

#[derive(Debug, Default)]
pub(super) struct NodeSide {
    /// CSR: reviews of node `v` are `reviews[off[v]..off[v+1]]`, in review order.
    pub(super) off: Vec<u32>,
    pub(super) reviews: Vec<u32>,
    /// Parallel to `reviews`: the other end of each review (its item on the user side, its
    /// author on the item side), so that a profile's pair reviews are found by a sequential
    /// scan.
    pub(super) other: Vec<u32>,
    /// Per node: total token count of its reviews.
    pub(super) total_len: Vec<u64>,
    /// Per node: index into `idx` (u32::MAX: no inverted index, small node).
    pub(super) index_of: Vec<u32>,
    pub(super) idx: Vec<NodeIndex>,
}

#[derive(Debug, Default)]
pub(super) struct NodeIndex {
    /// Sorted distinct terms of the node.
    pub(super) terms: Vec<u32>,
    /// Postings of `terms[i]` are positions `post_off[i]..post_off[i+1]` of `post_local`
    /// (local review positions) and `post_tf` (term frequencies), grouped into impact
    /// segments.
    pub(super) post_off: Vec<u32>,
    pub(super) post_local: Vec<u32>,
    pub(super) post_tf: Vec<u32>,
    /// Length of each review of the node, by local position.
    pub(super) dl: Vec<u32>,
    /// Segments of `terms[i]` are `segs[seg_off[i]..seg_off[i+1]]`, in descending order of
    /// their bound at the node's own average document length.
    pub(super) seg_off: Vec<u32>,
    pub(super) segs: Vec<Segment>,
    /// (df, number of terms with that df), ascending df.
    pub(super) df_hist: Vec<(u32, u32)>,
    /// `(Σ count · formula::idf(n − e, df), Σ count)` over the `df_hist` entries with
    /// `df ≤ n − e`, for `e` = 0 ..= [`super::TokenGraph::IDF_CACHE_MAX_EXCLUDED`] excluded reviews
    /// (more are summed from the histogram at query time). A term with a larger df is in
    /// every excluded review, so a query moves it to a valid df.
    pub(super) idf_sums: Box<[(f64, i64)]>,
    /// Dense quantized columns of the node's frequent terms (only for nodes with at
    /// least [`super::TokenGraph::DENSE_MIN_DEGREE`] reviews, else empty): see [`Dense`].
    pub(super) dense: Dense,
}

/// Dense per-review bounds of a large node's frequent terms (document frequency at least
/// `1 / DENSE_DF_DIV` of the node), for the bound pass of a query whose impact-ordered
/// search did not stop early. Column `c` holds, for every review (local position) `l`, the
/// byte `q = ceil(255 · tf / (tf + k1·(1 − b + b·dl/avgdl)))` at the default `k1`, `b` and
/// the node's own `avgdl`, so that `w · (k1 + 1) · q / 255` bounds the term's contribution
/// (times `max(1, avgdl' / avgdl)` for a query whose candidate list has average length
/// `avgdl'`).
#[derive(Debug, Default)]
pub(super) struct Dense {
    /// Term slots (ascending) that have a column.
    pub(super) slots: Vec<u32>,
    /// Column `c` is `cols[c * n..(c + 1) * n]`.
    pub(super) cols: Vec<u8>,
    /// The node's average document length (the quantization's).
    pub(super) avgdl: f64,
}

/// A run of postings of one term whose term frequencies are at most `tf_max` and whose
/// documents have at least `dl_min` tokens, so that `w * g(tf_max, dl_min)` bounds the
/// term's contribution to each of them. The run ends at posting `end` (exclusive); it starts
/// where the previous segment of the term ends (or at the term's first posting).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Segment {
    pub(super) tf_max: u32,
    pub(super) dl_min: u32,
    pub(super) end: u32,
}

impl NodeIndex {
    /// The dense columns of this node (see [`Dense`]), at its average length `avgdl`.
    pub(super) fn build_dense(&self, avgdl: f64, df_div: usize) -> Dense {
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
                let x =
                    formula::tf_part_at(tf, self.dl[l as usize], p.k1, p.b, avgdl) / (p.k1 + 1.0);
                // Rounded up (with a margin for the rounding of x), at most 255 as x < 1.
                d.cols[base + l as usize] =
                    (x * 255.0 * (1.0 + 1e-12)).ceil().clamp(1.0, 255.0) as u8;
            }
        }
        d.slots.shrink_to_fit();
        d.cols.shrink_to_fit();
        d
    }

    /// `(Σ formula::idf(nf, df), vocabulary size)` over the candidate list: the node minus
    /// `n_excl` excluded reviews whose terms are `dec` (term, how many excluded reviews
    /// hold it; ascending), `nf` candidates.
    pub(super) fn idf_stats(&self, dec: &[(u32, u32)], n_excl: usize, nf: f64) -> (f64, i64) {
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
                    (s + sign as f64 * formula::idf(nf, f64::from(d)), v + sign)
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
                        idf_sum += c as f64 * formula::idf(nf, f64::from(d));
                        vocab += c;
                    }
                }
                (idf_sum, vocab)
            }
        }
    }

    /// Postings range of segment `j` of term slot `ti`.
    pub(super) fn segment(&self, ti: usize, j: usize) -> (usize, usize) {
        let start = if j == self.seg_off[ti] as usize {
            self.post_off[ti] as usize
        } else {
            self.segs[j - 1].end as usize
        };
        (start, self.segs[j].end as usize)
    }
}

/// Bucket of a term frequency for segmenting: exact below 16, then 4 per octave.
#[inline]
pub(super) fn tf_bucket(tf: u32) -> u32 {
    if tf < 16 {
        tf
    } else {
        let e = 31 - tf.leading_zeros();
        16 + (e - 4) * 4 + ((tf >> (e - 2)) & 3)
    }
}

/// Bucket of a document length for segmenting: exact below 64, then 8 per octave.
#[inline]
pub(super) fn dl_bucket(dl: u32) -> u32 {
    if dl < 64 {
        dl
    } else {
        let e = 31 - dl.leading_zeros();
        64 + (e - 6) * 8 + ((dl >> (e - 3)) & 7)
    }
}

pub(super) fn degree_max(s: &NodeSide) -> usize {
    s.off
        .windows(2)
        .map(|w| (w[1] - w[0]) as usize)
        .max()
        .unwrap_or(0)
}
