//! The kill-test harness of `output_kill.rs` (issue 39, "Must show" 2): a command is run once
//! uninterrupted, then again over the same output path with SIGKILL or SIGINT sent at chosen
//! moments (a fraction of the uninterrupted run's time, or the moment a temporary file of an
//! atomic write appears), each time over an output that holds an earlier run's bytes ([`OLD`]).
//! After every kill each results file must hold the old bytes or the whole new ones, and
//! nothing may lie beside them but the temporary files of killed writes; the rerun over what
//! the killed runs left must write the uninterrupted run's bytes.
#![allow(dead_code)]
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What each results file holds before each interrupted run.
pub const OLD: &[u8] = b"the results of an earlier run\n";

/// When the signal is sent.
#[derive(Debug, Clone, Copy)]
pub enum When {
    /// After this fraction of an uninterrupted run's time.
    After(f64),
    /// As soon as a temporary file of an atomic write appears in the output folder (one that
    /// no earlier killed run left there).
    Writing,
}

/// A signal (`KILL` or `INT`) and when it is sent.
pub type Kill = (&'static str, When);

/// Early, half-way and late, and twice while a file is being written.
pub const EVERY: &[Kill] = &[
    ("KILL", When::After(0.3)),
    ("INT", When::After(0.6)),
    ("KILL", When::After(0.9)),
    ("KILL", When::Writing),
    ("INT", When::Writing),
];

/// Half-way, and while a file is being written: the commands that load a model, or the
/// cheap ones, whose whole run is mostly process start and the write itself.
pub const TWO: &[Kill] = &[("INT", When::After(0.5)), ("KILL", When::Writing)];

/// A command's results as compared: the bytes of the file `name`, or a part of them (a file
/// that also records how long the run took).
pub type Key = fn(name: &str, bytes: &[u8]) -> Vec<u8>;

/// The bytes themselves.
pub fn bytes(_: &str, b: &[u8]) -> Vec<u8> {
    b.to_vec()
}

/// The `pgraphrag` run `args` with stdout and stdin closed and stderr kept for the failure
/// message.
pub fn pgraphrag<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgraphrag"));
    c.args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Runs to the end; its run time.
pub fn complete(mut c: Command) -> Duration {
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

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

/// Whether `p` (relative to the output folder) is a temporary file of an atomic write of one
/// of `files` (`.NAME.XXXXXX.tmp` beside it).
fn temporary_of(p: &Path, files: &[&str]) -> bool {
    let n = p.file_name().unwrap_or_default().to_string_lossy();
    files.iter().map(Path::new).any(|f| {
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        f.parent() == p.parent() && n.starts_with(&format!(".{name}.")) && n.ends_with(".tmp")
    })
}

/// Whether `p` is the temporary file of some atomic write.
fn temporary(p: &Path) -> bool {
    let n = p.file_name().unwrap_or_default().to_string_lossy();
    n.starts_with('.') && n.ends_with(".tmp")
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

/// The kill test of a command writing one file: `cmd(out)` builds its run writing to `out`.
pub fn never_a_partial_file(what: &str, kills: &[Kill], cmd: impl Fn(&Path) -> Command) {
    run(
        what,
        kills,
        &["out.file"],
        bytes,
        &|dir| dir.join("out.file"),
        &cmd,
    );
}

/// The kill test of a command writing `files` (relative paths) into a folder: `cmd(dir)`
/// builds its run writing into `dir`; `key` gives what of each file is compared.
pub fn never_a_partial_folder(
    what: &str,
    kills: &[Kill],
    files: &[&str],
    key: Key,
    cmd: impl Fn(&Path) -> Command,
) {
    run(what, kills, files, key, &|dir| dir.to_path_buf(), &cmd);
}

fn run(
    what: &str,
    kills: &[Kill],
    files: &[&str],
    key: Key,
    out_of: &dyn Fn(&Path) -> PathBuf,
    cmd: &dyn Fn(&Path) -> Command,
) {
    let d = tempfile::tempdir().unwrap();
    let reference = d.path().join("whole");
    std::fs::create_dir(&reference).unwrap();
    let took = complete(cmd(&out_of(&reference)));
    let whole: Vec<Vec<u8>> = files
        .iter()
        .map(|f| {
            let b = std::fs::read(reference.join(f))
                .unwrap_or_else(|e| panic!("{what}: an uninterrupted run wrote no {f}: {e}"));
            assert!(!b.is_empty(), "{what}: {f} is empty");
            key(f, &b)
        })
        .collect();

    let dir = d.path().join("killed");
    let mut seen_writing = 0;
    for &(sig, when) in kills {
        for f in files {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, OLD).unwrap();
        }
        let left: BTreeSet<PathBuf> = files_under(&dir);
        let writing = || {
            files_under(&dir)
                .iter()
                .any(|p| temporary(p) && !left.contains(p))
        };
        let mut child = cmd(&out_of(&dir)).stderr(Stdio::null()).spawn().unwrap();
        match when {
            When::After(f) => std::thread::sleep(took.mul_f64(f)),
            When::Writing => {
                while child.try_wait().unwrap().is_none() && !writing() {
                    std::thread::sleep(Duration::from_micros(200));
                }
                seen_writing += usize::from(writing());
            }
        }
        signal(&mut child, sig);
        for (f, w) in files.iter().zip(&whole) {
            let now = std::fs::read(dir.join(f))
                .unwrap_or_else(|e| panic!("{what}: SIG{sig} at {when:?} removed {f}: {e}"));
            assert!(
                now == OLD || key(f, &now) == *w,
                "{what}: SIG{sig} at {when:?} left {} bytes in {f}, neither the old file ({} \
                 bytes) nor the whole new one",
                now.len(),
                OLD.len(),
            );
        }
        // Nothing else but the temporary files of killed writes.
        for p in files_under(&dir) {
            assert!(
                files.iter().any(|f| Path::new(f) == p) || temporary_of(&p, files),
                "{what}: SIG{sig} at {when:?} left {}",
                p.display()
            );
        }
    }
    eprintln!("{what}: uninterrupted in {took:?}; killed while writing {seen_writing} times");
    // The rerun, over what the killed runs left, writes what an uninterrupted run wrote.
    complete(cmd(&out_of(&dir)));
    for (f, w) in files.iter().zip(&whole) {
        let now = std::fs::read(dir.join(f)).unwrap();
        assert!(key(f, &now) == *w, "{what}: the rerun's {f} differs");
    }
    // The rerun's writes remove what the killed writes of the same files left behind.
    let stale: Vec<PathBuf> = files_under(&dir)
        .into_iter()
        .filter(|p| temporary(p))
        .collect();
    assert!(
        stale.is_empty(),
        "{what}: the rerun left the killed runs' temporary files {stale:?}"
    );
}
