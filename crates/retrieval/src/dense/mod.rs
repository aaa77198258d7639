//! Dense retrieval: a BERT mean-pooling encoder (Contriever recipe) with a native CPU forward
//! pass (padding-free batches, AVX-512/AVX2 kernels picked at run time) or candle (CPU option, GPU),
//! an embedding cache, snippet ranking and fusion.
//!
//! * [`BertEncoder`]: any BERT checkpoint folder (`config.json`, `model.safetensors` or
//!   `pytorch_model.bin`, `tokenizer.json` or `vocab.txt`) with [`Pooling::Mean`] (masked
//!   mean, Contriever / sentence-transformers), [`Pooling::Pooler`] (`pooler_output`, as
//!   PGraphRAG's released notebook embeds documents) or [`Pooling::Cls`]; implements
//!   [`pgraphrag_core::Encoder`]. all-MiniLM-L6-v2 is the shipped default
//!   (`scripts/fetch-minilm.sh`); a `facebook/contriever` folder drops in unchanged.
//!   [`EncoderBackend`] picks the CPU forward pass (native by default, or candle);
//!   [`Precision`] its number format (f32 by default, or int8 linear layers).
//! * [`EmbeddingCache`] + [`encode_corpus`]: embeddings persisted in SQLite, keyed by the
//!   model's fingerprint, the pooling and the text's sha256 ([`encode_corpus_with`]: any
//!   encoder, keyed by the id the caller gives it).
//! * [`DenseRetriever`]: the [`pgraphrag_core::Retriever`] over any
//!   [`pgraphrag_core::Encoder`] (BERT by default), cosine (PGraphRAG) or dot product (LaMP)
//!   scoring; [`DenseRetriever::contriever`] with [`ContrieverOptions`] is PGraphRAG's
//!   Contriever recipe (paper text or released notebook).
//! * [`SnippetRanker`] (`RankSnippet`, `RankDocBySnpt`) and [`Rrf`] (reciprocal-rank fusion).
//!
//! See `docs/dense.md` for the guide and the differences from the reference code.

mod cache;
mod contriever;
mod encoder;
mod files;
mod kernels;
mod matmul;
mod native;
mod options;
mod packed;
mod qmatmul;
mod quant;
mod retriever;
mod snippet;

pub use cache::{CORPUS_CHUNK, EmbeddingCache, encode_corpus, encode_corpus_with, text_key};
pub use contriever::ContrieverOptions;
pub use encoder::{
    BertEncoder, DenseDevice, EncoderBackend, EncoderOptions, Pooling, l2_normalize,
};
pub use packed::PackedMatrix;
pub use quant::Precision;
pub use retriever::{DenseOptions, DenseRetriever, DenseRetrieverBuilder, Similarity};
pub use snippet::{
    RankDocBySnpt, RankDocDense, Rrf, SNIPPET_MIN_CHARS, SnippetHit, SnippetRanker, Splitter,
};
