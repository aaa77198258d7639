//! Model tests of the dense encoder against the PyTorch golden fixture
//! (`scripts/fixtures/dense_golden.py`), plus loading errors, truncation, cache and ranking.
//!
//! Needs all-MiniLM-L6-v2: `$PGRAPHRAG_MINILM` or `models/all-MiniLM-L6-v2` at the workspace
//! root (`scripts/fetch-minilm.sh`). These tests FAIL when it is missing.
#![cfg(feature = "dense")]

mod common;
use common::b64;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pgraphrag_core::{Encoder, Retriever};
use pgraphrag_retrieval::Error;
use pgraphrag_retrieval::dense::{
    BertEncoder, DenseRetriever, EmbeddingCache, EncoderOptions, Pooling, Similarity, encode_corpus,
};

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

fn encoder() -> &'static BertEncoder {
    static E: OnceLock<BertEncoder> = OnceLock::new();
    E.get_or_init(|| BertEncoder::load(&model_dir()).expect("load all-MiniLM-L6-v2"))
}

struct Golden {
    texts: Vec<String>,
    n_tokens: Vec<usize>,
    dim: usize,
    mean: Vec<f32>,
    pooler: Vec<f32>,
    st_normalized: Vec<f32>,
}

fn golden() -> &'static Golden {
    static G: OnceLock<Golden> = OnceLock::new();
    G.get_or_init(|| {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dense_golden.json");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).expect("read dense_golden.json"))
                .unwrap();
        Golden {
            texts: v["texts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_string())
                .collect(),
            n_tokens: v["n_tokens"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_u64().unwrap() as usize)
                .collect(),
            dim: v["dim"].as_u64().unwrap() as usize,
            mean: b64(v["mean"].as_str().unwrap()),
            pooler: b64(v["pooler"].as_str().unwrap()),
            st_normalized: b64(v["st_normalized"].as_str().unwrap()),
        }
    })
}

/// Cosine ≥ 0.99999 and max |Δ| ≤ 1e-4 for every row; returns (min cosine, max |Δ|).
fn assert_close(
    name: &str,
    ours: &[f32],
    theirs: &[f32],
    dim: usize,
    texts: &[String],
) -> (f64, f64) {
    assert_eq!(ours.len(), theirs.len(), "{name}: sizes differ");
    let (mut min_cos, mut max_abs) = (1.0f64, 0.0f64);
    for (i, (a, b)) in ours.chunks(dim).zip(theirs.chunks(dim)).enumerate() {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
        let na: f64 = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
        let nb: f64 = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
        let cos = dot / (na * nb);
        let abs = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs() as f64)
            .fold(0.0, f64::max);
        assert!(
            cos >= 0.99999 && abs <= 1e-4,
            "{name}: row {i} ({} chars) cosine {cos} max|diff| {abs}",
            texts[i].chars().count()
        );
        min_cos = min_cos.min(cos);
        max_abs = max_abs.max(abs);
    }
    eprintln!(
        "{name}: {} rows, min cosine {min_cos:.9}, max |diff| {max_abs:.3e}",
        ours.len() / dim
    );
    (min_cos, max_abs)
}

#[test]
fn mean_pooling_matches_pytorch() {
    let g = golden();
    assert!(g.texts.len() >= 300);
    let enc = encoder();
    assert_eq!(enc.dim(), g.dim);
    assert_eq!(enc.max_length(), 512);
    let refs: Vec<&str> = g.texts.iter().map(String::as_str).collect();
    // Token counts after truncation equal transformers' (some texts are truncated at 512).
    let ours: Vec<usize> = refs
        .iter()
        .map(|t| enc.tokenize(t).unwrap().len())
        .collect();
    assert_eq!(ours, g.n_tokens);
    assert!(
        g.n_tokens.iter().filter(|n| **n == 512).count() >= 4,
        "fixture must hold truncated texts"
    );
    let e = enc.embed(&refs, Pooling::Mean).unwrap();
    assert_close("mean", e.as_slice(), &g.mean, g.dim, &g.texts);
}

#[test]
fn pooler_output_and_normalised_match_pytorch() {
    let g = golden();
    // A subset keeps the test quick; every length class is represented (fixture order).
    let idx: Vec<usize> = (0..g.texts.len()).step_by(5).collect();
    let texts: Vec<String> = idx.iter().map(|&i| g.texts[i].clone()).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let pick = |v: &[f32]| -> Vec<f32> {
        idx.iter()
            .flat_map(|&i| v[i * g.dim..(i + 1) * g.dim].iter().copied())
            .collect()
    };
    let enc = encoder();
    assert!(enc.has_pooler());
    let p = enc.embed(&refs, Pooling::Pooler).unwrap();
    assert_close("pooler", p.as_slice(), &pick(&g.pooler), g.dim, &texts);

    let norm = BertEncoder::load_with(
        &model_dir(),
        EncoderOptions {
            normalize: true,
            batch_size: 7,
            ..Default::default()
        },
    )
    .unwrap();
    let n = norm.encode(&refs).unwrap();
    assert_close(
        "st_normalized",
        n.as_slice(),
        &pick(&g.st_normalized),
        g.dim,
        &texts,
    );
}

#[test]
fn batching_does_not_change_embeddings() {
    let g = golden();
    let refs: Vec<&str> = g.texts.iter().take(20).map(String::as_str).collect();
    let one = BertEncoder::load_with(
        &model_dir(),
        EncoderOptions {
            batch_size: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let a = one.embed(&refs, Pooling::Mean).unwrap();
    let b = encoder().embed(&refs, Pooling::Mean).unwrap();
    let d = a
        .as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(d < 1e-5, "batch 1 vs 32 differ by {d}");
}

#[test]
fn empty_and_overlong_texts_do_not_panic() {
    let enc = encoder();
    assert_eq!(enc.tokenize("").unwrap().len(), 2); // [CLS] [SEP]
    let long = "word ".repeat(5000);
    assert_eq!(enc.tokenize(&long).unwrap().len(), 512);
    let e = enc.embed(&["", &long, "short"], Pooling::Mean).unwrap();
    assert_eq!(e.rows(), 3);
    assert!(e.as_slice().iter().all(|x| x.is_finite()));
    assert_eq!(enc.embed(&[], Pooling::Mean).unwrap().rows(), 0);
    // A shorter limit is honoured; a longer one than the model's is an error.
    let short = BertEncoder::load_with(
        &model_dir(),
        EncoderOptions {
            max_length: Some(16),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(short.tokenize(&long).unwrap().len(), 16);
    let err = BertEncoder::load_with(
        &model_dir(),
        EncoderOptions {
            max_length: Some(513),
            ..Default::default()
        },
    )
    .unwrap_err();
    for tiny in [0, 2] {
        let opts = EncoderOptions {
            max_length: Some(tiny),
            ..Default::default()
        };
        assert!(
            BertEncoder::load_with(&model_dir(), opts).is_err(),
            "max_length {tiny}"
        );
    }
    assert!(
        err.to_string().contains("exceeds the model's limit of 512"),
        "{err}"
    );
}

fn copy_model_without(skip: &[&str]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for f in [
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
        "model.safetensors",
    ] {
        if !skip.contains(&f) && model_dir().join(f).exists() {
            if f == "model.safetensors" {
                std::os::unix::fs::symlink(
                    model_dir().join(f).canonicalize().unwrap(),
                    t.path().join(f),
                )
                .unwrap();
            } else {
                std::fs::copy(model_dir().join(f), t.path().join(f)).unwrap();
            }
        }
    }
    t
}

#[test]
fn bad_model_folders_give_clear_errors() {
    let err = BertEncoder::load(Path::new("/nonexistent/model")).unwrap_err();
    assert!(
        matches!(err, Error::Model { .. }) && err.to_string().contains("not a folder"),
        "{err}"
    );

    let t = copy_model_without(&["model.safetensors"]);
    let err = BertEncoder::load(t.path()).unwrap_err();
    assert!(err.to_string().contains("no weights"), "{err}");

    let t = copy_model_without(&["config.json"]);
    let err = BertEncoder::load(t.path()).unwrap_err();
    assert!(err.to_string().contains("cannot read config.json"), "{err}");

    let t = copy_model_without(&[]);
    std::fs::write(t.path().join("config.json"), r#"{"hidden_size": 384}"#).unwrap();
    let err = BertEncoder::load(t.path()).unwrap_err();
    assert!(err.to_string().contains("not a BERT config"), "{err}");

    // A config that parses but does not match the weights (wrong hidden size).
    let cfg = std::fs::read_to_string(model_dir().join("config.json")).unwrap();
    std::fs::write(
        t.path().join("config.json"),
        cfg.replace("\"hidden_size\": 384", "\"hidden_size\": 768"),
    )
    .unwrap();
    let err = BertEncoder::load(t.path()).unwrap_err();
    assert!(
        err.to_string().contains("do not match config.json"),
        "{err}"
    );

    std::fs::write(
        t.path().join("config.json"),
        cfg.replace("\"model_type\": \"bert\"", "\"model_type\": \"roberta\""),
    )
    .unwrap();
    let err = BertEncoder::load(t.path()).unwrap_err();
    assert!(err.to_string().contains("only BERT"), "{err}");

    // No tokenizer.json: falls back to vocab.txt and gives the same embeddings.
    let t = copy_model_without(&["tokenizer.json"]);
    let fallback = BertEncoder::load(t.path()).unwrap();
    let text = "Ótimo produto! The BATTERY lasts all day, 10/10.";
    assert_eq!(
        fallback.tokenize(text).unwrap(),
        encoder().tokenize(text).unwrap()
    );
    let t = copy_model_without(&["tokenizer.json", "vocab.txt"]);
    let err = BertEncoder::load(t.path()).unwrap_err();
    assert!(err.to_string().contains("no tokenizer"), "{err}");
}

#[test]
fn cache_encodes_once_and_survives_reopening() {
    let enc = encoder();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("emb.sqlite");
    let texts = ["first review", "second review", "first review", ""];
    let fresh = encode_corpus(enc, None, &texts, Pooling::Mean, &()).unwrap();
    {
        let cache = EmbeddingCache::open(&path).unwrap();
        let a = encode_corpus(enc, Some(&cache), &texts, Pooling::Mean, &()).unwrap();
        assert_eq!(a, fresh);
        assert_eq!(cache.len().unwrap(), 3); // duplicates stored once
    }
    let cache = EmbeddingCache::open(&path).unwrap();
    let key = EmbeddingCache::model_key(enc, Pooling::Mean).unwrap();
    let got = cache.get_many(&key, &["second review"]).unwrap();
    assert_eq!(got[0].as_deref(), Some(fresh.row(1)));
    // Another pooling is another key.
    let other = EmbeddingCache::model_key(enc, Pooling::Pooler).unwrap();
    assert_eq!(
        cache.get_many(&other, &["second review"]).unwrap(),
        vec![None]
    );
    // A file that is not a cache is a clear error.
    let bad = dir.path().join("bad.sqlite");
    std::fs::write(
        &bad,
        b"not a database at all, just text that is long enough to fail",
    )
    .unwrap();
    let err = EmbeddingCache::open(&bad).unwrap_err();
    assert!(
        matches!(&err, Error::Store(_)) && err.to_string().contains("is damaged"),
        "{err}"
    );
}

#[test]
fn dense_retriever_ranks_real_text() {
    let docs = [
        "Great phone. The battery easily lasts two days and charging is quick.",
        "The hotel room was dirty and the staff at the front desk were rude.",
        "Sapato muito confortável, chegou antes do prazo.",
        "This dress fits perfectly and the fabric is soft.",
    ];
    let dir = tempfile::tempdir().unwrap();
    let r = DenseRetriever::builder(model_dir())
        .cache(dir.path().join("c.sqlite"))
        .build()
        .unwrap();
    let top = r
        .rank("unclean hotel with unfriendly reception", &docs, Some(2))
        .unwrap();
    assert_eq!(top.len(), 2);
    assert_eq!(top[0].item, 1);
    assert!(top[0].score > top[1].score);
    let top = r
        .rank("how long does the battery last", &docs, None)
        .unwrap();
    assert_eq!(top[0].item, 0);
    assert_eq!(top.len(), 4);
    // Scores equal cosine of the encoder's own embeddings; dot scoring ranks by q·d.
    let q = encoder()
        .embed(&["how long does the battery last"], Pooling::Mean)
        .unwrap();
    let d = encoder().embed(&docs, Pooling::Mean).unwrap();
    let dot = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| *x as f64 * *y as f64)
            .sum::<f64>()
    };
    let cos0 =
        dot(q.row(0), d.row(0)) / (dot(q.row(0), q.row(0)).sqrt() * dot(d.row(0), d.row(0)).sqrt());
    assert!((top[0].score - cos0).abs() < 1e-6);
    let rd = DenseRetriever::builder(model_dir())
        .similarity(Similarity::Dot)
        .build()
        .unwrap();
    let s = rd.scores("how long does the battery last", &docs).unwrap();
    assert_eq!(s.len(), docs.len());
    for (i, si) in s.iter().enumerate() {
        assert!((si - dot(q.row(0), d.row(i))).abs() < 1e-4);
    }
    // PGraphRAG's released notebook: pooler_output documents, mean-pooled query.
    let rp = DenseRetriever::builder(model_dir())
        .doc_pooling(Pooling::Pooler)
        .build()
        .unwrap();
    assert_eq!(rp.rank("battery", &docs, None).unwrap().len(), 4);
    assert!(r.rank("anything", &[], None).unwrap().is_empty());
    assert_eq!(r.rank("", &docs, None).unwrap().len(), 4);
}

#[test]
fn pooler_without_weights_is_an_explicit_error() {
    use candle_core::{Device, safetensors};
    let t = copy_model_without(&["model.safetensors"]);
    let mut w = safetensors::load(model_dir().join("model.safetensors"), &Device::Cpu).unwrap();
    w.retain(|k, _| !k.starts_with("pooler."));
    safetensors::save(&w, t.path().join("model.safetensors")).unwrap();
    let enc = BertEncoder::load(t.path()).unwrap();
    assert!(!enc.has_pooler());
    let err = enc.embed(&["text"], Pooling::Pooler).unwrap_err();
    assert!(
        matches!(err, Error::MissingPooler { .. }) && err.to_string().contains("no pooler weights"),
        "{err}"
    );
    let err = DenseRetriever::builder(t.path())
        .doc_pooling(Pooling::Pooler)
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::MissingPooler { .. }));
    // Mean pooling still works and equals the full checkpoint's.
    let a = enc.embed(&["text"], Pooling::Mean).unwrap();
    assert_eq!(a, encoder().embed(&["text"], Pooling::Mean).unwrap());
}

#[test]
fn snippets_and_fusion_with_the_real_model() {
    use pgraphrag_retrieval::Bm25Retriever;
    use pgraphrag_retrieval::dense::{Rrf, SnippetRanker};
    let long = "I bought this blender for smoothies. It is loud, but it crushes ice in seconds and \
                the jar is easy to clean. The lid fits tightly and nothing leaks. After two months \
                of daily use it still works like new. \
                Shipping, however, was a disaster: the box arrived crushed, two weeks late, and the \
                courier left it in the rain outside my building without ringing the bell at all.";
    let docs = [
        long,
        "Nice colour and the fabric is soft; the dress fits well.",
        "The hotel breakfast was cold and the coffee tasted burnt.",
    ];
    let r = DenseRetriever::load(&model_dir()).unwrap();
    let s = SnippetRanker::new(&r).min_chars(150);
    let snippets = s.split(&docs);
    assert!(
        snippets.iter().filter(|h| h.doc == 0).count() >= 2,
        "the long review splits into snippets"
    );
    let q = "late delivery and a damaged package";
    let hits = s.rank_snippets(q, &docs, Some(1)).unwrap();
    assert_eq!(hits[0].item.doc, 0);
    assert!(
        hits[0].item.text.contains("Shipping"),
        "{:?}",
        hits[0].item.text
    );
    // RankDocBySnpt: the long review scores its best snippet, which beats its whole-text score.
    let by_snpt = s.rank(q, &docs, None).unwrap();
    assert_eq!(by_snpt[0].item, 0);
    let whole = r.scores(q, &docs).unwrap();
    assert!(
        by_snpt[0].score > whole[0],
        "{} vs {}",
        by_snpt[0].score,
        whole[0]
    );
    assert!((by_snpt[0].score - hits[0].score).abs() < 1e-12);
    // RRF of BM25 and dense returns a permutation of all documents.
    let fused = Rrf::new(Bm25Retriever::pgraphrag(), &r)
        .rank("breakfast coffee", &docs, None)
        .unwrap();
    let mut items: Vec<usize> = fused.iter().map(|x| x.item).collect();
    assert_eq!(items[0], 2);
    items.sort();
    assert_eq!(items, vec![0, 1, 2]);
}

#[test]
fn warmed_vectors_score_like_encoding_on_demand() {
    let docs = [
        "Great phone. The battery easily lasts two days and charging is quick.",
        "The hotel room was dirty and the staff at the front desk were rude.",
        "Sapato muito confortável, chegou antes do prazo.",
        "",
    ];
    let queries = ["how long does the battery last", "dirty room", ""];
    let cold = DenseRetriever::load(&model_dir()).unwrap();
    let warm = DenseRetriever::load(&model_dir()).unwrap();
    warm.warm(&docs, &()).unwrap();
    assert_eq!(warm.warmed(), docs.len());
    warm.warm_queries(&queries, &()).unwrap();
    // Mean pooling on both sides: a query equal to a document ("") shares its vector.
    assert_eq!(warm.warmed(), docs.len() + queries.len() - 1);
    warm.warm(&docs, &()).unwrap(); // already warm: nothing added
    assert_eq!(warm.warmed(), docs.len() + queries.len() - 1);
    for q in queries {
        let a = cold.scores(q, &docs).unwrap();
        let b = warm.scores(q, &docs).unwrap();
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            // Batching pads differently; the vectors agree to float rounding.
            assert!((x - y).abs() < 1e-5, "{q:?}: {x} vs {y}");
        }
    }
    // A query that was not warmed is encoded on demand and not kept.
    let s = warm.scores("unfriendly reception", &docs).unwrap();
    assert_eq!(s.len(), docs.len());
    assert_eq!(warm.warmed(), docs.len() + queries.len() - 1);
    warm.clear_warmed();
    assert_eq!(warm.warmed(), 0);
}
