//! Dense encoder speed: encoding throughput and query latency against cached profile
//! embeddings. Run by `scripts/bench_dense.sh` (which also times PyTorch on the same texts
//! with the same thread count and prints the ratio), or alone:
//!
//! ```sh
//! PGRAPHRAG_BENCH_TEXTS=/tmp/texts.jsonl RAYON_NUM_THREADS=2 \
//!   cargo bench -p pgraphrag-retrieval --bench dense
//! ```
//! `PGRAPHRAG_BENCH_TEXTS`: JSON lines `{"text": ...}` (the script writes them);
//! `PGRAPHRAG_BENCH_QUERIES`: JSON lines `{"query": ..., "docs": [...]}` (optional).
//! Prints `key=value` lines.
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pgraphrag_core::Retriever;
use pgraphrag_retrieval::dense::{BertEncoder, DenseRetriever, EncoderOptions, Pooling};

fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::io::BufReader::new(f)
        .lines()
        .map(|l| serde_json::from_str(&l.expect("read line")).expect("JSON line"))
        .collect()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` / `cargo test --benches` probing
    }
    let model = std::env::var_os("PGRAPHRAG_MINILM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/all-MiniLM-L6-v2")
        });
    let Some(texts_path) = std::env::var_os("PGRAPHRAG_BENCH_TEXTS") else {
        eprintln!("set PGRAPHRAG_BENCH_TEXTS (scripts/bench_dense.sh does)");
        return;
    };
    let batch: usize = std::env::var("PGRAPHRAG_BENCH_BATCH")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(32);
    let texts: Vec<String> = read_jsonl(Path::new(&texts_path))
        .into_iter()
        .map(|v| v["text"].as_str().expect("text").to_string())
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let enc = BertEncoder::load_with(
        &model,
        EncoderOptions {
            batch_size: batch,
            ..Default::default()
        },
    )
    .expect("load model");
    // warm-up
    enc.embed(&refs[..batch.min(refs.len())], Pooling::Mean)
        .expect("encode");
    let t = Instant::now();
    let e = enc.embed(&refs, Pooling::Mean).expect("encode");
    let secs = t.elapsed().as_secs_f64();
    println!("rust_texts={}", e.rows());
    println!("rust_encode_s={secs:.3}");
    println!("rust_texts_per_s={:.2}", e.rows() as f64 / secs);

    if let Some(q) = std::env::var_os("PGRAPHRAG_BENCH_QUERIES") {
        let cases = read_jsonl(Path::new(&q));
        let dir =
            std::env::temp_dir().join(format!("pgraphrag-bench-dense-{}", std::process::id()));
        let r = DenseRetriever::builder(&model)
            .cache(dir.join("c.sqlite"))
            .batch_size(batch)
            .build()
            .expect("load");
        let mut all_docs = Vec::new();
        let cases: Vec<(String, Vec<String>)> = cases
            .into_iter()
            .map(|v| {
                let docs: Vec<String> = v["docs"]
                    .as_array()
                    .expect("docs")
                    .iter()
                    .map(|d| d.as_str().expect("doc").to_string())
                    .collect();
                all_docs.extend(docs.iter().cloned());
                (v["query"].as_str().expect("query").to_string(), docs)
            })
            .collect();
        let doc_refs: Vec<&str> = all_docs.iter().map(String::as_str).collect();
        r.warm(&doc_refs, false).expect("warm cache");
        let mut ms = Vec::new();
        for (query, docs) in &cases {
            let d: Vec<&str> = docs.iter().map(String::as_str).collect();
            let t = Instant::now();
            let top = r.rank(query, &d, Some(5)).expect("rank");
            ms.push(t.elapsed().as_secs_f64() * 1e3);
            assert!(!top.is_empty() || d.is_empty());
        }
        ms.sort_by(|a, b| a.total_cmp(b));
        let pct = |p: f64| ms[((ms.len() as f64 - 1.0) * p).round() as usize];
        let avg_docs =
            cases.iter().map(|c| c.1.len()).sum::<usize>() as f64 / cases.len().max(1) as f64;
        println!("query_cases={} avg_docs={avg_docs:.1}", ms.len());
        println!("query_p50_ms={:.2}", pct(0.5));
        println!("query_p99_ms={:.2}", pct(0.99));
        drop(r);
        let _ = std::fs::remove_dir_all(dir);
    }
}
