//! Byte-equality of our prompts and extraction with the Python port of the released code
//! (`tests/fixtures/make_fixtures.py`).
use std::path::Path;

use pgraphrag_core::Entry;
use pgraphrag_prompt::extract::{ExtractOptions, extract};
use pgraphrag_prompt::pgraphrag::{Language, Mode, PromptBuilder, RankedProfile, Task};
use serde_json::Value;

fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
}

fn opt_str(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn entry(v: &Value) -> Entry {
    Entry {
        title: opt_str(&v["reviewTitle"]),
        text: opt_str(&v["reviewText"]),
        rating: v["reviewRating"].as_f64(),
        ..Default::default()
    }
}

fn profile(rec: &Value) -> RankedProfile {
    let list = |k: &str| {
        rec[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| entry(v).into())
            .collect()
    };
    RankedProfile {
        user_id: rec["user_id"].as_str().unwrap().to_string(),
        target: Entry {
            title: opt_str(&rec["user_review_title"]),
            text: opt_str(&rec["user_review_text"]),
            rating: rec["user_review_rating"].as_f64(),
            ..Default::default()
        },
        user: list("user_ratings"),
        neighbors: list("neighbor_ratings"),
        random: (!rec["random_review"].is_null()).then(|| entry(&rec["random_review"]).into()),
        ..Default::default()
    }
}

fn load(name: &str) -> Value {
    let p = fixtures().join(name);
    let s = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).unwrap()
}

#[test]
fn prompts_equal_the_released_code() {
    let cases = load("prompts.json");
    let cases = cases.as_array().unwrap();
    assert!(cases.len() > 150);
    for c in cases {
        let task: Task = c["task"].as_str().unwrap().parse().unwrap();
        let mode: Mode = c["mode"].as_str().unwrap().parse().unwrap();
        let k = c["k"].as_u64().unwrap() as usize;
        let lang = Language::for_dataset(c["dataset"].as_str().unwrap());
        let got = PromptBuilder::new(task)
            .language(lang)
            .build(&profile(&c["record"]), mode, k);
        assert_eq!(
            got,
            c["prompt"].as_str().unwrap(),
            "{} {task} {mode} k{k}",
            c["dataset"]
        );
    }
}

/// Every mode × task × {en, pt} × k has a committed snapshot file, and we reproduce it.
#[test]
fn snapshot_files_every_mode_task_language() {
    let cases = load("prompts.json");
    let real: Vec<&Value> = cases
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["record"]["user_id"].as_str().unwrap().starts_with("edge"))
        .collect();
    let mut checked = 0;
    for (lang, ds) in [(Language::English, "amazon"), (Language::Portuguese, "b2w")] {
        let rec = &real.iter().find(|c| c["dataset"] == ds).unwrap()["record"];
        let p = profile(rec);
        for task in Task::ALL {
            for mode in Mode::ALL {
                let ks: &[usize] = if mode.k1_only() { &[1] } else { &[1, 2, 4] };
                for &k in ks {
                    let file = fixtures().join(format!(
                        "snapshots/{}_{}_{}_k{}.txt",
                        lang.code(),
                        task,
                        mode,
                        k
                    ));
                    let want =
                        std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                    let got = PromptBuilder::new(task).language(lang).build(&p, mode, k);
                    assert_eq!(got.as_bytes(), &want[..], "{}", file.display());
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 66);
}

#[test]
fn extraction_equals_the_released_code_and_the_fix() {
    let cases = load("extract.json");
    for c in cases.as_array().unwrap() {
        let task: Task = c["task"].as_str().unwrap().parse().unwrap();
        let out = c["output"].as_str().unwrap();
        assert_eq!(
            extract(out, task, &ExtractOptions::reference()),
            c["reference"].as_str().unwrap(),
            "reference {task} {out:?}"
        );
        assert_eq!(
            extract(out, task, &ExtractOptions::default()),
            c["fixed"].as_str().unwrap(),
            "fixed {task} {out:?}"
        );
    }
}
