//! `rank_bm25.BM25Okapi` 0.2.2, ported operation by operation.

use super::formula;
use super::interner::Interner;
use crate::{Error, Result};
use pgraphrag_core::{TieOrder, rank_order};

pub use pgraphrag_core::Bm25Params;

/// A BM25Okapi index fitted on a corpus of pre-tokenized documents, bit-for-bit the scores of
/// `rank_bm25.BM25Okapi(corpus, k1, b, epsilon)` (version 0.2.2).
///
/// * idf of a term in `n` of `N` documents: `ln(N - n + 0.5) - ln(n + 0.5)`; every negative idf
///   (a term in more than half of the documents) is replaced by `epsilon * average_idf`, where
///   `average_idf` is the mean of the raw idfs summed in first-appearance order (rank_bm25's
///   dict order). A term in exactly half of the documents keeps idf 0.
/// * score of a document: `sum over query tokens q (duplicates count) of
///   idf(q) * (f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl)))`, evaluated in numpy's
///   float64 operation order; unknown query tokens add nothing.
///
/// Unlike rank_bm25, fitting an empty corpus, or a corpus whose documents are all empty,
/// returns a typed error instead of raising `ZeroDivisionError`.
///
/// ```
/// use pgraphrag_retrieval::sparse::{Bm25Okapi, Bm25Params};
/// let corpus = [vec!["a", "b"], vec!["b", "c"], vec!["c", "d"]];
/// let bm25 = Bm25Okapi::fit(&corpus, Bm25Params::default()).unwrap();
/// assert_eq!(bm25.corpus_size(), 3);
/// assert_eq!(bm25.avgdl(), 2.0);
/// // "a" is in 1 of 3 documents: ln(2.5) - ln(1.5); "b" is in 2 of 3: negative, floored.
/// assert_eq!(bm25.idf("a"), Some(2.5f64.ln() - 1.5f64.ln()));
/// assert_eq!(bm25.idf("b"), Some(0.25 * bm25.average_idf()));
/// assert!(Bm25Okapi::fit(&Vec::<Vec<&str>>::new(), Bm25Params::default()).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Bm25Okapi {
    params: Bm25Params,
    corpus_size: usize,
    avgdl: f64,
    average_idf: f64,
    doc_len: Vec<usize>,
    /// term <-> term id; ids follow first appearance (rank_bm25's `nd` insertion order).
    vocab: Interner,
    /// Document frequency per term id.
    df: Vec<u32>,
    /// idf per term id, after flooring.
    idf: Vec<f64>,
    /// Postings of term `t`: `postings[offsets[t]..offsets[t + 1]]`, (document, term
    /// frequency) with documents ascending.
    postings: Vec<(u32, u32)>,
    offsets: Vec<usize>,
    /// `k1 * (1 - b + b * doc_len / avgdl)` per document, as numpy computes it.
    norm: Vec<f64>,
    /// Whether every norm is finite and positive and every idf finite, so that documents
    /// without a query term provably add exactly `+0.0` and can be skipped.
    sparse_exact: bool,
}

impl Bm25Okapi {
    /// Fits the index (rank_bm25's `__init__`: `_initialize` then `_calc_idf`).
    ///
    /// Errors: [`Error::EmptyCorpus`] when `corpus` is empty, [`Error::EmptyVocabulary`] when every
    /// document is empty (rank_bm25 raises `ZeroDivisionError` in both cases), and
    /// [`Error::InvalidInput`] when the corpus is too large for 32-bit document ids.
    pub fn fit<D, S>(corpus: &[D], params: Bm25Params) -> Result<Self>
    where
        D: AsRef<[S]>,
        S: AsRef<str>,
    {
        if corpus.is_empty() {
            return Err(Error::EmptyCorpus);
        }
        if corpus.len() > u32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "BM25 corpus of {} documents exceeds the supported {} documents",
                corpus.len(),
                u32::MAX
            )));
        }
        let mut vocab = Interner::default();
        let mut df: Vec<u32> = Vec::new();
        // (term, document, tf) in document order; turned into per-term postings below.
        let mut triples: Vec<(u32, u32, u32)> = Vec::new();
        let mut doc_len = Vec::with_capacity(corpus.len());
        // Python's `num_doc` is an unbounded int; u128 cannot overflow here.
        let mut num_doc: u128 = 0;
        let mut tf_scratch: Vec<u32> = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        for (d, doc) in corpus.iter().enumerate() {
            let doc = doc.as_ref();
            doc_len.push(doc.len());
            num_doc += doc.len() as u128;
            for tok in doc {
                let (id, new) = vocab.intern(tok.as_ref()).ok_or_else(|| {
                    Error::InvalidInput("BM25 vocabulary exceeds 2^32 - 1 distinct terms".into())
                })?;
                if new {
                    df.push(0);
                    tf_scratch.push(0);
                }
                let slot = &mut tf_scratch[id as usize];
                if *slot == 0 {
                    touched.push(id);
                }
                *slot = slot.saturating_add(1);
            }
            for &id in &touched {
                let i = id as usize;
                df[i] += 1;
                triples.push((id, d as u32, tf_scratch[i]));
                tf_scratch[i] = 0;
            }
            touched.clear();
        }
        // Counting sort of the triples by term (stable: documents stay ascending).
        let mut offsets = Vec::with_capacity(df.len() + 1);
        offsets.push(0usize);
        for &f in &df {
            offsets.push(offsets[offsets.len() - 1] + f as usize);
        }
        let mut fill = offsets[..df.len()].to_vec();
        let mut postings = vec![(0u32, 0u32); triples.len()];
        for (t, d, f) in triples {
            let slot = &mut fill[t as usize];
            postings[*slot] = (d, f);
            *slot += 1;
        }
        let corpus_size = corpus.len();
        // `num_doc / corpus_size`: Python's int true division is correctly rounded, as is this
        // division of two exactly representable doubles (below 2^53).
        let avgdl = num_doc as f64 / corpus_size as f64;
        if df.is_empty() {
            return Err(Error::EmptyVocabulary {
                documents: corpus_size,
            });
        }

        // _calc_idf, in nd's insertion order.
        let mut idf = Vec::with_capacity(df.len());
        let mut idf_sum = 0.0f64;
        let mut negative = Vec::new();
        for (id, &freq) in df.iter().enumerate() {
            let value = formula::idf(corpus_size as f64, f64::from(freq));
            idf.push(value);
            idf_sum += value;
            if value < 0.0 {
                negative.push(id);
            }
        }
        let average_idf = idf_sum / df.len() as f64;
        let eps = formula::idf_floor(params.epsilon, idf_sum, df.len());
        for id in negative {
            idf[id] = eps;
        }

        let Bm25Params { k1, b, .. } = params;
        let norm: Vec<f64> = doc_len
            .iter()
            .map(|&dl| formula::length_norm(k1, b, dl as f64, avgdl))
            .collect();
        let sparse_exact = k1.is_finite()
            && norm.iter().all(|n| n.is_finite() && *n > 0.0)
            && idf.iter().all(|v| v.is_finite());
        Ok(Bm25Okapi {
            params,
            corpus_size,
            avgdl,
            average_idf,
            doc_len,
            vocab,
            df,
            idf,
            postings,
            offsets,
            norm,
            sparse_exact,
        })
    }

    #[inline]
    fn posting(&self, id: u32) -> &[(u32, u32)] {
        let t = id as usize;
        &self.postings[self.offsets[t]..self.offsets[t + 1]]
    }

    /// The parameters the index was fitted with.
    pub fn params(&self) -> Bm25Params {
        self.params
    }

    /// Number of documents (rank_bm25's `corpus_size`).
    pub fn corpus_size(&self) -> usize {
        self.corpus_size
    }

    /// Mean document length in tokens (rank_bm25's `avgdl`).
    pub fn avgdl(&self) -> f64 {
        self.avgdl
    }

    /// Mean of the raw (unfloored) idfs (rank_bm25's `average_idf`).
    pub fn average_idf(&self) -> f64 {
        self.average_idf
    }

    /// Length in tokens of each document (rank_bm25's `doc_len`).
    pub fn doc_len(&self) -> &[usize] {
        &self.doc_len
    }

    /// Number of distinct terms.
    pub fn vocabulary_size(&self) -> usize {
        self.df.len()
    }

    /// The (floored) idf of `term`, or `None` if no document contains it (rank_bm25's
    /// `idf.get(term)`).
    pub fn idf(&self, term: &str) -> Option<f64> {
        self.vocab.get(term).map(|id| self.idf[id as usize])
    }

    /// Number of documents that contain `term` (rank_bm25's `nd[term]`, 0 if absent).
    pub fn doc_freq(&self, term: &str) -> usize {
        self.vocab
            .get(term)
            .map_or(0, |id| self.df[id as usize] as usize)
    }

    /// The terms with their (floored) idf, in rank_bm25's dict order (first appearance).
    pub fn idf_entries(&self) -> Vec<(&str, f64)> {
        (0..self.df.len())
            .map(|id| (self.vocab.get_str(id as u32), self.idf[id]))
            .collect()
    }

    /// BM25 score of every document for `query` (rank_bm25's `get_scores`), in corpus order.
    ///
    /// Bit-identical to numpy's float64 evaluation. With parameters that make numpy produce
    /// NaN (for example `k1 = 0`, where `0 / 0` arises for documents without a query term) the
    /// same NaNs are returned.
    pub fn get_scores<S: AsRef<str>>(&self, query: &[S]) -> Vec<f64> {
        let mut score = vec![0.0f64; self.corpus_size];
        let k1 = self.params.k1;
        if self.sparse_exact {
            for q in query {
                let Some(id) = self.vocab.get(q.as_ref()) else {
                    continue; // idf 0 (`or 0`) times finite values: adds +0.0 everywhere.
                };
                let idf = self.idf[id as usize];
                if idf == 0.0 {
                    continue; // `0 or 0` -> int 0; 0 * finite non-negative = +0.0.
                }
                for &(d, tf) in self.posting(id) {
                    let f = f64::from(tf);
                    let d = d as usize;
                    score[d] += idf * formula::tf_part(f, k1, self.norm[d]);
                }
            }
            return score;
        }
        // General path: every document, exactly as numpy broadcasts.
        let mut tf = vec![0u32; self.corpus_size];
        for q in query {
            let (idf, id) = match self.vocab.get(q.as_ref()) {
                Some(id) => (self.idf[id as usize], Some(id)),
                None => (0.0, None),
            };
            if let Some(id) = id {
                for &(d, f) in self.posting(id) {
                    tf[d as usize] = f;
                }
            }
            for (d, s) in score.iter_mut().enumerate() {
                let f = f64::from(tf[d]);
                *s += idf * formula::tf_part(f, k1, self.norm[d]);
            }
            if let Some(id) = id {
                for &(d, _) in self.posting(id) {
                    tf[d as usize] = 0;
                }
            }
        }
        score
    }

    /// Scores of the documents `doc_ids` only, in that order (rank_bm25's
    /// `get_batch_scores`). Errors with [`Error::DocumentOutOfRange`] on an id `>= corpus_size`
    /// (rank_bm25 raises `AssertionError`).
    pub fn get_batch_scores<S: AsRef<str>>(
        &self,
        query: &[S],
        doc_ids: &[usize],
    ) -> Result<Vec<f64>> {
        if let Some(&bad) = doc_ids.iter().find(|&&d| d >= self.corpus_size) {
            return Err(Error::DocumentOutOfRange {
                index: bad,
                corpus_size: self.corpus_size,
            });
        }
        let all = self.get_scores(query);
        Ok(doc_ids.iter().map(|&d| all[d]).collect())
    }

    /// Indices of the best `n` documents, as rank_bm25's `np.argsort(scores)[::-1][:n]` orders
    /// them ([`TieOrder::NumpyReversedArgsort`]: among equal scores the later document first for
    /// up to 16 documents).
    pub fn get_top_n<S: AsRef<str>>(&self, query: &[S], n: usize) -> Vec<usize> {
        self.top_n_with(query, n, TieOrder::NumpyReversedArgsort)
    }

    /// Indices of the best `n` documents under an explicit [`TieOrder`].
    pub fn top_n_with<S: AsRef<str>>(&self, query: &[S], n: usize, ties: TieOrder) -> Vec<usize> {
        let scores = self.get_scores(query);
        let mut order = rank_order(&scores, ties);
        order.truncate(n);
        order
    }

    /// rank_bm25's `get_top_n(query, documents, n)`: the best `n` of `documents` (which must be
    /// the fitted corpus, or anything aligned with it). Errors with [`Error::CorpusMismatch`]
    /// when the lengths differ (rank_bm25 raises `AssertionError`).
    pub fn get_top_n_docs<'a, S: AsRef<str>, T>(
        &self,
        query: &[S],
        documents: &'a [T],
        n: usize,
    ) -> Result<Vec<&'a T>> {
        if documents.len() != self.corpus_size {
            return Err(Error::CorpusMismatch {
                fitted: self.corpus_size,
                given: documents.len(),
            });
        }
        Ok(self
            .get_top_n(query, n)
            .into_iter()
            .map(|i| &documents[i])
            .collect())
    }
}
