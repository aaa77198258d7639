//! Thin examples composing the pgraphrag crates; see `pgraphrag.rs` and `compose_your_own.rs`.
//! The examples run in CI as smoke tests (`tests/examples_run.rs` in this package).
