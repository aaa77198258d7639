//! The ranked entries as one string (paper l.90): "we concatenate ranked entries into a string
//! and truncate it to 2,500 characters".
use super::doc::{PastDoc, SNIPPET_MIN_CHARS};

/// The paper's length of the ranked-entries string (l.90).
pub const PAPER_MAX_CHARS: usize = 2_500;

/// What happens to the entry that does not fit whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LastEntry {
    /// It is kept up to the limit (the paper: the joined string is truncated, l.90).
    #[default]
    Cut,
    /// It is dropped, with every entry after it: only whole entries are kept.
    Drop,
}

/// How the ranked entries become one string: joined in rank order with a joiner, then cut at
/// `max_chars` characters.
///
/// * **Characters** are Unicode scalar values (Python's `len`); the joiners count.
/// * **Joiner**: a blank line (`"\n\n"`) by default. The paper does not say (l.90). A single
///   newline already separates a title from its body in the corpus builder's documents, so a
///   blank line is what shows where one entry ends; `past passages` is the last section of the
///   generation input ([`super::SECTION_SEPARATOR`] is a blank line too), so nothing after its
///   prefix is mistaken for another section.
/// * **The cut** ([`LastEntry::Cut`], the paper's truncation): entries are added whole while
///   they fit; the first one that does not is kept up to the limit and nothing after it. If the
///   limit falls inside a joiner, the string ends with the previous entry (it never ends in a
///   joiner), so every kept entry contributes at least one character. [`LastEntry::Drop`]
///   keeps whole entries only, stopping at the first that does not fit.
/// * Entries with an empty text are skipped (they would only add a joiner).
///
/// ```
/// use pgraphrag_stages::multistage::{ContextCut, LastEntry, PastEntry};
/// let e = |t: &str| PastEntry { doc: 0, snippet: None, text: t.into(), score: None };
/// let entries = vec![e("abc"), e(""), e("défg"), e("h")];
/// let cut = ContextCut::new(7).apply(entries.clone());
/// assert_eq!((cut.text.as_str(), cut.truncated, cut.dropped), ("abc\n\ndé", true, 1));
/// let whole = ContextCut::new(7).last_entry(LastEntry::Drop).apply(entries.clone());
/// assert_eq!((whole.text.as_str(), whole.entries.len(), whole.dropped), ("abc", 1, 2));
/// // The limit inside the joiner: the string ends with "abc".
/// assert_eq!(ContextCut::new(5).apply(entries).text, "abc");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextCut {
    /// The most characters of the joined string (the paper: 2,500).
    pub max_chars: usize,
    /// What goes between two entries.
    pub joiner: String,
    /// What happens to the entry that does not fit whole.
    pub last: LastEntry,
}

impl ContextCut {
    /// The paper's cut: 2,500 characters ([`PAPER_MAX_CHARS`]), entries joined by a blank
    /// line, the last one truncated.
    pub fn paper() -> ContextCut {
        ContextCut::new(PAPER_MAX_CHARS)
    }

    /// `max_chars` characters, blank-line joiner, the last entry truncated.
    pub fn new(max_chars: usize) -> ContextCut {
        ContextCut {
            max_chars,
            joiner: "\n\n".to_string(),
            last: LastEntry::Cut,
        }
    }

    /// Replaces the joiner.
    pub fn joiner(mut self, joiner: impl Into<String>) -> ContextCut {
        self.joiner = joiner.into();
        self
    }

    /// Replaces what happens to the entry that does not fit.
    pub fn last_entry(mut self, last: LastEntry) -> ContextCut {
        self.last = last;
        self
    }

    /// Joins and cuts `entries` (best first).
    pub fn apply(&self, entries: Vec<PastEntry>) -> RankedContext {
        let joiner_chars = self.joiner.chars().count();
        let total = entries.iter().filter(|e| !e.text.is_empty()).count();
        let mut room = self.max_chars;
        let mut text = String::new();
        let mut kept = Vec::new();
        let mut truncated = false;
        for mut e in entries {
            if e.text.is_empty() {
                continue;
            }
            let sep = if kept.is_empty() { 0 } else { joiner_chars };
            if room <= sep {
                break;
            }
            let left = room - sep;
            let n = e.text.chars().count();
            if n > left {
                if self.last == LastEntry::Cut {
                    let head = pgraphrag_text::first_k_chars(&e.text, left).len();
                    e.text.truncate(head);
                    if sep > 0 {
                        text.push_str(&self.joiner);
                    }
                    text.push_str(&e.text);
                    kept.push(e);
                    truncated = true;
                }
                break;
            }
            if sep > 0 {
                text.push_str(&self.joiner);
            }
            text.push_str(&e.text);
            room = left - n;
            kept.push(e);
        }
        RankedContext {
            dropped: total - kept.len(),
            entries: kept,
            text,
            truncated,
        }
    }
}

impl Default for ContextCut {
    /// [`ContextCut::paper`].
    fn default() -> Self {
        ContextCut::paper()
    }
}

/// The ranked entries `E_t` that later stages read: the kept entries (the last one possibly
/// cut) and their joined string.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedContext {
    /// The kept entries in rank order, each with the text that is in [`RankedContext::text`].
    pub entries: Vec<PastEntry>,
    /// The joined, cut string: what the `past passages` section and the summarization and
    /// synthesis stages see.
    pub text: String,
    /// Whether the last kept entry was cut.
    pub truncated: bool,
    /// Entries not kept (beyond the limit), empty ones not counted.
    pub dropped: usize,
}

impl RankedContext {
    /// The snippets `e_1 … e_R` of the kept entries, in rank order (l.104): a snippet-level
    /// entry is one snippet; a document is split with [`pgraphrag_text::snippets`] into
    /// Punkt sentences appended until at least 250 characters (l.72), a cut document as cut.
    /// The candidates of [`super::summary_weak_label`].
    ///
    /// ```
    /// use pgraphrag_stages::multistage::{ContextCut, PastEntry};
    /// let doc = PastEntry { doc: 0, snippet: None, text: "One. Two.".into(), score: None };
    /// let snip = PastEntry { doc: 1, snippet: Some(3), text: "Three. Four.".into(), score: None };
    /// let r = ContextCut::paper().apply(vec![doc, snip]);
    /// assert_eq!(r.snippets(), ["One. Two.", "Three. Four."]);
    /// ```
    pub fn snippets(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in &self.entries {
            if e.snippet.is_some() {
                out.push(e.text.clone());
            } else {
                out.extend(pgraphrag_text::snippets(&e.text, SNIPPET_MIN_CHARS));
            }
        }
        out
    }
}

/// One ranked entry `e ∈ E_t`: a whole past document, or one snippet of it.
#[derive(Debug, Clone, PartialEq)]
pub struct PastEntry {
    /// Index of its document in the `past` slice the ranker was given.
    pub doc: usize,
    /// Index of the snippet within its document, for snippet-level rankers (`RankSnippet`);
    /// `None` for a whole document.
    pub snippet: Option<usize>,
    /// The entry's text (after [`ContextCut`], possibly a prefix of it).
    pub text: String,
    /// The ranker's score, higher is better; `None` for [`super::RecentDoc`], which does not
    /// score.
    pub score: Option<f64>,
}

/// A whole document as an entry.
pub(super) fn whole(past: &[PastDoc], i: usize, score: Option<f64>) -> PastEntry {
    PastEntry {
        doc: i,
        snippet: None,
        text: past[i].text.clone(),
        score,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(t: &str) -> PastEntry {
        PastEntry {
            doc: 0,
            snippet: None,
            text: t.to_string(),
            score: None,
        }
    }

    #[test]
    fn the_string_never_exceeds_the_limit() {
        let entries: Vec<PastEntry> = ["ab", "çdé", "", "fghij", "k"]
            .iter()
            .map(|t| entry(t))
            .collect();
        for joiner in ["", "\n", " | "] {
            for last in [LastEntry::Cut, LastEntry::Drop] {
                for max in 0..20 {
                    let c = ContextCut::new(max).joiner(joiner).last_entry(last);
                    let r = c.apply(entries.clone());
                    assert!(r.text.chars().count() <= max);
                    assert!(joiner.is_empty() || !r.text.ends_with(joiner));
                    let joined: Vec<&str> = r.entries.iter().map(|e| e.text.as_str()).collect();
                    assert_eq!(r.text, joined.join(joiner));
                    assert_eq!(r.entries.len() + r.dropped + 1, 5, "{max} {joiner:?}");
                    assert!(r.entries.iter().all(|e| !e.text.is_empty()));
                }
            }
        }
    }
}
