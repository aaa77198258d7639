//! rank_bm25's per-list fit over token ids: the one implementation behind
//! [`crate::profile::CachedBm25`] and [`crate::live::ProfileIndex`].
//!
//! A candidate list is a sequence of documents, each given as its token count and its distinct
//! token ids with their counts in first-appearance order. The fit follows rank_bm25's order of
//! operations (idfs summed in first-appearance order over the list, per-document sums in
//! query-token order), so scores equal `BM25Okapi(docs).get_scores(query)` bit for bit when the
//! parameters are usual (see [`fast_params`]).

use super::Bm25Params;
use super::formula::{self, IdfTable};

/// Whether the fit reproduces rank_bm25 exactly: every length normaliser is then finite and
/// positive and every idf finite (see `Bm25Okapi::get_scores`).
pub(crate) fn fast_params(params: Bm25Params) -> bool {
    let Bm25Params { k1, b, epsilon } = params;
    k1.is_finite() && k1 > 0.0 && b.is_finite() && (0.0..1.0).contains(&b) && epsilon.is_finite()
}

thread_local! {
    /// Each thread's scratch arrays for the live index (sized by the largest vocabulary seen).
    static SCRATCH: std::cell::RefCell<FitScratch> = std::cell::RefCell::new(FitScratch::default());
}

/// Runs `f` with this thread's [`FitScratch`].
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut FitScratch) -> R) -> R {
    SCRATCH.with(|sc| f(&mut sc.borrow_mut()))
}

/// Per-term scratch arrays, indexed by token id and reset by generation stamps, so a fit costs
/// nothing per vocabulary term it does not touch.
#[derive(Debug, Clone, Default)]
pub(crate) struct FitScratch {
    gen_: u32,
    doc_gen: u32,
    /// `gen_` when the term was first seen in the current candidate list.
    pub(super) seen: Vec<u32>,
    /// `doc_gen` when last counted for a document.
    pub(super) doc: Vec<u32>,
    pub(super) df: Vec<u32>,
    pub(super) tf: Vec<u32>,
    pub(super) idf: Vec<f64>,
    pub(super) order: Vec<u32>,
    /// `ln(i + 0.5)` for the list sizes met so far, as rank_bm25's idf computes it.
    pub(super) ln_half: IdfTable,
}

impl FitScratch {
    /// Sizes the arrays for `terms` token ids and starts a new candidate list.
    pub(super) fn next_list(&mut self, terms: usize) -> u32 {
        if self.seen.len() < terms {
            self.seen.resize(terms, 0);
            self.doc.resize(terms, 0);
            self.df.resize(terms, 0);
            self.tf.resize(terms, 0);
            self.idf.resize(terms, 0.0);
        }
        if self.gen_ == u32::MAX {
            self.seen.iter_mut().for_each(|x| *x = 0);
            self.gen_ = 0;
        }
        self.gen_ += 1;
        self.gen_
    }

    /// Starts a new document (after `next_list` sized the arrays).
    pub(super) fn next_doc(&mut self) -> u32 {
        if self.doc_gen == u32::MAX {
            self.doc.iter_mut().for_each(|x| *x = 0);
            self.doc_gen = 0;
        }
        self.doc_gen += 1;
        self.doc_gen
    }

    /// rank_bm25's `_calc_idf` for a list of `n` documents: the idf of every term of `order`
    /// (first-appearance order) from its frequency in `df`, summed in that order, negative ones
    /// floored at `epsilon` times their mean; into `idf`.
    pub(super) fn fit_idfs(&mut self, n: usize, epsilon: f64) {
        let mut idf_sum = 0.0f64;
        self.ln_half.reserve(n);
        for &t in &self.order {
            let t = t as usize;
            let value = self.ln_half.idf(n, self.df[t] as usize);
            self.idf[t] = value;
            idf_sum += value;
        }
        let eps = formula::idf_floor(epsilon, idf_sum, self.order.len());
        for &t in &self.order {
            let v = &mut self.idf[t as usize];
            *v = formula::floored(*v, eps);
        }
    }

    /// rank_bm25's scores of the documents `docs` (token count, `(token id, count)` in
    /// first-appearance order; every id below `terms`) for the query token ids `qids` (in query
    /// order, duplicates counted; unknown query tokens left out), fitted on `docs` alone.
    /// Requires [`fast_params`]. A list without any token scores 0 everywhere (rank_bm25
    /// cannot fit it).
    pub(crate) fn scores<'a, I>(
        &mut self,
        docs: I,
        qids: &[u32],
        terms: usize,
        params: Bm25Params,
    ) -> Vec<f64>
    where
        I: Iterator<Item = (usize, &'a [(u32, u32)])> + Clone,
    {
        let n = docs.clone().count();
        if n == 0 {
            return Vec::new();
        }
        if qids.is_empty() {
            // Unknown query tokens add nothing: every score is +0.0 (no fit needed).
            return vec![0.0; n];
        }
        let Bm25Params { k1, b, epsilon } = params;
        let gen_ = self.next_list(terms);
        self.order.clear();
        // _initialize: document frequencies, terms in first-appearance order.
        let mut num_doc: u128 = 0;
        for (len, doc_terms) in docs.clone() {
            num_doc += len as u128;
            for &(t, _) in doc_terms {
                let t = t as usize;
                if self.seen[t] != gen_ {
                    self.seen[t] = gen_;
                    self.df[t] = 0;
                    self.order.push(t as u32);
                }
                self.df[t] += 1;
            }
        }
        if self.order.is_empty() {
            return vec![0.0; n];
        }
        let avgdl = num_doc as f64 / n as f64;
        self.fit_idfs(n, epsilon);
        // Query tokens with a non-zero idf, in query order (duplicates count).
        let qs: Vec<(u32, f64)> = qids
            .iter()
            .filter(|&&t| (t as usize) < terms && self.seen[t as usize] == gen_)
            .map(|&t| (t, self.idf[t as usize]))
            .filter(|&(_, w)| w != 0.0)
            .collect();
        let mut scores = vec![0.0f64; n];
        if !qs.is_empty() {
            for (d, (len, doc_terms)) in docs.enumerate() {
                let dgen = self.next_doc();
                for &(t, c) in doc_terms {
                    self.doc[t as usize] = dgen;
                    self.tf[t as usize] = c;
                }
                let norm = formula::length_norm(k1, b, len as f64, avgdl);
                let mut s = 0.0f64;
                for &(t, w) in &qs {
                    if self.doc[t as usize] == dgen {
                        let f = f64::from(self.tf[t as usize]);
                        s += w * formula::tf_part(f, k1, norm);
                    }
                }
                scores[d] = s;
            }
        }
        scores
    }
}
