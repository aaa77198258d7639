//! Issue 39, "Must show" 2: a command that writes a results file, killed with SIGKILL or
//! SIGINT at any point (early, half-way, late, and the moment a temporary file of its atomic
//! writes appears), never leaves part of a file at an output path: each results file holds the
//! old results or the whole new ones, and nothing lies beside them but the temporary files of
//! killed writes. Rerun uninterrupted, the command writes exactly the bytes of a run that was
//! never interrupted, and its writes remove those temporary files. The harness is `support/kill.rs`.
//!
//! Covered here: `metrics --out`, `rank --out`, `embed --out` and `recsys index --out` (five
//! kills each), and at two kills each (half-way, and while writing) `plot`, `corpus convert`,
//! `corpus lamp`, `multistage build`, `baselines`, `lamp baselines`, `lamp prompts`,
//! `multistage export` (MiniLM), `lamp grid` and `multistage run` (SmolLM2, one question or
//! example, one to four new tokens). Elsewhere: `bench` (`bench_crash.rs`), `summarize
//! --export` (`summarize_crash.rs`), `train lora` (`train_crash.rs`), `serve`
//! (`serve_crash.rs`). Not covered: `recsys eval` (its `--results` are `RunDir` writes as
//! `lamp grid`'s, its `--out` a resumed rows file; every run loads MiniLM and SmolLM2, about
//! 2 s of CPU even for one row, too much for the CI's time), `train kragrec` (trains) and
//! `queue export` (needs a NATS server).
//!
//! Needs `models/all-MiniLM-L6-v2` (`scripts/fetch-minilm.sh`), SmolLM2
//! (`scripts/fetch-llms.sh --smollm-only`), WordNet (`scripts/fetch-wordnet.sh`) and the
//! PGraphRAG dev splits (`$PGRAPHRAG_DATA`); fails loudly without.
#[path = "support/kill.rs"]
mod kill;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use kill::{EVERY, TWO, When, bytes, complete, never_a_partial_file, never_a_partial_folder};

fn minilm() -> PathBuf {
    let p = support::root().join("models/all-MiniLM-L6-v2");
    assert!(
        p.join("model.safetensors").is_file(),
        "all-MiniLM-L6-v2 is missing at {}: run scripts/fetch-minilm.sh",
        p.display()
    );
    p
}

fn wordnet() -> PathBuf {
    let p = support::root().join("models/wordnet");
    assert!(
        p.join("data.noun").is_file(),
        "WordNet is missing at {}: run scripts/fetch-wordnet.sh",
        p.display()
    );
    p
}

/// `pgraphrag ARGS --out OUT --quiet`.
fn pgraphrag(args: &[&str], out: &Path) -> Command {
    let mut c = kill::pgraphrag(args);
    c.arg("--out").arg(out).arg("--quiet");
    c
}

/// A path as an argument.
fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// The amazon dev split as a corpus (`corpus convert`), in `dir`.
fn corpus(dir: &Path) -> PathBuf {
    let c = dir.join("amazon.jsonl");
    let split = s(&support::split("amazon"));
    complete(pgraphrag(
        &["corpus", "convert", "--source", "pgraphrag", "--in", &split],
        &c,
    ));
    c
}

/// The multistage examples of the amazon dev split (`multistage build`), in `dir`.
fn examples(dir: &Path) -> PathBuf {
    let c = s(&corpus(dir));
    let out = dir.join("multistage");
    complete(pgraphrag(&["multistage", "build", "--corpus", &c], &out));
    out.join("examples.jsonl")
}

/// The LaMP-3 files of the amazon dev split (`corpus lamp`), in `dir/lamp3`.
fn lamp3(dir: &Path) -> PathBuf {
    let out = dir.join("lamp3");
    let split = s(&support::split("amazon"));
    complete(pgraphrag(
        &["corpus", "lamp", "--task", "LaMP-3", "--from", &split],
        &out,
    ));
    out
}

/// The files of `corpus lamp`.
const LAMP_FILES: [&str; 6] = [
    "train_questions.json",
    "train_outputs.json",
    "dev_questions.json",
    "dev_outputs.json",
    "test_questions.json",
    "test_outputs.json",
];

#[test]
fn metrics_out() {
    let d = tempfile::tempdir().unwrap();
    let pairs = d.path().join("pairs.jsonl");
    let words = [
        "soap", "lovely", "broke", "week", "smells", "nice", "dry", "skin", "price", "fine",
        "kettle", "boils", "fast", "arrived", "late", "dented",
    ];
    let text = |i: usize, n: usize| -> String {
        (0..n)
            .map(|j| words[(i * 7 + j * j * 3 + j) % words.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut lines = String::new();
    for i in 0..6000 {
        let line = serde_json::json!({
            "id": i,
            "prediction": text(i, 12 + i % 9),
            "reference": text(i + 3, 14 + i % 7),
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    std::fs::write(&pairs, lines).unwrap();
    let p = pairs.to_str().unwrap().to_string();
    never_a_partial_file("metrics --out", EVERY, |out| {
        pgraphrag(&["metrics", "--pairs", &p], out)
    });
}

#[test]
fn rank_out() {
    let split = support::split("amazon");
    let s = split.to_str().unwrap().to_string();
    never_a_partial_file("rank --out", EVERY, |out| {
        pgraphrag(
            &["rank", "--task", "text", "--split", &s, "--limit", "400"],
            out,
        )
    });
}

#[test]
fn embed_out() {
    let d = tempfile::tempdir().unwrap();
    let texts = d.path().join("texts.jsonl");
    let mut lines = String::new();
    for i in 0..240 {
        let line = serde_json::json!({
            "id": i,
            "text": format!("review {i}: the soap number {} smells {} and lasts {} weeks", i * 7, ["nice", "odd", "strong"][i % 3], i % 11),
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    std::fs::write(&texts, lines).unwrap();
    let (t, m) = (
        texts.to_str().unwrap().to_string(),
        minilm().to_str().unwrap().to_string(),
    );
    never_a_partial_file("embed --out", EVERY, |out| {
        pgraphrag(&["embed", "--model", &m, "--texts", &t], out)
    });
}

#[test]
fn recsys_index_out() {
    let d = tempfile::tempdir().unwrap();
    support::toy_ml100k(d.path(), 400);
    let (ml, m) = (
        d.path().to_str().unwrap().to_string(),
        minilm().to_str().unwrap().to_string(),
    );
    never_a_partial_file("recsys index --out", EVERY, |out| {
        pgraphrag(&["recsys", "index", "--ml100k", &ml, "--encoder", &m], out)
    });
}

#[test]
fn plot_out() {
    let csv = s(&support::root().join("docs/results/amazon_dev_title.csv"));
    never_a_partial_file("plot --out", TWO, |out| {
        let mut c = kill::pgraphrag(&["plot", "--csv", &csv]);
        c.arg("--out").arg(out);
        c
    });
}

#[test]
fn corpus_convert_out() {
    let split = s(&support::split("amazon"));
    never_a_partial_file("corpus convert --out", TWO, |out| {
        let args = ["corpus", "convert", "--source", "pgraphrag", "--in", &split];
        pgraphrag(&args, out)
    });
}

#[test]
fn corpus_lamp_out() {
    let split = s(&support::split("amazon"));
    never_a_partial_folder("corpus lamp --out", TWO, &LAMP_FILES, bytes, |out| {
        let args = ["corpus", "lamp", "--task", "LaMP-3", "--from", &split];
        pgraphrag(&args, out)
    });
}

#[test]
fn multistage_build_out() {
    let d = tempfile::tempdir().unwrap();
    let c = s(&corpus(d.path()));
    let files = ["examples.jsonl"];
    never_a_partial_folder("multistage build --out", TWO, &files, bytes, |out| {
        pgraphrag(&["multistage", "build", "--corpus", &c], out)
    });
}

#[test]
fn baselines_out() {
    let split = s(&support::split("amazon"));
    let files = ["predictions.jsonl", "results.md", "results.csv"];
    never_a_partial_folder("baselines --out", TWO, &files, bytes, |out| {
        let args = ["baselines", "--task", "rating", "--limit", "200", "--split"];
        let mut c = kill::pgraphrag(&args);
        c.arg(&split).arg("--out").arg(out);
        c
    });
}

#[test]
fn lamp_baselines_out() {
    let d = tempfile::tempdir().unwrap();
    let l = lamp3(d.path());
    let files = ["predictions.jsonl", "results.md", "results.csv"];
    never_a_partial_folder("lamp baselines --out", TWO, &files, bytes, |out| {
        let mut c = kill::pgraphrag(&["lamp", "baselines", "--task", "LaMP-3"]);
        for (flag, f) in [
            ("--questions", "train_questions.json"),
            ("--outputs", "train_outputs.json"),
            ("--validation-questions", "dev_questions.json"),
            ("--validation-outputs", "dev_outputs.json"),
        ] {
            c.arg(flag).arg(l.join(f));
        }
        c.arg("--out").arg(out);
        c
    });
}

#[test]
fn lamp_prompts_out() {
    let d = tempfile::tempdir().unwrap();
    let q = s(&lamp3(d.path()).join("train_questions.json"));
    let tok = s(&minilm().join("tokenizer.json"));
    never_a_partial_file("lamp prompts --out", TWO, |out| {
        let mut c = kill::pgraphrag(&["lamp", "prompts", "--task", "LaMP-3", "--k", "2"]);
        c.args([
            "--max-length",
            "256",
            "--tokenizer",
            &tok,
            "--questions",
            &q,
        ]);
        c.arg("--out").arg(out);
        c
    });
}

#[test]
fn multistage_export_out() {
    let d = tempfile::tempdir().unwrap();
    // One example of each author (two authors, so that there are author pairs): MiniLM
    // encodes a fifth of what the whole file needs.
    let all = std::fs::read_to_string(examples(d.path())).unwrap();
    let mut authors = std::collections::HashSet::new();
    let few: String = all
        .lines()
        .filter(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            authors.insert(v["author"].as_str().unwrap().to_string())
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(authors.len() >= 2, "one author: no author pairs");
    let e = d.path().join("few.jsonl");
    std::fs::write(&e, few).unwrap();
    let (e, m, wn) = (s(&e), s(&minilm()), s(&wordnet()));
    never_a_partial_file("multistage export --out", TWO, |out| {
        let args = ["multistage", "export", "--examples", &e];
        let mut c = pgraphrag(&args, out);
        c.args(["--encoder", &m, "--wordnet", &wn]);
        c
    });
}

#[test]
fn lamp_grid_out() {
    let d = tempfile::tempdir().unwrap();
    let l = lamp3(d.path());
    let model = s(&support::model());
    let files = [
        "base_k1-seed0_outputs.json",
        "results.md",
        "results.csv",
        "results.svg",
    ];
    never_a_partial_folder("lamp grid --out", TWO, &files, bytes, |out| {
        let mut c = pgraphrag(
            &["lamp", "grid", "--task", "LaMP-3", "--model", &model],
            out,
        );
        c.arg("--questions").arg(l.join("train_questions.json"));
        c.arg("--outputs").arg(l.join("train_outputs.json"));
        c.args("--limit 1 --configs base_k1 --max-length 128 --max-new-tokens 1".split(' '));
        c.arg("--cache");
        // Beside the folder: the killed runs share theirs, the uninterrupted run has its own.
        c.arg(out.with_extension("sqlite"));
        c
    });
}

/// `multistage run`'s results.json without its `stats` (seconds, cache hits), which differ
/// from run to run; the other files whole.
fn without_stats(name: &str, b: &[u8]) -> Vec<u8> {
    if name != "results.json" {
        return b.to_vec();
    }
    match serde_json::from_slice::<serde_json::Value>(b) {
        Ok(v) if v.get("table").is_some() => v["table"].to_string().into_bytes(),
        _ => b.to_vec(),
    }
}

#[test]
fn multistage_run_out() {
    let d = tempfile::tempdir().unwrap();
    let e = s(&examples(d.path()));
    let model = s(&support::model());
    let files = [
        "results.md",
        "results.csv",
        "results.svg",
        "results.json",
        "stages.jsonl",
        "predictions/ImmedCtx.jsonl",
    ];
    never_a_partial_folder("multistage run --out", TWO, &files, without_stats, |out| {
        let args = ["multistage", "run", "--examples", &e, "--model", &model];
        let mut c = pgraphrag(&args, out);
        c.args(["--split", "train", "--limit", "1", "--cells", "ImmedCtx"]);
        c.args(["--max-tokens", "4", "--cache"]);
        c.arg(out.with_extension("sqlite"));
        c
    });
}

/// The harness itself: a writer that truncates its output and writes it in place is caught.
/// SIGKILL half-way through its one-second pause (not SIGINT: a shell waiting for `sleep` may
/// finish the script after SIGINT, and a short pause let a slow start on a loaded machine reach
/// the kill before the first write; both made this test flaky).
#[test]
#[should_panic(expected = "nor the whole new one")]
fn an_in_place_writer_is_caught() {
    never_a_partial_file("sh", &[("KILL", When::After(0.5))], |out| {
        let mut c = Command::new("sh");
        c.args([
            "-c",
            "printf part > \"$0\"; sleep 1; printf ' and rest' >> \"$0\"",
        ])
        .arg(out)
        .stderr(std::process::Stdio::piped());
        c
    });
}
