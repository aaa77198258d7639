//! PGraphRAG (personalized graph-based RAG) as runs: every user's profile of a split ranked
//! into the released notebook's ranking files ([`RankSpec`]), and the generation grid with its
//! evaluation ([`BenchSpec`]), and the answers without an LLM on the same rows
//! ([`BaselinesSpec`]). The graph is `pgraphrag_graph`,
//! the rankers `pgraphrag_retrieval`, the presets and the split ranking `pgraphrag_eval`. The
//! queue's unit form of the BM25 ranking is [`crate::jobs::RankSpec`].

mod baselines;
mod bench;
mod rank;
mod source;

pub use crate::jobs::StoreProfiles as Profiles;
pub use baselines::{BaselinesReport, BaselinesSpec};
pub use bench::{Backend, BenchReport, BenchSpec, ItemSummaries, split_names};
pub use rank::{RankReport, RankSpec, RankedFile, Ranker};
pub use source::load_split;
