//! Helpers of `examples_run.rs`: where the workspace, the data and the models are, and how an
//! example binary is found (or built) and run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::EXAMPLES;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples/ has a parent")
        .to_path_buf()
}

pub fn data_dir() -> PathBuf {
    std::env::var_os("PGRAPHRAG_DATA")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root().join("../shared/data"), PathBuf::from)
}

pub fn split(name: &str) -> PathBuf {
    let p = data_dir().join("pgraphrag").join(format!("{name}.json"));
    assert!(
        p.exists(),
        "{} is missing: set PGRAPHRAG_DATA to the shared data folder",
        p.display()
    );
    p
}

pub fn smollm() -> PathBuf {
    let p = std::env::var_os("PGRAPHRAG_MODEL")
        .filter(|p| !p.is_empty())
        .map_or_else(
            || root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf"),
            PathBuf::from,
        );
    assert!(
        p.exists(),
        "{} is missing: run scripts/fetch-llms.sh --smollm-only",
        p.display()
    );
    p
}

pub fn minilm() -> PathBuf {
    let p = root().join("models/all-MiniLM-L6-v2");
    assert!(
        p.join("config.json").exists(),
        "{} is missing: run scripts/fetch-minilm.sh",
        p.display()
    );
    p
}

/// WordNet as the `metrics` example looks for it: `$WORDNET_DIR`, `models/wordnet`, Debian's.
pub fn wordnet() -> Option<PathBuf> {
    (std::env::var_os("WORDNET_DIR")
        .map(PathBuf::from)
        .into_iter())
    .chain([root().join("models/wordnet"), "/usr/share/wordnet".into()])
    .find(|d| d.join("index.noun").exists())
}

pub fn wordnet_or_fail() -> PathBuf {
    wordnet().expect(
        "WordNet 3.0 is missing: run scripts/fetch-wordnet.sh or apt-get install wordnet-base",
    )
}

/// The example's binary, built with a nested cargo if `cargo test` did not build it.
pub fn binary(package: &str, name: &str) -> PathBuf {
    assert!(
        EXAMPLES.contains(&(package, name)),
        "{package}/{name} is not in EXAMPLES"
    );
    let exe = std::env::current_exe().expect("the test binary's path");
    // …/target/<profile>/deps/examples_run-HASH → …/target/<profile>/examples/NAME
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let bin = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "--example", name, "-p", package])
            .current_dir(root());
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                cmd.arg("--release");
            }
            Some(other) => {
                cmd.args(["--profile", other]);
            }
        }
        let st = cmd.status().expect("run cargo build");
        assert!(
            st.success(),
            "cargo build --example {name} -p {package} failed"
        );
        assert!(
            bin.exists(),
            "cargo built {name} but not at {}",
            bin.display()
        );
    }
    bin
}

/// Runs an example from the workspace root and returns its stdout; fails on a non-zero exit.
pub fn run(package: &str, name: &str, args: &[&str], env: &[(&str, &Path)]) -> String {
    let t = Instant::now();
    let mut cmd = Command::new(binary(package, name));
    cmd.args(args)
        .current_dir(root())
        .env("PGRAPHRAG_DATA", data_dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("start the example");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} {args:?} exited with {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{name}: {:.1} s\n{stdout}", t.elapsed().as_secs_f64());
    stdout
}

/// A temporary folder holding `name` with `contents` (removed when the folder is dropped).
pub fn temp_file(name: &str, contents: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, contents).unwrap();
    (dir, p)
}

/// The number after `label` on `line` (e.g. `ROUGE-1 F 0.250`).
pub fn number_after(line: &str, label: &str) -> f64 {
    let rest = &line[line
        .find(label)
        .unwrap_or_else(|| panic!("{label:?} not in {line:?}"))
        + label.len()..];
    let tok = rest
        .split(|c: char| c.is_whitespace() || c == ',' || c == '|')
        .find(|t| !t.is_empty());
    tok.and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in {line:?}"))
}
