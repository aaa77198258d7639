#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-data
//!
//! Loaders and writers for the PGraphRAG data files, with typed errors that name the file,
//! the record and the field:
//!
//! * [`Split`]: a PGraphRAG split (`data_splits/*.json`): a list of users, each
//!   `{"id", "profile": [{"title", "text", "rating", "pid" | "productAsin"}]}` with
//!   `profile[0]` the target review. [`load_split`] / [`parse_split`] read one;
//!   [`Split::to_graph`] builds the user-item graph of `pgraphrag-graph`.
//! * [`RankingRecord`]: one record of a ranking file
//!   (`RANKING-<ds>_<split>_<task>_<ranker>.json`, written by the released notebook's
//!   `process_item`), plus a `score` on every ranked entry. [`load_rankings`] and
//!   [`write_rankings`] read and write whole files.
//! * [`pgraphrag_split_path`]: where a released split lies in a shared data folder (the
//!   caller names the folder; the library reads no environment variable).
//! * [`output`]: the one output discipline: whole-file-or-nothing writes ([`write_atomic`]:
//!   temporary file, fsync, rename), and the refusals before any write (links, FIFOs, devices,
//!   folders, an output that is one of the inputs; [`OutputError`]).
//! * [`lamp`]: LaMP's questions and outputs files (`read_questions`, `read_questions_for`,
//!   `write_questions`, `read_outputs`, `read_outputs_for`, `write_outputs`), golds checked
//!   against their task's domain (`check_golds`).
//!
//! Values are checked against their domain when they are read, so that bad input is an error
//! rather than a wrong number: ratings on [`pgraphrag_core::RATING_SCALE`], LaMP golds among
//! their task's labels; [`Split::check_unique_ids`] refuses a split whose records share a
//! user id ([`Error::OutOfRange`], [`Error::DuplicateUser`]).
//! * [`recbole`]: RecBole's atomic files ([`AtomicFile`]: `ml-100k.inter`, `.item`, `.kg`,
//!   `.link`, …) and the line reader under them, errors ([`RecboleError`]) naming the file and
//!   the line.
//! * [`jsonl`]: the JSON Lines inputs of the `pgraphrag` tool (pairs, texts), errors
//!   ([`JsonlError`]) naming the file, the line and the field.
//!
//! ```
//! use pgraphrag_data::{parse_split, IdPolicy};
//! use pgraphrag_graph::{GraphOptions, Scope};
//!
//! let json = br#"[{"id": "u1", "profile": [{"title": "Nice", "text": "Good soap", "rating": 5, "pid": "p1"}]},
//!                 {"id": "u2", "profile": [{"title": "", "text": "Meh", "rating": 2, "pid": "p1"}]}]"#;
//! let split = parse_split(json, "inline.json").unwrap();
//! assert_eq!(split.users.len(), 2);
//! let graph = split.to_graph(GraphOptions::notebook(), IdPolicy::KeepJsonType);
//! let target = split.users[0].target().unwrap();
//! let n = graph.profile("u1", &target.pid, Scope::Neighbor);
//! assert_eq!(graph.review(n[0]).entry.title, None); // empty title becomes None
//! ```
#![deny(missing_docs)]

mod error;
pub mod jsonl;
pub mod lamp;
pub mod output;
mod paths;
mod prompt_record;
mod ranking;
pub mod recbole;
mod split;

pub use error::shown;
pub use error::{Error, OutOfRange, Result};
pub use jsonl::JsonlError;
pub use output::{OutputError, write_atomic};
pub use paths::{DATASETS, pgraphrag_split_path};
pub use pgraphrag_graph::ItemId;
pub use prompt_record::PromptRecord;
pub use ranking::{
    NeighborRating, RankingRecord, UserRating, load_rankings, parse_rankings, write_rankings,
    write_rankings_to,
};
pub use recbole::{AtomicFile, RecboleError};
pub use split::{IdPolicy, Split, SplitReview, SplitUser, load_split, parse_split};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
