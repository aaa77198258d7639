//! The weak label of the context-dependent summary (paper l.100–106, Figure 2): the snippets of
//! the ranked entries most similar to the gold document's snippets, joined.
use pgraphrag_core::Retriever;

use super::doc::SNIPPET_MIN_CHARS;
use crate::{Error, Result};

/// Similarity of one snippet to each of a list of candidate snippets (higher is more similar).
///
/// One required method; [`SnippetSimilarity::matrix`] (provided: a loop) scores many. Any
/// `Fn(&str, &str) -> f64` is one (hand-made similarities in tests); [`RetrieverSimilarity`]
/// turns any [`Retriever`] into one — the paper reuses the dense retriever's embeddings
/// (l.104), which is `RetrieverSimilarity(&dense_retriever)`: `DenseRetriever` keeps the
/// candidates' embeddings in memory across the gold snippets.
pub trait SnippetSimilarity {
    /// `similarity(snippet, candidates[j])` for every `j`, in order.
    fn scores(&self, snippet: &str, candidates: &[&str]) -> Result<Vec<f64>>;

    /// [`SnippetSimilarity::scores`] of each snippet: one row per snippet.
    fn matrix(&self, snippets: &[&str], candidates: &[&str]) -> Result<Vec<Vec<f64>>> {
        snippets
            .iter()
            .map(|s| self.scores(s, candidates))
            .collect()
    }
}

impl<F: Fn(&str, &str) -> f64> SnippetSimilarity for F {
    fn scores(&self, snippet: &str, candidates: &[&str]) -> Result<Vec<f64>> {
        Ok(candidates.iter().map(|c| self(snippet, c)).collect())
    }
}

/// Any [`Retriever`] as a [`SnippetSimilarity`]: the snippet is the query, the candidates the
/// documents, their retrieval scores the similarities. A candidate the retriever does not
/// return scores `-∞` (it is still eligible, after every scored one).
///
/// ```
/// use pgraphrag_retrieval::Bm25Retriever;
/// use pgraphrag_stages::multistage::{RetrieverSimilarity, SnippetSimilarity};
/// let sim = RetrieverSimilarity(Bm25Retriever::pgraphrag());
/// let s = sim.scores("red tea", &["red tea", "green", "black coffee"]).unwrap();
/// assert!(s[0] > s[1] && s[1] == s[2]);
/// ```
#[derive(Debug, Clone)]
pub struct RetrieverSimilarity<R>(pub R);

impl<R: Retriever> SnippetSimilarity for RetrieverSimilarity<R> {
    fn scores(&self, snippet: &str, candidates: &[&str]) -> Result<Vec<f64>> {
        let ranked = self
            .0
            .rank(snippet, candidates, None)
            .map_err(|source| Error::Stage {
                stage: "snippet similarity",
                source,
            })?;
        let mut out = vec![f64::NEG_INFINITY; candidates.len()];
        for s in ranked {
            if let Some(o) = out.get_mut(s.item) {
                *o = s.score;
            }
        }
        Ok(out)
    }
}

/// A dense retriever's scores as a [`SnippetSimilarity`], with the fast path
/// [`SnippetSimilarity::matrix`]: every gold snippet and every candidate embedded once
/// (`DenseRetriever::score_matrix`). The scores equal [`RetrieverSimilarity`]`(&retriever)`'s;
/// that one ranks the candidates once per gold snippet and so re-embeds every candidate the
/// retriever has not warmed.
///
/// ```no_run
/// use pgraphrag_retrieval::dense::DenseRetriever;
/// use pgraphrag_stages::multistage::{DenseSimilarity, summary_weak_label};
/// let dense = DenseRetriever::load("models/all-MiniLM-L6-v2".as_ref()).unwrap();
/// let label = summary_weak_label(&["gold snippet"], &["a candidate", "another"], &DenseSimilarity(&dense), " ").unwrap();
/// println!("{}", label.text);
/// ```
#[cfg(feature = "dense")]
#[derive(Debug, Clone, Copy)]
pub struct DenseSimilarity<'a, E: pgraphrag_core::Encoder>(
    pub &'a pgraphrag_retrieval::dense::DenseRetriever<E>,
);

#[cfg(feature = "dense")]
impl<E: pgraphrag_core::Encoder> SnippetSimilarity for DenseSimilarity<'_, E> {
    fn scores(&self, snippet: &str, candidates: &[&str]) -> Result<Vec<f64>> {
        self.0.scores(snippet, candidates).map_err(similarity_error)
    }

    fn matrix(&self, snippets: &[&str], candidates: &[&str]) -> Result<Vec<Vec<f64>>> {
        self.0
            .score_matrix(snippets, candidates)
            .map_err(similarity_error)
    }
}

#[cfg(feature = "dense")]
fn similarity_error(e: pgraphrag_retrieval::Error) -> Error {
    Error::Stage {
        stage: "snippet similarity",
        source: e.into(),
    }
}

/// The snippets of the gold (target) document `d_t` (l.104: `s_ti ∈ d_t`): Punkt sentences
/// appended until at least 250 characters ([`pgraphrag_text::snippets`], l.72).
pub fn gold_snippets(gold: &str) -> Vec<String> {
    pgraphrag_text::snippets(gold, SNIPPET_MIN_CHARS)
}

/// The weak label `Join(L_t)` and which candidates it took.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryWeakLabel {
    /// For each gold snippet in order, the index of the candidate it selected, `None` when
    /// every candidate was used already.
    pub picks: Vec<Option<usize>>,
    /// The selected candidates `L_t` joined with the joiner, in the gold snippets' order.
    pub text: String,
}

/// The context-dependent summary's weak label (l.104–106), exactly:
///
/// 1. for each gold snippet `s_ti` in document order, score every candidate `e_j` (the
///    snippets of the ranked entries, [`super::RankedContext::snippets`]);
/// 2. take the best candidate not yet in the list `L_t`; "already in the list" compares
///    **texts**, so a candidate whose text equals a selected one's is used too (a snippet
///    repeated across past documents enters the label once); **ties** go to the earliest
///    candidate (highest-ranked entry, then position in it);
/// 3. when every candidate is used, the gold snippet selects nothing (`picks[i] = None`);
/// 4. `Join(L_t)`: the selected texts in the gold snippets' order, joined with `joiner`
///    (the paper does not say; [`super::training_records`] uses one space, so the label reads
///    as one passage).
///
/// Scores must be finite (`-∞` allowed, for a candidate a retriever skipped); a NaN or `+∞`, or
/// a row of the wrong length, is an [`Error::Similarity`] naming the gold snippet and the
/// candidate.
///
/// ```
/// use pgraphrag_stages::multistage::summary_weak_label;
/// // Similarity: the number of shared characters' positions — hand-made.
/// let sim = |a: &str, b: &str| a.chars().zip(b.chars()).filter(|(x, y)| x == y).count() as f64;
/// let gold = ["abcd", "abcd"];          // duplicate gold snippets
/// let cands = ["abcx", "abcd", "zzzz"];
/// let l = summary_weak_label(&gold, &cands, &sim, " ").unwrap();
/// assert_eq!(l.picks, [Some(1), Some(0)]); // the second takes the next best
/// assert_eq!(l.text, "abcd abcx");
/// ```
pub fn summary_weak_label(
    gold: &[&str],
    candidates: &[&str],
    similarity: &dyn SnippetSimilarity,
    joiner: &str,
) -> Result<SummaryWeakLabel> {
    let mut picks = Vec::with_capacity(gold.len());
    let mut selected: Vec<&str> = Vec::new();
    if candidates.is_empty() {
        picks.resize(gold.len(), None);
        return Ok(SummaryWeakLabel {
            picks,
            text: String::new(),
        });
    }
    let matrix = similarity.matrix(gold, candidates)?;
    if matrix.len() != gold.len() {
        return Err(Error::Similarity(format!(
            "{} rows of scores for {} gold snippets",
            matrix.len(),
            gold.len()
        )));
    }
    for (i, row) in matrix.iter().enumerate() {
        if row.len() != candidates.len() {
            return Err(Error::Similarity(format!(
                "gold snippet {i}: {} scores for {} candidates",
                row.len(),
                candidates.len()
            )));
        }
        let mut best: Option<(usize, f64)> = None;
        for (j, &s) in row.iter().enumerate() {
            if s.is_nan() || s == f64::INFINITY {
                return Err(Error::Similarity(format!(
                    "gold snippet {i} and candidate {j} scored {s}"
                )));
            }
            if selected.contains(&candidates[j]) {
                continue;
            }
            // Strictly greater: the earliest candidate wins a tie.
            if best.is_none_or(|(_, b)| s > b) {
                best = Some((j, s));
            }
        }
        picks.push(best.map(|(j, _)| j));
        if let Some((j, _)) = best {
            selected.push(candidates[j]);
        }
    }
    Ok(SummaryWeakLabel {
        picks,
        text: selected.join(joiner),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_scores_name_the_pair() {
        let nan = |_: &str, c: &str| if c == "b" { f64::NAN } else { 0.0 };
        let e = summary_weak_label(&["g"], &["a", "b"], &nan, " ").unwrap_err();
        assert!(
            e.to_string().contains("gold snippet 0 and candidate 1"),
            "{e}"
        );
        let skipped = |_: &str, c: &str| if c == "a" { f64::NEG_INFINITY } else { 1.0 };
        let l = summary_weak_label(&["g", "h"], &["a", "b"], &skipped, "|").unwrap();
        assert_eq!((l.picks, l.text.as_str()), (vec![Some(1), Some(0)], "b|a"));
    }

    #[test]
    fn no_candidates_no_label() {
        let l = summary_weak_label(&["g"], &[], &|_: &str, _: &str| 1.0, " ").unwrap();
        assert_eq!((l.picks, l.text), (vec![None], String::new()));
    }
}
