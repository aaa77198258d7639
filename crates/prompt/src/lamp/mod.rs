//! LaMP's prompts (`LaMP-Benchmark/LaMP`, `LaMP/prompts/prompts.py` and `utils.py`),
//! byte-identical to the Python, and the summary-augmented form of Richardson et al. (2023).
//!
//! * φq, the query of each task ([`extract_query`]) and each item's BM25 document
//!   ([`corpus_document`]), exact to the corpus makers (LaMP-1's query is its two quoted
//!   references; LaMP-5 takes the text after `paper:` in `prompts.py` but after the first `:`
//!   in `rank_profiles.py`: [`QuerySource`]).
//! * [`LampTokenizer`], the three tokenizer calls LaMP's code makes, and `HfTokenizer` (feature
//!   `hf-tokenizers`, which pulls in the `tokenizers` crate), which makes them on any
//!   `tokenizer.json` exactly as LaMP's pinned `transformers` 4.27.1 does.
//! * [`create_prompt`] (one `create_*_prompt` call) and [`build_prompt`]
//!   (`create_prompt_generator`'s budget rule and retry loop), with an optional user summary
//!   ([`Summary`], [`SummaryPlacement`]).
//!
//! Ranking the profile (BM25 over `str.split()`, rank_bm25's tie order) is composed with these
//! in `pgraphrag-eval`'s `lamp` module. See `docs/lamp.md`.
//!
//! ```
//! use pgraphrag_core::{LampProfileItem, LampTask};
//! use pgraphrag_prompt::lamp::{build_prompt, extract_query, LampTokenizer, QuerySource, TokenizerError};
//! # struct Chars;
//! # impl LampTokenizer for Chars {
//! #     fn input_ids(&self, t: &str) -> Result<Vec<u32>, TokenizerError> { Ok(t.chars().map(u32::from).collect()) }
//! #     fn truncated_ids(&self, t: &str, m: i64) -> Result<Vec<u32>, TokenizerError> {
//! #         let m = usize::try_from(m).map_err(|_| TokenizerError::NegativeMaxLength { max_length: m })?;
//! #         Ok(self.input_ids(t)?.into_iter().take(m).collect())
//! #     }
//! #     fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> { Ok(ids.iter().filter_map(|&c| char::from_u32(c)).collect()) }
//! # }
//! let inp = "Generate a headline for the following article: Rain falls on the city";
//! assert_eq!(extract_query(LampTask::Lamp4, inp, QuerySource::Prompts).unwrap(), "Rain falls on the city");
//! let item = LampProfileItem::new("1").with("title", "Sun returns").with("text", "After weeks of rain");
//! let p = build_prompt(LampTask::Lamp4, inp, &[&item], 300, &Chars, None);
//! assert_eq!(p.text, format!("\"Sun returns\" is the title for \"After weeks of rain\" . {inp}"));
//! ```

mod build;
#[cfg(feature = "hf-tokenizers")]
mod hf;
mod query;
mod tokenizer;

pub use build::{
    BuildError, LampPrompt, PromptOutcome, Summary, SummaryPlacement, build_prompt, create_prompt,
};
#[cfg(feature = "hf-tokenizers")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf-tokenizers")))]
pub use hf::HfTokenizer;
pub use query::{
    QueryError, QuerySource, add_string_after_title, corpus_document, corpus_fields, extract_after,
    extract_query, query_marker, strings_between_quotes,
};
pub use tokenizer::{LampTokenizer, TokenizerError, clean_up_tokenization};
