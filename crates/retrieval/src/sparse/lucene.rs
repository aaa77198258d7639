//! [`Bm25Lucene`]: Lucene-weighted BM25 through the `bm25` crate.

use super::settings::{Bm25Builder, Bm25Settings, LuceneParams};
use super::tokenize::{PgraphragTokenizer, Tokenizer};
use crate::Error;
use pgraphrag_core::{Retriever, TieOrder};

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
    settings: Bm25Settings<LuceneParams>,
}

impl<T: Tokenizer + Sync> Bm25Lucene<T> {
    /// Lucene BM25 with `tokenizer`, [`LuceneParams::default`] (`k1 = 1.2`, `b = 0.75`),
    /// [`TieOrder::NumpyReversedArgsort`].
    pub fn new(tokenizer: T) -> Self {
        Bm25Lucene {
            tokenizer,
            settings: Bm25Settings::default(),
        }
    }

    /// Lucene BM25 scores of every document, in input order (0 for documents without a query
    /// term): [`Retriever::scores`] with this crate's error.
    pub fn scores(&self, query: &str, docs: &[&str]) -> crate::Result<Vec<f64>> {
        let LuceneParams { k1, b } = self.settings.params;
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        let tok = Adapter(&self.tokenizer);
        let embedder =
            bm25::EmbedderBuilder::<u64, Adapter<'_, T>>::with_tokenizer_and_fit_to_corpus(
                tok, docs,
            )
            .k1(k1)
            .b(b)
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
                    what: format!("Lucene BM25 with k1={k1} b={b}"),
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
    fn scores(&self, query: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        Ok(Bm25Lucene::scores(self, query, docs)?)
    }

    fn tie_order(&self) -> TieOrder {
        self.settings.ties
    }
}

impl<T> Bm25Builder for Bm25Lucene<T> {
    type Params = LuceneParams;
    fn settings(&self) -> &Bm25Settings<LuceneParams> {
        &self.settings
    }
    fn settings_mut(&mut self) -> &mut Bm25Settings<LuceneParams> {
        &mut self.settings
    }
}
