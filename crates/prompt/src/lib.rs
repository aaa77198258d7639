#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-prompt
//!
//! Prompt templates exact to the papers' released code and the output extraction that
//! goes with them.
//!
//! * [`pgraphrag`]: the prompts of PGraphRAG's `master_generation.py` (five retrieval
//!   modes × three tasks, the Portuguese variant used for B2W, the GPT system message and
//!   the raw Llama-3.1 wrapper), byte-identical to the released code.
//! * [`extract`]: `master_eval.py`'s `extract_prediction` (with its typo fixed by default)
//!   and a documented rating parser.
//! * [`lamp`]: LaMP's queries, corpus makers and prompts (`prompts.py`), byte-identical, with
//!   the token budget and retry rule, an exact Hugging Face tokenizer wrapper (`HfTokenizer`,
//!   feature `hf-tokenizers`, the only one that pulls in the `tokenizers` crate) and the
//!   summary-augmented form.
//!
//! ```
//! use pgraphrag_core::Entry;
//! use pgraphrag_prompt::pgraphrag::{Mode, PromptBuilder, RankedProfile, Task};
//!
//! let target = Entry { title: Some("Great".into()), text: Some("Works well.".into()), ..Default::default() };
//! let neighbour = Entry { title: Some("Fine".into()), text: Some("Does the job".into()), rating: Some(4.0), ..Default::default() };
//! let profile = RankedProfile { user_id: "u1".into(), target, neighbors: vec![neighbour.into()], ..Default::default() };
//! let prompt = PromptBuilder::new(Task::Title).build(&profile, Mode::Neighbor, 1);
//! assert!(prompt.starts_with("Given the following reviews from other users on the same product:\nOther Users' Reviews:\n"));
//! assert!(prompt.ends_with("using the format: 'Review title:'."));
//! ```
#![deny(missing_docs)]

mod error;
pub mod extract;
pub mod lamp;
pub mod pgraphrag;

pub use error::{Error, Result};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
