//! Shared helpers of the workspace-level integration tests.
use std::path::PathBuf;

/// The real-data folder: `$PGRAPHRAG_DATA`, else `../shared/data` beside the checkout.
/// Panics with a clear message when it is missing: these tests must not silently pass.
pub fn data_dir() -> PathBuf {
    let p = std::env::var_os("PGRAPHRAG_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
    assert!(
        p.is_dir(),
        "real data not found at {}: set PGRAPHRAG_DATA to the folder holding pgraphrag/*.json",
        p.display()
    );
    p
}
