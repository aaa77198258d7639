//! [`Bm25Retriever`]: BM25Okapi fitted per candidate list, behind the `Retriever` trait.

use super::okapi::{Bm25Okapi, Bm25Params};
use super::tokenize::{PgraphragTokenizer, PythonSplit, Tokenizer};
use crate::Error;
use pgraphrag_core::{Retriever, Scored};
use pgraphrag_core::{TieOrder, top_k};

/// Ranks candidates with a fresh [`Bm25Okapi`] fitted on the candidate list alone, as the
/// PGraphRAG notebook and LaMP's `rank_profiles.py` do (idf comes from the candidates).
///
/// * `docs` empty: returns an empty ranking.
/// * every candidate tokenizes to nothing: rank_bm25 would raise `ZeroDivisionError`; here
///   every candidate scores 0 (no query term can match) and they are returned in tie order.
/// * an empty query scores every candidate 0.
/// * a non-finite score (only possible with unusual parameters such as `k1 = 0`) is an
///   [`Error::NonFiniteScore`].
///
/// ```
/// use pgraphrag_core::Retriever;
/// use pgraphrag_retrieval::sparse::Bm25Retriever;
///
/// let docs = ["the cat sat", "a dog barked", "cat and dog"];
/// let top = Bm25Retriever::lamp().rank("cat", &docs, Some(2)).unwrap();
/// assert_eq!(top.iter().map(|s| s.item).collect::<Vec<_>>(), vec![2, 0]);
/// ```
#[derive(Debug, Clone)]
pub struct Bm25Retriever<T = PgraphragTokenizer> {
    tokenizer: T,
    params: Bm25Params,
    ties: TieOrder,
}

impl Bm25Retriever<PgraphragTokenizer> {
    /// PGraphRAG's retriever: `nltk.word_tokenize(text.lower())`, default parameters,
    /// `np.argsort(scores)[::-1]` tie order.
    pub fn pgraphrag() -> Self {
        Bm25Retriever::new(PgraphragTokenizer)
    }
}

impl Bm25Retriever<PythonSplit> {
    /// LaMP's retriever: `str.split()`, default parameters, `np.argsort(scores)[::-1]` tie
    /// order (what `get_top_n` uses).
    pub fn lamp() -> Self {
        Bm25Retriever::new(PythonSplit)
    }
}

impl<T: Tokenizer> Bm25Retriever<T> {
    /// A retriever with `tokenizer`, [`Bm25Params::default`] and
    /// [`TieOrder::NumpyReversedArgsort`].
    pub fn new(tokenizer: T) -> Self {
        Bm25Retriever {
            tokenizer,
            params: Bm25Params::default(),
            ties: TieOrder::default(),
        }
    }

    /// Replaces the BM25 parameters.
    pub fn with_params(mut self, params: Bm25Params) -> Self {
        self.params = params;
        self
    }

    /// Replaces the tie order.
    pub fn with_tie_order(mut self, ties: TieOrder) -> Self {
        self.ties = ties;
        self
    }

    /// The BM25 parameters.
    pub fn params(&self) -> Bm25Params {
        self.params
    }

    /// The tie order.
    pub fn tie_order(&self) -> TieOrder {
        self.ties
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &T {
        &self.tokenizer
    }

    /// Scores every document (in input order) with a BM25Okapi fitted on `docs`.
    pub fn scores(&self, query: &str, docs: &[&str]) -> crate::Result<Vec<f64>> {
        let q = self.tokenizer.tokenize(query);
        let d: Vec<Vec<String>> = docs.iter().map(|x| self.tokenizer.tokenize(x)).collect();
        score_tokens(&q, &d, self.params)
    }

    /// [`Retriever::rank`] on pre-tokenized input (the tokenizer is not used).
    pub fn rank_tokens<S: AsRef<str>, D: AsRef<[S]>>(
        &self,
        query: &[S],
        docs: &[D],
        k: Option<usize>,
    ) -> crate::Result<Vec<Scored<usize>>> {
        let scores = score_tokens(query, docs, self.params)?;
        Ok(top_k(&scores, k, self.ties))
    }
}

/// Fits on `docs` and scores; empty corpus -> no scores, empty vocabulary -> zeros.
fn score_tokens<S: AsRef<str>, D: AsRef<[S]>, Q: AsRef<str>>(
    query: &[Q],
    docs: &[D],
    params: Bm25Params,
) -> crate::Result<Vec<f64>> {
    let scores = match Bm25Okapi::fit(docs, params) {
        Ok(bm25) => bm25.get_scores(query),
        Err(Error::EmptyCorpus) => Vec::new(),
        Err(Error::EmptyVocabulary { documents }) => vec![0.0; documents],
        Err(e) => return Err(e),
    };
    if let Some((index, &score)) = scores.iter().enumerate().find(|(_, s)| !s.is_finite()) {
        return Err(Error::NonFiniteScore {
            index,
            score,
            what: format!("BM25Okapi with {params:?}"),
        });
    }
    Ok(scores)
}

impl<T: Tokenizer> Retriever for Bm25Retriever<T> {
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
