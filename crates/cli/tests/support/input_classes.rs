#![allow(dead_code)]
//! The classes of bad input file (`bad_input_files.rs`, `bad_input_more.rs`): a careless
//! user's versions of a valid input, each of which a command must refuse as bad input (exit 2)
//! naming the file, with a short message, leaving the folder's files as they were.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// One command's input file: its name, valid contents, contents with a field of the wrong type
/// (and what the message must say about it), and the command line reading it in a folder.
pub struct Target {
    pub what: &'static str,
    pub file: &'static str,
    pub good: &'static str,
    pub wrong_type: &'static str,
    pub wrong_type_wants: &'static [&'static str],
    pub args: fn(input: &Path, dir: &Path) -> Vec<PathBuf>,
}

/// A path from a string (for argument lists).
pub fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

/// Every file under `dir` with its bytes (folders by name), to compare before and after.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
                v.push((path, Vec::new()));
            } else {
                let b = std::fs::read(&path).unwrap();
                v.push((path, b));
            }
        }
    }
    v.sort();
    v
}

/// How a class makes the input at `path` from the target.
pub type Make = fn(&Target, &Path);

/// The input classes: a name and how to make the input.
pub fn classes() -> Vec<(&'static str, Make)> {
    vec![
        ("cut short", |t, p| {
            let g = t.good.as_bytes();
            std::fs::write(p, &g[..g.len() * 2 / 3]).unwrap()
        }),
        ("empty", |_, p| std::fs::write(p, b"").unwrap()),
        ("a folder", |_, p| std::fs::create_dir(p).unwrap()),
        ("not UTF-8", |t, p| {
            // The first letter `e` becomes two bytes that are not UTF-8.
            let mut b = t.good.as_bytes().to_vec();
            let at = b.iter().position(|&c| c == b'e').unwrap();
            b.splice(at..at + 1, [0xff, 0xfe]);
            std::fs::write(p, b).unwrap()
        }),
        ("one huge line", |t, p| {
            let mut b = vec![b'x'; 20 << 20];
            b.push(b'\n');
            b.extend(t.good.as_bytes());
            std::fs::write(p, b).unwrap()
        }),
        ("a field of the wrong type", |t, p| {
            std::fs::write(p, t.wrong_type).unwrap()
        }),
    ]
}

/// Runs `pgraphrag` with `args` (no backtraces, no NATS server from the environment).
pub fn pgraphrag(args: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgraphrag"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env_remove("PGRAPHRAG_NATS_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// What is wrong with a run that had to be refused naming all of `wants` with the folder
/// `dir` as it was in `before`; `None` when it was.
pub fn problem(
    o: &Output,
    wants: &[&str],
    dir: &Path,
    before: &[(PathBuf, Vec<u8>)],
) -> Option<String> {
    let err = String::from_utf8_lossy(&o.stderr);
    let problem = if o.status.code() != Some(2) {
        format!("exit code {:?}", o.status.code())
    } else if let Some(w) = wants.iter().find(|w| !err.contains(*w)) {
        format!("the message lacks {w:?}")
    } else if err.len() > 4000 {
        format!("a message of {} bytes", err.len())
    } else if snapshot(dir) != before {
        "the folder changed".to_string()
    } else {
        return None;
    };
    let shown: String = err.chars().take(600).collect();
    Some(format!("{problem}: {shown}"))
}

/// Every class of every target, each in a fresh folder (`input(target, folder)` places the
/// input file and anything beside it); asserts that each was refused as it should be.
pub fn refuse_every_class(targets: Vec<Target>, input: impl Fn(&Target, &Path) -> PathBuf) {
    refuse_classes_except(targets, &[], input)
}

/// [`refuse_every_class`] but for the (target `what`, class) pairs of `except`: classes a
/// format accepts by design (latin-1 bytes in ML-1M's `movies.dat`).
pub fn refuse_classes_except(
    targets: Vec<Target>,
    except: &[(&str, &str)],
    input: impl Fn(&Target, &Path) -> PathBuf,
) {
    let mut failures = Vec::new();
    for t in targets {
        for (class, make) in classes() {
            if except.contains(&(t.what, class)) {
                continue;
            }
            let d = tempfile::tempdir().unwrap();
            let path = input(&t, d.path());
            make(&t, &path);
            let args = (t.args)(&path, d.path());
            let before = snapshot(d.path());
            let start = Instant::now();
            let o = pgraphrag(&args);
            let mut wants = vec![t.file];
            if class == "a field of the wrong type" {
                wants.extend(t.wrong_type_wants);
            }
            let mut found = problem(&o, &wants, d.path(), &before);
            if found.is_none() && start.elapsed() > Duration::from_secs(30) {
                found = Some(format!("took {:?}", start.elapsed()));
            }
            if let Some(problem) = found {
                failures.push(format!("{} / {class}: {problem}", t.what));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the bad inputs were not refused as they should be:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
