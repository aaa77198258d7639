//! K-RagRec (knowledge-graph RAG for LLM recommendation) as runs: the sub-graph index
//! ([`IndexSpec`]), the inference-only methods and no-LLM baselines ([`EvalSpec`]), a trained
//! encoder or soft prompt ([`AdapterSpec`]), its training ([`TrainSpec`]) and the tables
//! recomputed from rows files alone ([`CompareSpec`]).
//!
//! The recipe's parts (rows, candidate sets, prompts, retrieval, scoring, metrics) are
//! `pgraphrag_recsys` and `pgraphrag_train`; a run here loads the data, KG, encoder and index,
//! resumes its rows file ([`pgraphrag_eval::RowsFile`]: other settings refused, a torn tail cut)
//! and reports ACC and Recall@k with bootstrap intervals. See `docs/kragrec.md`.

mod adapter;
mod compare;
mod data;
mod eval;
mod index;
mod train;

pub use adapter::AdapterSpec;
pub use compare::{CompareReport, CompareSpec, Paired, parse_pair};
pub use data::{
    DataSpec, DatasetName, IndexAggregation, MAX_TRIPLES, RESULT_FILES, Report, RunConfig,
    retrieval_cache_path,
};
pub use eval::{EvalSpec, RetrievalPreset};
pub use index::{IndexReport, IndexSpec};
pub use train::{GnnSize, TrainReport, TrainSpec};
