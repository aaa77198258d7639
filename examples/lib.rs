//! Helpers shared by the examples in this folder (none yet beyond re-exports).
pub use pgraphrag_core as core;
