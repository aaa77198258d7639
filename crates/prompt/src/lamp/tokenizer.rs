//! The three calls LaMP's prompt code makes on a Hugging Face fast tokenizer
//! ([`LampTokenizer`]) and transformers' `clean_up_tokenization`. `HfTokenizer` (feature
//! `hf-tokenizers`, in `hf.rs`) makes the calls on any `tokenizer.json` exactly as LaMP's pinned
//! `transformers==4.27.1` (with `tokenizers` 0.13.3) does.

use std::path::PathBuf;

/// What can go wrong in a tokenizer call. In LaMP's prompt builders every error is caught by
/// the bare `except:` of `create_prompt_generator`, which then retries with a smaller factor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenizerError {
    /// `tokenizer.json` could not be loaded.
    #[error("cannot load the tokenizer {path}: {message}")]
    Load {
        /// The file.
        path: PathBuf,
        /// What the `tokenizers` crate said.
        message: String,
    },
    /// A negative `max_length` (Python raises `OverflowError: can't convert negative int to
    /// unsigned`).
    #[error("max_length {max_length} is negative")]
    NegativeMaxLength {
        /// The length asked for.
        max_length: i64,
    },
    /// Encoding or decoding failed.
    #[error("tokenizer failed: {0}")]
    Tokenize(String),
}

/// The tokenizer calls of LaMP's `create_*_prompt` functions.
///
/// ```
/// use pgraphrag_prompt::lamp::{LampTokenizer, TokenizerError};
/// /// One id per whitespace word (its length), no special tokens: a toy tokenizer.
/// struct Words;
/// impl LampTokenizer for Words {
///     fn input_ids(&self, t: &str) -> Result<Vec<u32>, TokenizerError> {
///         Ok(t.split_whitespace().map(|w| w.len() as u32).collect())
///     }
///     fn truncated_ids(&self, t: &str, m: i64) -> Result<Vec<u32>, TokenizerError> {
///         let m = usize::try_from(m).map_err(|_| TokenizerError::NegativeMaxLength { max_length: m })?;
///         Ok(self.input_ids(t)?.into_iter().take(m).collect())
///     }
///     fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
///         Ok(ids.iter().map(|&n| "x".repeat(n as usize)).collect::<Vec<_>>().join(" "))
///     }
/// }
/// assert_eq!(Words.truncated_ids("a bb ccc", 2).unwrap(), vec![1, 2]);
/// assert_eq!(Words.decode(&[1, 2]).unwrap(), "x xx");
/// assert!(Words.truncated_ids("a", -1).is_err());
/// ```
pub trait LampTokenizer {
    /// `tokenizer(text)['input_ids']` (special tokens added, no truncation).
    fn input_ids(&self, text: &str) -> Result<Vec<u32>, TokenizerError>;
    /// `tokenizer(text, max_length=max_length, truncation=True)['input_ids']`.
    fn truncated_ids(&self, text: &str, max_length: i64) -> Result<Vec<u32>, TokenizerError>;
    /// `tokenizer.batch_decode([ids], skip_special_tokens=True)[0]`.
    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError>;
}

impl<T: LampTokenizer + ?Sized> LampTokenizer for &T {
    fn input_ids(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        (**self).input_ids(text)
    }
    fn truncated_ids(&self, text: &str, max_length: i64) -> Result<Vec<u32>, TokenizerError> {
        (**self).truncated_ids(text, max_length)
    }
    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        (**self).decode(ids)
    }
}

/// transformers' `PreTrainedTokenizerBase.clean_up_tokenization`.
///
/// ```
/// assert_eq!(pgraphrag_prompt::lamp::clean_up_tokenization("it ' s a do not , ok ."), "it's a do not, ok.");
/// ```
pub fn clean_up_tokenization(text: &str) -> String {
    text.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}
