//! `recsys index --encoder-precision int8` builds the K-RagRec index with the int8 encoder: its
//! vectors (and the encoder id the index records, so an f32 run never loads them) differ from
//! the f32 index of the same graph.
use std::process::Command;

mod support;

#[test]
fn an_int8_index_is_built_and_kept_apart_from_f32() {
    let d = tempfile::tempdir().unwrap();
    support::toy_ml100k(d.path(), 60);
    let minilm = support::root().join("models/all-MiniLM-L6-v2");
    let index = |precision: &str| {
        let out = d.path().join(format!("{precision}.idx"));
        let o = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
            .args(["recsys", "index", "--quiet", "--ml100k"])
            .arg(d.path())
            .arg("--encoder")
            .arg(&minilm)
            .args(["--encoder-precision", precision, "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "recsys index --encoder-precision {precision}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read(out).unwrap()
    };
    let (f32_index, int8_index) = (index("f32"), index("int8"));
    assert_eq!(f32_index.len(), int8_index.len());
    assert_ne!(f32_index, int8_index);
    let o = Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(["recsys", "index", "--encoder-precision", "int4"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("int4"));
}
