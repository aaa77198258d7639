//! The PostgreSQL profile store (feature `postgres`): a PGraphRAG review graph in PostgreSQL,
//! partitioned for profile fetches, behind [`pgraphrag_graph::ProfileSource`].
//!
//! What spreads over machines is candidate assembly, not the search: a profile is the user's
//! reviews (keyed by user) and the target item's reviews (keyed by item). Each dataset is a
//! PostgreSQL schema `pgraphrag_<name>` holding
//!
//! * `reviews_by_user`: every review of the graph, hash-partitioned by `user_id`;
//! * `reviews_by_item`: the same reviews, hash-partitioned by `item` (so each scope is one
//!   query on one partition, and a profile is fetched in two steps, never with a
//!   cross-partition `IN (SELECT ...)`);
//! * `users` (first-appearance order, for the random review) and `targets` (each split
//!   record's `profile[0]`, raw);
//! * `meta`: the graph options it was built with and its sizes.
//!
//! Each review keeps its graph slot (`slot`): profiles are read `ORDER BY slot`, which is the
//! in-memory graph's order, so rankings are byte-identical to the in-memory path. Duplicate
//! handling and the id policy are applied when loading (the loader builds the graph with
//! `pgraphrag-graph` and stores its slots).
//!
//! On a coordinator with `postgres_fdw` foreign servers named `pgraphrag_shard<N>` (what
//! `scripts/cluster.sh` sets up) the partitions are foreign tables on the shard servers; on a
//! plain server they are local tables. `public.pgraphrag_schema` records the schema version;
//! another version, a missing dataset or a missing partition is an [`Error`] that says what to
//! fix. See `docs/store.md`.
//!
//! ```no_run
//! use pgraphrag_graph::{GraphOptions, ItemId, ProfileSource, Scope};
//! use pgraphrag_data::IdPolicy;
//! use pgraphrag_store::postgres::{LoadOptions, PgProfiles, PgStore};
//!
//! let split = pgraphrag_data::load_split("amazon_dev.json".as_ref()).unwrap();
//! let mut store = PgStore::connect("postgres://postgres@127.0.0.1:55432/pgraphrag").unwrap();
//! let opts = LoadOptions { graph: GraphOptions::notebook(), ids: IdPolicy::KeepJsonType, ..Default::default() };
//! store.load("amazon_dev", &split, &[], &opts, &()).unwrap();
//! let profiles = PgProfiles::open("postgres://postgres@127.0.0.1:55432/pgraphrag", "amazon_dev").unwrap();
//! let p = profiles.profile(&split.users[0].id, &ItemId::from("B0001"), Scope::Both).unwrap();
//! println!("{} candidates", p.len());
//! ```

mod artifacts;
mod load;
mod profiles;
mod schema;
mod store;

pub use ::postgres::{Client, Error as DriverError, Row};
pub use artifacts::{ArtifactSchema, ArtifactTable};
pub use load::{LoadOptions, LoadSummary, parse_review_line};
pub use profiles::PgProfiles;
pub use schema::{
    DatasetInfo, Layout, PartitionedTable, SCHEMA_VERSION, Shard, dataset_schema, ensure_component,
    first_unanswering, layout, validate_dataset_name,
};
pub use store::{
    Error, PgStore, Result, config, connect_config, connection_lost, driver_message, redact,
    server_lost,
};
