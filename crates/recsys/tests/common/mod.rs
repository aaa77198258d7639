//! Where the real-data tests find their files (shared by the test binaries of this folder).
//! Missing files fail the test with the command that fetches them.
// Each test binary uses only some of these.
#![allow(dead_code)]
use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn ml100k_dir() -> PathBuf {
    let dir = std::env::var_os("PGRAPHRAG_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("models/corpora"))
        .join("ml-100k");
    assert!(
        dir.join("ml-100k.kg").is_file(),
        "ML-100K is missing at {}: run scripts/fetch-corpora.sh (or set PGRAPHRAG_CORPORA)",
        dir.display()
    );
    dir
}

pub fn ml1m_dir() -> PathBuf {
    let dir = std::env::var_os("PGRAPHRAG_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/data"))
        .join("movielens-1m");
    assert!(
        dir.join("test_filtered.csv").is_file(),
        "the ML-1M slice is missing at {}: set PGRAPHRAG_DATA to the shared data folder \
         (ML-100K comes from scripts/fetch-corpora.sh)",
        dir.display()
    );
    dir
}

pub fn minilm_dir() -> PathBuf {
    let dir = std::env::var_os("PGRAPHRAG_MINILM")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("models/all-MiniLM-L6-v2"));
    assert!(
        dir.join("config.json").is_file(),
        "all-MiniLM-L6-v2 is missing at {}: run scripts/fetch_models.sh (or set PGRAPHRAG_MINILM)",
        dir.display()
    );
    dir
}
