//! # pgraphrag-retrieval
//!
//! Retrieval for personalized RAG: rank_bm25-identical BM25Okapi, Lucene BM25, dense BERT
//! mean-pooling (Contriever recipe) on candle, random, and graph-scoped profile retrieval.
#![deny(missing_docs)]

mod error;
pub use error::{Error, Result};

#[cfg(feature = "dense")]
pub mod dense;
pub mod profile;
pub mod sparse;
