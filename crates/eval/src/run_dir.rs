//! The files of a run: the results folder whose files are written whole or not at all
//! ([`RunDir`]), the resumable rows file with the settings manifest beside it ([`RowsFile`]),
//! and the journal of finished work ([`Journal`]).
//!
//! Every whole file goes through the workspace's one atomic writer
//! ([`pgraphrag_data::output::write_atomic_with`]); the rows file and the journal are appended
//! to in place (after [`pgraphrag_data::output::open_append`]'s refusals), one line per unit,
//! so a kill loses at most the line being written, and a rerun resumes.
//!
//! ```
//! use pgraphrag_eval::{RowsFile, RunDir};
//! # let dir = tempfile::tempdir().unwrap();
//! let rows = dir.path().join("rows.jsonl");
//! let mut run = RowsFile::<u32>::resume(&rows, &"seed 1".to_string()).unwrap();
//! for r in 0..3 {
//!     run.file.append(&r).unwrap();
//! }
//! // A rerun with the same settings resumes with the rows written; other settings are refused.
//! assert_eq!(RowsFile::<u32>::resume(&rows, &"seed 1".to_string()).unwrap().rows, [0, 1, 2]);
//! assert!(RowsFile::<u32>::resume(&rows, &"seed 2".to_string()).is_err());
//! RunDir::new(dir.path().join("results")).write("results.md", b"| a |\n").unwrap();
//! ```
use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use pgraphrag_data::output::Symlinks;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::output::write_file;
use crate::{Error, Result, ResultsTable};

/// A run's results folder: each file written atomically (temporary file, fsync, rename; the
/// folder created when missing), so a reader sees the old file or the new one, never a part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The files [`RunDir::write_results`] writes, in its order.
    pub const RESULTS: [&'static str; 3] = ["results.md", "results.csv", "results.svg"];

    /// The results folder `root` (nothing is created until a file is written).
    ///
    /// ```
    /// let d = pgraphrag_eval::RunDir::new("runs/x");
    /// assert_eq!(d.join("results.md"), std::path::Path::new("runs/x/results.md"));
    /// ```
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    /// The folder.
    ///
    /// ```
    /// assert_eq!(pgraphrag_eval::RunDir::new("out").path(), std::path::Path::new("out"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The path of the file `name` (relative to the folder).
    ///
    /// ```
    /// let d = pgraphrag_eval::RunDir::new("out");
    /// assert_eq!(d.join("a/b.json"), std::path::Path::new("out/a/b.json"));
    /// ```
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.root.join(name)
    }

    /// Writes the file `name` atomically, creating its folders; an output that is a link, a
    /// folder or a special file is refused ([`Error::Output`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let d = pgraphrag_eval::RunDir::new(dir.path().join("run"));
    /// d.write("predictions/a.jsonl", b"{}\n").unwrap();
    /// assert_eq!(std::fs::read(d.join("predictions/a.jsonl")).unwrap(), b"{}\n");
    /// std::fs::create_dir(d.join("taken")).unwrap();
    /// assert!(matches!(d.write("taken", b""), Err(pgraphrag_eval::Error::Output(_))));
    /// ```
    pub fn write(&self, name: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
        write_file(&self.join(name), bytes)
    }

    /// Writes `value` as pretty JSON with a final newline into the file `name`, atomically.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let d = pgraphrag_eval::RunDir::new(dir.path());
    /// d.write_json("results.json", &serde_json::json!({ "acc": 0.5 })).unwrap();
    /// let text = std::fs::read_to_string(d.join("results.json")).unwrap();
    /// assert_eq!(text, "{\n  \"acc\": 0.5\n}\n");
    /// ```
    pub fn write_json<T: Serialize + ?Sized>(
        &self,
        name: impl AsRef<Path>,
        value: &T,
    ) -> Result<()> {
        let name = name.as_ref();
        let text = serde_json::to_string_pretty(value).map_err(|e| {
            Error::InvalidInput(format!("{}: not writable as JSON: {e}", name.display()))
        })?;
        self.write(name, (text + "\n").as_bytes())
    }

    /// Writes a results table's three files ([`RunDir::RESULTS`]): `results.md` holding
    /// `markdown` (the table's Markdown with whatever notes the run adds), `results.csv`
    /// ([`ResultsTable::to_csv`]) and `results.svg` ([`ResultsTable::to_svg`]).
    ///
    /// ```
    /// use pgraphrag_eval::{ResultRow, ResultsTable, RunDir};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let row = ResultRow { config: "both_k1".into(), n: 2, values: vec![0.5], unparsed: 0 };
    /// let table = ResultsTable { title: "t".into(), columns: vec!["MAE".into()], rows: vec![row] };
    /// let d = RunDir::new(dir.path());
    /// d.write_results(&table.to_markdown(), &table).unwrap();
    /// assert_eq!(std::fs::read_to_string(d.join("results.csv")).unwrap(), table.to_csv());
    /// assert!(d.join("results.svg").is_file() && d.join("results.md").is_file());
    /// ```
    pub fn write_results(&self, markdown: &str, table: &ResultsTable) -> Result<()> {
        let [md, csv, svg] = Self::RESULTS;
        self.write(md, markdown.as_bytes())?;
        self.write(csv, table.to_csv().as_bytes())?;
        self.write(svg, table.to_svg().as_bytes())
    }
}

/// The settings manifest of the resumable file `file`: `FILE.config.json` beside it.
///
/// ```
/// let p = pgraphrag_eval::manifest_path(std::path::Path::new("runs/rows.jsonl"));
/// assert_eq!(p, std::path::Path::new("runs/rows.jsonl.config.json"));
/// ```
pub fn manifest_path(file: &Path) -> PathBuf {
    let mut p = file.as_os_str().to_owned();
    p.push(".config.json");
    p.into()
}

/// Checks that the resumable file `file` was made with `settings`: when its manifest
/// ([`manifest_path`]) exists it must hold equal settings ([`Error::OtherSettings`], or
/// [`Error::Manifest`] when it holds no settings of this type); when it does not, `settings`
/// are written there (pretty JSON and a newline, atomically).
///
/// ```
/// use pgraphrag_eval::{Error, check_settings};
/// # let dir = tempfile::tempdir().unwrap();
/// let rows = dir.path().join("rows.jsonl");
/// check_settings(&rows, &vec![1, 2]).unwrap();
/// check_settings(&rows, &vec![1, 2]).unwrap();
/// let e = check_settings(&rows, &vec![1, 3]).unwrap_err();
/// assert!(matches!(e, Error::OtherSettings { .. }), "{e}");
/// assert!(e.to_string().ends_with("rows.jsonl was made with other settings ([1, 2]; now [1, 3])"));
/// assert!(matches!(check_settings(&rows, &"x".to_string()), Err(Error::Manifest { .. })));
/// ```
pub fn check_settings<C>(file: &Path, settings: &C) -> Result<()>
where
    C: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let path = manifest_path(file);
    if !path.exists() {
        let text = serde_json::to_string_pretty(settings)
            .map_err(|e| Error::InvalidInput(format!("settings not writable as JSON: {e}")))?;
        return write_file(&path, (text + "\n").as_bytes());
    }
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    let found: C = serde_json::from_str(&text).map_err(|e| Error::Manifest {
        path: path.clone(),
        problem: e.to_string(),
    })?;
    if &found != settings {
        return Err(Error::OtherSettings {
            path: file.to_path_buf(),
            found: format!("{found:?}"),
            expected: format!("{settings:?}"),
        });
    }
    Ok(())
}

/// A resumable rows file: JSON lines, one row per finished unit, appended and flushed one at
/// a time. Opened by [`RowsFile::resume`] (or [`RowsFile::open`]), which hands back the rows
/// already there.
#[derive(Debug)]
pub struct RowsFile<R> {
    path: PathBuf,
    file: File,
    rows: PhantomData<fn(&R)>,
}

/// A rows file opened for resuming, and what it already held.
#[derive(Debug)]
pub struct Resumed<R> {
    /// The file, to append the new rows to.
    pub file: RowsFile<R>,
    /// The rows already written, in file order.
    pub rows: Vec<R>,
    /// Whether a torn last line (an interrupted write: no newline at the end) was cut off.
    pub torn: bool,
}

impl<R: Serialize + DeserializeOwned> RowsFile<R> {
    /// [`check_settings`], then [`RowsFile::open`]: a rows file of a run made with `settings`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rows = dir.path().join("rows.jsonl");
    /// let run = pgraphrag_eval::RowsFile::<String>::resume(&rows, &1u8).unwrap();
    /// assert!(run.rows.is_empty() && !run.torn);
    /// assert!(pgraphrag_eval::manifest_path(&rows).is_file());
    /// ```
    pub fn resume<C>(path: &Path, settings: &C) -> Result<Resumed<R>>
    where
        C: Serialize + DeserializeOwned + PartialEq + Debug,
    {
        check_settings(path, settings)?;
        RowsFile::open(path)
    }

    /// Reads the rows in `path` (none when it does not exist), cuts a torn last line off in
    /// place (no rewrite that a kill could interrupt; the next row starts on its own line),
    /// and opens the file for appending (created when missing; a link, a folder or a special
    /// file is refused, [`Error::Output`]). A whole line that is not a row is
    /// [`Error::RowsLine`] naming it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("rows.jsonl");
    /// std::fs::write(&p, "1\n2\n3").unwrap(); // the write of row 3 was killed
    /// let run = pgraphrag_eval::RowsFile::<u32>::open(&p).unwrap();
    /// assert_eq!((run.rows, run.torn), (vec![1, 2], true));
    /// assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\n2\n");
    /// ```
    pub fn open(path: &Path) -> Result<Resumed<R>> {
        let (rows, torn) = read_rows(path)?;
        let file = pgraphrag_data::output::open_append(path, Symlinks::Refuse)?;
        Ok(Resumed {
            file: RowsFile {
                path: path.to_path_buf(),
                file,
                rows: PhantomData,
            },
            rows,
            torn,
        })
    }

    /// Appends `row` as one JSON line and flushes it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("rows.jsonl");
    /// let mut run = pgraphrag_eval::RowsFile::<(u32, String)>::open(&p).unwrap();
    /// run.file.append(&(7, "a".into())).unwrap();
    /// assert_eq!(std::fs::read_to_string(&p).unwrap(), "[7,\"a\"]\n");
    /// ```
    pub fn append(&mut self, row: &R) -> Result<()> {
        let line = serde_json::to_string(row).map_err(|e| {
            Error::InvalidInput(format!(
                "{}: a row not writable as JSON: {e}",
                self.path.display()
            ))
        })?;
        writeln!(self.file, "{line}")
            .and_then(|_| self.file.flush())
            .map_err(|source| Error::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// The file.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("rows.jsonl");
    /// assert_eq!(pgraphrag_eval::RowsFile::<u8>::open(&p).unwrap().file.path(), p);
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The rows in `path` and whether a torn tail was cut off.
fn read_rows<R: DeserializeOwned>(path: &Path) -> Result<(Vec<R>, bool)> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
        Err(e) => return Err(io(e)),
    };
    // Everything up to the last newline is whole lines; what follows it is a torn write.
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut rows = Vec::new();
    for (i, line) in bytes[..whole].split_inclusive(|&b| b == b'\n').enumerate() {
        let bad = |problem: String| Error::RowsLine {
            path: path.to_path_buf(),
            line: i + 1,
            problem,
        };
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = std::str::from_utf8(line).map_err(|_| bad("not UTF-8".into()))?;
        rows.push(serde_json::from_str(text).map_err(|e| bad(e.to_string()))?);
    }
    let torn = whole < bytes.len();
    if torn {
        OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(whole as u64))
            .map_err(io)?;
    }
    Ok((rows, torn))
}

/// The journal of finished work: one line per unit committed (`stored <key>`), appended in
/// one write each, so that a line is whole or absent after a crash; a long run is followed
/// with `tail -f`.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens (appending, creating) the journal `path`; a link, a folder or a special file is
    /// refused ([`Error::Output`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let p = dir.path().join("journal.log");
    /// let j = pgraphrag_eval::Journal::open(&p).unwrap();
    /// j.stored("u1").unwrap();
    /// assert_eq!(std::fs::read_to_string(&p).unwrap(), "stored u1\n");
    /// assert!(pgraphrag_eval::Journal::open(dir.path()).is_err());
    /// ```
    pub fn open(path: &Path) -> Result<Journal> {
        Ok(Journal {
            path: path.to_path_buf(),
            file: pgraphrag_data::output::open_append(path, Symlinks::Refuse)?,
        })
    }

    /// Appends the line `stored {key}`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let p = dir.path().join("j.log");
    /// let j = pgraphrag_eval::Journal::open(&p).unwrap();
    /// j.stored("a").unwrap();
    /// j.stored("b").unwrap();
    /// assert_eq!(std::fs::read_to_string(&p).unwrap(), "stored a\nstored b\n");
    /// ```
    pub fn stored(&self, key: &str) -> Result<()> {
        (&self.file)
            .write_all(format!("stored {key}\n").as_bytes())
            .map_err(|source| Error::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// The journal as the callback of a job's "unit stored" hook
    /// ([`crate::CachedGenerator::with_on_stored`], the summary job's `on_stored`): each key
    /// journalled with [`Journal::stored`]. A line that cannot be written is dropped: the
    /// journal follows the work, it is not the work (the cache or store holds it).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let p = dir.path().join("j.log");
    /// let hook = pgraphrag_eval::Journal::open(&p).unwrap().into_hook();
    /// hook("k1");
    /// assert_eq!(std::fs::read_to_string(&p).unwrap(), "stored k1\n");
    /// ```
    pub fn into_hook(self) -> impl Fn(&str) + Send + Sync + 'static {
        move |key| {
            let _ = self.stored(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"row":0,"method":"none","scores":[0.5,0.1]}"#;

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Row {
        row: usize,
        method: String,
        scores: Vec<f32>,
    }

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Settings {
        model: String,
        seed: u64,
    }

    fn settings(seed: u64) -> Settings {
        Settings {
            model: "m".into(),
            seed,
        }
    }

    #[test]
    fn a_torn_last_line_is_cut_off_in_place_and_the_next_row_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        // Two whole rows, then a write killed half way (even one that parses is not whole
        // without its newline: the next row would be appended onto it).
        std::fs::write(&path, format!("{ROW}\n{ROW}\n{ROW}")).unwrap();
        let mut run = RowsFile::<Row>::open(&path).unwrap();
        assert_eq!((run.rows.len(), run.torn), (2, true));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{ROW}\n{ROW}\n")
        );
        let row = Row {
            row: 1,
            method: "kg".into(),
            scores: vec![0.25],
        };
        run.file.append(&row).unwrap();
        drop(run);
        let run = RowsFile::<Row>::open(&path).unwrap();
        assert_eq!((run.rows.len(), run.torn), (3, false));
        assert_eq!(run.rows[2], row);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with("{\"row\":1,\"method\":\"kg\",\"scores\":[0.25]}\n"),
            "{text}"
        );
    }

    #[test]
    fn a_bad_whole_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        std::fs::write(&path, format!("{ROW}\nnot json\n")).unwrap();
        let e = RowsFile::<Row>::open(&path).unwrap_err();
        assert!(matches!(e, Error::RowsLine { line: 2, .. }), "{e}");
        assert!(e.to_string().contains("rows.jsonl:2: not a row"), "{e}");
        std::fs::write(&path, b"\xff\n").unwrap();
        let e = RowsFile::<Row>::open(&path).unwrap_err();
        assert!(
            e.to_string()
                .contains("rows.jsonl:1: not a row of this run (not UTF-8)"),
            "{e}"
        );
        // Nothing was cut or written.
        assert_eq!(std::fs::read(&path).unwrap(), b"\xff\n");
    }

    #[test]
    fn a_mismatching_manifest_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        RowsFile::<Row>::resume(&path, &settings(1)).unwrap();
        let manifest = manifest_path(&path);
        let written = std::fs::read_to_string(&manifest).unwrap();
        assert_eq!(written, "{\n  \"model\": \"m\",\n  \"seed\": 1\n}\n");
        let e = RowsFile::<Row>::resume(&path, &settings(2)).unwrap_err();
        assert!(matches!(e, Error::OtherSettings { .. }), "{e}");
        assert!(
            e.to_string().contains("seed: 1") && e.to_string().contains("seed: 2"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&manifest).unwrap(), written);
        std::fs::write(&manifest, "not json").unwrap();
        let e = RowsFile::<Row>::resume(&path, &settings(1)).unwrap_err();
        assert!(matches!(e, Error::Manifest { .. }), "{e}");
    }

    #[test]
    fn a_folder_as_rows_file_or_journal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            RowsFile::<Row>::open(dir.path()),
            Err(Error::Io { .. } | Error::Output(_))
        ));
        assert!(matches!(Journal::open(dir.path()), Err(Error::Output(_))));
    }
}
