#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-retrieval
//!
//! Retrieval for personalized RAG: rank_bm25-identical BM25Okapi, Lucene BM25, dense BERT
//! mean-pooling (Contriever recipe) on candle, random, and graph-scoped profile retrieval.
//!
//! | module | what |
//! |---|---|
//! | [`sparse`] | [`Bm25Okapi`] (bit-identical to rank_bm25 0.2.2), [`Bm25Retriever`] (PGraphRAG / LaMP tokenization, fitted per candidate list), [`Bm25Lucene`], [`RandomRetriever`], [`NoRetriever`], tie orders |
//! | `dense` (feature `dense`) | BERT mean-pooling encoder on candle, embedding cache, dense retrieval |
//! | [`profile`] | PGraphRAG's graph-scoped user / neighbour profiles (batch, released-code recipe) |
//! | [`live`] | [`live::ProfileIndex`]: a shareable index taking writes and deletes while threads read |
//! | [`scoring`] | vector similarity and reciprocal-rank fusion |
//! | [`token_graph`] | [`token_graph::TokenGraph`]: exact profile BM25 at scale over an impact-ordered index |
//!
//! ```
//! use pgraphrag_core::Retriever;
//! use pgraphrag_retrieval::Bm25Retriever;
//!
//! let docs = ["great soap", "bad soap", "great shampoo"];
//! let top = Bm25Retriever::lamp().rank("great shampoo", &docs, Some(1)).unwrap();
//! assert_eq!(top[0].item, 2);
//! ```
#![deny(missing_docs)]

mod error;
pub use error::{Error, Result};

#[cfg(feature = "dense")]
pub mod dense;
pub mod live;
pub mod profile;
pub mod scoring;
pub mod sparse;
pub mod token_graph;

pub use sparse::{
    Bm25Builder, Bm25Lucene, Bm25Okapi, Bm25Params, Bm25Retriever, NoRetriever, RandomRetriever,
    TieOrder,
};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
