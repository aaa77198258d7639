//! Fidelity of the int8 encoder ([`Precision::Int8`]) on real texts: cosine of its embeddings
//! to the f32 ones (min and mean) and the top-5 overlap of dense rankings of PGraphRAG
//! neighbour lists (a target review's text against the other users' reviews of its product),
//! on the four dev splits. Prints the figures (`--nocapture`); `PGRAPHRAG_INT8_CASES` sets the
//! ranking cases per split (default 10, at most 10 documents each):
//!
//! ```sh
//! PGRAPHRAG_INT8_CASES=40 cargo test --release -p pgraphrag-retrieval --test dense_int8 -- --nocapture
//! ```
//!
//! Needs all-MiniLM-L6-v2 (`$PGRAPHRAG_MINILM` or `models/all-MiniLM-L6-v2`) and the dev
//! splits under `$PGRAPHRAG_DATA` (fallback `../shared/data` from the repository root); FAILS
//! when either is missing.
#![cfg(feature = "dense")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pgraphrag_retrieval::dense::{BertEncoder, EncoderOptions, Pooling, Precision};
use serde_json::Value;

fn model_dir() -> PathBuf {
    let dir = std::env::var_os("PGRAPHRAG_MINILM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/all-MiniLM-L6-v2")
        });
    assert!(
        dir.join("model.safetensors").is_file(),
        "all-MiniLM-L6-v2 not found at {} (set PGRAPHRAG_MINILM or run scripts/fetch-minilm.sh)",
        dir.display()
    );
    dir
}

fn data_dir() -> PathBuf {
    match std::env::var_os("PGRAPHRAG_DATA") {
        Some(p) => p.into(),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// The notebook's field formatting: a missing or empty field is the string `None`.
fn field(review: &Value, name: &str) -> String {
    match review.get(name).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "None".to_owned(),
    }
}

/// Ranking cases of one split: (query, documents), users in file order, lists of at least 6
/// documents cut at 10.
fn cases(split: &str, n: usize) -> Vec<(String, Vec<String>)> {
    let p = data_dir()
        .join("pgraphrag")
        .join(format!("{split}_dev.json"));
    let text = std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}; set PGRAPHRAG_DATA", p.display()));
    let users: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut by_pid: HashMap<&str, Vec<(usize, &Value)>> = HashMap::new();
    for (u, user) in users.iter().enumerate() {
        for r in user["profile"].as_array().unwrap() {
            if let Some(pid) = r["pid"].as_str() {
                by_pid.entry(pid).or_default().push((u, r));
            }
        }
    }
    let mut out = Vec::new();
    for (u, user) in users.iter().enumerate() {
        let target = &user["profile"][0];
        let Some(pid) = target["pid"].as_str() else {
            continue;
        };
        let docs: Vec<String> = by_pid[pid]
            .iter()
            .filter(|(o, _)| *o != u)
            .take(10)
            .map(|(_, r)| format!("{} {}", field(r, "title"), field(r, "text")))
            .collect();
        if docs.len() >= 6 {
            out.push((field(target, "text"), docs));
        }
        if out.len() == n {
            break;
        }
    }
    out
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let na: f64 = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb).max(1e-12)
}

/// The indices of the 5 best documents by cosine to the query (ties: input order).
fn top5(q: &[f32], docs: &[&[f32]]) -> Vec<usize> {
    let mut s: Vec<(usize, f64)> = docs.iter().map(|d| cosine(q, d)).enumerate().collect();
    s.sort_by(|a, b| b.1.total_cmp(&a.1));
    s.into_iter().take(5).map(|(i, _)| i).collect()
}

#[test]
fn int8_embeddings_and_rankings_stay_close_to_f32() {
    let per_split: usize = std::env::var("PGRAPHRAG_INT8_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let load = |precision| {
        BertEncoder::load_with(
            &model_dir(),
            EncoderOptions {
                precision,
                ..Default::default()
            },
        )
        .expect("load all-MiniLM-L6-v2")
    };
    let (f32e, int8e) = (load(Precision::F32), load(Precision::Int8));
    assert!(
        int8e.backend_name().contains("int8"),
        "{}",
        int8e.backend_name()
    );
    let mut all = Vec::new();
    for split in ["amazon", "b2w", "gap", "hotel"] {
        let c = cases(split, per_split);
        assert_eq!(c.len(), per_split, "{split}: too few neighbour lists");
        all.extend(c.into_iter().map(|c| (split, c)));
    }
    let mut texts: Vec<&str> = Vec::new();
    for (_, (q, docs)) in &all {
        texts.push(q);
        texts.extend(docs.iter().map(String::as_str));
    }
    let a = f32e.embed(&texts, Pooling::Mean).unwrap();
    let b = int8e.embed(&texts, Pooling::Mean).unwrap();
    let dim = a.dim();
    let cos: Vec<f64> = a
        .as_slice()
        .chunks(dim)
        .zip(b.as_slice().chunks(dim))
        .map(|(x, y)| cosine(x, y))
        .collect();
    let (min, mean) = (
        cos.iter().copied().fold(1.0, f64::min),
        cos.iter().sum::<f64>() / cos.len() as f64,
    );
    // Top-5 overlap of every case's ranking, |top5(f32) ∩ top5(int8)| / 5.
    let (mut row, mut overlaps, mut same_order) = (0, Vec::new(), 0);
    for (_, (_, docs)) in &all {
        let rows = |e: &[f32]| -> (Vec<f32>, Vec<Vec<f32>>) {
            let q = e[row * dim..(row + 1) * dim].to_vec();
            let d = (0..docs.len())
                .map(|i| e[(row + 1 + i) * dim..(row + 2 + i) * dim].to_vec())
                .collect();
            (q, d)
        };
        let ((qa, da), (qb, db)) = (rows(a.as_slice()), rows(b.as_slice()));
        let ta = top5(&qa, &da.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let tb = top5(&qb, &db.iter().map(Vec::as_slice).collect::<Vec<_>>());
        overlaps.push(ta.iter().filter(|i| tb.contains(i)).count() as f64 / 5.0);
        same_order += usize::from(ta == tb);
        row += 1 + docs.len();
    }
    let overlap = overlaps.iter().sum::<f64>() / overlaps.len() as f64;
    eprintln!(
        "int8 vs f32 ({}): {} texts, cosine min {min:.5} mean {mean:.5}; {} rankings, \
         top-5 overlap mean {overlap:.4}, identical top-5 order {same_order}",
        int8e.backend_name(),
        cos.len(),
        overlaps.len()
    );
    assert!(mean >= 0.995, "mean cosine {mean}");
    assert!(min >= 0.99, "min cosine {min}");
    assert!(overlap >= 0.9, "top-5 overlap {overlap}");
}

/// int8 is the native CPU pass's option: candle refuses it, and its embedding cache key
/// differs from f32's.
#[test]
fn int8_needs_the_native_backend_and_has_its_own_cache_key() {
    let err = BertEncoder::load_with(
        &model_dir(),
        EncoderOptions {
            precision: Precision::Int8,
            backend: pgraphrag_retrieval::dense::EncoderBackend::Candle,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("native"), "{err}");
    let load = |precision| {
        BertEncoder::load_with(
            &model_dir(),
            EncoderOptions {
                precision,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let (f, q) = (load(Precision::F32), load(Precision::Int8));
    assert_ne!(f.fingerprint().unwrap(), q.fingerprint().unwrap());
}
