//! Where the tests, examples and benchmarks find the SmolLM2 model (the library itself takes
//! paths): `$PGRAPHRAG_MODEL` when set; otherwise `models/SmolLM2-135M-Instruct.Q4_1.gguf` in
//! the first of the current directory and its ancestors that has it; otherwise that path under
//! this workspace's root (where `scripts/fetch-llms.sh` puts it), which may not exist yet.
//!
//! Included with `#[path = ...] mod model;` by every test that needs it.

use std::path::{Path, PathBuf};

/// The SmolLM2 model file the tests use (see the module docs).
#[allow(dead_code)]
pub fn model_path() -> PathBuf {
    if let Some(p) = std::env::var_os("PGRAPHRAG_MODEL").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let rel = Path::new("models").join("SmolLM2-135M-Instruct.Q4_1.gguf");
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            let p = dir.join(&rel);
            if p.exists() {
                return p;
            }
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}
