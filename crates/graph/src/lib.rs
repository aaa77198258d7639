#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-graph
//!
//! The bipartite user-item graph of PGraphRAG on [`petgraph`]: users and items are nodes,
//! every review is an edge from its author to the item it is about. On top of it sit the
//! three profile scopes of the paper:
//!
//! * [`Scope::User`]: the user's own reviews of *other* items (LaMP-style history);
//! * [`Scope::Neighbor`]: other users' reviews of the *target* item;
//! * [`Scope::Both`]: the two together (PGraphRAG).
//!
//! The target review (and any other review of the target item by the target user) is never
//! part of a profile. Reviews can be added at any time ([`UserItemGraph::insert`]); no
//! rebuild is needed.
//!
//! The released notebook stores its graph in a Python dict keyed by `(user_id, product_id)`,
//! so a later review of the same product by the same user *overwrites* the earlier one
//! (keeping the earlier insertion position, taking the later `doc_id`). That behaviour is
//! [`Duplicates::Overwrite`]; [`Duplicates::KeepAll`] keeps every review. Product ids keep
//! their JSON type in the notebook (`123` and `"123"` are different products); see
//! [`ItemId`] and `pgraphrag_data::IdPolicy`.
//!
//! The [`kg`] module holds the typed knowledge graph of K-RagRec: entities and relations with
//! text attributes, `k`-hop ego sub-graphs and triples as text ([`kg::KnowledgeGraph`]).
//!
//! ```
//! use pgraphrag_core::Entry;
//! use pgraphrag_graph::{GraphOptions, ItemId, Scope, UserItemGraph};
//!
//! let e = |id, u: &str, i: &str| Entry { id, author: u.into(), item: i.into(), ..Default::default() };
//! let mut g = UserItemGraph::new(GraphOptions::default());
//! g.insert(e(0, "alice", "p1"));
//! g.insert(e(1, "alice", "p2"));
//! g.insert(e(2, "bob", "p1"));
//! let target = ItemId::from("p1");
//! let user: Vec<usize> = g.profile("alice", &target, Scope::User).iter().map(|&r| g.review(r).entry.id).collect();
//! let neigh: Vec<usize> = g.profile("alice", &target, Scope::Neighbor).iter().map(|&r| g.review(r).entry.id).collect();
//! assert_eq!(user, vec![1]);
//! assert_eq!(neigh, vec![2]);
//! ```
#![deny(missing_docs)]

pub mod kg;
pub use kg::KnowledgeGraph;
mod source;
pub use source::{
    ProfileRequest, ProfileSource, ReviewLookup, ReviewSet, SourcedProfile, UserDirectory,
};
mod user_item;
pub use user_item::{
    Duplicates, Error, GraphOptions, Inserted, Node, Result, Review, ReviewId, Scope, UserItemGraph,
};

/// An item (product) id with its JSON type: `pgraphrag-core`'s, re-exported.
pub use pgraphrag_core::ItemId;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
