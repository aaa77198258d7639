//! Helpers shared by the pipeline tests.
use std::path::Path;
use std::process::{Command, Output};

/// Runs the `pgraphrag` binary with `args`.
pub fn pgraphrag(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .output()
        .expect("the pgraphrag binary runs")
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
