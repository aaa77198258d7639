//! `pgraphrag baselines` scores the rows `pgraphrag bench` evaluates: for the same `--skip` and
//! `--limit`, the same users in the same order, with the same gold answers. Bench's rows are
//! read from the ranking file it writes (`--export-prompts` stops it there, without a model).
use std::path::Path;
use std::process::Command;

use pgraphrag_core::Task;

const SPLIT: &str = r#"[
  {"id": "u0", "profile": [{"title": "Great soap", "text": "Smells nice. Lasts.", "rating": 5, "pid": "p"}]},
  {"id": "u1", "profile": [{"title": "Too small", "text": "It is tiny", "rating": 2, "pid": "q"},
                           {"title": "Nice", "text": "smells nice", "rating": 4, "pid": "p"}]},
  {"id": "u2", "profile": [{"title": "", "text": "no title here", "rating": 3.7, "pid": "p"}]},
  {"id": "u3", "profile": [{"title": "Broke", "text": "broke in a week", "rating": 1, "pid": 7}]},
  {"id": "u4", "profile": [{"title": "Fine", "text": "", "rating": 4, "pid": "q"}]},
  {"id": "u5", "profile": [{"title": "Love it", "text": "love the smell", "rating": 5, "pid": "p"}]},
  {"id": "u6", "profile": [{"title": "Ok", "text": "ok", "rating": 3, "pid": "r"}]}
]"#;

fn pgraphrag(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pgraphrag {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Bench's rows: (user id, gold) from the ranking file in `dir`, through bench's own gold rule.
fn bench_rows(dir: &Path, task: Task) -> Vec<(String, String)> {
    let ranking = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("RANKING-")
        })
        .expect("bench wrote a ranking file");
    pgraphrag_data::load_rankings(&ranking)
        .unwrap()
        .iter()
        .map(|r| {
            (
                r.user_id.clone(),
                pgraphrag_eval::gold(&r.to_profile(), task),
            )
        })
        .collect()
}

/// The baselines' rows: (id, gold) of each line of `predictions.jsonl`.
fn baseline_rows(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(dir.join("predictions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_string(),
                v["gold"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn baselines_score_the_users_and_golds_bench_evaluates() {
    let tmp = tempfile::tempdir().unwrap();
    let split = tmp.path().join("toy_dev.json");
    std::fs::write(&split, SPLIT).unwrap();
    let split = split.to_str().unwrap();
    for (task, name) in [
        (Task::Title, "title"),
        (Task::Text, "text"),
        (Task::Rating, "rating"),
    ] {
        for (skip, limit) in [("0", "3"), ("1", "4"), ("3", "2")] {
            let tag = format!("{name}-{skip}-{limit}");
            let bench = tmp.path().join(format!("bench-{tag}"));
            let base = tmp.path().join(format!("base-{tag}"));
            let prompts = tmp.path().join(format!("prompts-{tag}.jsonl"));
            let common = [
                "--split", split, "--task", name, "--skip", skip, "--limit", limit,
            ];
            let mut b = vec!["bench", "--quiet", "--out", bench.to_str().unwrap()];
            b.extend(["--export-prompts", prompts.to_str().unwrap()]);
            b.extend(common);
            pgraphrag(&b);
            pgraphrag(&[&["baselines", "--out", base.to_str().unwrap()], &common[..]].concat());
            let want = bench_rows(&bench, task);
            assert_eq!(want.len(), limit.parse::<usize>().unwrap(), "{tag}");
            assert_eq!(baseline_rows(&base), want, "{tag}");
            let md = std::fs::read_to_string(base.join("results.md")).unwrap();
            assert!(md.contains("| const_val |"), "{md}");
            assert!(base.join("results.csv").is_file());
        }
    }
}

#[test]
fn no_users_left_to_choose_the_constants_on_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let split = tmp.path().join("toy_dev.json");
    std::fs::write(&split, SPLIT).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(["baselines", "--task", "rating", "--split"])
        .arg(&split)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no users after the evaluated ones"), "{err}");
}
