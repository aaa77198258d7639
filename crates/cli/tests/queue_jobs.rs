//! The model jobs through the real queue and the real binary, with the real SmolLM2 model:
//!
//! - the bench grid: `pgraphrag queue submit bench` with `pgraphrag bench`'s own options, two
//!   `pgraphrag worker --drain` processes answering the units into the generation cache, then
//!   `pgraphrag bench` with the same options generates nothing and writes the results.md,
//!   results.csv and OUTPUT files of a run that generated everything itself (the hotel dev
//!   split);
//! - the summaries: `pgraphrag queue submit summarize`, two workers, then `pgraphrag summarize`
//!   over the same summary store computes nothing and exports the bytes a fresh
//!   `pgraphrag summarize` run exports.
//!
//! Needs `nats-server` (`scripts/cluster_nats.sh install`): skipped locally without it, failed
//! under CI=true.
#![cfg(feature = "jetstream")]

#[path = "../../store/tests/queue_support/mod.rs"]
mod queue_support;
mod support;

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

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

/// Submits a job (`submit`: the `queue submit …` arguments), checks its kind and unit count,
/// and drains the queue with two `pgraphrag worker --drain` processes running at once.
fn submit_and_drain(submit: &[OsString], nats: &[OsString], kind: &str, units: u64) {
    let (job, _) = run(submit);
    let job: serde_json::Value = serde_json::from_str(job.trim()).unwrap();
    assert_eq!(
        (job["kind"].as_str(), job["units"].as_u64()),
        (Some(kind), Some(units))
    );
    let workers: Vec<_> = ["w1", "w2"]
        .iter()
        .map(|name| {
            let mut a: Vec<OsString> = ["worker", "--drain", "--quiet", "--name", name]
                .map(OsString::from)
                .to_vec();
            a.extend(nats.iter().cloned());
            std::thread::spawn(move || run(&a))
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

#[test]
fn a_queued_bench_job_fills_the_cache_and_the_bench_then_only_scores() {
    let Some(bin) = queue_support::server_or_skip("queue_bench") else {
        return;
    };
    let model = support::model();
    let node = queue_support::Node::start(&bin);
    let dir = tempfile::tempdir().unwrap();
    let (queued, direct) = (dir.path().join("queued"), dir.path().join("direct"));
    let os = |s: &str| OsString::from(s);
    let grid = |out: &Path| -> Vec<OsString> {
        let mut a: Vec<OsString> = ["--quiet", "--task", "rating"].map(os).to_vec();
        a.extend([os("--split"), support::split("hotel").into_os_string()]);
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
    submit_and_drain(&submit, &nats, "bench", 3);

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
    let from_queue = support::stats(&run(&bench).0);
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
    let generated = support::stats(&run(&bench).0);
    assert_eq!(generated["generated"], generated["unique_prompts"]);
    let (a, b) = (support::bench_files(&queued), support::bench_files(&direct));
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

/// A LaMP-7 questions file of `n` users with three tweets each.
fn lamp7_questions(path: &Path, n: usize) {
    use pgraphrag_core::{LampProfileItem, LampQuestion};
    let qs: Vec<LampQuestion> = (0..n)
        .map(|i| {
            let tweets = [
                format!("just got coffee #{i} lol"),
                "why is monday SO long".to_string(),
                format!("can't wait for the weekend!!! ({i})"),
            ];
            let profile = tweets
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    LampProfileItem::new(format!("u{i}-{k}"))
                        .with("text", t.as_str())
                        .dated(format!("2021-03-{:02}", k + 1))
                })
                .collect();
            LampQuestion::new(
                format!("u{i}"),
                "Paraphrase the following tweet without any explanation before or after it: nice day",
            )
            .with_profile(profile)
        })
        .collect();
    std::fs::write(path, serde_json::to_vec(&qs).unwrap()).unwrap();
}

#[test]
fn a_queued_summary_job_fills_the_store_and_summarize_then_computes_nothing() {
    let Some(bin) = queue_support::server_or_skip("queue_summarize") else {
        return;
    };
    let model = support::model();
    let node = queue_support::Node::start(&bin);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("LaMP_7_questions.json");
    lamp7_questions(&input, 5);
    let os = |s: &str| OsString::from(s);
    let opts: Vec<OsString> = [
        "--task",
        "LaMP-7",
        "--max-new-tokens",
        "24",
        "--context",
        "512",
    ]
    .map(os)
    .to_vec();
    let common = |a: &mut Vec<OsString>| {
        a.extend([os("--input"), input.clone().into_os_string()]);
        a.extend([os("--model"), model.clone().into_os_string()]);
        a.extend(opts.iter().cloned());
    };
    let nats = [
        os("--nats"),
        os(&node.url),
        os("--stream"),
        os("T_SUMMARIZE"),
    ];
    let queued = dir.path().join("queued.sqlite");

    let mut submit: Vec<OsString> = ["queue", "submit", "summarize"].map(os).to_vec();
    submit.extend(nats.iter().cloned());
    common(&mut submit);
    submit.extend([os("--summaries"), queued.clone().into_os_string()]);
    submit.extend([
        os("--store"),
        dir.path().join("jobs.sqlite").into_os_string(),
    ]);
    submit.extend([os("--chunk"), os("2")]);
    submit_and_drain(&submit, &nats, "summarize", 3);

    let summarize = |store: &Path, export: &Path| -> serde_json::Value {
        let mut a: Vec<OsString> = vec![os("summarize"), os("--quiet")];
        common(&mut a);
        a.extend([os("--store"), store.as_os_str().to_owned()]);
        a.extend([os("--export"), export.as_os_str().to_owned()]);
        support::stats(&run(&a).0)
    };
    let (from_queue, fresh) = (
        dir.path().join("queued.jsonl"),
        dir.path().join("fresh.jsonl"),
    );
    let s = summarize(&queued, &from_queue);
    assert_eq!(s["computed"].as_u64(), Some(0), "{s}");
    let s = summarize(&dir.path().join("fresh.sqlite"), &fresh);
    assert_eq!(s["computed"].as_u64(), Some(5), "{s}");
    let (a, b) = (
        std::fs::read(&from_queue).unwrap(),
        std::fs::read(&fresh).unwrap(),
    );
    assert_eq!(String::from_utf8_lossy(&a).lines().count(), 5);
    assert!(a == b, "the queued summaries differ from a fresh run's");
}
