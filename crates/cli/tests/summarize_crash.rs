//! `pgraphrag summarize` end to end with the real SmolLM2 model: a run killed with `kill -9`
//! mid-run loses no finished summary and the rerun computes nothing twice; a changed profile
//! resummarises that user only; empty profiles are skipped; a store of another model and a
//! profile item without the task's fields are clear usage errors (exit code 2).
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` (`scripts/fetch-llms.sh --smollm-only`);
//! without it the model tests say so and do nothing.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pgraphrag_core::{LampProfileItem, LampQuestion};

fn model() -> Option<PathBuf> {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/SmolLM2-135M-Instruct.Q4_1.gguf");
    if p.is_file() {
        return Some(p);
    }
    let msg = format!(
        "the SmolLM2 model is missing at {} (scripts/fetch-llms.sh --smollm-only)",
        p.display()
    );
    // CI fetches the model (scripts/test.sh): there a missing model is a failure, not a skip.
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("SKIPPED: {msg}");
    None
}

/// A fresh scratch folder, removed on drop.
fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("pgraphrag-{tag}-"))
        .tempdir()
        .unwrap()
}

fn user(id: &str, tweets: &[&str]) -> LampQuestion {
    let profile = tweets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            LampProfileItem::new(format!("{id}{i}"))
                .with("text", *t)
                .dated(format!("2021-03-{:02}", i + 1))
        })
        .collect();
    LampQuestion::new(
        id,
        "Paraphrase the following tweet without any explanation before or after it: nice day",
    )
    .with_profile(profile)
}

fn users(n: usize) -> Vec<LampQuestion> {
    (0..n)
        .map(|i| {
            user(
                &format!("u{i}"),
                &[
                    &format!("just got coffee #{i} lol"),
                    "why is monday SO long",
                    &format!("can't wait for the weekend!!! ({i})"),
                ],
            )
        })
        .collect()
}

fn cmd(input: &Path, store: &Path, model: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgraphrag"));
    c.arg("summarize")
        .args([
            "--task",
            "LaMP-7",
            "--max-new-tokens",
            "24",
            "--context",
            "512",
        ])
        .arg("--input")
        .arg(input)
        .arg("--store")
        .arg(store)
        .arg("--model")
        .arg(model)
        .arg("--quiet")
        .args(extra);
    c
}

fn stats(stdout: &str) -> serde_json::Value {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stats "))
        .unwrap_or_else(|| panic!("no stats line in:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

fn run_to_end(c: &mut Command) -> serde_json::Value {
    let o = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "summarize failed: {}\n{stdout}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    stats(&stdout)
}

/// (user, summary) rows of the store, read without the library.
fn rows(store: &Path) -> BTreeMap<String, String> {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return BTreeMap::new();
    };
    let Ok(mut st) = conn.prepare("SELECT user_id, summary FROM summaries") else {
        return BTreeMap::new();
    };
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map(|it| it.filter_map(|x| x.ok()).collect())
        .unwrap_or_default()
}

fn journal(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("stored ").map(str::to_string))
        .collect()
}

#[test]
fn killed_mid_run_loses_nothing_and_computes_nothing_twice() {
    let Some(model) = model() else { return };
    let dir = scratch("crash");
    let (input, store, jpath) = (
        dir.path().join("q.json"),
        dir.path().join("s.sqlite"),
        dir.path().join("journal.log"),
    );
    const N: usize = 10;
    pgraphrag_data::lamp::write_questions(&input, &users(N)).unwrap();
    let jarg = jpath.to_string_lossy().into_owned();
    // One batch: any kill after the first summary is a kill in the middle of the batch.
    let args = ["--batch", "10", "--journal", jarg.as_str()];

    let mut child = cmd(&input, &store, &model, &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while journal(&jpath).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("summarize exited ({status}) before its first summary");
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "no summary within 300 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let finished = journal(&jpath);
    let before = rows(&store);
    for u in &finished {
        assert!(
            before.contains_key(u),
            "journalled summary of {u} missing from the store"
        );
    }
    // Each line is written right after its commit: at most one summary lacks its line.
    assert!(before.len() <= finished.len() + 1);
    assert!(before.len() < N, "the run finished before the kill");

    let s = run_to_end(&mut cmd(&input, &store, &model, &args));
    assert_eq!(s["done_before"].as_u64().unwrap() as usize, before.len());
    assert_eq!(s["computed"].as_u64().unwrap() as usize, N - before.len());
    assert_eq!(s["resummarised"].as_u64().unwrap(), 0);
    let after = rows(&store);
    assert_eq!(after.len(), N);
    for (u, text) in &before {
        assert_eq!(after.get(u), Some(text), "a finished summary changed");
    }
    let lines = journal(&jpath);
    let distinct: BTreeSet<&String> = lines.iter().collect();
    assert_eq!(
        distinct.len(),
        lines.len(),
        "a summary was computed twice: {lines:?}"
    );
    assert!(lines.len() + 1 >= N);
    eprintln!(
        "killed with {} of {N} stored ({} journalled); the rerun computed {}",
        before.len(),
        finished.len(),
        N - before.len()
    );
}

#[test]
fn changed_profile_resummarises_that_user_only_and_empty_profiles_are_skipped() {
    let Some(model) = model() else { return };
    let dir = scratch("changed");
    let (input, store, export) = (
        dir.path().join("q.json"),
        dir.path().join("s.sqlite"),
        dir.path().join("s.jsonl"),
    );
    let mut qs = users(3);
    qs.push(LampQuestion::new(
        "empty",
        "Paraphrase the following tweet without any explanation before or after it: x",
    ));
    pgraphrag_data::lamp::write_questions(&input, &qs).unwrap();
    let s1 = run_to_end(&mut cmd(&input, &store, &model, &[]));
    assert_eq!(
        (s1["computed"].as_u64(), s1["skipped_empty"].as_u64()),
        (Some(3), Some(1))
    );
    assert!(s1["generated_tokens"].as_u64().unwrap() > 0);
    let before = rows(&store);

    qs[1].profile[2] = LampProfileItem::new("u12").with("text", "totally different tweet now");
    pgraphrag_data::lamp::write_questions(&input, &qs).unwrap();
    let exp = export.to_string_lossy().into_owned();
    let s2 = run_to_end(&mut cmd(
        &input,
        &store,
        &model,
        &["--export", exp.as_str()],
    ));
    assert_eq!(
        (
            s2["done_before"].as_u64(),
            s2["computed"].as_u64(),
            s2["resummarised"].as_u64()
        ),
        (Some(2), Some(1), Some(1))
    );
    let after = rows(&store);
    assert_eq!(after.len(), 3, "the empty profile has no row");
    assert_eq!(after["u0"], before["u0"]);
    assert_eq!(after["u2"], before["u2"]);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&export)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["u0", "u1", "u2"]);
    assert_eq!(lines[1]["summary"].as_str().unwrap(), after["u1"]);
}

#[test]
fn a_store_of_another_model_is_a_usage_error() {
    let Some(model) = model() else { return };
    let dir = scratch("other");
    let (input, store) = (dir.path().join("q.json"), dir.path().join("s.sqlite"));
    pgraphrag_data::lamp::write_questions(&input, &users(1)).unwrap();
    {
        let s = pgraphrag_stages::SummaryStore::open(&store).unwrap();
        let key = pgraphrag_stages::SummaryKey {
            user: "u0",
            profile_hash: "h",
            model: "gguf:other.gguf:1:AsStored:Native",
            version: "v0",
        };
        let summary = pgraphrag_stages::Summary {
            text: "x".into(),
            fit: pgraphrag_stages::FitReport::all(1),
        };
        s.put(&key, &summary, 0.0).unwrap();
    }
    let o = cmd(&input, &store, &model, &[]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("holds 1 of model \"gguf:other.gguf:1:AsStored:Native\" version \"v0\""),
        "{err}"
    );
    // --new-config accepts it.
    let s = run_to_end(&mut cmd(&input, &store, &model, &["--new-config"]));
    assert_eq!(s["computed"].as_u64(), Some(1));
    let configs = pgraphrag_stages::SummaryStore::open(&store)
        .unwrap()
        .configs()
        .unwrap();
    assert_eq!(
        configs.len(),
        2,
        "both models' summaries are kept: {configs:?}"
    );
}

#[test]
fn lamp6_and_bad_input_are_usage_errors() {
    let dir = scratch("bad");
    let input = dir.path().join("q.json");
    std::fs::write(
        &input,
        r#"[{"id": "1", "input": "x", "profile": [{"id": "p"}]}]"#,
    )
    .unwrap();
    let run = |task: &str| {
        Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
            .args([
                "summarize",
                "--task",
                task,
                "--model",
                "nope.gguf",
                "--quiet",
            ])
            .arg("--input")
            .arg(&input)
            .arg("--store")
            .arg(dir.path().join("s.sqlite"))
            .output()
            .unwrap()
    };
    let o = run("LaMP-7");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("text") && err.contains("q.json"), "{err}");
}
