//! [`CachedBm25`]: rank_bm25's BM25Okapi per candidate list over cached token ids.

use pgraphrag_core::Scored;
use pgraphrag_graph::{ReviewId, ReviewLookup, UserItemGraph};

use super::CandidateRanker;
use crate::Error;
use crate::sparse::formula::{self, IdfTable};
use crate::sparse::interner::Interner;
use crate::sparse::{Bm25Params, PgraphragTokenizer, TieOrder, Tokenizer, top_k};

/// BM25Okapi (rank_bm25 parity, fitted on each candidate list) that tokenizes every review
/// once, interns its tokens and caches the token ids by review slot: the same scores as
/// `sparse::Bm25Retriever` (bit for bit), many times faster on a whole split.
///
/// With the usual parameters (`k1 > 0`, `0 <= b < 1`, finite `epsilon`) each candidate list
/// is fitted over token ids with reusable scratch arrays, in rank_bm25's order of operations
/// (idfs summed in first-appearance order, per-document sums in query-token order); other
/// parameters go through [`crate::sparse::Bm25Okapi`] itself. An empty query scores every
/// candidate 0 without fitting.
#[derive(Debug, Clone)]
pub struct CachedBm25<T = PgraphragTokenizer> {
    tokenizer: T,
    params: Bm25Params,
    ties: TieOrder,
    vocab: Interner,
    /// Per review slot: the doc id it was tokenized for, its token count and its distinct
    /// token ids with their counts, in first-appearance order.
    cache: Vec<Option<CachedDoc>>,
    /// Set when the vocabulary outgrew u32 ids (reported by the next ranking).
    overflow: bool,
    /// The last query and its tokens.
    query: Option<(String, Vec<String>)>,
    scratch: FitScratch,
}

/// One tokenized review of [`CachedBm25`].
#[derive(Debug, Clone)]
struct CachedDoc {
    doc_id: usize,
    len: usize,
    /// (token id, count), in order of first appearance.
    terms: Vec<(u32, u32)>,
}

static EMPTY_DOC: CachedDoc = CachedDoc {
    doc_id: usize::MAX,
    len: 0,
    terms: Vec::new(),
};

/// Per-term scratch arrays of [`CachedBm25`], indexed by token id and reset by generation
/// stamps.
#[derive(Debug, Clone, Default)]
struct FitScratch {
    gen_: u32,
    doc_gen: u32,
    /// `gen_` when the term was first seen in the current candidate list.
    seen: Vec<u32>,
    /// `gen_` (document generation) when last counted for a document.
    doc: Vec<u32>,
    df: Vec<u32>,
    tf: Vec<u32>,
    idf: Vec<f64>,
    order: Vec<u32>,
    /// `ln(i + 0.5)` for the list sizes met so far, as rank_bm25's idf computes it.
    ln_half: IdfTable,
}

impl FitScratch {
    /// Sizes the arrays for `terms` token ids and starts a new candidate list.
    fn next_list(&mut self, terms: usize) -> u32 {
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
    fn next_doc(&mut self) -> u32 {
        if self.doc_gen == u32::MAX {
            self.doc.iter_mut().for_each(|x| *x = 0);
            self.doc_gen = 0;
        }
        self.doc_gen += 1;
        self.doc_gen
    }
}

impl CachedBm25<PgraphragTokenizer> {
    /// PGraphRAG's BM25: `nltk.word_tokenize(text.lower())`, k1 = 1.5, b = 0.75,
    /// epsilon = 0.25, ties as `np.argsort(scores)[::-1]`.
    pub fn pgraphrag() -> Self {
        CachedBm25::new(PgraphragTokenizer)
    }
}

impl<T: Tokenizer> CachedBm25<T> {
    /// BM25Okapi with default parameters over `tokenizer`.
    pub fn new(tokenizer: T) -> Self {
        CachedBm25 {
            tokenizer,
            params: Bm25Params::default(),
            ties: TieOrder::default(),
            vocab: Interner::default(),
            cache: Vec::new(),
            overflow: false,
            query: None,
            scratch: FitScratch::default(),
        }
    }
    /// Sets k1, b, epsilon.
    pub fn with_params(mut self, params: Bm25Params) -> Self {
        self.params = params;
        self
    }
    /// Sets the order among equal scores.
    pub fn with_tie_order(mut self, ties: TieOrder) -> Self {
        self.ties = ties;
        self
    }

    /// Tokenizes (once) every review of `graph` that is not cached yet, so that later
    /// rankings only read the cache. Optional: rankings fill the cache as they go.
    pub fn warm(&mut self, graph: &UserItemGraph) {
        for i in 0..graph.num_reviews() {
            self.tokens(graph, ReviewId(i as u32));
        }
    }

    fn is_fresh<G: ReviewLookup + ?Sized>(&self, graph: &G, i: usize) -> bool {
        let doc_id = graph.review(ReviewId(i as u32)).entry.id;
        matches!(self.cache.get(i), Some(Some(d)) if d.doc_id == doc_id)
    }

    fn store<G: ReviewLookup + ?Sized>(&mut self, graph: &G, i: usize, toks: &[String]) {
        if self.cache.len() <= i {
            self.cache.resize(graph.slot_bound().max(i + 1), None);
        }
        let mut terms: Vec<(u32, u32)> = Vec::new();
        for t in toks {
            match self.vocab.intern(t) {
                Some((id, _)) => match terms.iter_mut().find(|x| x.0 == id) {
                    Some(x) => x.1 += 1,
                    None => terms.push((id, 1)),
                },
                None => self.overflow = true,
            }
        }
        self.cache[i] = Some(CachedDoc {
            doc_id: graph.review(ReviewId(i as u32)).entry.id,
            len: toks.len(),
            terms,
        });
    }

    fn tokens<G: ReviewLookup + ?Sized>(&mut self, graph: &G, r: ReviewId) -> &CachedDoc {
        let i = r.index();
        if self.cache.len() <= i {
            self.cache.resize(graph.slot_bound().max(i + 1), None);
        }
        if !self.is_fresh(graph, i) {
            let toks = self.tokenizer.tokenize(&graph.review(r).entry.title_text());
            self.store(graph, i, &toks);
        }
        match &self.cache[i] {
            Some(d) => d,
            None => &EMPTY_DOC,
        }
    }

    fn doc(&self, r: ReviewId) -> &CachedDoc {
        match self.cache.get(r.index()) {
            Some(Some(d)) => d,
            _ => &EMPTY_DOC,
        }
    }

    /// Whether the fast path reproduces rank_bm25 exactly: every length normaliser is then
    /// finite and positive and every idf finite (see `Bm25Okapi::get_scores`).
    fn fast_params(&self) -> bool {
        let Bm25Params { k1, b, epsilon } = self.params;
        k1.is_finite()
            && k1 > 0.0
            && b.is_finite()
            && (0.0..1.0).contains(&b)
            && epsilon.is_finite()
    }

    /// rank_bm25's scores of `cands` for the query tokens `q`, fitted on `cands` alone.
    fn scores_fast(&mut self, cands: &[ReviewId], q: &[String]) -> Vec<f64> {
        let n = cands.len();
        if n == 0 {
            return Vec::new();
        }
        let qids: Vec<u32> = q.iter().filter_map(|t| self.vocab.get(t)).collect();
        if qids.is_empty() {
            // Unknown query tokens add nothing: every score is +0.0 (no fit needed).
            return vec![0.0; n];
        }
        let terms = self.vocab_len();
        let Bm25Params { k1, b, epsilon } = self.params;
        let mut sc = std::mem::take(&mut self.scratch);
        let gen_ = sc.next_list(terms);
        sc.order.clear();
        // _initialize: document frequencies, terms in first-appearance order.
        let mut num_doc: u128 = 0;
        for &r in cands {
            let doc = self.doc(r);
            num_doc += doc.len as u128;
            for &(t, _) in &doc.terms {
                let t = t as usize;
                if sc.seen[t] != gen_ {
                    sc.seen[t] = gen_;
                    sc.df[t] = 0;
                    sc.order.push(t as u32);
                }
                sc.df[t] += 1;
            }
        }
        if sc.order.is_empty() {
            self.scratch = sc;
            return vec![0.0; n]; // rank_bm25 cannot fit; as the retrievers do
        }
        let avgdl = num_doc as f64 / n as f64;
        // _calc_idf in nd's order.
        let mut idf_sum = 0.0f64;
        sc.ln_half.reserve(n);
        for &t in &sc.order {
            let t = t as usize;
            // formula::idf(n, df), from the table.
            let value = sc.ln_half.idf(n, sc.df[t] as usize);
            sc.idf[t] = value;
            idf_sum += value;
        }
        let eps = formula::idf_floor(epsilon, idf_sum, sc.order.len());
        for &t in &sc.order {
            let v = &mut sc.idf[t as usize];
            *v = formula::floored(*v, eps);
        }
        // Query tokens with a non-zero idf, in query order (duplicates count).
        let qs: Vec<(u32, f64)> = qids
            .iter()
            .filter(|&&t| sc.seen[t as usize] == gen_)
            .map(|&t| (t, sc.idf[t as usize]))
            .filter(|&(_, w)| w != 0.0)
            .collect();
        let mut scores = vec![0.0f64; n];
        if !qs.is_empty() {
            for (d, &r) in cands.iter().enumerate() {
                let doc = self.doc(r);
                let dgen = sc.next_doc();
                for &(t, c) in &doc.terms {
                    sc.doc[t as usize] = dgen;
                    sc.tf[t as usize] = c;
                }
                let norm = formula::length_norm(k1, b, doc.len as f64, avgdl);
                let mut s = 0.0f64;
                for &(t, w) in &qs {
                    if sc.doc[t as usize] == dgen {
                        let f = f64::from(sc.tf[t as usize]);
                        s += w * formula::tf_part(f, k1, norm);
                    }
                }
                scores[d] = s;
            }
        }
        self.scratch = sc;
        scores
    }

    fn vocab_len(&self) -> usize {
        self.vocab.len()
    }
}

impl<T: Tokenizer + Sync> CachedBm25<T> {
    /// [`CachedBm25::warm`] with the tokenizing spread over `threads` threads. Token ids are
    /// assigned afterwards in review order, so the cache does not depend on `threads`.
    pub fn warm_parallel(&mut self, graph: &UserItemGraph, threads: usize) {
        let missing: Vec<usize> = (0..graph.num_reviews())
            .filter(|&i| !self.is_fresh(graph, i))
            .collect();
        let threads = threads.clamp(1, missing.len().max(1));
        let per = missing.len().div_ceil(threads).max(1);
        let tokenizer = &self.tokenizer;
        let toks: Vec<Vec<Vec<String>>> = std::thread::scope(|sc| {
            let handles: Vec<_> = missing
                .chunks(per)
                .map(|chunk| {
                    sc.spawn(move || {
                        chunk
                            .iter()
                            .map(|&i| {
                                let e = &graph.review(ReviewId(i as u32)).entry;
                                tokenizer.tokenize(&e.title_text())
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        for (&i, t) in missing.iter().zip(toks.iter().flatten()) {
            self.store(graph, i, t);
        }
    }
}

impl<T: Tokenizer> CandidateRanker for CachedBm25<T> {
    fn rank_reviews<G: ReviewLookup + ?Sized>(
        &mut self,
        graph: &G,
        query: &str,
        cands: &[ReviewId],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
        for &r in cands {
            self.tokens(graph, r);
        }
        if self.overflow {
            return Err(Error::InvalidInput(
                "BM25 vocabulary exceeds 2^32 - 1 distinct terms".into(),
            )
            .into());
        }
        let q = match self.query.take() {
            Some((s, t)) if s == query => (s, t),
            _ => (query.to_string(), self.tokenizer.tokenize(query)),
        };
        let scores = if self.fast_params() {
            self.scores_fast(cands, &q.1)
        } else {
            // Other parameters: rank_bm25's own arithmetic on the (re-)tokenized documents.
            let docs: Vec<Vec<String>> = cands
                .iter()
                .map(|&r| self.tokenizer.tokenize(&graph.review(r).entry.title_text()))
                .collect();
            match crate::sparse::Bm25Okapi::fit(&docs, self.params) {
                Ok(bm25) => bm25.get_scores(&q.1),
                Err(Error::EmptyCorpus) => Vec::new(),
                Err(Error::EmptyVocabulary { documents }) => vec![0.0; documents],
                Err(e) => return Err(e.into()),
            }
        };
        self.query = Some(q);
        if let Some((index, &score)) = scores.iter().enumerate().find(|(_, s)| !s.is_finite()) {
            return Err(Error::NonFiniteScore {
                index,
                score,
                what: format!("BM25Okapi with {:?}", self.params),
            }
            .into());
        }
        Ok(top_k(&scores, k, self.ties))
    }

    fn is_empty_doc<G: ReviewLookup + ?Sized>(&mut self, graph: &G, r: ReviewId) -> bool {
        self.tokens(graph, r).len == 0
    }
}
