//! [`Bm25Lucene`]: Lucene-weighted BM25 through the `bm25` crate.

use super::tokenize::{PgraphragTokenizer, Tokenizer};
use crate::Error;
use pgraphrag_core::{Retriever, Scored};
use pgraphrag_core::{TieOrder, top_k};

/// Lucene's BM25 (`BM25Similarity`): idf `ln(1 + (N - n + 0.5) / (n + 0.5))` (never negative,
/// no epsilon floor), term weight `f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl))`, with
/// Lucene's defaults `k1 = 1.2`, `b = 0.75`. Computed by the `bm25` crate (v2.3.2) in `f32`,
/// fitted on the candidate list alone, tokens hashed to 64 bits (`Embedder<u64, _>`).
///
/// Scores are returned as `f64` but carry `f32` precision.
///
/// ```
/// use pgraphrag_core::Retriever;
/// use pgraphrag_retrieval::sparse::{Bm25Lucene, PythonSplit};
///
/// let docs = ["the cat sat", "a dog barked", "cat and dog"];
/// let top = Bm25Lucene::new(PythonSplit).rank("cat", &docs, None).unwrap();
/// assert_eq!(top.len(), 3);
/// assert_eq!(top[2].score, 0.0);
/// ```
#[derive(Debug, Clone)]
pub struct Bm25Lucene<T = PgraphragTokenizer> {
    tokenizer: T,
    k1: f32,
    b: f32,
    ties: TieOrder,
}

impl<T: Tokenizer + Sync> Bm25Lucene<T> {
    /// Lucene BM25 with `tokenizer`, `k1 = 1.2`, `b = 0.75`, [`TieOrder::NumpyReversedArgsort`].
    pub fn new(tokenizer: T) -> Self {
        Bm25Lucene {
            tokenizer,
            k1: 1.2,
            b: 0.75,
            ties: TieOrder::default(),
        }
    }

    /// Replaces `k1` and `b`.
    pub fn with_params(mut self, k1: f32, b: f32) -> Self {
        self.k1 = k1;
        self.b = b;
        self
    }

    /// Replaces the tie order.
    pub fn with_tie_order(mut self, ties: TieOrder) -> Self {
        self.ties = ties;
        self
    }

    /// Lucene BM25 scores of every document, in input order (0 for documents without a query
    /// term).
    pub fn scores(&self, query: &str, docs: &[&str]) -> crate::Result<Vec<f64>> {
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        let tok = Adapter(&self.tokenizer);
        let embedder =
            bm25::EmbedderBuilder::<u64, Adapter<'_, T>>::with_tokenizer_and_fit_to_corpus(
                tok, docs,
            )
            .k1(self.k1)
            .b(self.b)
            .build();
        let mut scorer = bm25::Scorer::<usize, u64>::new();
        for (i, d) in docs.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(d));
        }
        let q = embedder.embed(query);
        let mut out = Vec::with_capacity(docs.len());
        for i in 0..docs.len() {
            let s = f64::from(scorer.score(&i, &q).unwrap_or(0.0));
            if !s.is_finite() {
                return Err(Error::NonFiniteScore {
                    index: i,
                    score: s,
                    what: format!("Lucene BM25 with k1={} b={}", self.k1, self.b),
                });
            }
            out.push(s);
        }
        Ok(out)
    }
}

/// Lends our tokenizer to the `bm25` crate.
struct Adapter<'a, T>(&'a T);

impl<T: Tokenizer> bm25::Tokenizer for Adapter<'_, T> {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        self.0.tokenize(input_text)
    }
}

impl<T: Tokenizer + Sync> Retriever for Bm25Lucene<T> {
    fn rank(
        &self,
        query: &str,
        docs: &[&str],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
        let scores = self.scores(query, docs)?;
        Ok(top_k(&scores, k, self.ties))
    }
}
