//! Typed errors (never panics) for files that are not usable models.

use std::io::Write;
use std::path::Path;

use candle_core::quantized::gguf_file::{self, Value};
use pgraphrag_llm::{GgufModel, GgufOptions, LlmError};

#[path = "support/model.rs"]
mod model;

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
    let arch = Value::String("mamba".into());
    let mut f = std::fs::File::create(&p).unwrap();
    gguf_file::write(&mut f, &[("general.architecture", &arch)], &[]).unwrap();
    drop(f);
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
