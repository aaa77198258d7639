//! The native CPU forward pass against candle's `BertModel` on the same texts, and candle
//! against the PyTorch fixture (the native pass is checked against the fixture in
//! `dense_model.rs`, where it is the default).
//!
//! Needs all-MiniLM-L6-v2: `$PGRAPHRAG_MINILM` or `models/all-MiniLM-L6-v2` at the workspace
//! root (`scripts/fetch-minilm.sh`). These tests FAIL when it is missing.
#![cfg(feature = "dense")]

mod common;
use common::b64;
use std::path::{Path, PathBuf};

use pgraphrag_retrieval::dense::{BertEncoder, EncoderBackend, EncoderOptions, Pooling};

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

fn load(backend: EncoderBackend, batch_size: usize) -> BertEncoder {
    BertEncoder::load_with(
        &model_dir(),
        EncoderOptions {
            backend,
            batch_size,
            ..Default::default()
        },
    )
    .expect("load all-MiniLM-L6-v2")
}

/// The fixture's texts and its base64 f32 `mean` rows.
fn fixture() -> (Vec<String>, usize, Vec<f32>) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dense_golden.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).expect("read dense_golden.json"))
            .expect("fixture JSON");
    let texts: Vec<String> = v["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .map(|t| t.as_str().expect("text").to_string())
        .collect();
    let dim = v["dim"].as_u64().expect("dim") as usize;
    let mean = b64(v["mean"].as_str().expect("mean"));
    (texts, dim, mean)
}

/// (min cosine, max |Δ|) over rows.
fn compare(a: &[f32], b: &[f32], dim: usize) -> (f64, f32) {
    assert_eq!(a.len(), b.len());
    let (mut min_cos, mut max_abs) = (1.0f64, 0.0f32);
    for (x, y) in a.chunks(dim).zip(b.chunks(dim)) {
        let dot: f64 = x.iter().zip(y).map(|(p, q)| *p as f64 * *q as f64).sum();
        let nx = x.iter().map(|p| (*p as f64).powi(2)).sum::<f64>().sqrt();
        let ny = y.iter().map(|p| (*p as f64).powi(2)).sum::<f64>().sqrt();
        min_cos = min_cos.min(dot / (nx * ny).max(1e-30));
        max_abs = x
            .iter()
            .zip(y)
            .map(|(p, q)| (p - q).abs())
            .fold(max_abs, f32::max);
    }
    (min_cos, max_abs)
}

#[test]
fn native_and_candle_agree_on_every_pooling() {
    let (texts, dim, _) = fixture();
    // Every 16th fixture text (all length classes, truncated ones included) plus edge cases.
    let mut sample: Vec<String> = texts.iter().step_by(16).cloned().collect();
    sample.push(String::new());
    sample.push("word ".repeat(2000));
    sample.push("Ótimo!".into());
    let refs: Vec<&str> = sample.iter().map(String::as_str).collect();
    let native = load(EncoderBackend::Native, 16);
    let candle = load(EncoderBackend::Candle, 4);
    assert!(native.backend_name().starts_with("native"));
    assert_eq!(candle.backend_name(), "candle");
    // Mean on the whole sample; CLS and pooler (which share the forward pass) on a part of it.
    let few: Vec<&str> = refs.iter().rev().take(8).copied().collect();
    for pooling in [Pooling::Mean, Pooling::Cls, Pooling::Pooler] {
        let texts = if pooling == Pooling::Mean {
            &refs
        } else {
            &few
        };
        let a = native.embed(texts, pooling).unwrap();
        let b = candle.embed(texts, pooling).unwrap();
        let (cos, abs) = compare(a.as_slice(), b.as_slice(), dim);
        eprintln!(
            "{pooling:?}: {} rows, min cosine {cos:.9}, max |diff| {abs:.3e}",
            a.rows()
        );
        assert!(
            cos >= 0.99999 && abs <= 1e-5,
            "{pooling:?}: native vs candle min cosine {cos}, max |diff| {abs}"
        );
    }
}

#[test]
fn candle_backend_still_matches_pytorch() {
    let (texts, dim, mean) = fixture();
    let idx: Vec<usize> = (3..texts.len()).step_by(23).collect();
    let refs: Vec<&str> = idx.iter().map(|&i| texts[i].as_str()).collect();
    let want: Vec<f32> = idx
        .iter()
        .flat_map(|&i| mean[i * dim..(i + 1) * dim].iter().copied())
        .collect();
    let got = load(EncoderBackend::Candle, 32)
        .embed(&refs, Pooling::Mean)
        .unwrap();
    let (cos, abs) = compare(got.as_slice(), &want, dim);
    assert!(
        cos >= 0.99999 && abs <= 1e-4,
        "candle vs PyTorch: min cosine {cos}, max |diff| {abs}"
    );
}

#[test]
fn native_batches_are_independent_of_their_neighbours() {
    // Padding-free batching: a text's vector must not depend on which texts share its batch.
    let (texts, _, _) = fixture();
    let refs: Vec<&str> = texts.iter().take(24).map(String::as_str).collect();
    let a = load(EncoderBackend::Native, 1)
        .embed(&refs, Pooling::Mean)
        .unwrap();
    let b = load(EncoderBackend::Native, 24)
        .embed(&refs, Pooling::Mean)
        .unwrap();
    let d = a
        .as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(d < 1e-5, "batch 1 vs 24 differ by {d}");
}

#[test]
fn backend_names_parse() {
    assert_eq!(
        "native".parse::<EncoderBackend>().unwrap(),
        EncoderBackend::Native
    );
    assert_eq!(
        "candle".parse::<EncoderBackend>().unwrap(),
        EncoderBackend::Candle
    );
    assert!("torch".parse::<EncoderBackend>().is_err());
    assert_eq!(EncoderBackend::default(), EncoderBackend::Native);
}
