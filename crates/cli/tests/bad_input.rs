//! Issue 39, part 2: bad input never becomes a wrong number. Each test is one reproduction of
//! the careless-user audit: the run must be refused as bad usage or bad input (exit code 2),
//! name the culprit (the flag, or the file, record and field) on stderr, and leave no output
//! behind. Every refusal comes before a model loads, so these runs are fast.
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A split of three users whose ratings are on the 1–5 scale.
const SPLIT: &str = r#"[
  {"id": "u1", "profile": [{"title": "Great", "text": "Lovely soap, smells nice", "rating": 5, "pid": "p1"},
                           {"title": "Meh", "text": "Too dry for me", "rating": 2, "pid": "p2"}]},
  {"id": "u2", "profile": [{"title": "Nice", "text": "Good soap overall", "rating": 4, "pid": "p1"},
                           {"title": "Bad", "text": "Broke in a week", "rating": 1, "pid": "p3"}]},
  {"id": "u3", "profile": [{"title": "Okay", "text": "Does the job", "rating": 3, "pid": "p2"},
                           {"title": "Fine", "text": "Fine soap", "rating": 4, "pid": "p1"}]}
]"#;

fn pgraphrag_env(args: &[String], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgraphrag"));
    cmd.args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the pgraphrag binary runs")
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Runs `args` (with `env`), expecting a usage error (exit code 2) within 30 s whose stderr
/// contains each of `wants`; returns stderr.
fn refused_env(args: &[String], env: &[(&str, &Path)], wants: &[&str]) -> String {
    let t = Instant::now();
    let o = pgraphrag_env(args, env);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "pgraphrag {args:?}: {err}");
    for w in wants {
        assert!(err.contains(w), "pgraphrag {args:?}: {err:?} lacks {w:?}");
    }
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "pgraphrag {args:?} took {:?}: the refusal must come first",
        t.elapsed()
    );
    err
}

fn refused(args: &[String], wants: &[&str]) -> String {
    refused_env(args, &[], wants)
}

/// A folder's entries (names), to compare before and after a refused run.
fn entries(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = if e.path().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    v.sort();
    v
}

/// Runs each of `runs` in `dir`, expecting a refusal naming `wants`, and checks that the
/// folder's files (inputs included) are exactly as before.
fn refused_untouched(dir: &Path, runs: &[Vec<String>], wants: &[&str]) {
    for a in runs {
        let before = entries(dir);
        refused(a, wants);
        assert_eq!(
            entries(dir),
            before,
            "pgraphrag {a:?} changed {}",
            dir.display()
        );
    }
}

/// `SPLIT` with `edit` applied to its JSON, written to `dir/name`.
fn split_file(dir: &Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let mut v: serde_json::Value = serde_json::from_str(SPLIT).unwrap();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p
}

#[test]
fn ratings_off_the_scale_are_refused_naming_file_record_and_field() {
    let d = tempfile::tempdir().unwrap();
    let split = split_file(d.path(), "amazon_dev.json", |v| {
        v[2]["profile"][0]["rating"] = 99999.into()
    });
    let out = s(&d.path().join("out"));
    let model = s(&d.path().join("model.gguf"));
    let runs = [
        // Once scored as an MAE of 99996.667.
        args(&[
            "bench",
            "--task",
            "rating",
            "--model",
            &model,
            "--split",
            &s(&split),
            "--out",
            &out,
        ]),
        args(&[
            "baselines",
            "--task",
            "rating",
            "--split",
            &s(&split),
            "--out",
            &out,
        ]),
        args(&[
            "rank",
            "--task",
            "rating",
            "--split",
            &s(&split),
            "--out",
            &s(&d.path().join("r.json")),
        ]),
    ];
    refused_untouched(
        d.path(),
        &runs,
        &[
            "amazon_dev.json",
            "record 2 (id \"u3\"), profile[0], field \"rating\"",
            "99999 is not a star rating from 1 to 5",
        ],
    );
}

#[test]
fn a_lamp3_gold_off_the_scale_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let q = d.path().join("dev_questions.json");
    std::fs::write(
        &q,
        r#"[{"id": "q1", "input": "review: great", "profile": [{"id": "p1", "text": "ok", "score": "4"}]},
            {"id": "q2", "input": "review: bad", "profile": [{"id": "p2", "text": "no", "score": "2"}]}]"#,
    )
    .unwrap();
    let o = d.path().join("dev_outputs.json");
    std::fs::write(
        &o,
        r#"{"task": "LaMP_3", "golds": [{"id": "q1", "output": "5"}, {"id": "q2", "output": "-99"}]}"#,
    )
    .unwrap();
    let run = args(&[
        "lamp",
        "grid",
        "--task",
        "LaMP-3",
        "--model",
        &s(&d.path().join("model.gguf")),
        "--questions",
        &s(&q),
        "--outputs",
        &s(&o),
        "--cache",
        &s(&d.path().join("cache.sqlite")),
        "--out",
        &s(&d.path().join("grid")),
    ]);
    refused_untouched(
        d.path(),
        &[run],
        &[
            "dev_outputs.json",
            "record 1 (id \"q2\"), field \"output\"",
            "\"-99\" is not a rating from 1 to 5",
        ],
    );
}

#[test]
fn zero_lengths_are_refused_naming_the_flag() {
    let d = tempfile::tempdir().unwrap();
    let split = split_file(d.path(), "amazon_dev.json", |_| {});
    let q = d.path().join("q.json");
    std::fs::write(&q, "[]").unwrap();
    let (out, model) = (s(&d.path().join("out")), s(&d.path().join("m.gguf")));
    let cases = [
        (
            "--max-tokens",
            args(&[
                "bench",
                "--task",
                "text",
                "--split",
                &s(&split),
                "--model",
                &model,
                "--out",
                &out,
                "--max-tokens",
                "0",
            ]),
        ),
        (
            "--max-new-tokens",
            args(&[
                "summarize",
                "--task",
                "LaMP-4",
                "--input",
                &s(&q),
                "--model",
                &model,
                "--store",
                &s(&d.path().join("s.sqlite")),
                "--max-new-tokens",
                "0",
            ]),
        ),
        (
            "--max-new-tokens",
            args(&[
                "lamp",
                "grid",
                "--task",
                "LaMP-4",
                "--questions",
                &s(&q),
                "--outputs",
                &s(&q),
                "--model",
                &model,
                "--out",
                &out,
                "--max-new-tokens",
                "0",
            ]),
        ),
        (
            "--max-tokens",
            args(&[
                "multistage",
                "run",
                "--examples",
                &s(&q),
                "--model",
                &model,
                "--out",
                &out,
                "--max-tokens",
                "0",
            ]),
        ),
        (
            "--ks",
            args(&[
                "bench",
                "--task",
                "text",
                "--split",
                &s(&split),
                "--model",
                &model,
                "--out",
                &out,
                "--ks",
                "1,0",
            ]),
        ),
    ];
    for (flag, run) in cases {
        refused_untouched(d.path(), &[run], &[flag, "must be at least 1 (got 0)"]);
    }
}

#[test]
fn absurd_times_are_refused_before_a_lamp_file_is_written() {
    let d = tempfile::tempdir().unwrap();
    let corpus = d.path().join("news.jsonl");
    let line = |id: &str, time: i64| {
        format!(
            "{{\"author\":\"a.com\",\"doc_id\":\"{id}\",\"time\":{time},\"title\":\"T\",\"text\":\"text\"}}\n"
        )
    };
    // Once written as the date -292277022657-01-27.
    let text = [line("n/1", 1_486_425_600), line("n/2", i64::MIN)].concat();
    std::fs::write(&corpus, text).unwrap();
    let run = args(&[
        "corpus",
        "lamp",
        "--task",
        "LaMP-4",
        "--from",
        &s(&corpus),
        "--out",
        &s(&d.path().join("lamp4")),
    ]);
    refused_untouched(
        d.path(),
        &[run],
        &[
            "news.jsonl: line 2 (doc_id \"n/2\"): field \"time\" -9223372036854775808",
            "not a time from 1900 to 2200",
        ],
    );
}

#[test]
fn repeated_user_ids_are_refused_where_a_target_could_leak() {
    let d = tempfile::tempdir().unwrap();
    let split = split_file(d.path(), "hotel_dev.json", |v| v[2]["id"] = "u1".into());
    let (out, model) = (s(&d.path().join("out")), s(&d.path().join("m.gguf")));
    let mut runs = vec![
        args(&[
            "rank",
            "--task",
            "text",
            "--split",
            &s(&split),
            "--out",
            &s(&d.path().join("r.json")),
        ]),
        args(&[
            "bench",
            "--task",
            "rating",
            "--split",
            &s(&split),
            "--model",
            &model,
            "--out",
            &out,
        ]),
        args(&[
            "baselines",
            "--task",
            "title",
            "--split",
            &s(&split),
            "--out",
            &out,
        ]),
    ];
    if cfg!(feature = "postgres") {
        // Refused before any connection is tried.
        runs.push(args(&[
            "store",
            "load",
            "--url",
            "postgres://nobody@127.0.0.1:1/none",
            "--split",
            &s(&split),
        ]));
    }
    refused_untouched(
        d.path(),
        &runs,
        &[
            "hotel_dev.json",
            "record 2: user id \"u1\" is already record 0's",
            "held-out target",
        ],
    );
}

#[test]
fn a_damaged_wordnet_is_refused_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    let wordnet = pgraphrag_metrics::wordnet::find(&pgraphrag_metrics::wordnet::search_paths(
        |k| std::env::var_os(k),
        &[support::root()],
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let cut = d.path().join("wordnet");
    std::fs::create_dir(&cut).unwrap();
    for f in pgraphrag_metrics::wordnet::REQUIRED_FILES {
        std::fs::copy(wordnet.join(f), cut.join(f)).unwrap();
    }
    // data.noun cut to 1 MB once lowered METEOR from 0.639 to 0.469 without a word.
    let noun = std::fs::read(cut.join("data.noun")).unwrap();
    std::fs::write(cut.join("data.noun"), &noun[..1 << 20]).unwrap();
    let pairs = d.path().join("pairs.jsonl");
    std::fs::write(
        &pairs,
        "{\"id\":1,\"prediction\":\"the dogs ran\",\"reference\":\"a dog runs\"}\n",
    )
    .unwrap();
    let out = d.path().join("scores.jsonl");
    let run = args(&[
        "metrics",
        "--quiet",
        "--pairs",
        &s(&pairs),
        "--out",
        &s(&out),
    ]);
    refused_env(
        &run,
        &[("WORDNET_DIR", &cut)],
        &["data.noun", "cut short", "scripts/fetch-wordnet.sh"],
    );
    assert!(!out.exists(), "scores written over a damaged WordNet");
}

#[test]
fn sizes_beyond_the_model_or_memory_are_refused_naming_the_flag_and_limit() {
    let d = tempfile::tempdir().unwrap();
    let train = d.path().join("train.jsonl");
    std::fs::write(&train, "{\"prompt\": \"p\", \"target\": \"t\"}\n").unwrap();
    let common = |model: &str| {
        args(&[
            "train",
            "lora",
            "--model",
            model,
            "--train",
            &s(&train),
            "--out",
            &s(&d.path().join("a.safetensors")),
            "--checkpoint",
            &s(&d.path().join("c.safetensors")),
        ])
    };
    // Checked at parse time: no model needed.
    let missing = s(&d.path().join("m.gguf"));
    let run = [common(&missing), args(&["--batch-size", "1000000000"])].concat();
    refused_untouched(d.path(), &[run], &["--batch-size", "from 1 to 1024"]);
    // Checked against the model's header (SmolLM2: q 576 × 576, v 192 × 576), before any
    // weight loads: a rank of 10⁹ once asked for 2.3 TB, 100,000 was killed for memory.
    let model = s(&support::model());
    for rank in ["1000000000", "100000", "193"] {
        let run = [common(&model), args(&["--rank", rank])].concat();
        refused_untouched(
            d.path(),
            &[run],
            &[
                &format!("rank: LoRA rank {rank} is larger than the attn_v projection (192 × 576)"),
                "from 1 to 192",
            ],
        );
    }
}

#[test]
fn plot_is_linear_in_its_rows_and_draws_a_bounded_chart() {
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("results.csv");
    let mut text = String::from("mode_k,ROUGE-1,ROUGE-L\n");
    for i in 0..200_000 {
        text.push_str(&format!("m{i}_k{},0.{i:06},0.25\n", 1 + i % 3));
    }
    std::fs::write(&csv, &text).unwrap();
    let svg = d.path().join("results.svg");
    let t = Instant::now();
    let o = pgraphrag_env(&args(&["plot", "--csv", &s(&csv), "--out", &s(&svg)]), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // Once over 120 s and a 5.4 GB SVG for a 10 MB CSV.
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    let len = std::fs::metadata(&svg).unwrap().len();
    assert!(len < 1 << 20, "{len} bytes");
    let note = "chart shows the first 24 of 200000 modes";
    assert!(err.contains(note), "{err}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains(note));
}

#[test]
fn non_finite_numbers_are_refused_when_parsing() {
    let d = tempfile::tempdir().unwrap();
    let split = split_file(d.path(), "amazon_dev.json", |_| {});
    let (out, model) = (s(&d.path().join("out")), s(&d.path().join("m.gguf")));
    let bench = |flag: &str, v: &str| {
        args(&[
            "--task",
            "rating",
            "--split",
            &s(&split),
            "--model",
            &model,
            "--out",
            &out,
            flag,
            v,
        ])
    };
    let cases = [
        // Once stored as null, the worker then blaming "another pgraphrag version".
        (
            "--temperature",
            [
                args(&[
                    "queue",
                    "submit",
                    "bench",
                    "--nats",
                    "nats://127.0.0.1:1",
                    "--jobs",
                    &s(&d.path().join("jobs.sqlite")),
                ]),
                bench("--temperature", "NaN"),
            ]
            .concat(),
        ),
        (
            "--temperature",
            [args(&["bench"]), bench("--temperature", "inf")].concat(),
        ),
        (
            "--top-p",
            [args(&["bench"]), bench("--top-p", "NaN")].concat(),
        ),
        (
            "--lr",
            args(&[
                "train",
                "lora",
                "--model",
                &model,
                "--train",
                &s(&split),
                "--out",
                &out,
                "--checkpoint",
                &s(&d.path().join("c")),
                "--lr",
                "NaN",
            ]),
        ),
        (
            "--ack-wait",
            args(&["worker", "--drain", "--ack-wait", "NaN"]),
        ),
    ];
    for (flag, run) in cases {
        if (run[0] == "queue" || run[0] == "worker") && !cfg!(feature = "jetstream") {
            continue;
        }
        refused_untouched(d.path(), &[run], &[flag, "must be a finite number"]);
    }
}

/// A worker that drains a queue in which units died exits with 1 and says how many (it used
/// to exit 0). Needs `nats-server` (`scripts/cluster_nats.sh install`): skipped without it.
#[cfg(feature = "jetstream")]
#[test]
fn a_drained_worker_that_gave_units_up_exits_1() {
    #[path = "../../store/tests/queue_support/mod.rs"]
    mod queue_support;
    let Some(bin) = queue_support::server_or_skip("bad_input_dead_letters") else {
        return;
    };
    let node = queue_support::Node::start(&bin);
    let d = tempfile::tempdir().unwrap();
    let split = split_file(d.path(), "amazon_dev.json", |_| {});
    let nats = args(&[
        "--nats",
        &node.url,
        "--stream",
        "T_DEAD",
        "--max-deliver",
        "1",
        "--ack-wait",
        "5",
    ]);
    let submit = [
        args(&["queue", "submit", "rank", "--task", "text", "--chunk", "2"]),
        args(&[
            "--split",
            &s(&split),
            "--store",
            &s(&d.path().join("jobs.sqlite")),
        ]),
        nats.clone(),
    ]
    .concat();
    let o = pgraphrag_env(&submit, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The split goes away before any worker runs: both units fail on their only delivery.
    std::fs::remove_file(&split).unwrap();
    let worker = [args(&["worker", "--drain", "--name", "w"]), nats].concat();
    let o = pgraphrag_env(&worker, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("2 units were given up in this run"), "{err}");
}
