//! `pgraphrag rank` against the Python reference (scripts/bench_rank.py, the notebook's BM25
//! ranking) on the first users of all 12 PGraphRAG dev task files: the same doc_ids in the same
//! order, the same BM25 scores (1e-9), the same random reviews. Fixture made by
//! `scripts/fixtures/rank_golden.py`. Needs the shared data (PGRAPHRAG_DATA).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn data_dir() -> PathBuf {
    match std::env::var_os("PGRAPHRAG_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// A fresh folder under the system temp dir (the CLI crate has no tempfile dev-dependency).
fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pgraphrag-rank-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ids(v: &Value, key: &str) -> Vec<Value> {
    v[key]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| e["doc_id"].clone())
        .collect()
}

fn scores(v: &Value, key: &str) -> Vec<Option<f64>> {
    v[key]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| e.get("score").and_then(Value::as_f64))
        .collect()
}

#[test]
fn rank_matches_python_reference_on_12_dev_files() {
    let golden: Value = serde_json::from_str(include_str!("fixtures/rank_golden.json")).unwrap();
    let n = golden["users_per_file"].as_u64().unwrap();
    let tmp = tempdir("golden");
    let mut lists = 0;
    for ds in ["amazon", "b2w", "gap", "hotel"] {
        let split = data_dir().join("pgraphrag").join(format!("{ds}_dev.json"));
        assert!(
            split.is_file(),
            "{} is required by this test: set PGRAPHRAG_DATA to the shared data folder",
            split.display()
        );
        for task in ["text", "title", "rating"] {
            let out = tmp.join(format!("{ds}_{task}.json"));
            let st = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
                .args([
                    "rank",
                    "--task",
                    task,
                    "--retriever",
                    "bm25",
                    "--top",
                    "5",
                    "--limit",
                    &n.to_string(),
                ])
                .arg("--split")
                .arg(&split)
                .arg("--out")
                .arg(&out)
                .status()
                .unwrap();
            assert!(st.success(), "pgraphrag rank failed on {ds} {task}");
            let got: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
            let got = got.as_array().unwrap();
            let want = golden["files"][format!("{ds}_{task}")].as_array().unwrap();
            assert_eq!(got.len(), want.len(), "{ds} {task}");
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                for (key, wk, wsk) in [("user_ratings", "u", "us"), ("neighbor_ratings", "n", "ns")]
                {
                    lists += 1;
                    let want_ids: Vec<Value> = w[wk].as_array().unwrap().clone();
                    assert_eq!(ids(g, key), want_ids, "{ds} {task} record {i} {key}");
                    let ws: Vec<Option<f64>> = w[wsk]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(Value::as_f64)
                        .collect();
                    let gs = scores(g, key);
                    assert_eq!(gs.len(), ws.len());
                    for (a, b) in gs.iter().zip(&ws) {
                        match (a, b) {
                            (None, None) => {}
                            (Some(a), Some(b)) => assert!(
                                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                                "{ds} {task} record {i} {key}: {a} vs {b}"
                            ),
                            _ => panic!(
                                "{ds} {task} record {i} {key}: score presence differs: {gs:?} vs {ws:?}"
                            ),
                        }
                    }
                }
                let gr = g["random_review"]
                    .get("doc_id")
                    .cloned()
                    .unwrap_or(Value::Null);
                assert_eq!(gr, w["r"], "{ds} {task} record {i} random_review");
            }
        }
    }
    assert_eq!(lists, 12 * 2 * n as usize);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn rank_errors_say_what_to_do() {
    let tmp = tempdir("errors");
    let out = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args([
            "rank",
            "--task",
            "text",
            "--split",
            "/nonexistent/split.json",
            "--out",
        ])
        .arg(tmp.join("o.json"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/split.json") && err.contains("PGRAPHRAG_DATA"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args([
            "rank",
            "--task",
            "text",
            "--retriever",
            "contriever",
            "--split",
        ])
        .arg(data_dir().join("pgraphrag/amazon_dev.json"))
        .arg("--out")
        .arg(tmp.join("o.json"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--model"), "{err}");
}
