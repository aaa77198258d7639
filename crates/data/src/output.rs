//! The one output discipline of the workspace: every file the project writes goes through
//! here.
//!
//! * [`write_atomic`] / [`write_atomic_with`]: the whole file or nothing (a temporary file in
//!   the same folder, fsynced, renamed over the path, the folder fsynced).
//! * [`check_output`]: what may be written at a path. An existing non-regular file (a FIFO, a
//!   device, a socket, a folder) is refused, and so is a symbolic link unless the caller asks
//!   to follow it ([`Symlinks::Follow`]: the link is resolved and its target written).
//! * [`check_not_input`]: an output that is the same file as one of the inputs is refused
//!   before any work starts (canonical paths, device and inode, and a not-yet-existing
//!   output whose folder and name resolve to an input).
//! * [`open_append`]: journals and resumable rows files, appended to in place after the same
//!   refusals.
//!
//! Refusals are [`OutputError`]s naming the path (and the flags, for the same-file check).
use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::{Error, Result};

pub use crate::error::{FileKind, OutputError};

impl FileKind {
    /// The kind of a non-regular file type, `None` for a regular file (or a link: ask
    /// `symlink_metadata` first).
    fn of(t: std::fs::FileType) -> Option<FileKind> {
        if t.is_file() || t.is_symlink() {
            return None;
        }
        if t.is_dir() {
            return Some(FileKind::Directory);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if t.is_fifo() {
                return Some(FileKind::Fifo);
            }
            if t.is_socket() {
                return Some(FileKind::Socket);
            }
            if t.is_char_device() {
                return Some(FileKind::CharDevice);
            }
            if t.is_block_device() {
                return Some(FileKind::BlockDevice);
            }
        }
        Some(FileKind::Other)
    }
}

/// What to do when an output path is a symbolic link.
///
/// ```
/// use pgraphrag_data::output::Symlinks;
/// assert_eq!(Symlinks::default(), Symlinks::Refuse);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Symlinks {
    /// Refuse it with [`OutputError::Symlink`] (the default): replacing the link by a regular
    /// file would leave its target with the old content.
    #[default]
    Refuse,
    /// Resolve the link (a chain of links too) and write the file it points to.
    Follow,
}

/// How [`write_atomic_with`] writes.
///
/// ```
/// use pgraphrag_data::output::{Symlinks, WriteOptions};
/// let o = WriteOptions::default();
/// assert_eq!((o.symlinks, o.create_dirs), (Symlinks::Refuse, false));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Symbolic links at the path (refused by default).
    pub symlinks: Symlinks,
    /// Create the folder (and its parents) when missing (off by default: the folder must
    /// exist).
    pub create_dirs: bool,
}

impl WriteOptions {
    /// These options, following symbolic links.
    ///
    /// ```
    /// use pgraphrag_data::output::{Symlinks, WriteOptions};
    /// assert_eq!(WriteOptions::default().follow_symlinks().symlinks, Symlinks::Follow);
    /// ```
    pub fn follow_symlinks(mut self) -> Self {
        self.symlinks = Symlinks::Follow;
        self
    }

    /// These options, creating the folder when missing.
    ///
    /// ```
    /// use pgraphrag_data::output::WriteOptions;
    /// assert!(WriteOptions::default().create_dirs().create_dirs);
    /// ```
    pub fn create_dirs(mut self) -> Self {
        self.create_dirs = true;
        self
    }
}

/// The path to write for the output `path`: `path` itself when it is a regular file or does
/// not exist; the link's final target when it is a symbolic link and `symlinks` is
/// [`Symlinks::Follow`]. Refuses ([`OutputError::Symlink`]) a link otherwise, and
/// ([`OutputError::NotRegular`]) an existing folder, FIFO, socket or device. Nothing is
/// opened, so a FIFO does not block. A path that cannot be examined (a file where a folder
/// should be, no permission) is returned as it is: writing it reports the problem.
///
/// ```
/// use pgraphrag_data::output::{check_output, OutputError, Symlinks};
/// # let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("new.json");
/// assert_eq!(check_output(&p, Symlinks::Refuse).unwrap(), p);
/// assert!(matches!(check_output(dir.path(), Symlinks::Refuse),
///                  Err(OutputError::NotRegular { .. })));
/// # #[cfg(unix)] {
/// std::fs::write(dir.path().join("real.json"), "old").unwrap();
/// let link = dir.path().join("link.json");
/// std::os::unix::fs::symlink("real.json", &link).unwrap();
/// assert!(matches!(check_output(&link, Symlinks::Refuse), Err(OutputError::Symlink { .. })));
/// assert_eq!(check_output(&link, Symlinks::Follow).unwrap(), dir.path().join("real.json"));
/// # }
/// ```
pub fn check_output(path: &Path, symlinks: Symlinks) -> Result<PathBuf, OutputError> {
    let mut current = path.to_path_buf();
    // Linux gives up after 40 links (ELOOP); so do we.
    for _ in 0..40 {
        let Ok(md) = std::fs::symlink_metadata(&current) else {
            // Missing (the write creates it), or unreachable (a file where a folder should
            // be, no permission): nothing to refuse, the write itself reports the problem.
            return Ok(current);
        };
        if !md.file_type().is_symlink() {
            return match FileKind::of(md.file_type()) {
                None => Ok(current),
                Some(kind) => Err(OutputError::NotRegular {
                    path: current,
                    kind,
                }),
            };
        }
        let target = std::fs::read_link(&current).map_err(|source| OutputError::Io {
            path: current.clone(),
            source,
        })?;
        if symlinks == Symlinks::Refuse {
            return Err(OutputError::Symlink {
                path: path.to_path_buf(),
                target,
            });
        }
        current = match current.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
    }
    Err(OutputError::LinkLoop {
        path: path.to_path_buf(),
    })
}

/// Refuses an output that is the same file as one of `inputs`, each given as (flag, path):
/// the message names both flags (`--out and --split are the same file (runs/x.json): choose
/// another --out`). Two paths are the same file when their canonical paths are equal, when
/// both exist with the same device and inode (hard links, links through other folders), or
/// when the output does not exist yet but its canonical folder and its name give an input's
/// canonical path. An input that is not a file (a folder, a URL) matches only itself.
///
/// ```
/// use pgraphrag_data::output::{check_not_input, OutputError};
/// # let dir = tempfile::tempdir().unwrap();
/// let split = dir.path().join("split.json");
/// std::fs::write(&split, "[]").unwrap();
/// let same = dir.path().join(".").join("split.json");
/// let e = check_not_input(("--out", &same), &[("--split", &split)]).unwrap_err();
/// assert!(matches!(e, OutputError::SameFile { .. }));
/// assert!(e.to_string().starts_with("--out and --split are the same file"));
/// assert!(check_not_input(("--out", &dir.path().join("o.json")), &[("--split", &split)]).is_ok());
/// ```
pub fn check_not_input(output: (&str, &Path), inputs: &[(&str, &Path)]) -> Result<(), OutputError> {
    let (out_flag, out) = output;
    let out_id = FileId::of(out);
    let out_resolved = resolve(out);
    for &(in_flag, input) in inputs {
        let same_id = matches!((out_id, FileId::of(input)), (Some(a), Some(b)) if a == b);
        let same_path = matches!((&out_resolved, resolve(input)), (Some(a), Some(b)) if *a == b);
        if same_id || same_path {
            return Err(OutputError::SameFile {
                output_flag: out_flag.to_string(),
                input_flag: in_flag.to_string(),
                path: out.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Device and inode of an existing file (links followed).
#[derive(Clone, Copy, PartialEq, Eq)]
struct FileId(u64, u64);

impl FileId {
    #[cfg(unix)]
    fn of(p: &Path) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| FileId(m.dev(), m.ino()))
    }

    #[cfg(not(unix))]
    fn of(_: &Path) -> Option<FileId> {
        None
    }
}

/// The canonical path of `p`; for a path that does not exist, its folder's canonical path
/// joined with its name, else its absolute path with `.` and `..` removed lexically.
fn resolve(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(p) {
        return Some(c);
    }
    if let (Some(dir), Some(name)) = (p.parent(), p.file_name()) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = std::fs::canonicalize(dir) {
            return Some(d.join(name));
        }
    }
    let abs = std::path::absolute(p).ok()?;
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// Opens `path` for appending (created when missing), after [`check_output`]'s refusals: a
/// journal or a resumable rows file, whose finished lines must stay where they are.
///
/// ```
/// use std::io::Write;
/// use pgraphrag_data::output::{open_append, Symlinks};
/// # let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("journal.txt");
/// open_append(&p, Symlinks::Refuse).unwrap().write_all(b"a\n").unwrap();
/// open_append(&p, Symlinks::Refuse).unwrap().write_all(b"b\n").unwrap();
/// assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\nb\n");
/// assert!(open_append(dir.path(), Symlinks::Refuse).is_err());
/// ```
pub fn open_append(path: &Path, symlinks: Symlinks) -> Result<File, OutputError> {
    let target = check_output(path, symlinks)?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&target)
        .map_err(|source| OutputError::Io {
            path: target,
            source,
        })
}

/// Writes `path` atomically with the default [`WriteOptions`]: links and non-regular files
/// refused, the folder must exist. See [`write_atomic_with`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("out.txt");
/// pgraphrag_data::write_atomic(&p, |w| w.write_all(b"hello")).unwrap();
/// assert_eq!(std::fs::read_to_string(&p).unwrap(), "hello");
/// assert!(pgraphrag_data::write_atomic(&p, |_| Err(std::io::Error::other("no"))).is_err());
/// assert_eq!(std::fs::read_to_string(&p).unwrap(), "hello");
/// ```
pub fn write_atomic<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    write_atomic_with(path, WriteOptions::default(), write)
}

/// Writes `path` atomically: after [`check_output`] (the path to write is the link's target
/// under [`Symlinks::Follow`]), `write` fills a temporary file in the same folder
/// (`.NAME.XXXXXX.tmp`), which is flushed and fsynced, then renamed over the path; on Unix
/// the folder is fsynced too. A reader sees the old file or the new one, never part of one;
/// an interrupted run leaves the old file, and a failed `write` leaves it untouched (the
/// temporary file is removed). The file gets the permissions `File::create` would give it.
///
/// Errors: [`Error::Output`] for a refusal, [`Error::Io`] for a failed write.
///
/// ```
/// use pgraphrag_data::output::{write_atomic_with, WriteOptions};
/// # let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("sub/results.md");
/// write_atomic_with(&p, WriteOptions::default().create_dirs(), |w| w.write_all(b"# r\n")).unwrap();
/// assert_eq!(std::fs::read(&p).unwrap(), b"# r\n");
/// assert!(matches!(write_atomic_with(dir.path(), WriteOptions::default(), |_| Ok(())),
///                  Err(pgraphrag_data::Error::Output(_))));
/// ```
pub fn write_atomic_with<F>(path: &Path, options: WriteOptions, write: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let target = check_output(path, options.symlinks)?;
    let io = |source| Error::Io {
        path: target.clone(),
        source,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if options.create_dirs {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // As File::create: 0o666 less the umask (tempfile's default is 0o600).
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(io)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        write(&mut w).map_err(io)?;
        w.flush().map_err(io)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    let ours = tmp.path().to_path_buf();
    tmp.persist(&target).map_err(|e| io(e.error))?;
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        // Makes the rename itself durable; a failure here loses nothing already written.
        let _ = d.sync_all();
    }
    remove_stale_temps(dir, &prefix, &ours);
    Ok(())
}

/// Removes what earlier writes of the same file left behind when they were killed before their
/// rename: regular files named `{prefix}XXXXXX.tmp` (six letters or digits, the pattern of the
/// temporary files above) in `dir`, other than `ours`. Best effort: a file that cannot be
/// removed stays, and nothing else in the folder is touched.
fn remove_stale_temps(dir: &Path, prefix: &str, ours: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let stale = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .is_some_and(|r| r.len() == 6 && r.bytes().all(|b| b.is_ascii_alphanumeric()));
        let path = entry.path();
        if stale && path != ours && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}
