//! Issue 39, item 3, end to end: a damaged resource file (a GGUF model cut short, a dense
//! model whose weights are cut short, a SQLite cache that is not whole) is bad input: the run
//! exits with code 2, names the file and what is wrong, and leaves the damaged file and the
//! command's output as they were.
//!
//! Needs `models/SmolLM2-135M-Instruct.Q4_1.gguf` and `models/all-MiniLM-L6-v2`
//! (`scripts/fetch-llms.sh --smollm-only`, `scripts/fetch-minilm.sh`); fails loudly without.
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn pgraphrag(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .output()
        .expect("the pgraphrag binary runs")
}

/// Runs `args`, expecting exit code 2 and each of `wants` on stderr.
fn refused(args: &[&Path], wants: &[&str]) {
    let o = pgraphrag(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "pgraphrag {args:?}: {err}");
    for w in wants {
        assert!(err.contains(w), "pgraphrag {args:?}: {err:?} lacks {w:?}");
    }
}

fn minilm() -> PathBuf {
    let p = support::root().join("models/all-MiniLM-L6-v2");
    assert!(
        p.join("model.safetensors").is_file(),
        "all-MiniLM-L6-v2 is missing at {}: run scripts/fetch-minilm.sh",
        p.display()
    );
    p
}

/// A split of two users (ratings on the scale).
const SPLIT: &str = r#"[
  {"id": "u1", "profile": [{"title": "Great", "text": "Lovely soap", "rating": 5, "pid": "p1"},
                           {"title": "Meh", "text": "Too dry", "rating": 2, "pid": "p2"}]},
  {"id": "u2", "profile": [{"title": "Nice", "text": "Good soap", "rating": 4, "pid": "p1"},
                           {"title": "Bad", "text": "Broke", "rating": 1, "pid": "p2"}]}
]"#;

#[test]
fn a_gguf_model_cut_short_is_bad_input_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(support::model()).unwrap();
    let model = d.path().join("short.gguf");
    std::fs::write(&model, &bytes[..bytes.len() - 1]).unwrap();
    let split = d.path().join("amazon_dev.json");
    std::fs::write(&split, SPLIT).unwrap();
    let out = d.path().join("out");
    let p = Path::new;
    refused(
        &[
            p("bench"),
            p("--task"),
            p("rating"),
            p("--quiet"),
            p("--model"),
            &model,
            p("--split"),
            &split,
            p("--out"),
            &out,
        ],
        &["short.gguf", "truncated"],
    );
    assert!(!out.join("results.md").exists());
}

#[test]
fn dense_weights_cut_short_and_a_damaged_cache_are_bad_input_naming_them() {
    let d = tempfile::tempdir().unwrap();
    let texts = d.path().join("texts.jsonl");
    std::fs::write(
        &texts,
        "{\"id\": 1, \"text\": \"a lovely soap\"}\n{\"id\": 2, \"text\": \"it broke in a week\"}\n",
    )
    .unwrap();
    let out = d.path().join("emb.jsonl");
    let p = Path::new;

    // A copy of the model folder whose weights are cut short.
    let broken = d.path().join("broken-model");
    std::fs::create_dir(&broken).unwrap();
    for e in std::fs::read_dir(minilm()).unwrap() {
        let e = e.unwrap();
        let to = broken.join(e.file_name());
        if e.file_name() == "model.safetensors" {
            let b = std::fs::read(e.path()).unwrap();
            std::fs::write(&to, &b[..b.len() / 3]).unwrap();
        } else if e.path().is_file() && e.metadata().unwrap().len() < 50_000_000 {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    refused(
        &[
            p("embed"),
            p("--quiet"),
            p("--model"),
            &broken,
            p("--texts"),
            &texts,
            p("--out"),
            &out,
        ],
        &["model.safetensors", "truncated"],
    );
    assert!(!out.exists());

    // A sound cache, written by a first run, then cut short.
    let cache = d.path().join("emb.sqlite");
    let run = |out: &Path| {
        pgraphrag(&[
            p("embed"),
            p("--quiet"),
            p("--model"),
            &minilm(),
            p("--texts"),
            &texts,
            p("--out"),
            out,
            p("--cache"),
            &cache,
        ])
    };
    let o = run(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = std::fs::read(&out).unwrap();
    let sound = std::fs::read(&cache).unwrap();
    assert!(sound.len() >= 2 * 4096, "{}", sound.len());
    for (tag, damaged) in [
        ("cut", sound[..sound.len() - 4096].to_vec()),
        (
            "text",
            b"these are not the bytes of a SQLite file".repeat(200),
        ),
    ] {
        std::fs::write(&cache, &damaged).unwrap();
        let o = run(&out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{tag}: {err}");
        assert!(
            err.contains("emb.sqlite") && err.contains("is damaged"),
            "{tag}: {err}"
        );
        assert_eq!(
            std::fs::read(&cache).unwrap(),
            damaged,
            "{tag}: cache changed"
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            before,
            "{tag}: output changed"
        );
    }
}
