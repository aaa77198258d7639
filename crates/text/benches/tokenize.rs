//! Criterion benchmarks of the tokenizers on real review texts.
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn texts() -> Vec<String> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/word_tokenize.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    v["word_tokenize"]
        .as_array()
        .expect("array")
        .iter()
        .filter(|c| !c["name"].as_str().unwrap_or("").starts_with("fuzz/"))
        .map(|c| c["input"].as_str().unwrap_or("").to_string())
        .collect()
}

fn bench(c: &mut Criterion) {
    let texts = texts();
    c.bench_function("word_tokenize_lower (fixture texts)", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(pgraphrag_text::word_tokenize_lower(black_box(t)));
            }
        })
    });
    c.bench_function("sent_tokenize english (fixture texts)", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(pgraphrag_text::sent_tokenize(
                    black_box(t),
                    pgraphrag_text::Language::English,
                ));
            }
        })
    });
    c.bench_function("whitespace_split (fixture texts)", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(pgraphrag_text::whitespace_split(black_box(t)));
            }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
