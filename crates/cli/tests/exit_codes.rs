//! Exit codes of the built binary: 0 success, 1 the work failed, 2 bad usage or bad input.
use std::path::Path;
use std::process::{Command, Output};

fn pgraphrag(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .output()
        .expect("the pgraphrag binary runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

/// A fresh scratch folder, removed on drop.
fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("pgraphrag-{tag}-"))
        .tempdir()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn success_is_0() {
    let d = scratch("ok");
    let csv = d.path().join("r.csv");
    std::fs::write(&csv, "mode_k,MAE\nnone_k1,1.5\n").unwrap();
    let o = pgraphrag(&[
        "plot",
        "--csv",
        s(&csv),
        "--out",
        s(&d.path().join("r.svg")),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.path().join("r.svg").is_file());
    assert_eq!(code(&pgraphrag(&["--help"])), 0);
}

#[test]
fn clap_usage_errors_are_2() {
    assert_eq!(code(&pgraphrag(&[])), 2);
    assert_eq!(code(&pgraphrag(&["no-such-command"])), 2);
    let o = pgraphrag(&[
        "rank", "--split", "x.json", "--task", "bogus", "--out", "o.json",
    ]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("possible values"), "{err}");
}

#[test]
fn bad_input_is_2() {
    let d = scratch("input");
    // A split that does not exist.
    let o = pgraphrag(&[
        "rank",
        "--split",
        "/nonexistent/split.json",
        "--task",
        "text",
        "--out",
        s(&d.path().join("o.json")),
    ]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    // A split that is not JSON.
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "not json").unwrap();
    let o = pgraphrag(&[
        "rank",
        "--split",
        s(&bad),
        "--task",
        "text",
        "--out",
        s(&d.path().join("o.json")),
    ]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    // A bad flag value our code checks.
    let o = pgraphrag(&[
        "rank",
        "--split",
        s(&bad),
        "--task",
        "text",
        "--top",
        "0",
        "--out",
        s(&d.path().join("o.json")),
    ]);
    assert_eq!(code(&o), 2);
    // An invalid results CSV.
    let csv = d.path().join("r.csv");
    std::fs::write(&csv, "config,MAE\n").unwrap();
    let o = pgraphrag(&[
        "plot",
        "--csv",
        s(&csv),
        "--out",
        s(&d.path().join("r.svg")),
    ]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    // Invalid metrics input.
    let pairs = d.path().join("p.jsonl");
    std::fs::write(&pairs, "{\"id\": 1}\n").unwrap();
    let o = pgraphrag(&[
        "metrics",
        "--pairs",
        s(&pairs),
        "--out",
        s(&d.path().join("m.jsonl")),
    ]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn kragrec_variant_flags_are_checked_first() {
    let d = scratch("kragrec");
    let x = s(d.path());
    let common = ["--ml100k", x, "--encoder", x, "--index", x, "--model", x];
    // An unknown ablation names the known ones.
    let mut args = vec!["train", "kragrec"];
    args.extend(common);
    args.extend(["--out", x, "--checkpoint", x, "--ablation=-bogus"]);
    let o = pgraphrag(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("-re-ranking") && err.contains("-encoding"),
        "{err}"
    );
    // An ablation or a LoRA without a trained encoder to evaluate.
    for flag in ["--ablation=-popularity", "--lora=x.safetensors"] {
        let mut args = vec!["recsys", "eval"];
        args.extend(common);
        args.extend(["--dataset", "ml100k", "--rows", "1", "--out", x, flag]);
        let o = pgraphrag(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{flag}: {err}");
        assert!(err.contains("--adapter"), "{flag}: {err}");
    }
}

#[test]
fn failed_work_is_1() {
    let d = scratch("work");
    let csv = d.path().join("r.csv");
    std::fs::write(&csv, "mode_k,MAE\nnone_k1,1.5\n").unwrap();
    // The output's folder cannot be created: a file is in the way.
    let blocker = d.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let o = pgraphrag(&["plot", "--csv", s(&csv), "--out", s(&blocker.join("r.svg"))]);
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn help_lists_the_values_of_every_fixed_choice() {
    for (cmd, values) in [
        (
            "rank",
            &["bm25-lucene", "contriever", "pooler", "candle"][..],
        ),
        (
            "bench",
            &["neighbor", "gpt-chat", "as-stored", "rowwise", "pt"][..],
        ),
        ("embed", &["pooler", "cls", "candle"][..]),
        ("metrics", &["ascii", "unicode"][..]),
    ] {
        let o = pgraphrag(&[cmd, "--help"]);
        assert_eq!(code(&o), 0);
        let help = String::from_utf8_lossy(&o.stdout);
        for v in values {
            assert!(help.contains(v), "{cmd} --help lacks {v}:\n{help}");
        }
        assert!(help.contains("--quiet"), "{cmd} --help lacks --quiet");
    }
}
