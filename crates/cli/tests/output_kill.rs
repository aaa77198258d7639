//! Issue 39, "Must show" 2: a command that writes a results file, killed with SIGKILL or
//! SIGINT at any point (early, half-way, late, and the moment its temporary file appears),
//! never leaves part of a file at the output path: the path holds the old results or the whole
//! new ones. Rerun uninterrupted, it writes exactly the bytes of a run that was never
//! interrupted. Covered here: `metrics --out`, `rank --out`, `embed --out` and `recsys index
//! --out` (`bench`, `summarize`, `train lora` and `serve` have their own crash tests).
//!
//! Needs `models/all-MiniLM-L6-v2` (`scripts/fetch-minilm.sh`) and the PGraphRAG dev splits
//! (`$PGRAPHRAG_DATA`); fails loudly without.
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What the output path holds before each interrupted run.
const OLD: &[u8] = b"the results of an earlier run\n";

fn minilm() -> PathBuf {
    let p = support::root().join("models/all-MiniLM-L6-v2");
    assert!(
        p.join("model.safetensors").is_file(),
        "all-MiniLM-L6-v2 is missing at {}: run scripts/fetch-minilm.sh",
        p.display()
    );
    p
}

fn pgraphrag(args: &[&str], out: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgraphrag"));
    c.args(args)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Runs to the end; its run time.
fn complete(mut c: Command) -> Duration {
    let t = Instant::now();
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "{:?}: {}",
        c,
        String::from_utf8_lossy(&o.stderr)
    );
    t.elapsed()
}

#[derive(Debug, Clone, Copy)]
enum When {
    /// After this fraction of an uninterrupted run's time.
    After(f64),
    /// As soon as the temporary file of the atomic write appears beside the output.
    Writing,
}

/// Whether `dir` holds a temporary file of an atomic write of `name` (`.NAME.XXXXXX.tmp`).
fn writing(dir: &Path, name: &str) -> bool {
    let prefix = format!(".{name}.");
    std::fs::read_dir(dir).unwrap().any(|e| {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        n.starts_with(&prefix) && n.ends_with(".tmp")
    })
}

/// Sends SIG`sig` to `child` unless it has already ended; waits for it.
fn signal(child: &mut Child, sig: &str) {
    if child.try_wait().unwrap().is_some() {
        return;
    }
    if sig == "KILL" {
        let _ = child.kill();
    } else {
        let _ = Command::new("kill")
            .args(["-s", sig, &child.id().to_string()])
            .status();
    }
    child.wait().unwrap();
}

/// The kill test of one command: `cmd(out)` builds its run writing to `out`.
fn never_a_partial_file(what: &str, cmd: impl Fn(&Path) -> Command) {
    let d = tempfile::tempdir().unwrap();
    let reference = d.path().join("whole").join("out.file");
    std::fs::create_dir(reference.parent().unwrap()).unwrap();
    let took = complete(cmd(&reference));
    let whole = std::fs::read(&reference).unwrap();
    assert!(!whole.is_empty(), "{what}: empty output");

    let dir = d.path().join("killed");
    std::fs::create_dir(&dir).unwrap();
    let out = dir.join("out.file");
    let mut seen_writing = false;
    for (sig, when) in [
        ("KILL", When::After(0.3)),
        ("INT", When::After(0.6)),
        ("KILL", When::After(0.9)),
        ("KILL", When::Writing),
        ("INT", When::Writing),
    ] {
        std::fs::write(&out, OLD).unwrap();
        let mut child = cmd(&out).stderr(Stdio::null()).spawn().unwrap();
        match when {
            When::After(f) => std::thread::sleep(took.mul_f64(f)),
            When::Writing => {
                while child.try_wait().unwrap().is_none() && !writing(&dir, "out.file") {
                    std::thread::sleep(Duration::from_micros(200));
                }
                seen_writing |= writing(&dir, "out.file");
            }
        }
        signal(&mut child, sig);
        let now = std::fs::read(&out).unwrap();
        assert!(
            now == OLD || now == whole,
            "{what}: SIG{sig} at {when:?} left {} bytes at the output path, neither the old \
             file ({} bytes) nor the whole new one ({} bytes)",
            now.len(),
            OLD.len(),
            whole.len()
        );
        // Nothing else beside it but the temporary files of killed writes.
        for e in std::fs::read_dir(&dir).unwrap() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(
                n == "out.file" || (n.starts_with(".out.file.") && n.ends_with(".tmp")),
                "{what}: SIG{sig} at {when:?} left {n}"
            );
        }
    }
    eprintln!("{what}: uninterrupted in {took:?}; a kill while writing: {seen_writing}");
    // The rerun, over what the killed runs left, writes what an uninterrupted run wrote.
    complete(cmd(&out));
    assert!(
        std::fs::read(&out).unwrap() == whole,
        "{what}: the rerun differs"
    );
}

#[test]
fn metrics_out() {
    let d = tempfile::tempdir().unwrap();
    let pairs = d.path().join("pairs.jsonl");
    let words = [
        "soap", "lovely", "broke", "week", "smells", "nice", "dry", "skin", "price", "fine",
        "kettle", "boils", "fast", "arrived", "late", "dented",
    ];
    let text = |i: usize, n: usize| -> String {
        (0..n)
            .map(|j| words[(i * 7 + j * j * 3 + j) % words.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut lines = String::new();
    for i in 0..6000 {
        let line = serde_json::json!({
            "id": i,
            "prediction": text(i, 12 + i % 9),
            "reference": text(i + 3, 14 + i % 7),
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    std::fs::write(&pairs, lines).unwrap();
    let p = pairs.to_str().unwrap().to_string();
    never_a_partial_file("metrics --out", |out| {
        pgraphrag(&["metrics", "--pairs", &p], out)
    });
}

#[test]
fn rank_out() {
    let split = support::split("amazon");
    let s = split.to_str().unwrap().to_string();
    never_a_partial_file("rank --out", |out| {
        pgraphrag(
            &["rank", "--task", "text", "--split", &s, "--limit", "400"],
            out,
        )
    });
}

#[test]
fn embed_out() {
    let d = tempfile::tempdir().unwrap();
    let texts = d.path().join("texts.jsonl");
    let mut lines = String::new();
    for i in 0..240 {
        let line = serde_json::json!({
            "id": i,
            "text": format!("review {i}: the soap number {} smells {} and lasts {} weeks", i * 7, ["nice", "odd", "strong"][i % 3], i % 11),
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    std::fs::write(&texts, lines).unwrap();
    let (t, m) = (
        texts.to_str().unwrap().to_string(),
        minilm().to_str().unwrap().to_string(),
    );
    never_a_partial_file("embed --out", |out| {
        pgraphrag(&["embed", "--model", &m, "--texts", &t], out)
    });
}

#[test]
fn recsys_index_out() {
    let d = tempfile::tempdir().unwrap();
    support::toy_ml100k(d.path(), 400);
    let (ml, m) = (
        d.path().to_str().unwrap().to_string(),
        minilm().to_str().unwrap().to_string(),
    );
    never_a_partial_file("recsys index --out", |out| {
        pgraphrag(&["recsys", "index", "--ml100k", &ml, "--encoder", &m], out)
    });
}
