//! Dense encoder speed: encoding throughput and query latency against cached profile
//! embeddings. Run by `scripts/bench_dense.sh` (which also times PyTorch on the same texts
//! with the same thread count and prints the ratio), or alone:
//!
//! ```sh
//! PGRAPHRAG_BENCH_TEXTS=/tmp/texts.jsonl RAYON_NUM_THREADS=2 \
//!   cargo bench -p pgraphrag-retrieval --bench dense
//! ```
//! `PGRAPHRAG_BENCH_TEXTS`: JSON lines `{"text": ...}` (the script writes them);
//! `PGRAPHRAG_BENCH_QUERIES`: JSON lines `{"query": ..., "docs": [...]}` (optional);
//! `PGRAPHRAG_BENCH_BACKENDS`: comma-separated `native`, `candle` (default `native`; the
//! first is the one whose throughput the script compares with PyTorch, and the one used for
//! query latency);
//! `PGRAPHRAG_BENCH_CPU`: `auto` (default), `avx2` (the kernels an AVX2-only CPU gets, on an
//! AVX-512 one) or `portable`;
//! `PGRAPHRAG_BENCH_PRECISION`: comma-separated `f32`, `int8` (default `f32`; int8 runs on the
//! native backend only); every (backend, precision) pair is timed;
//! `PGRAPHRAG_BENCH_REPS`: timed repetitions (default 1), interleaved across the pairs (one
//! encoding of the texts by each, then the next round); the median is reported. With both f32
//! and int8 native, the int8 embeddings' cosine to the f32 ones is printed too.
//! Prints `key=value` lines: the first pair's keys start with `rust_`, the others with
//! `rust_{backend}_` (f32) or `rust_{backend}_{precision}_`.
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pgraphrag_core::Retriever;
use pgraphrag_core::simd::CpuFeatures;
use pgraphrag_retrieval::dense::{
    BertEncoder, DenseRetriever, EncoderBackend, EncoderOptions, Pooling, Precision,
};

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
    let cpu = match std::env::var("PGRAPHRAG_BENCH_CPU").as_deref() {
        Ok("avx2") => CpuFeatures::detect().without_avx512(),
        Ok("portable") => CpuFeatures::portable(),
        Ok("auto") | Err(_) => CpuFeatures::detect(),
        Ok(other) => panic!("PGRAPHRAG_BENCH_CPU={other}: expected auto, avx2 or portable"),
    };
    let backends: Vec<EncoderBackend> = match std::env::var("PGRAPHRAG_BENCH_BACKENDS") {
        Ok(v) => v
            .split(',')
            .map(|b| b.trim().parse().expect("backend: native or candle"))
            .collect(),
        Err(_) => vec![EncoderBackend::Native],
    };
    let precisions: Vec<Precision> = match std::env::var("PGRAPHRAG_BENCH_PRECISION") {
        Ok(v) => v
            .split(',')
            .map(|p| p.trim().parse().expect("precision: f32 or int8"))
            .collect(),
        Err(_) => vec![Precision::F32],
    };
    let reps: usize = std::env::var("PGRAPHRAG_BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1)
        .max(1);
    let mut runs: Vec<(String, BertEncoder, Vec<f64>)> = Vec::new();
    for backend in &backends {
        for precision in &precisions {
            if *precision != Precision::F32 && *backend != EncoderBackend::Native {
                continue;
            }
            let enc = BertEncoder::load_with(
                &model,
                EncoderOptions {
                    batch_size: batch,
                    backend: *backend,
                    cpu,
                    precision: *precision,
                    ..Default::default()
                },
            )
            .expect("load model");
            // The first pair is "ours" for the ratio printed by bench_dense.sh.
            let key = match (runs.is_empty(), precision) {
                (true, _) => "rust".to_string(),
                (false, Precision::F32) => format!("rust_{}", backend.name()),
                (false, p) => format!("rust_{}_{}", backend.name(), p.name()),
            };
            // warm-up
            enc.embed(&refs[..batch.min(refs.len())], Pooling::Mean)
                .expect("encode");
            runs.push((key, enc, Vec::new()));
        }
    }
    let mut vectors: Vec<Option<pgraphrag_core::Embeddings>> = runs.iter().map(|_| None).collect();
    for _ in 0..reps {
        for ((_, enc, secs), v) in runs.iter_mut().zip(&mut vectors) {
            let t = Instant::now();
            let e = enc.embed(&refs, Pooling::Mean).expect("encode");
            secs.push(t.elapsed().as_secs_f64());
            *v = Some(e);
        }
    }
    for (key, enc, secs) in &mut runs {
        secs.sort_by(|a, b| a.total_cmp(b));
        let med = secs[secs.len() / 2];
        let tokens: usize = refs.iter().map(|t| enc.tokenize(t).unwrap().len()).sum();
        println!("{key}_backend={}", enc.backend_name().replace(' ', "_"));
        println!(
            "{key}_texts={} {key}_tokens={tokens} {key}_reps={reps}",
            refs.len()
        );
        println!("{key}_encode_s={med:.3}");
        println!("{key}_texts_per_s={:.2}", refs.len() as f64 / med);
        println!(
            "{key}_texts_per_s_all={}",
            secs.iter()
                .map(|s| format!("{:.2}", refs.len() as f64 / s))
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    // int8 against f32 (native): cosine of each text's two embeddings.
    let native = |p: Precision| {
        runs.iter().position(|(_, e, _)| {
            e.options().backend == EncoderBackend::Native && e.options().precision == p
        })
    };
    if let (Some(f), Some(q)) = (native(Precision::F32), native(Precision::Int8)) {
        let (a, b) = (vectors[f].as_ref().unwrap(), vectors[q].as_ref().unwrap());
        let cos: Vec<f64> = a
            .as_slice()
            .chunks(a.dim())
            .zip(b.as_slice().chunks(b.dim()))
            .map(|(x, y)| {
                let dot: f64 = x.iter().zip(y).map(|(u, v)| *u as f64 * *v as f64).sum();
                let n = |z: &[f32]| z.iter().map(|u| (*u as f64).powi(2)).sum::<f64>().sqrt();
                dot / (n(x) * n(y)).max(1e-12)
            })
            .collect();
        println!(
            "int8_cosine_min={:.5} int8_cosine_mean={:.5}",
            cos.iter().copied().fold(1.0, f64::min),
            cos.iter().sum::<f64>() / cos.len() as f64
        );
    }

    if let Some(q) = std::env::var_os("PGRAPHRAG_BENCH_QUERIES") {
        let cases = read_jsonl(Path::new(&q));
        // No on-disk cache: documents (and, for the first figure, queries) are warmed in
        // memory, as `pgraphrag rank` does for a whole split.
        let r = DenseRetriever::builder(&model)
            .batch_size(batch)
            .backend(backends[0])
            .precision(precisions[0])
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
        r.warm(&doc_refs, &()).expect("warm documents");
        let avg_docs =
            cases.iter().map(|c| c.1.len()).sum::<usize>() as f64 / cases.len().max(1) as f64;
        println!("query_cases={} avg_docs={avg_docs:.1}", cases.len());
        let time_all = |label: &str| {
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
            println!("{label}_p50_ms={:.3}", pct(0.5));
            println!("{label}_p99_ms={:.3}", pct(0.99));
        };
        // (b) the query is encoded inside each timed call.
        time_all("query_with_encoding");
        // (a) the query vectors are cached too: scoring every document and the top 5 only.
        let q_refs: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
        r.warm_queries(&q_refs, &()).expect("warm queries");
        time_all("query_cached");
    }
}
