//! `pgraphrag multistage run` and `export` end to end on a hand-made corpus with the real
//! SmolLM2 model (ImmedCtx and RankDocBM25 on two test examples, 16 new tokens): the tables,
//! predictions and stats; a rerun computes nothing; the export writes the four record kinds;
//! bad input is exit code 2.
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` (`scripts/fetch-llms.sh --smollm-only`),
//! `models/all-MiniLM-L6-v2` (`scripts/fetch-minilm.sh`) and WordNet 3.0 (`models/wordnet`,
//! `scripts/fetch-wordnet.sh`); without them the tests say so and do nothing, except under
//! `CI=true`, where a missing input fails.
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{pgraphrag, s};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `path` if it exists; else a skip (a failure under CI=true) with `fetch` in the message.
fn input(path: PathBuf, what: &str, fetch: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let msg = format!("{what} is missing at {} ({fetch})", path.display());
    // CI fetches the models (scripts/test.sh): there a missing input is a failure, not a skip.
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("SKIPPED: {msg}");
    None
}

fn model() -> Option<PathBuf> {
    input(
        root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf"),
        "the SmolLM2 model",
        "scripts/fetch-llms.sh --smollm-only",
    )
}

fn minilm() -> Option<PathBuf> {
    let dir = std::env::var_os("PGRAPHRAG_MINILM")
        .map_or_else(|| root().join("models/all-MiniLM-L6-v2"), PathBuf::from);
    input(dir.join("config.json"), "MiniLM", "scripts/fetch-minilm.sh").map(|_| dir)
}

fn wordnet() -> Option<PathBuf> {
    let dir = std::env::var_os("WORDNET_DIR")
        .map_or_else(|| root().join("models/wordnet"), PathBuf::from);
    input(
        dir.join("index.noun"),
        "WordNet 3.0",
        "scripts/fetch-wordnet.sh",
    )
    .map(|_| dir)
}

fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The JSON of the `stats {...}` line.
fn stats(stdout: &str) -> serde_json::Value {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stats "))
        .unwrap_or_else(|| panic!("no stats line:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

/// Five senders with seven mails each (five targets each), each on its own topic, built into
/// `dir/examples.jsonl` by `pgraphrag multistage build` (three train senders, one dev, one test).
fn examples(dir: &Path) -> PathBuf {
    let topics = [
        (
            "ana@example.org",
            "garden",
            ["tomatoes", "compost", "seedlings"],
        ),
        (
            "ben@example.org",
            "build",
            ["compiler", "linker", "release"],
        ),
        (
            "cat@example.org",
            "choir",
            ["rehearsal", "soprano", "concert"],
        ),
        ("dan@example.org", "trip", ["train", "hotel", "museum"]),
        (
            "eve@example.org",
            "budget",
            ["invoice", "quarter", "forecast"],
        ),
    ];
    let mut lines = String::new();
    for (a, (author, topic, words)) in topics.iter().enumerate() {
        for i in 0..7 {
            let w = words[i % 3];
            let text = format!(
                "Hi all, a note on the {topic} for week {i}. The {w} need attention before Friday, \
                 and I would like us to agree on a plan for the {w} soon. Last time the {topic} \
                 went well because we started early. Please reply with your thoughts on the {w} \
                 and on anything else about the {topic} that worries you. Thanks, {}.",
                &author[..3]
            );
            let doc = serde_json::json!({
                "author": author,
                "doc_id": format!("{author}/{i}"),
                "time": 1_000_000 + (a * 100 + i) as i64 * 86_400,
                "title": format!("{topic} {w} {i}"),
                "text": text,
            });
            lines.push_str(&format!("{doc}\n"));
        }
    }
    let corpus = dir.join("corpus.jsonl");
    std::fs::write(&corpus, lines).unwrap();
    let out = dir.join("built");
    ok(&pgraphrag(&[
        "multistage",
        "build",
        "--corpus",
        s(&corpus),
        "--out",
        s(&out),
        "--quiet",
    ]));
    out.join("examples.jsonl")
}

#[test]
fn run_twice_then_export() {
    let Some(model) = model() else { return };
    let d = tempfile::tempdir().unwrap();
    let ex = examples(d.path());
    let out = d.path().join("grid");
    let args = [
        "multistage",
        "run",
        "--examples",
        s(&ex),
        "--model",
        s(&model),
        "--out",
        s(&out),
        "--limit",
        "2",
        "--cells",
        "ImmedCtx,RankDocBM25",
        "--max-tokens",
        "16",
        "--quiet",
    ];
    let first = ok(&pgraphrag(&args));
    assert!(first.contains("| ImmedCtx | 2 |"), "{first}");
    assert!(first.contains("| RankDocBM25 | 2 |"), "{first}");
    let st = stats(&first);
    assert_eq!(st["examples"], 2);
    assert_eq!(st["grid"]["distinct_prompts"], 4, "{st}");
    assert_eq!(st["grid"]["generated"], 4, "{st}");
    assert!(
        st["seconds"]["prepare"]["ranking"]["RankDocBM25"].is_number(),
        "{st}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(
        csv.starts_with("mode_k,BLEU,ROUGE-1,ROUGE-2,ROUGE-L\nImmedCtx,"),
        "{csv}"
    );
    assert!(
        std::fs::read_to_string(out.join("results.svg"))
            .unwrap()
            .starts_with("<svg")
    );
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("p vs ImmedCtx"), "{md}");
    for cell in ["ImmedCtx", "RankDocBM25"] {
        let text = std::fs::read_to_string(out.join(format!("predictions/{cell}.jsonl"))).unwrap();
        let rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| {
            r["rouge1"]
                .as_f64()
                .is_some_and(|x| (0.0..=1.0).contains(&x))
        }));
        assert!(
            rows[0]["prompt"]
                .as_str()
                .unwrap()
                .starts_with("Finish the passage in the user voice")
        );
        if cell == "RankDocBM25" {
            assert!(
                rows[0]["prompt"]
                    .as_str()
                    .unwrap()
                    .contains("\n\npast passages: ")
            );
        }
    }
    let stages = std::fs::read_to_string(out.join("stages.jsonl")).unwrap();
    assert_eq!(stages.lines().count(), 2);

    // The rerun answers everything from the cache and writes the same table.
    let again = ok(&pgraphrag(&args));
    let st = stats(&again);
    assert_eq!(st["grid"]["generated"], 0, "{st}");
    assert_eq!(st["grid"]["cached"], 4, "{st}");
    assert_eq!(st["model_calls"]["generated"], 0, "{st}");
    assert_eq!(std::fs::read_to_string(out.join("results.md")).unwrap(), md);

    // The export of the same examples: the four record kinds, the 1:1 author pairs.
    let (Some(minilm), Some(wn)) = (minilm(), wordnet()) else {
        return;
    };
    let train = d.path().join("train.jsonl");
    let o = pgraphrag(&[
        "multistage",
        "export",
        "--examples",
        s(&ex),
        "--out",
        s(&train),
        "--encoder",
        s(&minilm),
        "--wordnet",
        s(&wn),
        "--quiet",
    ]);
    let st = stats(&ok(&o));
    assert_eq!(st["encoder_precision"], "f32", "{st}");
    assert_eq!(st["train_examples"], 15, "{st}");
    for task in ["summary", "synthesis", "generation", "author_distinction"] {
        assert_eq!(st["records"][task], 15, "{task}: {st}");
    }
    for stage in [
        "idf",
        "summary_label",
        "synthesis_label",
        "author_pairs",
        "total",
    ] {
        assert!(st["seconds"][stage].is_number(), "{stage}: {st}");
    }
    let text = std::fs::read_to_string(&train).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 60);
    let test_ids: Vec<String> = std::fs::read_to_string(&ex)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["split"] != "train")
        .map(|e| e["author"].as_str().unwrap().to_string())
        .collect();
    assert!(
        records.iter().all(|r| test_ids
            .iter()
            .all(|a| !r["id"].as_str().unwrap().contains(a.as_str()))),
        "no dev or test sender's document is in the training data"
    );
    let summary = records.iter().find(|r| r["task"] == "summary").unwrap();
    assert!(
        summary["prompt"]
            .as_str()
            .unwrap()
            .contains("\n\npast passages: ")
    );
    let pair = records
        .iter()
        .find(|r| r["task"] == "author_distinction")
        .unwrap();
    assert!(["true", "false"].contains(&pair["target"].as_str().unwrap()));

    // The int8 encoder: the same records, its precision recorded, its embeddings cached apart
    // from f32's in the same cache file.
    let cache = d.path().join("embeddings.sqlite");
    let train8 = d.path().join("train8.jsonl");
    let export8 = |precision: &str, out: &Path| {
        let o = pgraphrag(&[
            "multistage",
            "export",
            "--examples",
            s(&ex),
            "--out",
            s(out),
            "--encoder",
            s(&minilm),
            "--encoder-precision",
            precision,
            "--embedding-cache",
            s(&cache),
            "--wordnet",
            s(&wn),
            "--quiet",
        ]);
        stats(&ok(&o))
    };
    let st8 = export8("int8", &train8);
    assert_eq!(st8["encoder_precision"], "int8", "{st8}");
    assert_eq!(st8["records"], st["records"], "{st8}");
    let st32 = export8("f32", &d.path().join("train32.jsonl"));
    assert_eq!(
        std::fs::read_to_string(d.path().join("train32.jsonl")).unwrap(),
        text,
        "f32 vectors read back from a cache that also holds int8 ones"
    );
    assert_eq!(st32["encoder_precision"], "f32");
}

#[test]
fn bad_input_is_exit_code_2() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("nope.jsonl");
    let fake_model = d.path().join("m.gguf");
    let o = pgraphrag(&[
        "multistage",
        "run",
        "--examples",
        s(&missing),
        "--model",
        s(&fake_model),
        "--out",
        s(d.path()),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ex = examples(d.path());
    for extra in [
        ["--cells", "UserID"],
        ["--best-ranker", "TfIdf"],
        ["--split", "dev"],
    ] {
        let mut args = vec![
            "multistage",
            "run",
            "--examples",
            s(&ex),
            "--model",
            s(&fake_model),
        ];
        args.extend(["--out", s(d.path())]);
        args.extend(extra);
        let o = pgraphrag(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        // The model file does not exist either: bad input, reported after the flags.
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
    }
    let o = pgraphrag(&[
        "multistage",
        "export",
        "--examples",
        s(&ex),
        "--out",
        s(&d.path().join("t.jsonl")),
        "--ranker",
        "Nope",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
