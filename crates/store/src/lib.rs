//! # pgraphrag-store
//!
//! Persistent stores of the pgraphrag workspace: [`sqlite`], the one place where a SQLite file
//! is opened (pragmas, WAL, busy timeout, and a check that the file holds the kind and schema
//! version the caller expects); [`Artifacts`], the one backend of the four artifact stores
//! (this crate's [`GenerationCache`], the embedding cache of `pgraphrag-retrieval`, the summary
//! store of `pgraphrag-stages` and the score cache of `pgraphrag-recsys`); and
//! [`CachedGenerator`], the generation cache as a [`pgraphrag_core::Generator`] layer.
//!
//! With the feature `postgres`: `postgres`, the PostgreSQL profile store (a review graph
//! hash-partitioned by user and by item, on one server or on shard servers behind a
//! `postgres_fdw` coordinator, read through `pgraphrag_graph::ProfileSource`) and
//! `postgres::ArtifactTable`, the PostgreSQL setup of the artifact stores (`docs/store.md`).
//!
//! ```
//! use pgraphrag_store::sqlite::{Schema, open_in_memory};
//! let schema = Schema {
//!     kind: "notes",
//!     application_id: 0x4e4f_5445,
//!     version: 1,
//!     ddl: "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);",
//! };
//! let conn = open_in_memory(&schema, &Default::default()).unwrap();
//! conn.execute("INSERT INTO notes (body) VALUES ('hi')", []).unwrap();
//! ```
#![deny(missing_docs)]

pub mod artifacts;
pub mod generation;
pub mod sqlite;

#[cfg(feature = "jetstream")]
pub mod queue;

#[cfg(feature = "postgres")]
pub mod postgres;

pub use artifacts::{Artifact, Artifacts, Conn, is_postgres_url};
pub use generation::{CacheStats, CachedError, CachedGenerator, GenerationCache};
pub use sqlite::{Error, Result};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
