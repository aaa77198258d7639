//! The live index: one shareable [`ProfileIndex`] that takes creates, updates and deletes
//! while any number of threads read ranked contexts from it, never stale.
//!
//! | type | what |
//! |---|---|
//! | [`ProfileIndex`] | `Send + Sync`; reads and writes through `&self` |
//! | [`Document`] | what a caller writes (validated: typed errors, nothing coerced) |
//! | [`Snapshot`] | one immutable generation of the index; readers are never blocked |
//! | [`ContextRequest`] / [`Context`] | PGraphRAG's user / neighbour scopes ranked by BM25, dense or hybrid retrieval |
//!
//! The live index follows the library's clean recipe: documents are title and text without
//! `None` placeholders, documents without tokens are left out of BM25 rankings, ties go to
//! the earlier document, and no random review is drawn. The released-code recipe (byte-
//! identical ranking files) stays with [`crate::profile::ProfileRanker`]. BM25 scores are
//! rank_bm25's, fitted per candidate list, bit for bit those of
//! `ProfileRanker` with `CachedBm25` and [`pgraphrag_core::DocText::Clean`] on the same
//! documents in the same order.
//!
//! Design and measurements: `docs/online.md`.
//!
//! ```
//! use std::sync::Arc;
//! use pgraphrag_graph::Scope;
//! use pgraphrag_retrieval::live::{ContextRequest, Document, ProfileIndex};
//!
//! let index = Arc::new(ProfileIndex::default());
//! let writer = {
//!     let index = Arc::clone(&index);
//!     std::thread::spawn(move || {
//!         for i in 0..20 {
//!             let text = format!("review {i} of a lavender soap");
//!             let doc = Document { user: format!("u{}", i % 4), id: i.to_string(),
//!                 item: Some("soap".into()), text, ..Default::default() };
//!             index.upsert(doc).unwrap();
//!         }
//!     })
//! };
//! writer.join().unwrap();
//! let req = ContextRequest { user: "u0".into(), item: Some("soap".into()), query: "lavender".into(),
//!     scope: Some(Scope::Neighbor), k: 3, ..Default::default() };
//! let ctx = index.context(&req).unwrap();
//! assert_eq!(ctx.generation, 20);
//! assert_eq!(ctx.neighbors.len(), 3);
//! assert!(ctx.neighbors.iter().all(|h| h.doc.user() != "u0"));
//! ```

mod context;
mod doc;
mod index;
mod options;
mod snapshot;
pub mod workload;

pub use context::{Context, ContextRequest, Hit, RetrieverKind};
pub use doc::{Document, StoredDoc};
pub use index::{ProfileIndex, Staged, UserRemoval, Written};
pub use options::IndexOptions;
/// The profile scopes a [`ContextRequest`] names: `pgraphrag-graph`'s, re-exported.
pub use pgraphrag_graph::Scope;
pub use snapshot::Snapshot;

#[cfg(test)]
mod tests;
