//! [`Bm25Retriever`]: BM25Okapi fitted per candidate list, behind the `Retriever` trait.

use super::okapi::{Bm25Okapi, Bm25Params};
use super::settings::{Bm25Builder, Bm25Settings};
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
    settings: Bm25Settings<Bm25Params>,
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
            settings: Bm25Settings::default(),
        }
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &T {
        &self.tokenizer
    }

    /// Scores every document (in input order) with a BM25Okapi fitted on `docs`:
    /// [`Retriever::scores`] with this crate's error.
    pub fn scores(&self, query: &str, docs: &[&str]) -> crate::Result<Vec<f64>> {
        let q = self.tokenizer.tokenize(query);
        let d: Vec<Vec<String>> = docs.iter().map(|x| self.tokenizer.tokenize(x)).collect();
        score_tokens(&q, &d, self.settings.params)
    }

    /// [`Retriever::rank`] on pre-tokenized input (the tokenizer is not used).
    pub fn rank_tokens<S: AsRef<str>, D: AsRef<[S]>>(
        &self,
        query: &[S],
        docs: &[D],
        k: Option<usize>,
    ) -> crate::Result<Vec<Scored<usize>>> {
        let scores = score_tokens(query, docs, self.settings.params)?;
        Ok(top_k(&scores, k, self.settings.ties))
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
    fn scores(&self, query: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        Ok(Bm25Retriever::scores(self, query, docs)?)
    }

    fn tie_order(&self) -> TieOrder {
        self.settings.ties
    }
}

impl<T> Bm25Builder for Bm25Retriever<T> {
    type Params = Bm25Params;
    fn settings(&self) -> &Bm25Settings<Bm25Params> {
        &self.settings
    }
    fn settings_mut(&mut self) -> &mut Bm25Settings<Bm25Params> {
        &mut self.settings
    }
}
