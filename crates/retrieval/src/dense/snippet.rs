//! Snippet-level ranking from the multistage writing paper (Li et al., arXiv 2308.07968,
//! §3.2): `RankSnippet`, `RankDocDense` and `RankDocBySnpt`.

use pgraphrag_core::{Retriever, Scored};

use super::retriever::{DenseRetriever, finite};

/// The paper's minimum snippet length in characters: sentences are appended until a snippet
/// has at least this many characters or the document ends.
pub const SNIPPET_MIN_CHARS: usize = 250;

/// `RankDocDense`: documents ranked by a dense retriever at document level (an alias).
pub type RankDocDense = DenseRetriever;

/// `RankDocBySnpt`: a document scores its best snippet's score (an alias of
/// [`SnippetRanker`], whose [`Retriever`] impl does exactly that).
pub type RankDocBySnpt<R> = SnippetRanker<R>;

/// Splits a document into snippets: `(text, min_chars) -> snippets`.
pub type Splitter = fn(&str, usize) -> Vec<String>;

/// One ranked snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnippetHit {
    /// Index of its document in the `docs` passed in.
    pub doc: usize,
    /// Index of the snippet within its document.
    pub snippet: usize,
    /// The snippet text.
    pub text: String,
}

/// Snippet ranking over any [`Retriever`] (the paper uses a dense one).
///
/// * [`SnippetRanker::rank_snippets`] is `RankSnippet`: all snippets of all documents ranked
///   against the query.
/// * The [`Retriever`] impl is `RankDocBySnpt`: `score(d_i) = max_j score(s_ij, x)`.
///
/// Documents are split with [`pgraphrag_text::snippets`] (Punkt sentences appended until at
/// least [`SNIPPET_MIN_CHARS`] characters) unless another [`Splitter`] is given. A document
/// that yields no snippet (an empty text) is one snippet: itself.
///
/// ```
/// use pgraphrag_core::Retriever;
/// use pgraphrag_retrieval::dense::SnippetRanker;
/// // A toy inner retriever: scores a text by how often it contains "x".
/// struct CountX;
/// impl Retriever for CountX {
///     fn scores(&self, _q: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
///         Ok(docs.iter().map(|d| d.matches('x').count() as f64).collect())
///     }
/// }
/// fn by_line(t: &str, _min: usize) -> Vec<String> { t.lines().map(String::from).collect() }
/// let r = SnippetRanker::new(CountX).splitter(by_line);
/// let docs = ["a\nxxx", "xx\nxx"];
/// assert_eq!(r.rank("q", &docs, None).unwrap()[0].item, 0); // best snippet 3 beats 2
/// assert_eq!(r.rank_snippets("q", &docs, Some(1)).unwrap()[0].item.text, "xxx");
/// ```
pub struct SnippetRanker<R> {
    inner: R,
    min_chars: usize,
    splitter: Splitter,
}

impl<R: std::fmt::Debug> std::fmt::Debug for SnippetRanker<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnippetRanker")
            .field("inner", &self.inner)
            .field("min_chars", &self.min_chars)
            .finish()
    }
}

impl<R: Retriever> SnippetRanker<R> {
    /// Wraps `inner` with the paper's settings (250 characters, Punkt sentences).
    pub fn new(inner: R) -> Self {
        SnippetRanker {
            inner,
            min_chars: SNIPPET_MIN_CHARS,
            splitter: pgraphrag_text::snippets,
        }
    }
    /// Sets the minimum snippet length in characters.
    pub fn min_chars(mut self, n: usize) -> Self {
        self.min_chars = n;
        self
    }
    /// Replaces the splitter.
    pub fn splitter(mut self, f: Splitter) -> Self {
        self.splitter = f;
        self
    }
    /// The inner retriever.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// All snippets of `docs`, document by document.
    pub fn split(&self, docs: &[&str]) -> Vec<SnippetHit> {
        let mut out = Vec::new();
        for (d, text) in docs.iter().enumerate() {
            let mut s = (self.splitter)(text, self.min_chars);
            if s.is_empty() {
                s.push(text.to_string());
            }
            out.extend(s.into_iter().enumerate().map(|(j, t)| SnippetHit {
                doc: d,
                snippet: j,
                text: t,
            }));
        }
        out
    }

    /// `RankSnippet`: the best `k` snippets of all documents, best first.
    pub fn rank_snippets(
        &self,
        query: &str,
        docs: &[&str],
        k: Option<usize>,
    ) -> pgraphrag_core::Result<Vec<Scored<SnippetHit>>> {
        let snippets = self.split(docs);
        let texts: Vec<&str> = snippets.iter().map(|s| s.text.as_str()).collect();
        let ranked = self.inner.rank(query, &texts, k)?;
        Ok(ranked
            .into_iter()
            .filter_map(|s| {
                snippets
                    .get(s.item)
                    .map(|h| Scored::new(h.clone(), s.score))
            })
            .collect())
    }
}

/// Ranks with ties in input order (the trait's default).
impl<R: Retriever> Retriever for SnippetRanker<R> {
    /// `RankDocBySnpt`: each document scores its best snippet's score.
    fn scores(&self, query: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        let all = self.rank_snippets(query, docs, None)?;
        let mut best = vec![f64::NEG_INFINITY; docs.len()];
        for s in &all {
            if s.score > best[s.item.doc] {
                best[s.item.doc] = s.score;
            }
        }
        // A document whose snippets the inner retriever did not return at all scores last.
        let floor = best
            .iter()
            .copied()
            .filter(|s| s.is_finite())
            .fold(0.0f64, f64::min)
            - 1.0;
        let best: Vec<f64> = best
            .into_iter()
            .map(|s| if s.is_finite() { s } else { floor })
            .collect();
        finite(best)
    }
}

/// Reciprocal-rank fusion of two retrievers (Cormack et al. 2009): each document scores
/// `Σ 1 / (k + rank)` over the two rankings (rank from 1; a document absent from a ranking
/// adds nothing), `k = 60` by default. Typically BM25 with a dense retriever.
///
/// ```
/// use pgraphrag_core::Retriever;
/// use pgraphrag_retrieval::dense::Rrf;
/// /// Ranks the documents in a fixed order: document `order[r]` scores `-r`.
/// struct Fixed(Vec<usize>);
/// impl Retriever for Fixed {
///     fn scores(&self, _q: &str, d: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
///         let mut s = vec![0.0; d.len()];
///         for (r, &i) in self.0.iter().enumerate() {
///             s[i] = -(r as f64);
///         }
///         Ok(s)
///     }
/// }
/// let fused = Rrf::new(Fixed(vec![0, 1, 2]), Fixed(vec![2, 1, 0]));
/// let top = fused.rank("q", &["a", "b", "c"], None).unwrap();
/// // Documents 0 and 2 score 1/61 + 1/63, which beats document 1's 2/62 (1/x is convex).
/// assert_eq!(top[2].item, 1);
/// ```
#[derive(Debug, Clone)]
pub struct Rrf<A, B> {
    /// The first retriever.
    pub a: A,
    /// The second retriever.
    pub b: B,
    /// The rank offset `k` (default 60).
    pub k: f64,
}

impl<A: Retriever, B: Retriever> Rrf<A, B> {
    /// Fuses `a` and `b` with `k = 60`.
    pub fn new(a: A, b: B) -> Self {
        Rrf { a, b, k: 60.0 }
    }
    /// Sets the rank offset `k`.
    pub fn with_k(mut self, k: f64) -> Self {
        self.k = k;
        self
    }
}

/// Ranks with ties in input order (the trait's default).
impl<A: Retriever, B: Retriever> Retriever for Rrf<A, B> {
    fn scores(&self, query: &str, docs: &[&str]) -> pgraphrag_core::Result<Vec<f64>> {
        if !(self.k.is_finite() && self.k >= 0.0) {
            return Err(crate::Error::InvalidInput(format!(
                "RRF k must be finite and non-negative, got {}",
                self.k
            ))
            .into());
        }
        let rankings = [
            self.a.rank(query, docs, None)?,
            self.b.rank(query, docs, None)?,
        ];
        Ok(crate::scoring::rrf_scores(docs.len(), &rankings, self.k))
    }
}
