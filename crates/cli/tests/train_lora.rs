//! `pgraphrag train lora` and `pgraphrag bench --export-prompts / --adapter` end to end with
//! the real SmolLM2 model, kept to a few seconds: the bench exports its prompts with gold
//! answers for users outside the evaluated ones, a two-step run stopped after one step
//! resumes from its checkpoint, bad data is refused naming file and line, and generations
//! with an adapter are cached apart from those without.
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` (`scripts/fetch-llms.sh --smollm-only`) and
//! the PGraphRAG dev splits (`$PGRAPHRAG_DATA`, default `../shared/data`); fails loudly without.
use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::model;

fn run(args: &[&str], paths: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgraphrag"));
    c.args(args).env("RAYON_NUM_THREADS", "2");
    for (flag, p) in paths {
        c.arg(flag).arg(p);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn train(dir: &Path, data: &Path, steps: &str) -> Output {
    run(
        &[
            "train",
            "lora",
            "--max-steps",
            steps,
            "--batch-size",
            "1",
            "--lr",
            "1e-2",
            "--checkpoint-every",
            "1",
            "--quiet",
        ],
        &[
            ("--model", &model()),
            ("--train", data),
            ("--out", &dir.join("adapter.safetensors")),
            ("--checkpoint", &dir.join("ckpt.safetensors")),
        ],
    )
}

fn stats(o: &Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("stats "))
        .unwrap_or_else(|| panic!("no stats line in {out}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn bench_exports_the_prompts_of_users_outside_the_evaluated_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prompts.jsonl");
    let export = |skip: &str| {
        let o = run(
            &[
                "bench",
                "--task",
                "rating",
                "--skip",
                skip,
                "--limit",
                "3",
                "--modes",
                "none,both",
                "--ks",
                "1",
                "--quiet",
            ],
            &[
                ("--split", &support::split("amazon")),
                ("--out", &dir.path().join("out")),
                ("--export-prompts", &file),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(&file).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let first = export("0");
    let later = export("200");
    assert!(!later.is_empty() && later.len() <= 6);
    for r in &later {
        assert!(r["target"].as_str().unwrap().starts_with("Rating: "), "{r}");
        assert!(r["system"].is_string() && r["prompt"].is_string(), "{r}");
        assert!(
            first.iter().all(|f| f["id"] != r["id"]),
            "user {} is evaluated",
            r["id"]
        );
    }
    assert!(
        !dir.path().join("out/cache.sqlite").exists(),
        "export must not generate"
    );
}

#[test]
fn train_lora_resumes_and_refuses_bad_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("train.jsonl");
    std::fs::write(
        &data,
        "{\"prompt\":\"Rate: great kettle.\",\"target\":\"Rating: 5\"}\n\
         {\"prompt\":\"Rate: it broke.\",\"target\":\"Rating: 1\"}\n",
    )
    .unwrap();
    let o = train(dir.path(), &data, "1");
    assert!(o.status.success(), "{}", stderr(&o));
    let after_one = std::fs::read(dir.path().join("adapter.safetensors")).unwrap();
    // Asked for two steps, the same command continues after the checkpointed first.
    let o = train(dir.path(), &data, "2");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("after 2 steps (resumed from step 1)"),
        "{}",
        stderr(&o)
    );
    assert_ne!(
        std::fs::read(dir.path().join("adapter.safetensors")).unwrap(),
        after_one
    );

    // The adapter's generations are cached apart from the base model's.
    let bench = |adapter: Option<&Path>| {
        let out = dir.path().join("bench");
        let mut paths = vec![
            ("--split", support::split("amazon")),
            ("--out", out),
            ("--model", model()),
        ];
        if let Some(a) = adapter {
            paths.push(("--adapter", a.to_path_buf()));
        }
        let paths: Vec<(&str, &Path)> = paths.iter().map(|(f, p)| (*f, p.as_path())).collect();
        let o = run(
            &[
                "bench",
                "--task",
                "rating",
                "--limit",
                "1",
                "--modes",
                "none",
                "--ks",
                "1",
                "--max-tokens",
                "4",
                "--quiet",
            ],
            &paths,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stats(&o)
    };
    let adapter = dir.path().join("adapter.safetensors");
    assert_eq!(bench(Some(&adapter))["generated"], 1);
    assert_eq!(
        bench(None)["generated"],
        1,
        "a zero-shot run reused the adapter's answer"
    );

    // A line without a target: exit code 2, naming the file and the line.
    std::fs::write(
        &data,
        "{\"prompt\":\"a\",\"target\":\"b\"}\n{\"prompt\":\"a\"}\n",
    )
    .unwrap();
    let o = train(&dir.path().join("other"), &data, "1");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("train.jsonl:2: no `target`"),
        "{}",
        stderr(&o)
    );
}

/// LaMP's fine-tuned regime end to end: `lamp grid --export-training` writes one supervised
/// example per cell and training question (the grid's prompt, the gold output), `train lora`
/// trains on it, and `lamp grid --adapter` generates with the adapter, cached apart from the
/// zero-shot answers.
#[test]
fn lamp_grid_exports_training_examples_and_runs_with_an_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let lamp = dir.path().join("lamp3");
    let o = run(
        &["corpus", "lamp", "--task", "LaMP-3"],
        &[("--from", &support::split("amazon")), ("--out", &lamp)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let grid = |split: &str, extra: &[&str], paths: &[(&str, &Path)]| {
        let questions = lamp.join(format!("{split}_questions.json"));
        let outputs = lamp.join(format!("{split}_outputs.json"));
        let mut args = vec!["lamp", "grid", "--task", "LaMP-3", "--configs", "base_k1"];
        args.extend(["--max-length", "128", "--max-new-tokens", "1", "--quiet"]);
        args.extend(extra);
        let mut p = vec![
            ("--questions", questions.as_path()),
            ("--outputs", outputs.as_path()),
        ];
        let m = model();
        p.push(("--model", &m));
        p.extend(paths);
        run(&args, &p)
    };

    let data = dir.path().join("train.jsonl");
    let o = grid("train", &["--limit", "2"], &[("--export-training", &data)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&data).unwrap();
    let golds: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(lamp.join("train_outputs.json")).unwrap())
            .unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{text}");
    for (r, g) in records.iter().zip(golds["golds"].as_array().unwrap()) {
        assert_eq!((&r["id"], &r["target"]), (&g["id"], &g["output"]), "{text}");
        assert_eq!(r["config"], "base_k1");
        assert!(
            r["prompt"]
                .as_str()
                .unwrap()
                .contains("just answer with 1, 2, 3, 4, or 5")
        );
    }

    let o = train(&dir.path().join("run"), &data, "1");
    assert!(o.status.success(), "{}", stderr(&o));
    let adapter = dir.path().join("run/adapter.safetensors");
    let cache = dir.path().join("cache.sqlite");
    let out = dir.path().join("grid");
    let (tuned, zero_shot) = (
        grid(
            "dev",
            &["--limit", "1"],
            &[
                ("--adapter", &adapter),
                ("--cache", &cache),
                ("--out", &out),
            ],
        ),
        grid(
            "dev",
            &["--limit", "1"],
            &[("--cache", &cache), ("--out", &out)],
        ),
    );
    for o in [&tuned, &zero_shot] {
        assert!(o.status.success(), "{}", stderr(o));
        assert!(
            stderr(o).contains("1 answers (0 cached, 1 generated)"),
            "a zero-shot run reused the adapter's answer: {}",
            stderr(o)
        );
    }
}
