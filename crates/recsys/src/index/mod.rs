//! K-RagRec's hop-field knowledge sub-graph index: every entity's `l`-hop representation
//! (`l = 0, 1, 2, …`), which stands for the `l`-hop ego sub-graph around it, and cosine
//! search over them.
//!
//! * [`HopVectors::build`] encodes the entity and relation texts with any
//!   [`pgraphrag_core::Encoder`] and runs message passing ([`Aggregation`]);
//!   [`HopVectors::save`] / [`HopVectors::load`] persist them (format in `docs/kragrec.md`).
//! * [`SubgraphIndex`] is the search: one required method, top-K by cosine for one query
//!   vector at one hop. [`ExactIndex`] scans every vector; an ANN crate can stand in.

mod exact;
mod file;
mod gcn;
mod scan;
mod vectors;

pub use exact::ExactIndex;
pub use file::INDEX_FORMAT_VERSION;
pub use gcn::Aggregation;
pub(crate) use scan::dot;
pub use vectors::{HopVectors, IndexOptions, Subgraph, SubgraphHit, SubgraphIndex, kg_fingerprint};
pub(crate) use vectors::{encode_checked, normalize};
