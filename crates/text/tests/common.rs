//! Shared helpers of the integration tests (not a test target itself).
#![allow(dead_code)]

use std::path::PathBuf;

/// `$PGRAPHRAG_DATA`, or `../shared/data` relative to the repository root.
pub fn data_dir() -> PathBuf {
    match std::env::var_os("PGRAPHRAG_DATA") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

pub fn fixture(name: &str) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON in {}: {e}", path.display()))
}

pub fn strs(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_str().expect("string").to_string())
        .collect()
}

/// Compare token lists; describe the first difference.
pub fn diff(expected: &[String], got: &[String]) -> Option<String> {
    if expected == got {
        return None;
    }
    let i = expected.iter().zip(got).take_while(|(a, b)| a == b).count();
    let lo = i.saturating_sub(3);
    Some(format!(
        "first difference at token {i}: expected {:?} got {:?} (lengths {} vs {})",
        &expected[lo..(i + 4).min(expected.len())],
        &got[lo..(i + 4).min(got.len())],
        expected.len(),
        got.len()
    ))
}

pub fn report(kind: &str, failures: &[String], total: usize) {
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(15).collect();
        panic!(
            "{kind}: {} of {total} cases differ from nltk 3.9.1:\n{}",
            failures.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
