#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-core
//!
//! The bottom crate of the pgraphrag workspace: the shared vocabulary ([`Entry`],
//! [`Scored`], [`Embeddings`], [`Prompt`], [`GenParams`], [`Task`], [`Language`],
//! [`Bm25Params`], the LaMP records [`LampTask`], [`LampQuestion`]), ranking with documented tie orders ([`top_k`], [`TieOrder`]) and the narrow, one-method
//! traits that every other crate implements or consumes:
//!
//! | trait | one method | implemented in |
//! |---|---|---|
//! | [`Retriever`] | `scores(query, docs)` (+ provided `rank`, `tie_order`) | `pgraphrag-retrieval` (BM25, dense, random, none) |
//! | [`Encoder`] | `encode(texts)` (+ provided `dim()`) | `pgraphrag-retrieval` (BERT mean pooling on candle) |
//! | [`Generator`] | `generate(prompt, params)` | `pgraphrag-llm` (GGUF on candle, OpenAI-compatible HTTP) |
//! | [`Metric`] | `score(prediction, reference)` | `pgraphrag-metrics` (ROUGE, METEOR, BLEU) |
//! | [`TokenCounter`] | `count(text)` | `pgraphrag-prompt` (any `tokenizer.json`), `pgraphrag-llm` |
//!
//! It depends on `serde` and `thiserror` only, so a third party can implement a trait
//! against this small, stable crate without pulling in candle.
//!
//! ```
//! use pgraphrag_core::{Result, Retriever, Scored};
//!
//! /// Scores documents by length: a toy retriever in five lines; `rank` comes with the trait.
//! struct Longest;
//! impl Retriever for Longest {
//!     fn scores(&self, _query: &str, docs: &[&str]) -> Result<Vec<f64>> {
//!         Ok(docs.iter().map(|d| d.len() as f64).collect())
//!     }
//! }
//! let top = Longest.rank("q", &["a", "abc", "ab"], Some(2)).unwrap();
//! assert_eq!(top.iter().map(|s| s.item).collect::<Vec<_>>(), vec![1, 2]);
//! assert_eq!(top[0], Scored::new(1, 3.0));
//! ```
#![deny(missing_docs)]

mod device;
mod error;
mod lamp;
pub mod math;
pub mod progress;
pub mod simd;
mod ties;
mod types;
mod vocab;

pub use device::DeviceChoice;
pub use error::{Error, Result, error_chain};
pub use lamp::{LampGold, LampProfileItem, LampQuestion, LampTask, SummaryScope};
pub use progress::{NoProgress, Progress};
pub use ties::{TieOrder, numpy_argsort, rank_order, top_k};
pub use types::{
    Bm25Params, DocText, Embeddings, Entry, GenParams, ItemId, Message, Prompt, RankedEntry,
    RankedProfile, Role, Scored, sort_desc,
};
pub use vocab::{Language, RATING_SCALE, Task, UnknownName};

/// Scores and ranks candidate documents for a query.
///
/// `docs` are the candidate texts (for PGraphRAG, `"{title} {text}"` of each review in a
/// user's profile). Only [`Retriever::scores`] is required; [`Retriever::rank`] is provided:
/// the best `k` of the scores ([`top_k`]), equal scores ordered by the provided hook
/// [`Retriever::tie_order`], as tantivy's `Weight` provides the search over a `Scorer`.
///
/// ```
/// use pgraphrag_core::{Result, Retriever, TieOrder};
/// /// Scores a document 1 when it contains the query, else 0; ties as numpy ranks them.
/// struct Contains;
/// impl Retriever for Contains {
///     fn scores(&self, query: &str, docs: &[&str]) -> Result<Vec<f64>> {
///         Ok(docs.iter().map(|d| f64::from(u8::from(d.contains(query)))).collect())
///     }
///     fn tie_order(&self) -> TieOrder {
///         TieOrder::NumpyReversedArgsort
///     }
/// }
/// let top = Contains.rank("tea", &["tea", "coffee", "green tea", "milk"], None).unwrap();
/// // Among equal scores the later document comes first.
/// assert_eq!(top.iter().map(|s| s.item).collect::<Vec<_>>(), vec![2, 0, 3, 1]);
/// ```
pub trait Retriever {
    /// The score of each document of `docs` against `query`, in input order; higher is
    /// better. One finite score per document, or none at all from a retriever that retrieves
    /// nothing (then [`Retriever::rank`] returns nothing).
    fn scores(&self, query: &str, docs: &[&str]) -> Result<Vec<f64>>;

    /// How [`Retriever::rank`] orders documents with equal scores. The default:
    /// [`TieOrder::InputOrder`] (the earlier document first).
    fn tie_order(&self) -> TieOrder {
        TieOrder::InputOrder
    }

    /// The best `k` documents (all when `k` is `None`) as indices into `docs` with their
    /// scores, best first: [`top_k`] of [`Retriever::scores`] under [`Retriever::tie_order`].
    /// An implementation may override it only with a faster way to the same result (same
    /// indices, scores and order), tested against this one.
    fn rank(&self, query: &str, docs: &[&str], k: Option<usize>) -> Result<Vec<Scored<usize>>> {
        Ok(top_k(&self.scores(query, docs)?, k, self.tie_order()))
    }
}

/// Turns texts into dense vectors (one row per text).
///
/// Only [`Encoder::encode`] is required; [`Encoder::dim`] tells the vector dimension up
/// front when the encoder knows it.
///
/// ```
/// use pgraphrag_core::{Embeddings, Encoder, Result};
/// /// Embeds a text as its length and its number of spaces.
/// struct Shape;
/// impl Encoder for Shape {
///     fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
///         let v = texts.iter().flat_map(|t| [t.len() as f32, t.matches(' ').count() as f32]);
///         Embeddings::new(2, v.collect())
///     }
///     fn dim(&self) -> Option<usize> {
///         Some(2)
///     }
/// }
/// assert_eq!(Shape.encode(&["a b", "c"]).unwrap().row(0), &[3.0, 1.0]);
/// assert_eq!(Shape.dim(), Some(2));
/// ```
pub trait Encoder {
    /// Encodes `texts` into an [`Embeddings`] matrix with one row per text, in order.
    fn encode(&self, texts: &[&str]) -> Result<Embeddings>;

    /// The dimension of every vector, when known without encoding anything. The default:
    /// `None` (encode a text to find out).
    fn dim(&self) -> Option<usize> {
        None
    }
}

/// One prompt in, one completion out.
///
/// Only [`Generator::generate`] is required. Backends that can serve several prompts faster
/// together override [`Generator::generate_batch`], which must return what `generate` would
/// for each prompt.
pub trait Generator {
    /// Generates a completion for `prompt` under `params`.
    fn generate(&self, prompt: &Prompt, params: &GenParams) -> Result<String>;

    /// Generates a completion for each prompt (one result per prompt, in order). The default
    /// calls [`Generator::generate`] for each.
    ///
    /// ```
    /// use pgraphrag_core::{GenParams, Generator, Prompt, Result};
    /// struct Echo;
    /// impl Generator for Echo {
    ///     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
    ///         Ok(format!("{p:?}").len().to_string())
    ///     }
    /// }
    /// let out = Echo.generate_batch(&[Prompt::user("a"), Prompt::user("bb")], &GenParams::default());
    /// assert_eq!(out.len(), 2);
    /// ```
    fn generate_batch(&self, prompts: &[Prompt], params: &GenParams) -> Vec<Result<String>> {
        prompts.iter().map(|p| self.generate(p, params)).collect()
    }

    /// Like [`Generator::generate_batch`], but hands each prompt's result to
    /// `done(index, result)` as soon as it is ready, so that a caller (a cache, a store) can make
    /// every finished answer durable before the rest of the batch is done. Each index is
    /// reported exactly once, in any order, with what `generate_batch` returns for it. The
    /// default runs `generate_batch` and then reports in order; backends that finish sequences
    /// one at a time (the native GGUF engine's continuous batching) override it.
    ///
    /// ```
    /// use pgraphrag_core::{GenParams, Generator, Prompt, Result};
    /// struct Upper;
    /// impl Generator for Upper {
    ///     fn generate(&self, p: &Prompt, _: &GenParams) -> Result<String> {
    ///         Ok(p.messages()[0].content.to_uppercase())
    ///     }
    /// }
    /// let mut seen = Vec::new();
    /// Upper.generate_batch_each(&[Prompt::user("a"), Prompt::user("b")], &GenParams::default(), &mut |i, r| {
    ///     seen.push((i, r.unwrap()));
    /// });
    /// assert_eq!(seen, [(0, "A".to_string()), (1, "B".to_string())]);
    /// ```
    fn generate_batch_each(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
        done: &mut (dyn FnMut(usize, Result<String>) + Send),
    ) {
        for (i, r) in self.generate_batch(prompts, params).into_iter().enumerate() {
            done(i, r);
        }
    }
}

/// Counts the tokens a model's tokenizer makes of a text (special tokens included, as the
/// model will see them): what a token budget is measured in. `pgraphrag-prompt`'s
/// `HfTokenizer` (any `tokenizer.json`) and `pgraphrag-llm`'s `LlmTokenizer` implement it.
///
/// ```
/// use pgraphrag_core::{Result, TokenCounter};
/// /// One token per whitespace-separated word: a toy counter.
/// struct Words;
/// impl TokenCounter for Words {
///     fn count(&self, text: &str) -> Result<usize> { Ok(text.split_whitespace().count()) }
/// }
/// assert_eq!(Words.count("a b  c").unwrap(), 3);
/// ```
pub trait TokenCounter {
    /// The number of tokens of `text`.
    fn count(&self, text: &str) -> Result<usize>;
}

impl<T: TokenCounter + ?Sized> TokenCounter for &T {
    fn count(&self, text: &str) -> Result<usize> {
        (**self).count(text)
    }
}

/// Scores one prediction against one reference; returns named scores (e.g. `rouge1`).
pub trait Metric {
    /// Scores `prediction` against `reference`.
    fn score(&self, prediction: &str, reference: &str) -> Vec<(&'static str, f64)>;
}

/// Forwards every method (an override of `rank` included) to the pointee.
macro_rules! forward_retriever {
    ($($ptr:ty),*) => {$(
        impl<T: Retriever + ?Sized> Retriever for $ptr {
            fn scores(&self, query: &str, docs: &[&str]) -> Result<Vec<f64>> {
                (**self).scores(query, docs)
            }
            fn tie_order(&self) -> TieOrder {
                (**self).tie_order()
            }
            fn rank(&self, query: &str, docs: &[&str], k: Option<usize>) -> Result<Vec<Scored<usize>>> {
                (**self).rank(query, docs, k)
            }
        }
    )*};
}
forward_retriever!(&T, Box<T>);
impl<T: Encoder + ?Sized> Encoder for &T {
    fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
        (**self).encode(texts)
    }
    fn dim(&self) -> Option<usize> {
        (**self).dim()
    }
}
impl<T: Encoder + ?Sized> Encoder for Box<T> {
    fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
        (**self).encode(texts)
    }
    fn dim(&self) -> Option<usize> {
        (**self).dim()
    }
}
impl<T: Generator + ?Sized> Generator for &T {
    fn generate(&self, prompt: &Prompt, params: &GenParams) -> Result<String> {
        (**self).generate(prompt, params)
    }
    fn generate_batch(&self, prompts: &[Prompt], params: &GenParams) -> Vec<Result<String>> {
        (**self).generate_batch(prompts, params)
    }
    fn generate_batch_each(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
        done: &mut (dyn FnMut(usize, Result<String>) + Send),
    ) {
        (**self).generate_batch_each(prompts, params, done)
    }
}
impl<T: Generator + ?Sized> Generator for Box<T> {
    fn generate(&self, prompt: &Prompt, params: &GenParams) -> Result<String> {
        (**self).generate(prompt, params)
    }
    fn generate_batch(&self, prompts: &[Prompt], params: &GenParams) -> Vec<Result<String>> {
        (**self).generate_batch(prompts, params)
    }
    fn generate_batch_each(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
        done: &mut (dyn FnMut(usize, Result<String>) + Send),
    ) {
        (**self).generate_batch_each(prompts, params, done)
    }
}

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
