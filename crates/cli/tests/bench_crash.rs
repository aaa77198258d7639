//! `pgraphrag bench` end to end with the real SmolLM2 model: a run killed mid-way loses no
//! finished generation, a rerun reuses all of them and computes nothing twice, and the same
//! seed gives the same outputs.
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` (`scripts/fetch-llms.sh --smollm-only`) and
//! the PGraphRAG dev splits (`$PGRAPHRAG_DATA`, default `../shared/data`); fails loudly without.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// The shared data folder: `$PGRAPHRAG_DATA`, else `../shared/data` beside the checkout.
fn data_dir() -> PathBuf {
    match std::env::var_os("PGRAPHRAG_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => root().join("../shared/data"),
    }
}

fn split() -> PathBuf {
    let p = pgraphrag_data::pgraphrag_split_path(&data_dir(), "amazon", "dev");
    assert!(
        p.is_file(),
        "the PGraphRAG split is missing at {}: set PGRAPHRAG_DATA to the shared data folder",
        p.display()
    );
    p
}

/// A fresh scratch folder, removed on drop.
fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("pgraphrag-{tag}-"))
        .tempdir()
        .unwrap()
}

fn bench_cmd(out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgraphrag"));
    c.arg("bench")
        .arg("--split")
        .arg(split())
        .arg("--model")
        .arg(model())
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .args(extra);
    c
}

/// All (key, output) rows of a run's cache.
fn rows(out: &Path) -> BTreeMap<String, String> {
    let path = out.join("cache.sqlite");
    if !path.exists() {
        return BTreeMap::new();
    }
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return BTreeMap::new();
    };
    let Ok(mut st) = conn.prepare("SELECT key, output FROM generations") else {
        return BTreeMap::new();
    };
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map(|it| it.filter_map(|x| x.ok()).collect())
        .unwrap_or_default()
}

/// The `stats {...}` line of a finished run.
fn stats(stdout: &str) -> serde_json::Value {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stats "))
        .unwrap_or_else(|| panic!("no stats line in:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

fn run_to_end(out: &Path, extra: &[&str]) -> serde_json::Value {
    let o = bench_cmd(out, extra).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "bench failed: {}\n{stdout}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    stats(&stdout)
}

fn output_files(out: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("OUTPUT-"))
        })
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

const CRASH_ARGS: &[&str] = &[
    "--task",
    "rating",
    "--limit",
    "3",
    "--modes",
    "none,user,neighbor,both",
    "--ks",
    "1,2",
    // Batches of two: rows land two at a time, so the run can be killed between batches.
    "--batch",
    "2",
];

#[test]
fn killed_run_loses_nothing_and_rerun_computes_nothing_twice() {
    let dir = scratch("crash");
    let out = dir.path().join("run");

    // 1. Start, wait for two finished generations, kill -9.
    let mut child = bench_cmd(&out, CRASH_ARGS)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if rows(&out).len() >= 2 {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("bench exited ({status}) before it could be killed mid-way");
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "no generation finished within 300 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = rows(&out);
    assert!(before.len() >= 2);

    // 2. Rerun: every finished generation is reused, the rest generated once.
    let s2 = run_to_end(&out, CRASH_ARGS);
    let unique = s2["unique_prompts"].as_u64().unwrap() as usize;
    assert!(
        before.len() < unique,
        "the first run was not killed mid-way ({} of {unique} done)",
        before.len()
    );
    assert_eq!(s2["cache_hits"].as_u64().unwrap() as usize, before.len());
    assert_eq!(
        s2["generated"].as_u64().unwrap() as usize,
        unique - before.len()
    );
    let after = rows(&out);
    assert_eq!(after.len(), unique, "one cache row per distinct prompt");
    for (k, v) in &before {
        assert_eq!(
            after.get(k),
            Some(v),
            "a finished generation changed or was lost"
        );
    }
    let files2 = output_files(&out);
    assert_eq!(files2.len(), 7, "one OUTPUT file per config");

    // 3. Third run: all from the cache, same files.
    let s3 = run_to_end(&out, CRASH_ARGS);
    assert_eq!(s3["cache_hits"].as_u64().unwrap() as usize, unique);
    assert_eq!(s3["generated"].as_u64().unwrap(), 0);
    assert_eq!(output_files(&out), files2);
    assert!(out.join("results.md").is_file() && out.join("results.csv").is_file());
    let svg = std::fs::read_to_string(out.join("results.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("MAE (lower is better)"));
}

/// The journal's `stored <key>` lines.
fn journal_keys(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("stored ").map(str::to_string))
        .collect()
}

/// One batch holds every prompt (the default `--batch 32`), so any kill after the first answer
/// is a kill in the middle of a batch: every answer that had finished must be in the cache.
const MID_BATCH_ARGS: &[&str] = &[
    "--task",
    "title",
    "--limit",
    "3",
    "--modes",
    "none,user,neighbor,both",
    "--ks",
    "1,2",
];

#[test]
fn killed_mid_batch_keeps_every_finished_answer() {
    // Several kill points: right after the first answer and at seeded delays after it.
    for seed in [1u64, 2, 3] {
        let dir = scratch(&format!("midbatch{seed}"));
        let out = dir.path().join("run");
        std::fs::create_dir_all(&out).unwrap();
        let journal = dir.path().join("journal.log");
        let mut args: Vec<&str> = MID_BATCH_ARGS.to_vec();
        let jarg = journal.to_string_lossy().into_owned();
        args.extend(["--journal", jarg.as_str()]);
        let mut child = bench_cmd(&out, &args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while journal_keys(&journal).is_empty() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("seed {seed}: bench exited ({status}) before its first answer");
            }
            assert!(
                start.elapsed() < Duration::from_secs(300),
                "no answer within 300 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // A seeded delay of 0 to ~1.2 s after the first answer (splitmix64 of the seed).
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let delay = if seed == 1 { 0 } else { (z ^ (z >> 31)) % 1200 };
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().unwrap();
        child.wait().unwrap();
        let finished = journal_keys(&journal);
        let before = rows(&out);
        for k in &finished {
            assert!(
                before.contains_key(k),
                "seed {seed}: a finished answer is missing from the cache"
            );
        }
        // Each journal line is written right after its commit: at most the one answer being
        // journalled at the kill can be in the cache without its line.
        assert!(
            before.len() <= finished.len() + 1,
            "seed {seed}: {} rows but {} journal lines",
            before.len(),
            finished.len()
        );

        let s2 = run_to_end(&out, MID_BATCH_ARGS);
        let unique = s2["unique_prompts"].as_u64().unwrap() as usize;
        assert!(
            before.len() < unique,
            "seed {seed}: the run finished before the kill"
        );
        assert_eq!(
            s2["cache_hits"].as_u64().unwrap() as usize,
            before.len(),
            "seed {seed}"
        );
        assert_eq!(
            s2["generated"].as_u64().unwrap() as usize,
            unique - before.len(),
            "seed {seed}: an answer was generated twice"
        );
        let after = rows(&out);
        assert_eq!(after.len(), unique);
        for (k, v) in &before {
            assert_eq!(
                after.get(k),
                Some(v),
                "seed {seed}: a finished answer changed"
            );
        }
        eprintln!(
            "seed {seed}: killed {delay} ms after the first answer with {} of {unique} finished \
             ({} journalled); the rerun generated {}",
            before.len(),
            finished.len(),
            unique - before.len()
        );
    }
}

#[test]
fn same_seed_same_outputs() {
    let dir = scratch("seed");
    let args = &[
        "--task",
        "title",
        "--limit",
        "2",
        "--modes",
        "none,neighbor",
        "--ks",
        "1",
        "--seed",
        "7",
        "--temperature",
        "0.8",
    ];
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let sa = run_to_end(&a, args);
    let sb = run_to_end(&b, args);
    assert_eq!(sa["generated"], sb["generated"]);
    assert!(sa["generated"].as_u64().unwrap() > 0);
    let (fa, fb) = (output_files(&a), output_files(&b));
    assert_eq!(fa.len(), 2);
    assert_eq!(fa, fb, "two runs with the same seed differ");
}
