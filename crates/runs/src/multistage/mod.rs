//! The multistage writing paper as runs: its Table 2 grid on one split of a `multistage build`
//! examples file ([`RunSpec`]) and its training data with weak labels and author pairs
//! ([`ExportSpec`]), and the grid's answers without a model ([`BaselinesSpec`]). The stages are `pgraphrag_stages::multistage`, the grid and the export
//! `pgraphrag_eval::multistage`; a run here loads the examples, the dense encoder (warmed up
//! front), WordNet and the model, and writes its files. See `docs/multistage.md`.

mod baselines;
mod export;
mod run;
mod setup;

pub use baselines::{BaselinesReport, BaselinesSpec};
pub use export::{ExportReport, ExportSpec};
pub use run::{RunReport, RunSpec};
