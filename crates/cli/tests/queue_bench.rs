//! The bench grid as a queued job: `pgraphrag queue submit bench` with `pgraphrag bench`'s own
//! options, two `pgraphrag worker --drain` processes answering the units into the generation
//! cache, then `pgraphrag bench` with the same options generates nothing and writes the
//! results.md, results.csv and OUTPUT files of a run that generated everything itself. Real
//! data (the hotel dev split) and the real SmolLM2 model.
//!
//! Needs `nats-server` (`scripts/cluster_nats.sh install`): skipped locally without it, failed
//! under CI=true.
#![cfg(feature = "jetstream")]

#[path = "../../store/tests/queue_support/mod.rs"]
mod queue_support;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

fn split() -> PathBuf {
    let dir = match std::env::var_os("PGRAPHRAG_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => queue_support::root().join("../shared/data"),
    };
    pgraphrag_data::pgraphrag_split_path(&dir, "hotel", "dev")
}

fn run(args: &[OsString]) -> (String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(
        o.status.success(),
        "pgraphrag {args:?} failed: {}\n{stdout}\n{stderr}",
        o.status
    );
    (stdout, stderr)
}

fn stats(stdout: &str) -> serde_json::Value {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stats "))
        .unwrap_or_else(|| panic!("no stats line in:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

/// results.md, results.csv and the OUTPUT files of a run.
fn files(out: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("OUTPUT-") || n == "results.md" || n == "results.csv")
        .map(|n| (n.clone(), std::fs::read(out.join(&n)).unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_queued_bench_job_fills_the_cache_and_the_bench_then_only_scores() {
    let Some(bin) = queue_support::server_or_skip("queue_bench") else {
        return;
    };
    let model = queue_support::root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(model.is_file(), "run scripts/fetch-llms.sh --smollm-only");
    let node = queue_support::Node::start(&bin);
    let dir = tempfile::tempdir().unwrap();
    let (queued, direct) = (dir.path().join("queued"), dir.path().join("direct"));
    let os = |s: &str| OsString::from(s);
    let grid = |out: &Path| -> Vec<OsString> {
        let mut a: Vec<OsString> = ["--quiet", "--task", "rating"].map(os).to_vec();
        a.extend([os("--split"), split().into_os_string()]);
        a.extend([os("--model"), model.clone().into_os_string()]);
        a.extend([os("--out"), out.as_os_str().to_owned()]);
        a.extend(["--limit", "6", "--modes", "none,user,random", "--ks", "1,2"].map(os));
        a
    };
    let nats = [os("--nats"), os(&node.url), os("--stream"), os("T_BENCH")];

    let mut submit: Vec<OsString> = ["queue", "submit", "bench"].map(os).to_vec();
    submit.extend(nats.iter().cloned());
    submit.extend([
        os("--jobs"),
        dir.path().join("jobs.sqlite").into_os_string(),
    ]);
    submit.extend([os("--chunk"), os("2")]);
    submit.extend(grid(&queued));
    let (job, _) = run(&submit);
    let job: serde_json::Value = serde_json::from_str(job.trim()).unwrap();
    assert_eq!(
        (job["kind"].as_str(), job["units"].as_u64()),
        (Some("bench"), Some(3))
    );

    let workers: Vec<_> = ["w1", "w2"]
        .iter()
        .map(|name| {
            let mut a: Vec<OsString> = vec![os("worker"), os("--drain"), os("--quiet")];
            a.extend(nats.iter().cloned());
            a.extend([os("--name"), os(name)]);
            std::thread::spawn(move || run(&a))
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut status: Vec<OsString> = ["queue", "status", "--json"].map(os).to_vec();
    status.extend(nats.iter().cloned());
    status.extend([
        os("--store"),
        dir.path().join("jobs.sqlite").into_os_string(),
    ]);
    let (s, _) = run(&status);
    assert!(s.contains("\"units_done\":3"), "{s}");

    let mut bench = vec![os("bench")];
    bench.extend(grid(&queued));
    let from_queue = stats(&run(&bench).0);
    assert_eq!(
        (
            from_queue["generated"].as_u64(),
            from_queue["cache_hits"].as_u64()
        ),
        (Some(0), from_queue["unique_prompts"].as_u64()),
        "the bench found prompts the workers did not answer: {from_queue}"
    );
    let mut bench = vec![os("bench")];
    bench.extend(grid(&direct));
    let generated = stats(&run(&bench).0);
    assert_eq!(generated["generated"], generated["unique_prompts"]);
    let (a, b) = (files(&queued), files(&direct));
    assert!(
        a.len() >= 3,
        "{:?}",
        a.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert_eq!(a.len(), b.len());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            x == y,
            "{name} differs between the queued and the direct run"
        );
    }
}
