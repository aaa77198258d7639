//! Every example of the workspace, built and run on small inputs, with its output checked.
//!
//! `cargo test --workspace` (and `cargo test -p pgraphrag-examples`) builds all examples into
//! `target/<profile>/examples/`; a binary that is missing there (e.g. only this test was
//! built) is built here with a nested `cargo build --example`. Examples run from the
//! workspace root with `PGRAPHRAG_DATA` (default `../shared/data`) and the models under
//! `models/` (`PGRAPHRAG_MODEL` for SmolLM2); a missing model or data file fails with the
//! command that fetches it. `openai_client` needs cyllama's llama.cpp server
//! (`pip install --no-deps cyllama==0.2.18` for `$PGRAPHRAG_PYTHON`, default `python3`): without
//! it that test fails under `CI=true` and is skipped with a message otherwise.

use std::process::{Command, Stdio};

mod support;
use support::*;

/// Every example of the workspace: (package, example name).
const EXAMPLES: [(&str, &str); 20] = [
    ("pgraphrag-examples", "pgraphrag"),
    ("pgraphrag-examples", "paper_runs"),
    ("pgraphrag-examples", "online"),
    ("pgraphrag-examples", "kragrec"),
    ("pgraphrag-examples", "lamp_summary"),
    ("pgraphrag-examples", "multistage_writing"),
    ("pgraphrag-examples", "compose_your_own"),
    ("pgraphrag-examples", "dense_retrieval"),
    ("pgraphrag-examples", "metrics"),
    ("pgraphrag-examples", "openai_client"),
    ("pgraphrag-examples", "own_generator"),
    ("pgraphrag-retrieval", "scale"),
    ("pgraphrag-retrieval", "live_bench"),
    ("pgraphrag-serve", "serve_load"),
    ("pgraphrag-recsys", "kragrec_index"),
    ("pgraphrag-llm", "bench_llm"),
    ("pgraphrag-train", "bench_train"),
    ("pgraphrag-metrics", "score_pairs"),
    ("pgraphrag-metrics", "profile_parts"),
    ("pgraphrag-text", "tokenize_json"),
];

#[test]
fn every_example_of_the_workspace_is_listed() {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "rs") && !p.ends_with("lib.rs") {
            found.push((
                "pgraphrag-examples".to_string(),
                p.file_stem().unwrap().to_string_lossy().into_owned(),
            ));
        }
    }
    for krate in std::fs::read_dir(root().join("crates")).unwrap() {
        let krate = krate.unwrap().path();
        let Ok(dir) = std::fs::read_dir(krate.join("examples")) else {
            continue;
        };
        let package = format!("pgraphrag-{}", krate.file_name().unwrap().to_string_lossy());
        for entry in dir {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "rs") {
                found.push((
                    package.clone(),
                    p.file_stem().unwrap().to_string_lossy().into_owned(),
                ));
            }
        }
    }
    found.sort();
    let mut listed: Vec<(String, String)> = EXAMPLES
        .iter()
        .map(|(p, n)| (p.to_string(), n.to_string()))
        .collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "add each new example to EXAMPLES and give it a test here"
    );
}

#[test]
fn pgraphrag_end_to_end_on_one_user() {
    let model = smollm();
    let split = split("amazon_dev");
    let out = run(
        "pgraphrag-examples",
        "pgraphrag",
        &[split.to_str().unwrap(), "1"],
        &[("PGRAPHRAG_MODEL", &model)],
    );
    // One user: its id, then the gold title, the generated one and ROUGE-1.
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("  gold: ")), "{out}");
    assert!(
        lines.iter().any(|l| l.starts_with("  generated: ")),
        "{out}"
    );
    let rouge: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("  ROUGE-1 F "))
        .collect();
    assert_eq!(rouge.len(), 1, "{out}");
    let r1 = number_after(rouge[0], "ROUGE-1 F");
    assert!((0.0..=1.0).contains(&r1), "{out}");
}

#[test]
fn compose_your_own_ranks_three_users() {
    let out = run(
        "pgraphrag-examples",
        "compose_your_own",
        &[split("hotel_dev").to_str().unwrap()],
        &[],
    );
    let headers = out
        .lines()
        .filter(|l| !l.starts_with(' ') && l.ends_with("):"))
        .count();
    assert_eq!(headers, 3, "{out}");
    let scores: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| number_after(l, ""))
        .collect();
    assert!(
        !scores.is_empty() && scores.iter().all(|s| s.is_finite() && *s > 0.0),
        "{out}"
    );
}

#[test]
fn paper_runs_chains_three_specs_on_a_real_split() {
    let out = run(
        "pgraphrag-examples",
        "paper_runs",
        &[split("gap_dev").to_str().unwrap()],
        &[],
    );
    assert!(
        out.starts_with("4356 documents by 2500 authors\n23 multistage examples\n"),
        "{out}"
    );
    let start = out
        .lines()
        .find(|l| l.starts_with("| passage_start | 23 |"))
        .unwrap_or_else(|| panic!("no passage_start row:\n{out}"));
    // ROUGE-1 equals ROUGE-L for a prefix of the target (the fourth and last value cells).
    let cells: Vec<&str> = start.split('|').map(str::trim).collect();
    assert_eq!(cells[4], cells[6], "{start}");
}

#[test]
fn dense_retrieval_prints_the_top_three() {
    let model = minilm();
    let split = split("amazon_dev");
    let out = run(
        "pgraphrag-examples",
        "dense_retrieval",
        &[
            "--split",
            split.to_str().unwrap(),
            "--model",
            model.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.starts_with("user ") && out.contains("profile reviews"),
        "{out}"
    );
    let scores: Vec<f64> = (1..=3)
        .map(|r| {
            let label = format!("{r}. ");
            let l = (out.lines().find(|l| l.starts_with(&label)))
                .unwrap_or_else(|| panic!("no rank {r}:\n{out}"));
            number_after(l, &label)
        })
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "not sorted: {scores:?}"
    );
    assert!(
        scores.iter().all(|s| (-1.0..=1.0).contains(s)),
        "cosine out of range: {scores:?}"
    );
}

#[test]
fn metrics_scores_the_pairs() {
    let out = run("pgraphrag-examples", "metrics", &[], &[]);
    let row = out
        .lines()
        .find(|l| l.starts_with("| The quick brown dog"))
        .unwrap_or_else(|| panic!("{out}"));
    // rouge-score: P = 6/8, R = 6/9, F = 0.70588…
    assert!(row.contains("| 0.7059 |"), "{row}");
    assert!(out.lines().any(|l| l.starts_with("corpus BLEU: ")), "{out}");
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    if wordnet().is_some() {
        let meteor: f64 = cells[5]
            .parse()
            .unwrap_or_else(|_| panic!("METEOR missing: {row}"));
        assert!(meteor > 0.0 && meteor < 1.0, "{row}");
    } else {
        assert_eq!(cells[5], "-", "{row}");
        assert!(out.contains("METEOR skipped"), "{out}");
    }
}

#[test]
fn own_generator_fills_the_grid() {
    let wn = wordnet_or_fail();
    let split = split("amazon_dev");
    let out = run(
        "pgraphrag-examples",
        "own_generator",
        &[split.to_str().unwrap(), "--users", "3"],
        &[("WORDNET_DIR", &wn)],
    );
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| mode_k"))
        .collect();
    assert_eq!(
        rows.len(),
        11,
        "the five modes × k ∈ {{1, 2, 4}} less none/random at k > 1:\n{out}"
    );
    assert!(
        rows.iter()
            .all(|r| r.split('|').nth(2).is_some_and(|n| n.trim() == "3")),
        "{out}"
    );
    // `none` shows no review, so the baseline answers nothing and scores 0.
    assert!(
        out.contains("| none_k1 | 3 | 0.000 | 0.000 | 0.000 |"),
        "{out}"
    );
    assert!(out.contains("for 33 (user, config) pairs"), "{out}");
}

#[test]
fn lamp_summary_runs_the_table3_grid_on_two_users() {
    let split = split("gap_dev");
    let model = smollm();
    let out = run(
        "pgraphrag-examples",
        "lamp_summary",
        &[
            split.to_str().unwrap(),
            "--users",
            "2",
            "--model",
            model.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.contains("summaries: 2 computed, 0 skipped"), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| base_k") || l.starts_with("| sum_k"))
        .collect();
    assert_eq!(rows.len(), 5, "the five Table 3 cells:\n{out}");
    for r in rows {
        let cells: Vec<&str> = r.split('|').map(str::trim).collect();
        assert_eq!(cells[2], "2", "{r}");
        // MAE of ratings 1-5 lies in [0, 4].
        let mae: f64 = cells[4].split(' ').next().unwrap().parse().unwrap();
        assert!((0.0..=4.0).contains(&mae), "{r}");
    }
}

#[test]
fn multistage_writing_runs_two_cells_on_real_reviews() {
    let split = split("gap_dev");
    let model = smollm();
    let out = run(
        "pgraphrag-examples",
        "multistage_writing",
        &[
            split.to_str().unwrap(),
            "--examples",
            "2",
            "--model",
            model.to_str().unwrap(),
        ],
        &[],
    );
    // gap_dev: one reviewer qualifies, with 23 examples (docs/multistage.md).
    assert!(out.starts_with("23 examples from "), "{out}");
    assert!(out.contains("ranked entries kept"), "{out}");
    for cell in ["ImmedCtx", "RankDocBM25"] {
        let row = out
            .lines()
            .find(|l| l.starts_with(&format!("| {cell} | 2 |")))
            .unwrap_or_else(|| panic!("no {cell} row:\n{out}"));
        // ROUGE-1 in %: the fourth cell, "value [low, high]".
        let r1: f64 = row
            .split('|')
            .nth(4)
            .unwrap()
            .trim()
            .split(' ')
            .next()
            .unwrap()
            .trim_end_matches(['*', '†'])
            .parse()
            .unwrap();
        assert!((0.0..=100.0).contains(&r1), "{row}");
    }
}

#[path = "../../crates/llm/tests/support/llama_server.rs"]
mod llama_server;

#[test]
fn openai_client_against_llama_cpp_server() {
    let py = std::env::var("PGRAPHRAG_PYTHON").unwrap_or_else(|_| "python3".into());
    let have = Command::new(&py)
        .args(["-c", "import cyllama.llama.server"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        let msg = format!(
            "{py} cannot import cyllama: run `{py} -m pip install --no-deps cyllama==0.2.18`"
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("skipping the openai_client example: {msg}");
        return;
    }
    let model = smollm();
    let server = llama_server::LlamaServer::start(&py, &model);
    let port = server.port;
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = run(
        "pgraphrag-examples",
        "openai_client",
        &[
            "--url",
            &url,
            "--model",
            "smollm2",
            "--prompt",
            "What is the capital of France?",
            "--max-tokens",
            "12",
        ],
        &[],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(!lines[0].trim().is_empty(), "empty completion:\n{out}");
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("finish_reason: ") && !last.starts_with("finish_reason: ?"),
        "{out}"
    );
    // Servers may omit usage figures (printed as `?`); when given, at most --max-tokens.
    if !last.contains("completion_tokens: ?") {
        let n = number_after(last, "completion_tokens:");
        assert!((1.0..=12.0).contains(&n), "{out}");
    }
}

#[test]
fn kragrec_index_builds_saves_loads_and_retrieves() {
    let ml100k = root().join("models/corpora/ml-100k");
    assert!(
        ml100k.join("ml-100k.kg").exists(),
        "{} is missing: run scripts/fetch-corpora.sh",
        ml100k.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("ml100k-minilm.bin");
    let out = run(
        "pgraphrag-recsys",
        "kragrec_index",
        &[
            ml100k.to_str().unwrap(),
            minilm().to_str().unwrap(),
            index.to_str().unwrap(),
            "mean",
            "5",
        ],
        &[],
    );
    assert!(out.contains("KG: 34628 entities, 91631 edges"), "{out}");
    assert!(out.contains("retrieval: 5 rows in"), "{out}");
    assert!(index.exists(), "{out}");
}

#[test]
fn kragrec_scores_the_four_methods_on_one_row() {
    let ml100k = root().join("models/corpora/ml-100k");
    assert!(
        ml100k.join("ml-100k.kg").exists(),
        "{} is missing: run scripts/fetch-corpora.sh",
        ml100k.display()
    );
    let model = smollm();
    let _ = minilm();
    let out = run(
        "pgraphrag-examples",
        "kragrec",
        &[
            ml100k.to_str().unwrap(),
            "--rows",
            "1",
            "--m",
            "10",
            "--model",
            model.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.starts_with("1 row(s), M = 10; KG 34628 entities, 91631 triples"),
        "{out}"
    );
    for method in ["none", "kg-text", "kaping", "random"] {
        let row = out
            .lines()
            .find(|l| l.starts_with(&format!("| {method} | 10 | 1 |")))
            .unwrap_or_else(|| panic!("no {method} row:\n{out}"));
        // ACC of one row: 0 or 1.
        let acc: f64 = row
            .split('|')
            .nth(4)
            .unwrap()
            .trim()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!([0.0, 1.0].contains(&acc), "{row}");
    }
}

#[test]
fn scale_small_synthetic_graph() {
    let args = [
        "--small",
        "--reviews",
        "20000",
        "--users",
        "4000",
        "--items",
        "2000",
        "--queries",
        "200",
        "--verify",
        "20",
    ];
    let out = run("pgraphrag-retrieval", "scale", &args, &[]);
    assert!(
        out.starts_with("synthetic graph: 20000 reviews, 4000 users"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("query (user + neighbour top-5 BM25")),
        "{out}"
    );
    // 20 queries on the largest lists plus 4 head-term queries on each of the 3 largest.
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("verified 32 queries (both sides)"),
        "{out}"
    );
}

#[test]
fn bench_llm_decodes_four_tokens() {
    let model = smollm();
    let (_dir, prompt) = temp_file("prompt.txt", "The quick brown fox jumps over the lazy dog.");
    let out = run(
        "pgraphrag-llm",
        "bench_llm",
        &[
            "--model",
            model.to_str().unwrap(),
            "--prompt-file",
            prompt.to_str().unwrap(),
            "--tg",
            "4",
            "--reps",
            "1",
        ],
        &[],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "one repetition, one JSON line:\n{out}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["tg_tokens"], 4, "{v}");
    assert!(v["pp_tokens"].as_u64().is_some_and(|n| n > 5), "{v}");
    assert!(v["pp_tok_s"].as_f64().is_some_and(|x| x > 0.0), "{v}");
}

#[test]
fn bench_train_takes_two_lora_steps_on_smollm2() {
    let model = smollm();
    let out = run(
        "pgraphrag-train",
        "bench_train",
        &[
            "--model",
            model.to_str().unwrap(),
            "--batch",
            "1",
            "--seq",
            "16",
            "--answer",
            "2",
            "--steps",
            "2",
        ],
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["impl"], "rust-candle", "{v}");
    let losses = v["losses"].as_array().expect("losses");
    // The loss before the first step, then after each step; training on one batch lowers it.
    assert_eq!(losses.len(), 3, "{v}");
    let (first, last) = (losses[0].as_f64().unwrap(), losses[2].as_f64().unwrap());
    assert!(last < first, "{v}");
    assert!(
        losses
            .iter()
            .all(|l| l.as_f64().is_some_and(|x| x.is_finite() && x > 0.0)),
        "{v}"
    );
    assert!(v["tokens_per_s"].as_f64().is_some_and(|x| x > 0.0), "{v}");
}

const PAIRS: &str = r#"{"id": 1, "prediction": "The quick brown dog jumps on the log.", "reference": "The quick brown fox jumps over the lazy dog"}
{"id": 2, "prediction": "Great soap", "reference": "Great soap, smells nice"}
"#;

#[test]
fn score_pairs_writes_one_line_per_pair() {
    let wn = wordnet_or_fail();
    let (_dir, pairs) = temp_file("score_pairs.jsonl", PAIRS);
    let scores = pairs.with_file_name("scores.jsonl");
    run(
        "pgraphrag-metrics",
        "score_pairs",
        &[pairs.to_str().unwrap(), scores.to_str().unwrap()],
        &[("WORDNET_DIR", &wn)],
    );
    let text = std::fs::read_to_string(&scores).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert_eq!(rows[0]["id"], 1);
    assert!(
        (rows[0]["rouge1"].as_f64().unwrap() - 0.7058823529411765).abs() < 1e-12,
        "{text}"
    );
    assert!(
        rows.iter()
            .all(|r| r["meteor"].as_f64().is_some_and(|m| m > 0.0 && m < 1.0)),
        "{text}"
    );
    assert!(rows[1]["bleu"].as_f64().is_some_and(|b| b > 0.0), "{text}");
}

#[test]
fn profile_parts_times_each_metric() {
    let wn = wordnet_or_fail();
    let (_dir, pairs) = temp_file("profile_parts.jsonl", PAIRS);
    let out = run(
        "pgraphrag-metrics",
        "profile_parts",
        &[pairs.to_str().unwrap()],
        &[("WORDNET_DIR", &wn)],
    );
    assert!(
        out.lines()
            .next()
            .is_some_and(|l| number_after(l, "pairs") == 2.0),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["pairs"], 2, "{v}");
    for k in ["rouge", "wordnet_load", "meteor", "bleu"] {
        assert!(v[k].as_f64().is_some_and(|s| s >= 0.0), "{k}: {v}");
    }
}

#[test]
fn tokenize_json_word_and_sentence_modes() {
    let (_dir, texts) = temp_file(
        "texts.json",
        r#"["Mr. Smith didn't go to Washington. He stayed home."]"#,
    );
    let words = texts.with_file_name("words.json");
    let secs = run(
        "pgraphrag-text",
        "tokenize_json",
        &["word", texts.to_str().unwrap(), words.to_str().unwrap()],
        &[],
    );
    assert!(secs.trim().parse::<f64>().is_ok_and(|s| s >= 0.0), "{secs}");
    let got: Vec<Vec<String>> =
        serde_json::from_str(&std::fs::read_to_string(&words).unwrap()).unwrap();
    let want = [
        "Mr.",
        "Smith",
        "did",
        "n't",
        "go",
        "to",
        "Washington",
        ".",
        "He",
        "stayed",
        "home",
        ".",
    ];
    assert_eq!(got, [want.map(String::from).to_vec()]);
    let sents = texts.with_file_name("sents.json");
    run(
        "pgraphrag-text",
        "tokenize_json",
        &["sent_en", texts.to_str().unwrap(), sents.to_str().unwrap()],
        &[],
    );
    let got: Vec<Vec<String>> =
        serde_json::from_str(&std::fs::read_to_string(&sents).unwrap()).unwrap();
    assert_eq!(
        got,
        [vec![
            "Mr. Smith didn't go to Washington.".to_string(),
            "He stayed home.".to_string()
        ]]
    );
}

#[test]
fn online_serves_readers_while_writing() {
    let out = run(
        "pgraphrag-examples",
        "online",
        &[split("hotel_dev").to_str().unwrap()],
        &[],
    );
    assert!(
        out.contains("contexts identical to a rebuilt index"),
        "{out}"
    );
    let reads: usize = out
        .lines()
        .find_map(|l| {
            l.split("; ")
                .last()?
                .strip_suffix(" checked reads")?
                .parse()
                .ok()
        })
        .expect("a count of checked reads");
    assert!(reads > 0, "{out}");
}

#[test]
fn live_bench_compares_the_two_patterns() {
    let data = data_dir().join("pgraphrag");
    let out = run(
        "pgraphrag-retrieval",
        "live_bench",
        &[
            "--data",
            data.to_str().unwrap(),
            "--reviews",
            "3000",
            "--seconds",
            "0.3",
            "--rounds",
            "1",
            "--threads",
            "1,2",
            "--writes-per-sec",
            "200",
        ],
        &[],
    );
    assert!(out.contains("resident per million reviews"), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(['1', '2']) && l.contains('x'))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
}

#[test]
fn serve_load_answers_bm25_and_hybrid_over_http() {
    let data = data_dir().join("pgraphrag");
    let encoder = root().join("models").join("all-MiniLM-L6-v2");
    let out = run(
        "pgraphrag-serve",
        "serve_load",
        &[
            "--data",
            data.to_str().unwrap(),
            // Hybrid embeds every review at start: few, to keep the test short.
            "--reviews",
            "300",
            "--seconds",
            "0.5",
            "--connections",
            "8",
            "--writes-per-sec",
            "50",
            "--retrievers",
            "bm25,hybrid",
            "--encoder",
            encoder.to_str().unwrap(),
        ],
        &[],
    );
    // One row per retriever; the example itself fails on any error or on a write not visible
    // on the next read.
    for r in ["| bm25 | closed | 8 |", "| hybrid | closed | 8 |"] {
        assert!(out.contains(r), "{out}");
    }
}
