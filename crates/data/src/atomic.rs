//! Atomic file writes: the whole file or nothing.
use std::io::Write;
use std::path::Path;

use crate::{Error, Result};

/// Writes `path` atomically: `write` fills a temporary file in the same folder, which is
/// flushed and fsynced, then renamed over `path` ([`tempfile::NamedTempFile::persist`]); on
/// Unix the folder is fsynced too. An interrupted run never leaves a truncated file behind,
/// and a failed `write` leaves `path` untouched (the temporary file is removed).
///
/// The folder must exist. The file gets the permissions `File::create` would give it.
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
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
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
    tmp.persist(path).map_err(|e| io(e.error))?;
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        // Makes the rename itself durable; a failure here loses nothing already written.
        let _ = d.sync_all();
    }
    Ok(())
}
