//! The outputs of a command as the user named them. Every file a command writes is checked
//! here before any model loads or any work starts, against `pgraphrag_data::output` (the
//! workspace's one output discipline): an output that is one of the command's inputs, a
//! symbolic link, a folder, a FIFO, a device or a socket is refused with a usage error (exit
//! code 2) naming the flag. Result files are then written whole or not at all ([`write`] or
//! the library writers, all on `pgraphrag_data::write_atomic`); journals and resumable rows
//! files are appended to in place (`pgraphrag_eval::Journal`, `pgraphrag_eval::RowsFile`) after
//! the same refusals.
//!
//! Links are not followed: the message says to write to the link's target instead.
use std::path::Path;

use anyhow::Context;
use pgraphrag_data::output::{
    OutputError, Symlinks, WriteOptions, check_not_input, check_output, write_atomic_with,
};

use crate::error::{UsageError, usage};

/// An input of a command: its flag and its path.
pub type Input<'a> = (&'a str, &'a Path);

/// The usage error of a refusal; all but the same-file one (which names both flags) are
/// prefixed with `flag`.
fn refused(flag: &str, e: OutputError) -> anyhow::Error {
    match e {
        e @ OutputError::SameFile { .. } => UsageError(e.into()).into(),
        e => usage(format!("{flag}: {e}")),
    }
}

/// Checks the output file `path` of `flag` before any work: not the same file as any of
/// `inputs`, not a link, not an existing folder, FIFO, socket or device.
pub fn file(flag: &str, path: &Path, inputs: &[Input]) -> anyhow::Result<()> {
    check_not_input((flag, path), inputs).map_err(|e| refused(flag, e))?;
    check_output(path, Symlinks::Refuse).map_err(|e| refused(flag, e))?;
    Ok(())
}

/// [`file`] for an optional output.
pub fn optional(flag: &str, path: Option<&Path>, inputs: &[Input]) -> anyhow::Result<()> {
    match path {
        Some(p) => file(flag, p, inputs),
        None => Ok(()),
    }
}

/// Checks the output folder `dir` of `flag` (a folder, a link to one, or missing) and, as
/// [`file`], each of the files the command writes in it (`files`, relative to `dir`).
pub fn folder(flag: &str, dir: &Path, files: &[&str], inputs: &[Input]) -> anyhow::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            return Err(usage(format!(
                "{flag}: {} is not a folder (this command writes several files into {flag})",
                dir.display()
            )));
        }
        _ => {}
    }
    for f in files {
        file(flag, &dir.join(f), inputs)?;
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename), creating its folder.
pub fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Writes `path` atomically with `fill` (temporary file, fsync, rename), creating its folder.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    match write_atomic_with(path, WriteOptions::default().create_dirs(), fill) {
        Err(pgraphrag_data::Error::Output(e)) => Err(refused("output", e)),
        r => r.with_context(|| format!("writing {}", path.display())),
    }
}

/// A baselines run's report: its files written into `out` (when given), then its table printed.
pub fn baselines(
    report: &pgraphrag_runs::BaselinesReport,
    out: Option<&Path>,
) -> anyhow::Result<()> {
    if let Some(out) = out {
        report.write(out)?;
        eprintln!("wrote {}", out.display());
    }
    println!("{}", report.markdown);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;

    #[test]
    fn refusals_are_usage_errors_naming_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        let split = dir.path().join("split.json");
        std::fs::write(&split, "[]").unwrap();
        let e = file("--out", &split, &[("--split", &split)]).unwrap_err();
        assert_eq!(exit_code(&e), 2);
        assert!(
            e.to_string()
                .starts_with("--out and --split are the same file")
        );
        let e = file("--journal", dir.path(), &[]).unwrap_err();
        assert_eq!(exit_code(&e), 2);
        assert!(e.to_string().starts_with("--journal: "), "{e}");
        let e = folder("--out", &split, &["results.md"], &[]).unwrap_err();
        assert!(e.to_string().contains("is not a folder"), "{e}");
        folder("--out", dir.path(), &["results.md"], &[("--split", &split)]).unwrap();
        // A library writer's refusal is a usage error too.
        let lib = pgraphrag_data::write_atomic(dir.path(), |_| Ok(())).unwrap_err();
        assert_eq!(exit_code(&anyhow::Error::new(lib).context("writing")), 2);
    }
}
