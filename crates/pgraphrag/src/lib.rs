//! # pgraphrag
//!
//! Personalized retrieval-augmented generation with LLMs: the user-item graph retrieval of
//! PGraphRAG, BM25 and dense retrieval over user profiles, prompts exact to the
//! papers' released code, local GGUF generation and metrics identical to the Python
//! references.
//!
//! This crate only re-exports the `pgraphrag-*` crates, one module per crate, each behind a
//! feature of the same name. Depend on it for one version line across the crates, or on the
//! individual crates for the smallest build.
//!
//! | module | crate | feature | default |
//! |---|---|---|---|
//! | [`core`] | `pgraphrag-core` | always | yes |
//! | `text` | `pgraphrag-text` | `text` | yes |
//! | `graph` | `pgraphrag-graph` | `graph` | yes |
//! | `data` | `pgraphrag-data` | `data` | yes |
//! | `retrieval` | `pgraphrag-retrieval` | `retrieval` (`dense` adds BERT encoders on candle) | `retrieval` yes, `dense` no |
//! | `metrics` | `pgraphrag-metrics` | `metrics` | yes |
//! | `prompt` | `pgraphrag-prompt` | `prompt` (`hf-tokenizers` adds `lamp::HfTokenizer`) | `prompt` yes, `hf-tokenizers` no |
//! | `llm` | `pgraphrag-llm` | `llm` (`tls` adds HTTPS) | no |
//! | `eval` | `pgraphrag-eval` | `eval` | no |
//! | `store` | `pgraphrag-store` | `store` | no |
//! | `stages` | `pgraphrag-stages` | `stages` | no |
//! | `corpora` | `pgraphrag-corpora` | `corpora` | no |
//! | `recsys` | `pgraphrag-recsys` | `recsys` | no |
//! | `train` | `pgraphrag-train` | `train` (turns on `dense` and `llm`) | no |
//!
//! `full` turns on every module, with `dense` and `hf-tokenizers`; `cuda` runs dense encoders and
//! GGUF models on an NVIDIA GPU for the modules that are on; `hf-hub` downloads dense models from
//! the Hugging Face hub. The defaults build no candle, no `tokenizers` and no SQLite: `dense`
//! (candle, `tokenizers`, rusqlite), `llm` and `eval` (candle, `tokenizers`; `eval` adds rusqlite),
//! `hf-tokenizers` (`tokenizers`) and `store`, `stages`, `corpora` (rusqlite) pull them in. With
//! candle in the build, add `[profile.dev.package."*"] opt-level = 3` to your `Cargo.toml`, or
//! debug builds run candle unoptimised (see the README).
//!
//! Most programs need only [`prelude`]: the live index and the names around it.
//!
//! ```
//! # #[cfg(all(feature = "retrieval", feature = "metrics"))] {
//! use pgraphrag::core::Retriever;
//! use pgraphrag::metrics::Rouge;
//! use pgraphrag::retrieval::Bm25Retriever;
//!
//! let docs = ["great soap", "bad soap", "great shampoo"];
//! let top = Bm25Retriever::lamp().rank("great shampoo", &docs, Some(1)).unwrap();
//! assert_eq!(top[0].item, 2);
//!
//! let s = Rouge::default().score("great shampoo", docs[top[0].item]);
//! assert_eq!(s.rouge1.fmeasure, 1.0);
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

/// The shared vocabulary and traits: [`pgraphrag_core`].
pub use pgraphrag_core as core;

/// Text processing identical to NLTK: [`pgraphrag_text`].
#[cfg(feature = "text")]
#[cfg_attr(docsrs, doc(cfg(feature = "text")))]
pub use pgraphrag_text as text;

/// The user-item graph and profile scopes: [`pgraphrag_graph`].
#[cfg(feature = "graph")]
#[cfg_attr(docsrs, doc(cfg(feature = "graph")))]
pub use pgraphrag_graph as graph;

/// PGraphRAG data splits and ranking files: [`pgraphrag_data`].
#[cfg(feature = "data")]
#[cfg_attr(docsrs, doc(cfg(feature = "data")))]
pub use pgraphrag_data as data;

/// Sparse, dense and profile retrieval: [`pgraphrag_retrieval`].
#[cfg(feature = "retrieval")]
#[cfg_attr(docsrs, doc(cfg(feature = "retrieval")))]
pub use pgraphrag_retrieval as retrieval;

/// ROUGE, METEOR, BLEU and the other metrics: [`pgraphrag_metrics`].
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use pgraphrag_metrics as metrics;

/// PGraphRAG prompts and output extraction: [`pgraphrag_prompt`].
#[cfg(feature = "prompt")]
#[cfg_attr(docsrs, doc(cfg(feature = "prompt")))]
pub use pgraphrag_prompt as prompt;

/// GGUF models and the OpenAI-compatible client: [`pgraphrag_llm`].
#[cfg(feature = "llm")]
#[cfg_attr(docsrs, doc(cfg(feature = "llm")))]
pub use pgraphrag_llm as llm;

/// Experiment grids, the generation cache and result tables: [`pgraphrag_eval`].
#[cfg(feature = "eval")]
#[cfg_attr(docsrs, doc(cfg(feature = "eval")))]
pub use pgraphrag_eval as eval;

/// Persistent stores (the one SQLite setup of every cache): [`pgraphrag_store`].
#[cfg(feature = "store")]
#[cfg_attr(docsrs, doc(cfg(feature = "store")))]
pub use pgraphrag_store as store;

/// Pipeline stages: offline LaMP user summaries and their store: [`pgraphrag_stages`].
#[cfg(feature = "stages")]
#[cfg_attr(docsrs, doc(cfg(feature = "stages")))]
pub use pgraphrag_stages as stages;

/// Real authored-text corpora and LaMP-format task builders: [`pgraphrag_corpora`].
#[cfg(feature = "corpora")]
#[cfg_attr(docsrs, doc(cfg(feature = "corpora")))]
pub use pgraphrag_corpora as corpora;

/// K-RagRec recommendation: MovieLens with its knowledge graph, sub-graph retrieval, the
/// popularity gate and letter scoring: [`pgraphrag_recsys`].
#[cfg(feature = "recsys")]
#[cfg_attr(docsrs, doc(cfg(feature = "recsys")))]
pub use pgraphrag_recsys as recsys;

/// Training with candle's autograd: LoRA adapters and K-RagRec's graph encoder and projector:
/// [`pgraphrag_train`].
#[cfg(feature = "train")]
#[cfg_attr(docsrs, doc(cfg(feature = "train")))]
pub use pgraphrag_train as train;

/// The paper pipelines as library values, each a serde spec with presets and
/// `run(progress) -> Report` (the LaMP and multistage grids, K-RagRec, LoRA fine-tuning,
/// metrics), and the offline jobs of the work queues: [`pgraphrag_runs`].
#[cfg(feature = "runs")]
#[cfg_attr(docsrs, doc(cfg(feature = "runs")))]
pub use pgraphrag_runs as runs;

/// The names most programs need, in one import: `use pgraphrag::prelude::*;`.
///
/// The live index ([`ProfileIndex`](prelude::ProfileIndex)) is the common case: add, update
/// and remove documents, then ask for a target's ranked context and the paper's prompt.
///
/// ```
/// # #[cfg(all(feature = "retrieval", feature = "prompt"))] {
/// use pgraphrag::prelude::*;
///
/// let index = ProfileIndex::default();
/// let review = |user: &str, id: &str, item: &str, text: &str| Document {
///     user: user.into(), id: id.into(), item: Some(item.into()), text: text.into(), ..Default::default()
/// };
/// index.upsert_batch(vec![
///     review("ann", "1", "shampoo", "Lavender scent, my hair is soft"),
///     review("bob", "1", "soap", "Lavender soap that lasts long"),
///     review("cat", "1", "soap", "Left my skin dry"),
/// ]).unwrap();
/// // Ann is writing a review of the soap titled "Lavender dream".
/// let req = ContextRequest {
///     user: "ann".into(),
///     item: Some("soap".into()),
///     query: Task::Text.query(Some("Lavender dream"), None),
///     scope: Some(Scope::Both),
///     k: 1,
///     retriever: RetrieverKind::Bm25,
/// };
/// let ctx = index.context(&req).unwrap();
/// assert_eq!(ctx.neighbors[0].doc.user(), "bob");
/// let target = Entry { author: "ann".into(), item: "soap".into(), title: Some("Lavender dream".into()), ..Default::default() };
/// let prompt = PromptBuilder::new(Task::Text).build(&ctx.to_profile(&req, Some(target)), Mode::Both, 1);
/// assert!(prompt.contains("Lavender soap that lasts long"));
/// # }
/// ```
pub mod prelude {
    pub use pgraphrag_core::{
        DocText, Embeddings, Encoder, Entry, GenParams, Generator, ItemId, Prompt, RankedEntry,
        RankedProfile, Retriever, Task, TieOrder,
    };
    #[cfg(all(feature = "graph", not(feature = "retrieval")))]
    pub use pgraphrag_graph::Scope;
    #[cfg(feature = "graph")]
    pub use pgraphrag_graph::{GraphOptions, UserItemGraph};
    #[cfg(feature = "prompt")]
    pub use pgraphrag_prompt::pgraphrag::{Mode, PromptBuilder};
    #[cfg(feature = "retrieval")]
    pub use pgraphrag_retrieval::live::{
        Context, ContextRequest, Document, Hit, IndexOptions, ProfileIndex, RetrieverKind, Scope,
        Snapshot,
    };
    #[cfg(feature = "retrieval")]
    pub use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker};
    #[cfg(feature = "retrieval")]
    pub use pgraphrag_retrieval::{Bm25Okapi, Bm25Retriever};
}

/// The README's example, run as a doctest.
#[cfg(all(doctest, feature = "retrieval", feature = "metrics"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
