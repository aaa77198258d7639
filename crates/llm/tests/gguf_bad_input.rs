//! Typed errors (never panics) for files that are not usable models.

use std::io::Write;
use std::path::Path;

use pgraphrag_llm::{Engine, GgufModel, GgufOptions, LlmError};

#[path = "support/model.rs"]
mod model;

/// A GGUF v3 file with no tensors and one metadata entry, `general.architecture = arch`.
fn gguf_with_architecture(arch: &str) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes()); // version
    b.extend(0u64.to_le_bytes()); // tensors
    b.extend(1u64.to_le_bytes()); // metadata entries
    let key = "general.architecture";
    b.extend((key.len() as u64).to_le_bytes());
    b.extend(key.as_bytes());
    b.extend(8u32.to_le_bytes()); // a string
    b.extend((arch.len() as u64).to_le_bytes());
    b.extend(arch.as_bytes());
    b.resize(b.len().div_ceil(32) * 32, 0);
    b
}

fn load(p: &Path) -> LlmError {
    GgufModel::load(p, GgufOptions::default()).expect_err("load must fail")
}

#[test]
fn missing_file() {
    let p = Path::new("/nonexistent/dir/model.gguf");
    let e = load(p);
    assert!(
        matches!(&e, LlmError::ModelNotFound { path } if path == p),
        "{e:?}"
    );
    assert!(e.to_string().contains("/nonexistent/dir/model.gguf"));
    assert!(e.to_string().contains("fetch-llms.sh"));
}

#[test]
fn wrong_magic_and_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("not-a-model.gguf");
    std::fs::write(&p, b"PK\x03\x04 this is a zip, not a gguf file at all").unwrap();
    let e = load(&p);
    assert!(
        matches!(&e, LlmError::InvalidGguf { reason, .. } if reason.contains("wrong magic")),
        "{e:?}"
    );
    assert!(e.to_string().contains("not-a-model.gguf"));

    let p = dir.path().join("empty.gguf");
    std::fs::write(&p, b"").unwrap();
    let e = load(&p);
    assert!(matches!(&e, LlmError::InvalidGguf { .. }), "{e:?}");

    let p = dir.path().join("header-only.gguf");
    std::fs::write(&p, b"GGUF\x03\x00\x00\x00\xff\xff").unwrap();
    let e = load(&p);
    assert!(
        matches!(&e, LlmError::InvalidGguf { reason, .. } if reason.contains("bad header")),
        "{e:?}"
    );
}

#[test]
fn truncated_model_file() {
    let src = model::model_path();
    assert!(
        src.exists(),
        "{} is missing: run scripts/fetch-llms.sh --smollm-only",
        src.display()
    );
    let bytes = std::fs::read(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("truncated.gguf");
    // Keep the whole header but cut the tensor data in half.
    std::fs::File::create(&p)
        .unwrap()
        .write_all(&bytes[..bytes.len() / 2])
        .unwrap();
    let e = load(&p);
    match &e {
        LlmError::InvalidGguf { path, reason } => {
            assert_eq!(path, &p);
            assert!(reason.contains("truncated"), "{reason}");
        }
        other => panic!("expected InvalidGguf, got {other:?}"),
    }
    // Cut inside the metadata.
    std::fs::File::create(&p)
        .unwrap()
        .write_all(&bytes[..100_000])
        .unwrap();
    let e = load(&p);
    assert!(matches!(&e, LlmError::InvalidGguf { .. }), "{e:?}");
}

#[test]
fn unsupported_architecture() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mamba.gguf");
    std::fs::write(&p, gguf_with_architecture("mamba")).unwrap();
    let e = load(&p);
    assert!(
        matches!(&e, LlmError::UnsupportedArchitecture { architecture, path } if architecture == "mamba" && path == &p),
        "{e:?}"
    );
    assert!(e.to_string().contains("mamba"));
}

#[test]
fn missing_tokenizer_json() {
    let src = model::model_path();
    assert!(
        src.exists(),
        "{} is missing: run scripts/fetch-llms.sh --smollm-only",
        src.display()
    );
    let opts = GgufOptions {
        tokenizer_json: Some("/nonexistent/tokenizer.json".into()),
        ..Default::default()
    };
    let e = GgufModel::load(&src, opts).unwrap_err();
    assert!(
        matches!(&e, LlmError::ModelNotFound { path } if path.ends_with("tokenizer.json")),
        "{e:?}"
    );
}

/// Without the `candle` feature, asking for candle is a typed error naming the feature, not a
/// panic (with it, the candle engine loads as usual).
#[test]
fn candle_engine_without_the_feature_is_a_typed_error() {
    let src = model::model_path();
    assert!(
        src.exists(),
        "{} is missing: run scripts/fetch-llms.sh --smollm-only",
        src.display()
    );
    let r = GgufModel::load(
        &src,
        GgufOptions {
            engine: Engine::Candle,
            ..Default::default()
        },
    );
    if cfg!(feature = "candle") {
        assert_eq!(r.unwrap().engine(), Engine::Candle);
    } else {
        let e = r.unwrap_err();
        assert!(
            matches!(
                &e,
                LlmError::FeatureDisabled {
                    feature: "candle",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("`candle` feature"), "{e}");
    }
}
