//! # pgraphrag-graph
//!
//! The bipartite user-item graph of PGraphRAG on petgraph, with user, neighbour and combined profile scopes.
#![deny(missing_docs)]
