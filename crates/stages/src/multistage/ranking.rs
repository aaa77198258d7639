//! The ranking stage `E_t = Ra(Re(x_t, D_t))` (paper l.55, 78–90, 200): the author's past
//! documents, or their snippets, ranked against the immediate context.
use pgraphrag_core::{Retriever, Scored, TieOrder};
#[cfg(feature = "dense")]
use pgraphrag_retrieval::dense::SnippetRanker;
use pgraphrag_retrieval::{Bm25Builder, Bm25Retriever};

use super::doc::PastDoc;
use super::doc::recency_order;
use super::entries::{ContextCut, PastEntry, RankedContext, whole};
use crate::{Error, Result};

/// Ranks the author's past documents `D_t` against the immediate context `x_t`.
///
/// One required method, [`ContextRanker::rank`] (every entry, best first); the provided
/// [`ContextRanker::ranked_context`] joins them and cuts the string at 2,500 characters
/// ([`ContextCut`]), and may be overridden by a ranker that can stop early.
///
/// **Ties.** Every ranker of this module hands the documents to its retriever most recent
/// first ([`recency_order`]) and the retrievers keep that order among equal scores
/// ([`TieOrder::InputOrder`]), so among equally scored documents (a BM25 query that shares no
/// word with them, say) the more recent one ranks first. A retriever with another tie order
/// (e.g. `Bm25Retriever::pgraphrag()`, numpy's reversed argsort) keeps its own.
///
/// ```
/// use pgraphrag_stages::multistage::{ContextCut, ContextRanker, PastDoc, RankDocBM25};
/// let past = [
///     PastDoc::new("a", 1, "I baked sourdough bread."),
///     PastDoc::new("b", 2, "My garden tomatoes."),
///     PastDoc::new("c", 3, "Rye bread, again."),
/// ];
/// let ranked = RankDocBM25::bm25().rank("bread for breakfast", &past).unwrap();
/// assert_eq!(ranked.iter().map(|e| e.doc).collect::<Vec<_>>(), [2, 0, 1]);
/// let cut = RankDocBM25::bm25().ranked_context("bread", &past, &ContextCut::new(30)).unwrap();
/// assert_eq!(cut.text, "Rye bread, again.\n\nI baked sou");
/// ```
pub trait ContextRanker {
    /// Every entry of `past` (documents or snippets) ranked against `context`, best first.
    /// An empty `past` gives no entries.
    fn rank(&self, context: &str, past: &[PastDoc]) -> Result<Vec<PastEntry>>;

    /// The ranked entries joined and cut by `cut` (the paper: 2,500 characters, l.90).
    fn ranked_context(
        &self,
        context: &str,
        past: &[PastDoc],
        cut: &ContextCut,
    ) -> Result<RankedContext> {
        Ok(cut.apply(self.rank(context, past)?))
    }
}

impl<T: ContextRanker + ?Sized> ContextRanker for &T {
    fn rank(&self, context: &str, past: &[PastDoc]) -> Result<Vec<PastEntry>> {
        (**self).rank(context, past)
    }
    fn ranked_context(
        &self,
        context: &str,
        past: &[PastDoc],
        cut: &ContextCut,
    ) -> Result<RankedContext> {
        (**self).ranked_context(context, past, cut)
    }
}

impl<T: ContextRanker + ?Sized> ContextRanker for Box<T> {
    fn rank(&self, context: &str, past: &[PastDoc]) -> Result<Vec<PastEntry>> {
        (**self).rank(context, past)
    }
    fn ranked_context(
        &self,
        context: &str,
        past: &[PastDoc],
        cut: &ContextCut,
    ) -> Result<RankedContext> {
        (**self).ranked_context(context, past, cut)
    }
}

/// Document-level ranking by any [`Retriever`]: `RankDocBM25` with BM25 ([`RankDocBM25`]),
/// `RankDocDense` with a dense retriever, `RankDocBySnpt` with
/// `pgraphrag_retrieval::dense::SnippetRanker` (a document scores its best snippet, l.88).
///
/// The retriever ranks the documents' texts, handed over most recent first, for the
/// immediate context as the query (l.65) and returns all of them (`k = None`; the cut decides
/// how many are used). A retriever that returns fewer documents ranks only those; one that
/// returns an index out of range, an index twice or a non-finite score is an
/// [`Error::Ranking`], naming it.
#[derive(Debug, Clone)]
pub struct RankDocs<R> {
    retriever: R,
}

/// `RankDocBM25` (l.80): documents ranked by BM25 scores. [`RankDocBM25::bm25`] is BM25Okapi
/// identical to rank_bm25 over `nltk.word_tokenize(text.lower())` tokens (PGraphRAG's
/// tokenizer), fitted on the author's past documents, ties in input order (most recent first).
pub type RankDocBM25 = RankDocs<Bm25Retriever>;

/// `RankDocDense` (l.82): documents ranked by the similarity of their embeddings with the
/// immediate context's (the paper's GTR-Large; any [`pgraphrag_core::Encoder`] here, e.g.
/// `DenseRetriever::load(minilm)`).
#[cfg(feature = "dense")]
#[cfg_attr(docsrs, doc(cfg(feature = "dense")))]
pub type RankDocDense<E = pgraphrag_retrieval::dense::BertEncoder> =
    RankDocs<pgraphrag_retrieval::dense::DenseRetriever<E>>;

/// `RankDocBySnpt` (l.88): documents ranked by their best snippet,
/// `score(d_i, x_t) = max_j score(s_ij, x_t)`, with any inner retriever (dense in the paper).
#[cfg(feature = "dense")]
#[cfg_attr(docsrs, doc(cfg(feature = "dense")))]
pub type RankDocBySnpt<R> = RankDocs<SnippetRanker<R>>;

impl<R> RankDocs<R> {
    /// Ranks documents with `retriever`.
    pub fn new(retriever: R) -> RankDocs<R> {
        RankDocs { retriever }
    }

    /// The retriever.
    pub fn retriever(&self) -> &R {
        &self.retriever
    }
}

impl RankDocs<Bm25Retriever> {
    /// BM25Okapi (rank_bm25) over PGraphRAG's tokens (`nltk.word_tokenize(text.lower())`), ties
    /// in input order: the paper's sparse ranker.
    pub fn bm25() -> RankDocBM25 {
        RankDocs::new(Bm25Retriever::pgraphrag().with_tie_order(TieOrder::InputOrder))
    }
}

impl Default for RankDocBM25 {
    /// [`RankDocBM25::bm25`].
    fn default() -> Self {
        RankDocs::bm25()
    }
}

#[cfg(feature = "dense")]
impl<R: Retriever> RankDocs<SnippetRanker<R>> {
    /// `RankDocBySnpt` over `inner` with the paper's snippets (Punkt sentences appended until at
    /// least 250 characters).
    pub fn by_snippets(inner: R) -> RankDocBySnpt<R> {
        RankDocs::new(SnippetRanker::new(inner))
    }
}

impl<R: Retriever> ContextRanker for RankDocs<R> {
    fn rank(&self, context: &str, past: &[PastDoc]) -> Result<Vec<PastEntry>> {
        if past.is_empty() {
            return Ok(Vec::new());
        }
        let (order, texts) = recent_texts(past);
        let ranked = self
            .retriever
            .rank(context, &texts, None)
            .map_err(ranking_error)?;
        check_ranking(&ranked, texts.len(), |s| s.item)?;
        Ok(ranked
            .into_iter()
            .map(|s| whole(past, order[s.item], Some(s.score)))
            .collect())
    }
}

/// Indices in range, each once, scores finite.
fn check_ranking<T>(
    ranked: &[Scored<T>],
    n: usize,
    index: impl Fn(&Scored<T>) -> usize,
) -> Result<()> {
    let mut seen = vec![false; n];
    for s in ranked {
        let i = index(s);
        let problem = if i >= n {
            format!("returned document {i} of {n}")
        } else if seen[i] {
            format!("returned document {i} twice")
        } else if !s.score.is_finite() {
            format!("gave document {i} the score {}", s.score)
        } else {
            seen[i] = true;
            continue;
        };
        return Err(Error::Ranking(problem));
    }
    Ok(())
}

/// `RankSnippet` (l.84): the snippets of all past documents ranked by their own scores (dense in
/// the paper), over `pgraphrag_retrieval::dense::SnippetRanker`. Each entry is one snippet
/// ([`PastEntry::snippet`] is its position in its document); ties between snippets keep
/// document recency, then position.
///
/// ```
/// use pgraphrag_core::{Result, Retriever};
/// use pgraphrag_stages::multistage::{ContextRanker, PastDoc, RankSnippet};
/// /// Scores a text by how often it says "tea".
/// struct Tea;
/// impl Retriever for Tea {
///     fn scores(&self, _q: &str, docs: &[&str]) -> Result<Vec<f64>> {
///         Ok(docs.iter().map(|d| d.matches("tea").count() as f64).collect())
///     }
/// }
/// let long = format!("{} I like tea, tea and more tea.", "Filler sentence here. ".repeat(12));
/// let past = [PastDoc::new("a", 1, long)];
/// let e = RankSnippet::new(Tea).rank("tea?", &past).unwrap();
/// assert_eq!((e[0].doc, e[0].snippet), (0, Some(1)));
/// assert_eq!(e[0].text, "I like tea, tea and more tea.");
/// ```
#[cfg(feature = "dense")]
#[cfg_attr(docsrs, doc(cfg(feature = "dense")))]
#[derive(Debug)]
pub struct RankSnippet<R> {
    ranker: SnippetRanker<R>,
}

#[cfg(feature = "dense")]
impl<R: Retriever> RankSnippet<R> {
    /// Snippets of the paper (Punkt sentences appended until at least 250 characters, l.72)
    /// ranked by `inner`.
    pub fn new(inner: R) -> RankSnippet<R> {
        RankSnippet::from_ranker(SnippetRanker::new(inner))
    }

    /// Over a configured snippet ranker (another snippet length or splitter).
    pub fn from_ranker(ranker: SnippetRanker<R>) -> RankSnippet<R> {
        RankSnippet { ranker }
    }

    /// The snippet ranker.
    pub fn ranker(&self) -> &SnippetRanker<R> {
        &self.ranker
    }
}

#[cfg(feature = "dense")]
impl<R: Retriever> ContextRanker for RankSnippet<R> {
    fn rank(&self, context: &str, past: &[PastDoc]) -> Result<Vec<PastEntry>> {
        if past.is_empty() {
            return Ok(Vec::new());
        }
        let (order, texts) = recent_texts(past);
        let ranked = self
            .ranker
            .rank_snippets(context, &texts, None)
            .map_err(ranking_error)?;
        if let Some(s) = ranked.iter().find(|s| !s.score.is_finite()) {
            return Err(Error::Ranking(format!(
                "gave snippet {} of document {} the score {}",
                s.item.snippet, s.item.doc, s.score
            )));
        }
        Ok(ranked
            .into_iter()
            .map(|s| PastEntry {
                doc: order[s.item.doc],
                snippet: Some(s.item.snippet),
                text: s.item.text,
                score: Some(s.score),
            })
            .collect())
    }
}

/// The past documents' order as every ranker hands them over (most recent first, equal times
/// in input order) and their texts in that order.
fn recent_texts(past: &[PastDoc]) -> (Vec<usize>, Vec<&str>) {
    let order = recency_order(past);
    let texts = order.iter().map(|&i| past[i].text.as_str()).collect();
    (order, texts)
}

fn ranking_error(source: pgraphrag_core::Error) -> Error {
    Error::Stage {
        stage: "ranking",
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns a fixed (possibly broken) ranking: an implementation whose `rank` override
    /// breaks the trait's promises, which [`RankDocs`] must catch.
    struct Fixed(Vec<(usize, f64)>);
    impl Retriever for Fixed {
        fn scores(&self, _q: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
            Ok(vec![0.0; docs.len()])
        }
        fn rank(
            &self,
            _q: &str,
            _docs: &[&str],
            _k: Option<usize>,
        ) -> pgraphrag_core::Result<Vec<Scored<usize>>> {
            Ok(self.0.iter().map(|&(i, s)| Scored::new(i, s)).collect())
        }
    }

    fn past() -> Vec<PastDoc> {
        vec![PastDoc::new("old", 1, "old"), PastDoc::new("new", 2, "new")]
    }

    #[test]
    fn indices_map_back_through_recency() {
        // The retriever sees ["new", "old"]: its item 1 is past[0].
        let e = RankDocs::new(Fixed(vec![(1, 2.0), (0, 1.0)]))
            .rank("q", &past())
            .unwrap();
        assert_eq!((e[0].doc, e[0].text.as_str()), (0, "old"));
        assert_eq!(e[1].score, Some(1.0));
    }

    #[test]
    fn broken_rankings_are_errors() {
        for (bad, what) in [
            (vec![(2, 1.0)], "document 2 of 2"),
            (vec![(0, 1.0), (0, 0.5)], "twice"),
            (vec![(0, f64::NAN)], "score NaN"),
        ] {
            let e = RankDocs::new(Fixed(bad)).rank("q", &past()).unwrap_err();
            assert!(e.to_string().contains(what), "{e}");
        }
        assert!(
            RankDocs::new(Fixed(vec![]))
                .rank("q", &[])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn bm25_ties_go_to_the_most_recent() {
        let past = [
            PastDoc::new("a", 1, "alpha"),
            PastDoc::new("b", 3, "beta"),
            PastDoc::new("c", 2, "gamma"),
        ];
        let e = RankDocBM25::bm25().rank("nothing shared", &past).unwrap();
        assert_eq!(e.iter().map(|e| e.doc).collect::<Vec<_>>(), [1, 2, 0]);
    }
}
