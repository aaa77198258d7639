//! Issue 39, item 3: a damaged dense model folder is refused at load with [`Error::Model`]
//! naming the damaged file: `model.safetensors` cut short or with a header length that does not
//! fit the file, a `tokenizer.json` that does not parse, an empty `vocab.txt`.
//!
//! Needs all-MiniLM-L6-v2: `$PGRAPHRAG_MINILM` or `models/all-MiniLM-L6-v2` at the workspace
//! root (`scripts/fetch-minilm.sh`). These tests FAIL when it is missing.
#![cfg(feature = "dense")]

use std::path::{Path, PathBuf};

use pgraphrag_retrieval::Error;
use pgraphrag_retrieval::dense::BertEncoder;

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

/// A copy of the model folder in `dir`: its small files copied, the weights linked (unless
/// `weights` gives their bytes), and each of `drop` left out.
fn copy_model(dir: &Path, weights: Option<&[u8]>, drop: &[&str]) {
    let src = model_dir();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if drop.contains(&name.as_str()) || !e.path().is_file() {
            continue;
        }
        let to = dir.join(&name);
        match (name.as_str(), weights) {
            ("model.safetensors", Some(b)) => std::fs::write(&to, b).unwrap(),
            ("model.safetensors", None) => std::os::unix::fs::symlink(e.path(), &to).unwrap(),
            (_, _) if e.metadata().unwrap().len() > 50_000_000 => {}
            _ => {
                std::fs::copy(e.path(), &to).unwrap();
            }
        }
    }
}

/// Loads `dir`, expecting [`Error::Model`] naming `file`; returns the message.
fn refused(dir: &Path, file: &str) -> String {
    let e = BertEncoder::load(dir).expect_err("a damaged model folder must not load");
    let msg = e.to_string();
    match &e {
        Error::Model { path, .. } => assert!(path.ends_with(file), "{msg}"),
        other => panic!("expected Error::Model, got {other:?}"),
    }
    assert!(msg.contains(file), "{msg}");
    msg
}

#[test]
fn weights_cut_short_or_with_a_bad_header_length_are_refused() {
    let bytes = std::fs::read(model_dir().join("model.safetensors")).unwrap();
    for (tag, cut) in [("half", bytes.len() / 2), ("one-byte", bytes.len() - 1)] {
        let d = tempfile::tempdir().unwrap();
        copy_model(d.path(), Some(&bytes[..cut]), &[]);
        let m = refused(d.path(), "model.safetensors");
        assert!(m.contains("truncated"), "{tag}: {m}");
    }
    // Inside the header: the JSON ends early.
    let d = tempfile::tempdir().unwrap();
    copy_model(d.path(), Some(&bytes[..100]), &[]);
    let m = refused(d.path(), "model.safetensors");
    assert!(m.contains("truncated"), "{m}");
    // The header length flipped to a huge number.
    let mut b = bytes[..4096].to_vec();
    b[6] = 0x7f;
    let d = tempfile::tempdir().unwrap();
    copy_model(d.path(), Some(&b), &[]);
    let m = refused(d.path(), "model.safetensors");
    assert!(m.contains("does not fit"), "{m}");
}

#[test]
fn tokenizer_files_that_do_not_parse_or_hold_nothing_are_refused() {
    let d = tempfile::tempdir().unwrap();
    copy_model(d.path(), None, &[]);
    let json = d.path().join("tokenizer.json");
    let text = std::fs::read(&json).unwrap();
    std::fs::write(&json, &text[..text.len() / 2]).unwrap();
    refused(d.path(), "tokenizer.json");

    // No tokenizer.json, an empty vocab.txt.
    let d = tempfile::tempdir().unwrap();
    copy_model(d.path(), None, &["tokenizer.json"]);
    std::fs::write(d.path().join("vocab.txt"), "").unwrap();
    refused(d.path(), "vocab.txt");
}
