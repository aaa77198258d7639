//! Tokenizers for sparse retrieval.

/// Splits a text into tokens. Implemented for closures `Fn(&str) -> Vec<String>`.
///
/// ```
/// use pgraphrag_retrieval::sparse::Tokenizer;
/// let upper = |s: &str| s.split(' ').map(str::to_uppercase).collect::<Vec<_>>();
/// assert_eq!(upper.tokenize("a b"), vec!["A", "B"]);
/// ```
pub trait Tokenizer {
    /// The tokens of `text`, in order.
    fn tokenize(&self, text: &str) -> Vec<String>;
}

impl<F: Fn(&str) -> Vec<String>> Tokenizer for F {
    fn tokenize(&self, text: &str) -> Vec<String> {
        self(text)
    }
}

impl Tokenizer for Box<dyn Tokenizer + Send + Sync> {
    fn tokenize(&self, text: &str) -> Vec<String> {
        (**self).tokenize(text)
    }
}

/// PGraphRAG's BM25 tokenizer: `nltk.word_tokenize(text.lower())` (nltk 3.9.1, English Punkt),
/// via [`pgraphrag_text::word_tokenize_lower`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PgraphragTokenizer;

impl Tokenizer for PgraphragTokenizer {
    fn tokenize(&self, text: &str) -> Vec<String> {
        pgraphrag_text::word_tokenize_lower(text)
    }
}

/// LaMP's BM25 tokenizer: Python's `text.split()` (no lowercasing, no normalisation).
///
/// ```
/// use pgraphrag_retrieval::sparse::{PythonSplit, Tokenizer};
/// assert_eq!(PythonSplit.tokenize(" a\u{1c}b\tc\u{a0}d "), vec!["a", "b", "c", "d"]);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PythonSplit;

impl Tokenizer for PythonSplit {
    fn tokenize(&self, text: &str) -> Vec<String> {
        python_split(text).map(str::to_owned).collect()
    }
}

/// Python's `text.split()` with no argument, borrowing from `text` ([`pgraphrag_text::py::split`]).
///
/// ```
/// let toks: Vec<&str> = pgraphrag_retrieval::sparse::python_split("  It's  a\ttest\n").collect();
/// assert_eq!(toks, vec!["It's", "a", "test"]);
/// ```
pub fn python_split(text: &str) -> impl Iterator<Item = &str> {
    pgraphrag_text::py::split(text)
}
