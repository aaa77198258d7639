//! The paper pipelines of pgraphrag as library values.
//!
//! Each run is a serde spec with named presets (the paper's setting, the released code's)
//! and a `run(progress) -> Report`. The `pgraphrag` command line maps its flags to these
//! specs and renders their progress and reports; a library user builds the same spec and gets
//! the same run, resumable where the command's is.
//!
//! - [`lamp`]: the summary-augmented LaMP grid (Table 3) and its trivial baselines.
//! - [`multistage`]: the multistage writing grid (Table 2) and its training data.
//! - [`corpus`]: real corpora converted, and the LaMP tasks and multistage examples built from
//!   them.
//! - [`embed`]: texts encoded with a BERT encoder.
//! - [`jobs`]: offline jobs split into units for work queues (ranking, embedding, summarising
//!   and PGraphRAG's generation grid, each over a range of users or texts), each unit committed
//!   through a [`jobs::ResultSink`] before it is acknowledged; `pgraphrag queue` and
//!   `pgraphrag worker` run them on JetStream.
//! - [`kragrec`]: K-RagRec's sub-graph index, the inference-only methods and no-LLM baselines,
//!   a trained encoder's evaluation, its training, and the tables recomputed from rows files.
//! - [`pgraphrag`]: PGraphRAG's ranking files (every user's profile of a split, ranked) and its
//!   generation grid with the evaluation (`pgraphrag bench`).
//! - [`lora`]: LoRA fine-tuning of the generator.
//! - `store` (feature `postgres`): a split loaded into the PostgreSQL profile store, and the
//!   store timed against the in-memory graph.
//! - [`metrics`]: ROUGE, METEOR and BLEU over prediction/reference pairs.
//!
//! Every error is an [`Error`] that says whether the caller's input was at fault
//! ([`Error::is_bad_input`]). Progress, and the notices a run has for its log, go through
//! [`pgraphrag_core::Progress`]; nothing here draws, prints or reads the environment.
//!
//! ```no_run
//! use pgraphrag_runs::kragrec::{CompareSpec, DataSpec, EvalSpec};
//! let data = DataSpec::ml1m("data/ml-100k", "data/ml1m", "models/all-MiniLM-L6-v2", "runs/kg.index");
//! let spec = EvalSpec::paper(data, "models/llm.gguf", "runs/rows.jsonl", 9000, 100);
//! let report = spec.run(&())?;
//! print!("{}", report.table);
//! let tables = CompareSpec { rows: vec![spec.out.clone()], pairs: vec![] }.run()?;
//! tables.write("runs/compare".as_ref())?;
//! # Ok::<(), pgraphrag_runs::Error>(())
//! ```
#![warn(missing_docs)]

mod baselines_report;
mod budget;
pub mod corpus;
pub mod embed;
mod error;
pub mod jobs;
pub mod kragrec;
pub mod lamp;
mod location;
pub mod lora;
pub mod metrics;
pub mod multistage;
mod names;
pub mod pgraphrag;
#[cfg(feature = "postgres")]
pub mod store;
mod training;

pub use baselines_report::BaselinesReport;
pub use budget::summary_budget;
pub use error::{BoxError, Error, Result, is_bad_input};
pub use location::describe_location;
pub use training::TrainSettings;

/// The README's example, run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
