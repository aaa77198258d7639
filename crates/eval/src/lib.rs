//! # pgraphrag-eval
//!
//! Experiment grids for pgraphrag: resumable runs with cached generations (SQLite),
//! progress bars and result tables (Markdown/CSV).
#![deny(missing_docs)]
