#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-stages
//!
//! Pipeline stages that run before retrieval-augmented generation: the offline,
//! task-aware user summaries of summary-augmented LaMP (Richardson et al., 2023,
//! arXiv 2310.20081), whose downstream input is `x̄ = φp(x, R(φq(x), P_u, k), s_u)` with
//! `s_u = LLM(P_u)` generated offline and stored beside the user data.
//!
//! | piece | what it is |
//! |---|---|
//! | [`Summarizer`] | one required method, `summarize(entries)`; provided `summarize_batch_each` hands each summary over as it finishes |
//! | [`LlmSummarizer`] | a `Summarizer` over any [`Generator`](pgraphrag_core::Generator), with a [`SummaryPrompt`] and the fitting rule |
//! | [`SummaryPrompt`] | the six Table 2 prompts verbatim (LaMP-1, 2, 3, 4, 5, 7), the adapted LaMP-2 movie prompt, custom prompts; [`SummaryPrompt::version`] |
//! | [`render_profile`], [`EntryFormat`] | profile items → entry texts per task (or any fields), most recent first |
//! | [`fit_entries`] | the fitting rule: whole entries in priority order within `context − max_new_tokens − reserve` tokens ([`fit`]) |
//! | [`SummaryStore`] | SQLite (via `pgraphrag-store`), keyed by user, profile hash, model id and version; `get`, `put`, `missing`, `export_jsonl` |
//! | [`SummarizeJob`] | the resumable offline job: only what is missing or changed, each summary committed as it finishes |
//! | [`multistage`] | the multistage personalized writing pipeline (Li et al., 2023, arXiv 2308.07968): immediate context, ranking (`RankDocBM25`, `RankDocDense`, `RankSnippet`, `RankDocBySnpt`, `RecentDoc`) cut at 2,500 characters, summarization and synthesis stages with their weak labels, the generation input, author-distinction pairs, `{prompt, target}` training records |
//!
//! The summaries depend on `pgraphrag-core`, `-data` and `-store` only: no model is needed to
//! read the store. The multistage stages add `pgraphrag-text` (tokenizers, snippets, CPython's
//! random), `pgraphrag-retrieval` (BM25; with the default feature `dense`, the snippet and dense
//! rankers) and `pgraphrag-metrics` (its WordNet reader). `pgraphrag-llm`'s `LlmTokenizer` implements [`TokenCounter`](pgraphrag_core::TokenCounter).
//! See `docs/stages.md` for the whole picture.
//!
//! ```
//! use pgraphrag_core::{GenParams, Generator, LampProfileItem, LampQuestion, LampTask, NoProgress, Prompt, Result, TokenCounter};
//! use pgraphrag_stages::{Budget, LlmSummarizer, SummarizeJob, SummaryPrompt, SummaryStore};
//!
//! struct Words;
//! impl TokenCounter for Words {
//!     fn count(&self, t: &str) -> Result<usize> { Ok(t.split_whitespace().count()) }
//! }
//! /// A stand-in model: answers with the last line of the prompt.
//! struct Last;
//! impl Generator for Last {
//!     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
//!         Ok(p.messages()[0].content.lines().last().unwrap_or("").to_string())
//!     }
//! }
//! let questions = vec![LampQuestion::new("u1", "Paraphrase: ...").with_profile(vec![
//!     LampProfileItem::new("t1").with("text", "so tired lol"),
//! ])];
//! let summarizer = LlmSummarizer::new(Last, SummaryPrompt::table2(LampTask::Lamp7).unwrap(), &Words, Budget::paper());
//! let store = SummaryStore::in_memory().unwrap();
//! let report = SummarizeJob::new(LampTask::Lamp7, "last-line", summarizer.version())
//!     .run(&questions, &summarizer, &store, &NoProgress)
//!     .unwrap();
//! assert_eq!(report.computed, 1);
//! assert_eq!(store.summaries("last-line", &summarizer.version()).unwrap()[0].1, "Tweet: so tired lol");
//! ```
#![deny(missing_docs)]

mod error;
pub mod fit;
mod job;
pub mod multistage;
pub mod profile;
pub mod prompt;
mod store;
mod summarizer;

pub use error::{Error, Result};
pub use fit::{Budget, FitReport, Fitted, fit_entries};
pub use job::{JobReport, SummarizeJob};
pub use profile::{
    EntryFormat, RENDER_VERSION, priority_order, profile_hash, render_entry, render_profile,
    user_key,
};
pub use prompt::{LAYOUT_VERSION, SummaryPrompt};
pub use store::{Staleness, StoreConfig, StoredSummary, SummaryKey, SummaryStore};
pub use summarizer::{LlmSummarizer, Summarizer, Summary};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
