//! What the stages read: an author's past document, and the snippet length they cut at.
use serde::{Deserialize, Serialize};

/// The paper's minimum snippet length in characters (l.72): sentences are appended until a
/// snippet has at least this many characters or the document ends. The same constant as
/// `pgraphrag_retrieval::dense::SNIPPET_MIN_CHARS` (re-exported from there with the `dense`
/// feature).
#[cfg(feature = "dense")]
pub use pgraphrag_retrieval::dense::SNIPPET_MIN_CHARS;
/// The paper's minimum snippet length in characters (l.72): sentences are appended until a
/// snippet has at least this many characters or the document ends (the value of
/// `pgraphrag_retrieval::dense::SNIPPET_MIN_CHARS`, which needs the `dense` feature).
#[cfg(not(feature = "dense"))]
pub const SNIPPET_MIN_CHARS: usize = 250;

/// One of the author's past documents `d_i ∈ D_t`: an id, a time (unix seconds; only its order
/// matters, for [`super::RecentDoc`] and for ties) and its text (title and body as the corpus builder
/// wrote them). Serialises as `{"doc_id", "time", "text"}`, the builder's `context` entries.
///
/// ```
/// let d: pgraphrag_stages::multistage::PastDoc =
///     serde_json::from_str(r#"{"doc_id":"m/1","time":1030015585,"text":"Hi all"}"#).unwrap();
/// assert_eq!((d.doc_id.as_str(), d.time), ("m/1", 1030015585));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PastDoc {
    /// The document's id.
    pub doc_id: String,
    /// When it was written (unix seconds).
    pub time: i64,
    /// Its text.
    pub text: String,
}

/// Indices of `past`, most recent first (`time` descending); documents with equal times keep
/// their order in `past`.
///
/// ```
/// use pgraphrag_stages::multistage::{PastDoc, recency_order};
/// let past = [PastDoc::new("a", 5, ""), PastDoc::new("b", 9, ""), PastDoc::new("c", 5, "")];
/// assert_eq!(recency_order(&past), [1, 0, 2]);
/// ```
pub fn recency_order(past: &[PastDoc]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..past.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(past[i].time));
    order
}
