//! What the CLI's end-to-end tests share: the workspace's model and data, and reading what
//! `pgraphrag` printed and wrote.
#![allow(dead_code)]
use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The SmolLM2 model (`scripts/fetch-llms.sh --smollm-only`); the test fails without it.
pub fn model() -> PathBuf {
    let p = root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        p.is_file(),
        "the SmolLM2 model is missing at {}: run scripts/fetch-llms.sh --smollm-only",
        p.display()
    );
    p
}

/// The PGraphRAG dev split of `dataset` under `$PGRAPHRAG_DATA` (default `../shared/data`);
/// the test fails without it.
pub fn split(dataset: &str) -> PathBuf {
    let data = match std::env::var_os("PGRAPHRAG_DATA") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => root().join("../shared/data"),
    };
    let p = pgraphrag_data::pgraphrag_split_path(&data, dataset, "dev");
    assert!(
        p.is_file(),
        "the PGraphRAG split is missing at {}: set PGRAPHRAG_DATA to the shared data folder",
        p.display()
    );
    p
}

/// The JSON of the `stats ` line a command printed.
pub fn stats(stdout: &str) -> serde_json::Value {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stats "))
        .unwrap_or_else(|| panic!("no stats line in:\n{stdout}"));
    serde_json::from_str(line).unwrap()
}

/// results.md, results.csv and the OUTPUT files of a bench run, by name.
pub fn bench_files(out: &Path) -> Vec<(String, Vec<u8>)> {
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

/// A small ML-100K folder: `n` movies linked to KG entities with genres, directors and years.
pub fn toy_ml100k(dir: &Path, n: usize) {
    let mut item =
        String::from("item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n");
    let mut inter = String::from("user_id:token\titem_id:token\trating:float\ttimestamp:float\n");
    let mut kg = String::from("head_id:token\trelation_id:token\ttail_id:token\n");
    let mut link = String::from("item_id:token\tentity_id:token\n");
    for i in 1..=n {
        item.push_str(&format!(
            "{i}\tMovie number {i}\t{}\tDrama\n",
            1950 + i % 50
        ));
        for u in 0..3 {
            inter.push_str(&format!(
                "{}\t{i}\t{}\t{}\n",
                (i + u) % 40 + 1,
                1 + (i + u) % 5,
                1000 + i * 3 + u
            ));
        }
        kg.push_str(&format!("m.{i}\tfilm.film.genre\tm.genre{}\n", i % 12));
        kg.push_str(&format!(
            "m.{i}\tfilm.film.directed_by\tm.director{}\n",
            i % 41
        ));
        kg.push_str(&format!(
            "m.director{}\tpeople.person.place_of_birth\tm.city{}\n",
            i % 41,
            i % 17
        ));
        link.push_str(&format!("{i}\tm.{i}\n"));
    }
    for (name, text) in [("item", item), ("inter", inter), ("kg", kg), ("link", link)] {
        std::fs::write(dir.join(format!("ml-100k.{name}")), text).unwrap();
    }
}
