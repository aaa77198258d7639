#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-text
//!
//! Text processing for pgraphrag: NLTK-identical `word_tokenize` (Punkt + Treebank),
//! the whitespace split LaMP uses, sentence snippets and NLTK's Porter stemmer
//! (NLTK extensions mode).
//!
//! | function | Python reference |
//! |---|---|
//! | [`word_tokenize`] | `nltk.word_tokenize(text)` (nltk 3.9.1) |
//! | [`word_tokenize_lower`] | `nltk.word_tokenize(text.lower())` (PGraphRAG's BM25 tokenizer) |
//! | [`word_tokenize_with`] | `nltk.word_tokenize(text, language, preserve_line)` |
//! | [`sent_tokenize`] | `nltk.sent_tokenize(text, language)` (English, Portuguese) |
//! | [`treebank_tokenize`] | `NLTKWordTokenizer().tokenize(sentence, convert_parentheses)` |
//! | [`python_lower`] | `str.lower()` (CPython 3.11, Unicode 14) |
//! | [`py`] | `str` methods, `float()`, `round`, `int()`, `json.dumps`, `random`, numpy `RandomState` |
//! | [`whitespace_split`] | `str.split()` |
//! | [`first_k_chars`] | `text[:k]` |
//! | [`snippets`] | multistage writing's sentence snippets |
//!
//! Outputs are identical to nltk on every golden fixture (thousands of real reviews, hard cases
//! and random strings); see `docs/text.md`.
//!
//! ```
//! use pgraphrag_text::word_tokenize;
//! assert_eq!(word_tokenize("I can't go."), vec!["I", "ca", "n't", "go", "."]);
//! ```
#![deny(missing_docs)]

mod error;
pub mod porter;
pub mod punkt;
pub mod py;
pub mod treebank;
mod unicode;
#[allow(missing_docs)]
mod unicode_tables;

pub use error::TextError;
pub use punkt::{PunktParameters, PunktSentenceTokenizer};
pub use py::{is_space as is_python_whitespace, lower as python_lower};
pub use treebank::treebank_tokenize;
pub use unicode::UNICODE_VERSION;

/// Language of the Punkt sentence model (English: NLTK `punkt_tab/english`, what
/// `nltk.word_tokenize` uses by default; Portuguese: `punkt_tab/portuguese`): the
/// workspace's one `Language`, from `pgraphrag-core`.
pub use pgraphrag_core::Language;

/// Options of [`word_tokenize_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WordTokenizeOptions {
    /// Punkt model used to split sentences first.
    pub language: Language,
    /// NLTK's `preserve_line`: when true, do not split sentences (the whole text is one line).
    pub preserve_line: bool,
    /// Lowercase the text first with Python's `str.lower()` semantics (see [`python_lower`]).
    pub lowercase: bool,
}

/// `nltk.word_tokenize(text)` (nltk 3.9.1, English, `preserve_line=False`).
pub fn word_tokenize(text: &str) -> Vec<String> {
    word_tokenize_with(text, &WordTokenizeOptions::default())
}

/// `nltk.word_tokenize(text.lower())`, the PGraphRAG BM25 tokenizer. Lowercasing is Python's
/// `str.lower()` ([`python_lower`]), not Rust's `str::to_lowercase` (they differ on a few
/// characters across Unicode versions).
///
/// ```
/// assert_eq!(pgraphrag_text::word_tokenize_lower("Great PRODUCT!"), ["great", "product", "!"]);
/// ```
pub fn word_tokenize_lower(text: &str) -> Vec<String> {
    word_tokenize_with(
        text,
        &WordTokenizeOptions {
            lowercase: true,
            ..Default::default()
        },
    )
}

/// `nltk.word_tokenize(text, language, preserve_line)` with optional lowercasing.
pub fn word_tokenize_with(text: &str, opts: &WordTokenizeOptions) -> Vec<String> {
    let lowered;
    let text = if opts.lowercase {
        lowered = python_lower(text);
        lowered.as_str()
    } else {
        text
    };
    let mut out = Vec::new();
    if opts.preserve_line {
        treebank::treebank_tokenize_into(text, false, &mut out);
    } else {
        for sent in PunktSentenceTokenizer::for_language(opts.language).tokenize(text) {
            treebank::treebank_tokenize_into(sent, false, &mut out);
        }
    }
    out
}

/// `nltk.sent_tokenize(text, language)`.
pub fn sent_tokenize(text: &str, lang: Language) -> Vec<String> {
    PunktSentenceTokenizer::for_language(lang)
        .tokenize(text)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Python `str.split()` (no argument) collected into a `Vec`: split on Unicode whitespace as
/// Python defines it ([`py::is_space`]), never yielding empty tokens (see [`py::split`]).
///
/// ```
/// assert_eq!(pgraphrag_text::whitespace_split(" a\u{1c}b "), ["a", "b"]);
/// ```
pub fn whitespace_split(text: &str) -> Vec<&str> {
    py::split(text).collect()
}

/// The first `k` characters (Unicode scalar values, as Python's `text[:k]`).
pub fn first_k_chars(text: &str, k: usize) -> &str {
    match text.char_indices().nth(k) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// Snippets of the multistage-writing paper (Li et al. 2023, "append sentences until at least
/// 250 characters or the end of the document"): consecutive Punkt (English) sentences are
/// gathered until the snippet holds at least `min_chars` characters (Unicode scalar values); the
/// last snippet of a document may be shorter. Each snippet is the span of the original text from
/// its first sentence's start to its last sentence's end (the whitespace between sentences is
/// kept as written). Snippets never overlap and never start or end with whitespace, except a
/// first sentence that starts with whitespace (as NLTK's does).
///
/// ```
/// use pgraphrag_text::snippets;
/// let s = snippets("One. Two is here. Three.", 8);
/// assert_eq!(s, ["One. Two is here.", "Three."]);
/// ```
pub fn snippets(text: &str, min_chars: usize) -> Vec<String> {
    snippets_in(text, min_chars, Language::English)
}

/// [`snippets`] with the Punkt model of `lang`.
pub fn snippets_in(text: &str, min_chars: usize, lang: Language) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<(usize, usize)> = None;
    for (s, e) in PunktSentenceTokenizer::for_language(lang).span_tokenize(text) {
        if s >= e {
            continue;
        }
        let (start, _) = *cur.get_or_insert((s, e));
        cur = Some((start, e));
        if text[start..e].chars().count() >= min_chars {
            out.push(text[start..e].to_string());
            cur = None;
        }
    }
    if let Some((start, end)) = cur {
        out.push(text[start..end].to_string());
    }
    out
}

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
