//! The K-RagRec commands end to end on a toy ML-100K (160 movies, 40 users with 12 ratings each) with MiniLM and
//! SmolLM2: `recsys eval` scores the inference-only methods and baselines into a rows file that
//! a rerun resumes (nothing scored twice, the same table), and refuses other settings;
//! `train kragrec` trains an encoder for one step and `recsys eval --adapter` scores it. The
//! runs are `pgraphrag_runs::kragrec`'s specs; this checks the flags reach them.
use std::path::Path;
use std::process::{Command, Output};

mod support;

fn pgraphrag(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn ok(o: &Output, what: &str) -> (String, String) {
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "{what}: {err}");
    (out, err)
}

#[test]
fn eval_resumes_and_a_trained_encoder_is_scored() {
    let d = tempfile::tempdir().unwrap();
    support::toy_ml100k(d.path(), 160);
    let minilm = support::root().join("models/all-MiniLM-L6-v2");
    let model = support::model();
    let (minilm, model) = (minilm.to_str().unwrap(), model.to_str().unwrap());
    let data = ["--dataset", "ml100k", "--ml100k", ".", "--encoder", minilm];
    let eval = |extra: &[&str]| {
        let mut a = vec!["recsys", "eval", "--quiet"];
        a.extend(data);
        a.extend([
            "--index", "kg.idx", "--model", model, "--rows", "3", "--m", "5",
        ]);
        a.extend(extra);
        pgraphrag(&a, d.path())
    };
    let methods = ["--methods", "none,popularity,random", "--out", "rows.jsonl"];
    let (table, err) = ok(&eval(&methods), "recsys eval");
    assert!(err.contains("scored 9 units"), "{err}");
    assert!(d.path().join("kg.idx").is_file());
    for method in ["none", "popularity", "random"] {
        assert!(table.contains(&format!("| {method} | 5 | 3 |")), "{table}");
    }
    // The rerun scores nothing and prints the same table.
    let (again, err) = ok(&eval(&methods), "recsys eval, rerun");
    assert!(
        err.contains("scored 0 units") && err.contains("9 were already"),
        "{err}"
    );
    assert_eq!(again, table);
    // Another seed is another run: refused, the rows file kept.
    let before = std::fs::read(d.path().join("rows.jsonl")).unwrap();
    let o = eval(&[&methods[..], &["--seed", "7"]].concat());
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(d.path().join("rows.jsonl")).unwrap(), before);

    // One training step on two rows with sub-graphs, then the encoder scored.
    let mut train = vec!["train", "kragrec", "--quiet"];
    train.extend(data);
    train.extend([
        "--index",
        "kg.idx",
        "--model",
        model,
        "--out",
        "enc.safetensors",
        "--checkpoint",
        "enc.ckpt",
        "--max-rows",
        "2",
        "--m",
        "5",
        "--max-steps",
        "1",
        "--batch-size",
        "2",
    ]);
    let (_, err) = ok(&pgraphrag(&train, d.path()), "train kragrec");
    assert!(err.contains("wrote enc.safetensors after 1 steps"), "{err}");
    let adapter = ["--adapter", "enc.safetensors", "--out", "adapter.jsonl"];
    let (table, _) = ok(&eval(&adapter), "recsys eval --adapter");
    assert!(
        table.starts_with("K-RagRec trained encoder on ml100k"),
        "{table}"
    );
    assert!(table.contains("| k-ragrec | 5 | 3 |"), "{table}");
}
