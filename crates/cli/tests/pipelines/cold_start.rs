//! `pgraphrag bench --item-summaries` end to end with the real SmolLM2 model: the item
//! summaries are computed once into their store, exported, put into the `isum_` cells'
//! prompts, tested against `both_k{k}`; a rerun computes nothing; without a neighbor or both
//! cell the flag is a usage error.
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` (`scripts/fetch-llms.sh --smollm-only`) and
//! the PGraphRAG dev splits (`$PGRAPHRAG_DATA`, default `../shared/data`); fails loudly without.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn model() -> PathBuf {
    let p = std::env::var_os("PGRAPHRAG_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf"));
    assert!(
        p.is_file(),
        "the SmolLM2 model is missing at {}: run scripts/fetch-llms.sh --smollm-only",
        p.display()
    );
    p
}

fn split() -> PathBuf {
    let data = match std::env::var_os("PGRAPHRAG_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => root().join("../shared/data"),
    };
    let p = pgraphrag_data::pgraphrag_split_path(&data, "amazon", "dev");
    assert!(
        p.is_file(),
        "the PGraphRAG split is missing at {}: set PGRAPHRAG_DATA to the shared data folder",
        p.display()
    );
    p
}

fn bench(out: &Path, modes: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .arg("bench")
        .arg("--split")
        .arg(split())
        .arg("--model")
        .arg(model())
        .arg("--out")
        .arg(out)
        .arg("--item-summaries")
        .arg(out.join("items.sqlite"))
        .args(["--quiet", "--task", "rating", "--limit", "2", "--ks", "2"])
        .args(["--modes", modes])
        .args([
            "--item-summary-tokens",
            "16",
            "--item-summary-context",
            "512",
        ])
        .output()
        .unwrap()
}

fn stats(o: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "bench failed: {}\n{stdout}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stats "))
        .unwrap_or_else(|| panic!("no stats line in:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn item_summaries_are_computed_once_and_reach_the_isum_cells() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let first = bench(out, "neighbor,both");
    let s = stats(&first);
    // neighbor_k2, both_k2 and their isum_ twins for two users.
    assert_eq!(s["jobs"], 8);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        stderr.contains("item summaries: 2 users, 0 done before"),
        "{stderr}"
    );
    let exported = std::fs::read_to_string(out.join("item_summaries.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty(), "no item summary exported");
    for l in &lines {
        let id = l["id"].as_str().unwrap();
        assert!(id.contains('|'), "{id} is not an item|user key");
        assert!(!l["summary"].as_str().unwrap().trim().is_empty());
    }
    for cell in ["neighbor_k2", "both_k2", "isum_neighbor_k2", "isum_both_k2"] {
        let name = format!("OUTPUT-amazon_dev_reviewRating_SmolLM2-135M-Instruct_bm25-{cell}.json");
        assert!(out.join(&name).is_file(), "{name} missing");
    }
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(
        md.contains("paired t-tests over users against `both_k2`"),
        "{md}"
    );
    assert!(md.contains("| isum_both_k2 |"), "{md}");
    // A summarised user's isum_ prompt differs from the plain one: more distinct prompts
    // than the plain cells have.
    assert!(s["unique_prompts"].as_u64().unwrap() > 4, "{s}");

    let again = bench(out, "neighbor,both");
    let s2 = stats(&again);
    assert_eq!(s2["generated"], 0, "{s2}");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains(&format!("{} done before, 0 computed", lines.len())),
        "{stderr}"
    );
}

#[test]
fn item_summaries_need_a_neighbor_or_both_cell() {
    let dir = tempfile::tempdir().unwrap();
    let o = bench(dir.path(), "none,user");
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("add one of them to --modes"), "{stderr}");
}
