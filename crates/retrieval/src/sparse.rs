//! Sparse (lexical) retrieval: BM25Okapi identical to rank_bm25 0.2.2, Lucene BM25, random, none.
//!
//! * [`Bm25Okapi`]: a fitted index over pre-tokenized documents, a faithful port of
//!   `rank_bm25.BM25Okapi` 0.2.2 (same formula, same floating-point operation order, same
//!   negative-idf flooring), with typed errors where rank_bm25 divides by zero.
//! * [`Bm25Retriever`]: a [`pgraphrag_core::Retriever`] that tokenizes the query and the
//!   candidates, fits a fresh [`Bm25Okapi`] on the candidate list alone (as PGraphRAG's notebook
//!   does) and returns the top-k in a documented [`TieOrder`].
//! * [`Bm25Lucene`]: Lucene-weighted BM25 (`ln(1 + (N - n + 0.5) / (n + 0.5))`, k1 = 1.2) through
//!   the `bm25` crate.
//! * [`RandomRetriever`] (seeded, platform-independent) and [`NoRetriever`] (returns nothing).
//! * [`Bm25Builder`]: `with_params` and `with_tie_order` of every BM25 ranker, over its
//!   [`Bm25Settings`].
//! * [`formula`]: rank_bm25's idf, epsilon floor and term-frequency part, the one
//!   implementation every BM25Okapi path (including [`crate::token_graph`]) calls.
//! * [`Tokenizer`] with [`PgraphragTokenizer`] (`nltk.word_tokenize(text.lower())`) and
//!   [`PythonSplit`] (LaMP's `str.split()`).
//!
//! ```
//! use pgraphrag_retrieval::sparse::{Bm25Okapi, Bm25Params};
//!
//! let corpus = vec![
//!     vec!["hello", "there", "good", "man"],
//!     vec!["it", "is", "quite", "windy", "in", "london"],
//!     vec!["how", "is", "the", "weather", "today"],
//! ];
//! let bm25 = Bm25Okapi::fit(&corpus, Bm25Params::default()).unwrap();
//! let scores = bm25.get_scores(&["windy", "london"]);
//! assert_eq!(scores.len(), 3);
//! assert!(scores[1] > 0.0 && scores[0] == 0.0);
//! assert_eq!(bm25.get_top_n(&["windy", "london"], 1), vec![1]);
//! ```

mod baseline;
pub(crate) mod fit;
pub mod formula;
pub(crate) mod interner;
pub(crate) mod list_fit;
mod lucene;
mod okapi;
mod retriever;
mod settings;
mod tokenize;

pub use baseline::{NoRetriever, RandomRetriever};
pub use lucene::Bm25Lucene;
pub use okapi::{Bm25Okapi, Bm25Params};
/// The tie orders and top-k of `pgraphrag-core`, re-exported where the BM25 retrievers use them.
pub use pgraphrag_core::{TieOrder, numpy_argsort, rank_order, top_k};
pub use retriever::Bm25Retriever;
pub use settings::{Bm25Builder, Bm25Settings, LuceneParams};
pub use tokenize::{PgraphragTokenizer, PythonSplit, Tokenizer, python_split};
