//! [`HfTokenizer`] (feature `hf-tokenizers`): the calls of [`LampTokenizer`] on any
//! `tokenizer.json`, exactly as LaMP's pinned `transformers==4.27.1` (with `tokenizers` 0.13.3)
//! does.

use std::path::Path;

use pgraphrag_core::TokenCounter;
use tokenizers::{Tokenizer, TruncationDirection};

use super::tokenizer::{LampTokenizer, TokenizerError, clean_up_tokenization};

/// A Hugging Face fast tokenizer loaded from any `tokenizer.json`, answering the calls of
/// [`LampTokenizer`] as `transformers` 4.27.1 / `tokenizers` 0.13.3 (LaMP's
/// `requirements.txt`) do:
///
/// * the file's own `truncation` and `padding` sections are ignored (transformers turns them
///   off for every call that does not ask for them);
/// * `truncated_ids(text, m)`: `m < 0` is an error (Python's `OverflowError`); otherwise
///   the text's tokens are cut to `m - s`, where `s` is the number of special tokens the
///   post-processor adds to one sequence, and the special tokens are added. When `0 <= m < s`,
///   `tokenizers` 0.13.3 computes `m - s` in wrapping unsigned arithmetic, so **nothing is
///   cut** (the full encoding comes back); this is reproduced. (Newer `tokenizers` releases
///   raise instead.)
/// * `decode`: the tokenizer's decoder with special tokens skipped, then transformers'
///   `clean_up_tokenization` (on by default in 4.27.1: `" ."` → `"."`, `" n't"` → `"n't"`,
///   …); [`HfTokenizer::with_clean_up_tokenization_spaces`] turns it off, as a
///   `tokenizer_config.json` with `"clean_up_tokenization_spaces": false` would.
///
/// ```no_run
/// use pgraphrag_core::TokenCounter;
/// use pgraphrag_prompt::lamp::{HfTokenizer, LampTokenizer};
/// let tok = HfTokenizer::from_file("models/all-MiniLM-L6-v2/tokenizer.json".as_ref()).unwrap();
/// assert_eq!(tok.input_ids("Hello, World").unwrap(), vec![101, 7592, 1010, 2088, 102]);
/// assert_eq!(tok.truncated_ids("Hello, World", 3).unwrap(), vec![101, 7592, 102]);
/// assert_eq!(tok.truncated_ids("Hello, World", 1).unwrap().len(), 5); // 1 < 2 specials: no cut
/// assert!(tok.truncated_ids("Hello, World", -1).is_err());
/// assert_eq!(tok.decode(&[101, 7592, 1010, 2088, 102]).unwrap(), "hello, world");
/// assert_eq!(tok.count("Hello, World").unwrap(), 5);
/// ```
#[derive(Clone)]
pub struct HfTokenizer {
    inner: Tokenizer,
    specials: usize,
    clean_up: bool,
}

impl std::fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokenizer")
            .field("specials", &self.specials)
            .field("clean_up_tokenization_spaces", &self.clean_up)
            .finish_non_exhaustive()
    }
}

fn tok_err(e: impl std::fmt::Display) -> TokenizerError {
    TokenizerError::Tokenize(e.to_string())
}

impl HfTokenizer {
    /// Loads a `tokenizer.json`.
    pub fn from_file(path: &Path) -> Result<Self, TokenizerError> {
        let inner = Tokenizer::from_file(path).map_err(|e| TokenizerError::Load {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(Self::from_tokenizer(inner))
    }

    /// Wraps a loaded `tokenizers` tokenizer (its truncation and padding are turned off).
    ///
    /// ```
    /// use tokenizers::models::wordlevel::WordLevel;
    /// use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
    /// use pgraphrag_prompt::lamp::{HfTokenizer, LampTokenizer};
    /// let vocab = [("a".to_string(), 0), ("b".to_string(), 1), ("[UNK]".to_string(), 2)].into();
    /// let model = WordLevel::builder().vocab(vocab).unk_token("[UNK]".into()).build().unwrap();
    /// let mut t = tokenizers::Tokenizer::new(model);
    /// t.with_pre_tokenizer(Some(WhitespaceSplit));
    /// let tok = HfTokenizer::from_tokenizer(t);
    /// assert_eq!(tok.input_ids("a b c").unwrap(), vec![0, 1, 2]);
    /// assert_eq!(tok.truncated_ids("a b c", 2).unwrap(), vec![0, 1]);
    /// ```
    pub fn from_tokenizer(mut inner: Tokenizer) -> Self {
        // Setting `None` cannot fail: the only check is on the parameters given.
        let _ = inner.with_truncation(None);
        inner.with_padding(None);
        let specials = inner
            .get_post_processor()
            .map_or(0, |p| tokenizers::PostProcessor::added_tokens(p, false));
        HfTokenizer {
            inner,
            specials,
            clean_up: true,
        }
    }

    /// Whether `decode` applies transformers' `clean_up_tokenization` (default `true`, the
    /// default of transformers 4.27.1).
    pub fn with_clean_up_tokenization_spaces(mut self, on: bool) -> Self {
        self.clean_up = on;
        self
    }

    /// How many special tokens the post-processor adds to a single sequence.
    pub fn special_tokens(&self) -> usize {
        self.specials
    }

    /// The wrapped `tokenizers` tokenizer.
    pub fn inner(&self) -> &Tokenizer {
        &self.inner
    }
}

impl LampTokenizer for HfTokenizer {
    fn input_ids(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let enc = self.inner.encode(text, true).map_err(tok_err)?;
        Ok(enc.get_ids().to_vec())
    }

    fn truncated_ids(&self, text: &str, max_length: i64) -> Result<Vec<u32>, TokenizerError> {
        let Ok(m) = usize::try_from(max_length) else {
            return Err(TokenizerError::NegativeMaxLength { max_length });
        };
        let mut enc = self.inner.encode(text, false).map_err(tok_err)?;
        // tokenizers 0.13.3: `max_length - n_added_tokens` wraps when negative (no cut).
        if let Some(keep) = m.checked_sub(self.specials) {
            enc.truncate(keep, 0, TruncationDirection::Right);
        }
        let enc = self.inner.post_process(enc, None, true).map_err(tok_err)?;
        Ok(enc.get_ids().to_vec())
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        let text = self.inner.decode(ids, true).map_err(tok_err)?;
        Ok(if self.clean_up {
            clean_up_tokenization(&text)
        } else {
            text
        })
    }
}

impl TokenCounter for HfTokenizer {
    /// `len(tokenizer(text)['input_ids'])`.
    fn count(&self, text: &str) -> pgraphrag_core::Result<usize> {
        self.input_ids(text)
            .map(|ids| ids.len())
            .map_err(|e| pgraphrag_core::Error::InvalidInput(e.to_string()))
    }
}
