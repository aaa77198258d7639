//! BM25Okapi fit + score on realistic candidate lists of 5, 50, 500 and 5,000 documents.
//!
//! One iteration = for each of the size's cases (10 candidate lists with one query each):
//! fit a fresh `Bm25Okapi` on the list and score the query, as PGraphRAG does per target.
//!
//! Input: `BM25_BENCH_LISTS=<file.json>` as written by `scripts/bench_bm25.py` (nltk tokens, so
//! that rank_bm25 and this bench score the very same lists), else lists built here from the
//! PGraphRAG dev splits under `$PGRAPHRAG_DATA` (`../shared/data` from the repo root) with a
//! lowercase `str.split()` tokenization.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pgraphrag_retrieval::sparse::{Bm25Okapi, Bm25Params, python_split};
use serde::Deserialize;
use std::hint::black_box;

#[derive(Deserialize)]
struct Lists {
    sizes: Vec<Size>,
}

#[derive(Deserialize)]
struct Size {
    n: usize,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    docs: Vec<Vec<String>>,
    query: Vec<String>,
}

#[derive(Deserialize)]
struct User {
    profile: Vec<Review>,
}

#[derive(Deserialize)]
struct Review {
    title: Option<String>,
    text: Option<String>,
}

fn data_dir() -> std::path::PathBuf {
    match std::env::var_os("PGRAPHRAG_DATA") {
        Some(p) => p.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

fn lists() -> Lists {
    if let Some(p) = std::env::var_os("BM25_BENCH_LISTS") {
        let text = std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("BM25_BENCH_LISTS={}: {e}", p.to_string_lossy()));
        return serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("BM25_BENCH_LISTS={}: {e}", p.to_string_lossy()));
    }
    // Pool every review of the four dev splits, tokenized with lowercase str.split().
    let mut pool: Vec<Vec<String>> = Vec::new();
    let mut titles: Vec<Vec<String>> = Vec::new();
    for ds in ["amazon", "b2w", "gap", "hotel"] {
        let path = data_dir().join("pgraphrag").join(format!("{ds}_dev.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; set PGRAPHRAG_DATA or BM25_BENCH_LISTS",
                path.display()
            )
        });
        let users: Vec<User> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for u in users {
            for r in u.profile {
                let t = r
                    .title
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "None".into());
                let x = r
                    .text
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "None".into());
                let doc = format!("{t} {x}").to_lowercase();
                pool.push(python_split(&doc).map(str::to_owned).collect());
                titles.push(python_split(&t.to_lowercase()).map(str::to_owned).collect());
            }
        }
    }
    let sizes = [5usize, 50, 500, 5000]
        .iter()
        .map(|&n| Size {
            n,
            cases: (0..10)
                .map(|c| {
                    let start = (c * 997 * n) % (pool.len() - n);
                    Case {
                        docs: pool[start..start + n].to_vec(),
                        query: titles[(start + n) % titles.len()].clone(),
                    }
                })
                .collect(),
        })
        .collect();
    Lists { sizes }
}

fn bench(c: &mut Criterion) {
    let lists = lists();
    let mut g = c.benchmark_group("bm25_okapi_fit_score");
    for size in &lists.sizes {
        g.throughput(Throughput::Elements(size.cases.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(size.n), size, |b, size| {
            b.iter(|| {
                for case in &size.cases {
                    let bm25 = Bm25Okapi::fit(black_box(&case.docs), Bm25Params::default())
                        .expect("non-empty candidate list");
                    black_box(bm25.get_scores(black_box(&case.query)));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
