//! What the CLI's end-to-end tests share: the workspace's model and data, and reading what
//! `pgraphrag` printed and wrote.
#![allow(dead_code)]
use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The SmolLM2 model (`scripts/fetch-llms.sh --smollm-only`); the test fails without it.
pub fn model() -> PathBuf {
    let p = root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        p.is_file(),
        "the SmolLM2 model is missing at {}: run scripts/fetch-llms.sh --smollm-only",
        p.display()
    );
    p
}

/// The PGraphRAG dev split of `dataset` under `$PGRAPHRAG_DATA` (default `../shared/data`);
/// the test fails without it.
pub fn split(dataset: &str) -> PathBuf {
    let data = match std::env::var_os("PGRAPHRAG_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => root().join("../shared/data"),
    };
    let p = pgraphrag_data::pgraphrag_split_path(&data, dataset, "dev");
    assert!(
        p.is_file(),
        "the PGraphRAG split is missing at {}: set PGRAPHRAG_DATA to the shared data folder",
        p.display()
    );
    p
}

/// The JSON of the `stats ` line a command printed.
pub fn stats(stdout: &str) -> serde_json::Value {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stats "))
        .unwrap_or_else(|| panic!("no stats line in:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

/// results.md, results.csv and the OUTPUT files of a bench run, by name.
pub fn bench_files(out: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("OUTPUT-") || n == "results.md" || n == "results.csv")
        .map(|n| (n.clone(), std::fs::read(out.join(&n)).unwrap()))
        .collect();
    v.sort();
    v
}
