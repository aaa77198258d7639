//! One SQLite setup for every pgraphrag store.
//!
//! [`open`] creates the parent folders, opens the file, sets the busy timeout, WAL journal
//! mode and the `synchronous` level, then checks the file's identity before creating the
//! tables:
//!
//! * `PRAGMA application_id` names the kind of store ([`Schema::application_id`]); a file
//!   of another kind (say, an embedding cache passed as a generation cache) is refused with
//!   [`Error::WrongKind`].
//! * `PRAGMA user_version` is the schema version ([`Schema::version`]); a file written by
//!   another version is refused with [`Error::SchemaVersion`].
//!
//! * The file must be whole: an existing file that is not SQLite, is cut short (checked
//!   against the page size and page count of its header) or fails `PRAGMA quick_check`
//!   (about 0.1 s per 100 MB) is refused with [`Error::Damaged`] before anything is read
//!   from it or written to it.
//!
//! Files written before these stamps existed have both at 0: they are adopted (the schema's
//! `CREATE TABLE IF NOT EXISTS` statements leave their tables as they are) and stamped.
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

/// Errors of opening a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The folder of the file could not be created.
    #[error("{kind} {path}: cannot create its folder")]
    Io {
        /// What store (e.g. `generation cache`).
        kind: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite failed while opening or setting up the file.
    #[error(
        "{kind} {path} cannot be opened (is it a {kind} written by pgraphrag? check permissions and free disk space)"
    )]
    Sqlite {
        /// What store.
        kind: &'static str,
        /// The file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// The file is not a SQLite database, or is one that is damaged: cut short (not a whole
    /// number of pages, fewer pages than its header counts), or failing SQLite's
    /// `PRAGMA quick_check`.
    #[error(
        "{kind} {path} is damaged: {problem}; restore it from a copy, or delete it to start afresh"
    )]
    Damaged {
        /// What store.
        kind: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The file is a SQLite database of another kind.
    #[error(
        "{path}: not a {kind} (its application id is {found:#010x}, a {kind} has {expected:#010x}); pass the right file"
    )]
    WrongKind {
        /// What store was expected.
        kind: &'static str,
        /// The file.
        path: PathBuf,
        /// The file's `application_id`.
        found: i32,
        /// The expected `application_id`.
        expected: i32,
    },
    /// The file was written with another schema version.
    #[error(
        "{kind} {path}: written with schema version {found}, this build reads version {expected}; delete the file to start afresh or use the matching pgraphrag version"
    )]
    SchemaVersion {
        /// What store.
        kind: &'static str,
        /// The file.
        path: PathBuf,
        /// The file's `user_version`.
        found: i32,
        /// The version this build reads and writes.
        expected: i32,
    },
    /// A statement on an open store failed.
    #[error(
        "{kind} {path}: {what} failed (check permissions and free disk space, or delete the file to start afresh)"
    )]
    Query {
        /// What store.
        kind: &'static str,
        /// The file.
        path: PathBuf,
        /// What was being done (e.g. `storing a generation`).
        what: String,
        /// The SQLite error.
        #[source]
        source: Box<rusqlite::Error>,
    },
    /// A PostgreSQL URL was given for a store that has no PostgreSQL table, or to a build
    /// without the feature `postgres`.
    #[error(
        "the {kind} cannot live in PostgreSQL here (a build with the feature `postgres` keeps the generation cache, the embedding cache and the summary store there); pass a file path"
    )]
    NoPostgres {
        /// What store.
        kind: &'static str,
    },
    /// The PostgreSQL backend of a store failed (feature `postgres`): the error names the URL,
    /// the store and what to fix.
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(Box<crate::postgres::Error>),
}

#[cfg(feature = "postgres")]
impl From<crate::postgres::Error> for Error {
    fn from(e: crate::postgres::Error) -> Self {
        Error::Postgres(Box::new(e))
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a store's file holds: its kind, identity stamp, schema version and tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schema<'a> {
    /// A human name of the store, used in errors (e.g. `generation cache`).
    pub kind: &'static str,
    /// The `PRAGMA application_id` stamped into the file (non-zero, one per kind of store).
    pub application_id: i32,
    /// The schema version (`PRAGMA user_version`, at least 1).
    pub version: i32,
    /// The statements that create the tables (`CREATE TABLE IF NOT EXISTS ...`), run on
    /// every open.
    pub ddl: &'a str,
}

/// SQLite's `synchronous` level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// `NORMAL`: in WAL mode a crash may lose the last transactions but never corrupts.
    Normal,
    /// `FULL`: every committed transaction survives a crash or power loss. The default.
    #[default]
    Full,
}

/// How a store file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The `synchronous` level.
    pub synchronous: Synchronous,
    /// How long a writer waits for another process's lock.
    pub busy_timeout: Duration,
}

impl Options {
    /// `synchronous = FULL`, 30 s busy timeout: every committed transaction survives a crash
    /// or a power cut (the default; a `const`, for stores declared as constants).
    pub const DURABLE: Options = Options {
        synchronous: Synchronous::Full,
        busy_timeout: Duration::from_secs(30),
    };
}

impl Default for Options {
    /// [`Options::DURABLE`].
    fn default() -> Self {
        Options::DURABLE
    }
}

/// Opens (creating if needed, with its parent folders) the store file at `path`: busy
/// timeout, WAL, `synchronous`, integrity, kind and version checks, then `schema.ddl`. A
/// damaged file is [`Error::Damaged`] and is left as it was.
///
/// ```
/// use pgraphrag_store::sqlite::{Error, Options, Schema, open};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("sub/store.sqlite");
/// let v1 = Schema { kind: "store", application_id: 7, version: 1,
///                   ddl: "CREATE TABLE IF NOT EXISTS t (x INTEGER);" };
/// drop(open(&path, &v1, &Options::default()).unwrap());
/// let v2 = Schema { version: 2, ..v1 };
/// assert!(matches!(open(&path, &v2, &Options::default()), Err(Error::SchemaVersion { found: 1, expected: 2, .. })));
/// let other = Schema { application_id: 8, ..v1 };
/// assert!(matches!(open(&path, &other, &Options::default()), Err(Error::WrongKind { .. })));
/// ```
pub fn open(path: &Path, schema: &Schema<'_>, options: &Options) -> Result<Connection> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            kind: schema.kind,
            path: path.to_path_buf(),
            source,
        })?;
    }
    check_header(path, schema.kind)?;
    let conn = Connection::open(path).map_err(sqlite_err(schema, path))?;
    setup(conn, path, schema, options, true)
}

/// The first 16 bytes of every SQLite database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Checks what can be checked of an existing file without SQLite: its header's magic and page
/// size, and that its length is a whole number of pages, at least as many as the header
/// counts (when that count is valid: the change counter at offset 24 equals the
/// version-valid-for number at offset 92) unless a `-wal` file is beside it. A missing or
/// empty file is a new store.
fn check_header(path: &Path, kind: &'static str) -> Result<()> {
    use std::io::Read;
    let damaged = |problem: String| Error::Damaged {
        kind,
        path: path.to_path_buf(),
        problem,
    };
    let Ok(mut file) = std::fs::File::open(path) else {
        // Missing (it is created) or unreadable (SQLite's open says why).
        return Ok(());
    };
    let len = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        _ => return Ok(()),
    };
    if len == 0 {
        return Ok(());
    }
    let mut h = [0u8; 100];
    if len < h.len() as u64 {
        return Err(damaged(format!(
            "{len} bytes, shorter than a SQLite header (100 bytes)"
        )));
    }
    file.read_exact(&mut h).map_err(|source| Error::Io {
        kind,
        path: path.to_path_buf(),
        source,
    })?;
    if &h[..16] != MAGIC {
        return Err(damaged("not a SQLite database (no SQLite header)".into()));
    }
    let page = match u16::from_be_bytes([h[16], h[17]]) {
        1 => 65536u64,
        p if p >= 512 && p.is_power_of_two() => u64::from(p),
        p => return Err(damaged(format!("the header's page size {p} is not valid"))),
    };
    // With a `-wal` file beside it another process may have the store open, and a checkpoint
    // may be growing the file page by page: its length is only checked when it is at rest
    // (`quick_check` reads every page either way).
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if Path::new(&wal).exists() {
        return Ok(());
    }
    if !len.is_multiple_of(page) {
        return Err(damaged(format!(
            "truncated: {len} bytes is not a whole number of {page}-byte pages"
        )));
    }
    let be32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    let counted = u64::from(be32(28));
    if counted != 0 && be32(24) == be32(92) && counted * page > len {
        return Err(damaged(format!(
            "truncated: the header counts {counted} pages of {page} bytes, the file holds {}",
            len / page
        )));
    }
    Ok(())
}

/// `PRAGMA quick_check`: SQLite's walk over every page of every table and index (no
/// comparison of indexes with their tables, which `integrity_check` adds at far more cost).
fn quick_check(
    conn: &Connection,
    path: &Path,
    kind: &'static str,
    err: &dyn Fn(rusqlite::Error) -> Error,
) -> Result<()> {
    let first: String = conn
        .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
        .map_err(err)?;
    if first == "ok" {
        Ok(())
    } else {
        Err(Error::Damaged {
            kind,
            path: path.to_path_buf(),
            problem: format!("SQLite's quick_check found: {first}"),
        })
    }
}

/// A store in memory only (no WAL; same checks and tables), for tests and one-off runs.
pub fn open_in_memory(schema: &Schema<'_>, options: &Options) -> Result<Connection> {
    let path = Path::new(":memory:");
    let conn = Connection::open_in_memory().map_err(sqlite_err(schema, path))?;
    setup(conn, path, schema, options, false)
}

/// The error of a failed SQLite call on the file: [`Error::Damaged`] when SQLite says the file
/// is not a database or is malformed, [`Error::Sqlite`] otherwise.
fn sqlite_err<'p>(schema: &Schema<'_>, path: &'p Path) -> impl Fn(rusqlite::Error) -> Error + 'p {
    let kind = schema.kind;
    move |source| {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match source.sqlite_error_code() {
            Some(code @ (NotADatabase | DatabaseCorrupt)) => Error::Damaged {
                kind,
                path: path.to_path_buf(),
                problem: match code {
                    NotADatabase => "not a SQLite database".into(),
                    _ => format!("SQLite reports it malformed ({source})"),
                },
            },
            _ => Error::Sqlite {
                kind,
                path: path.to_path_buf(),
                source,
            },
        }
    }
}

fn setup(
    conn: Connection,
    path: &Path,
    schema: &Schema<'_>,
    options: &Options,
    wal: bool,
) -> Result<Connection> {
    let err = sqlite_err(schema, path);
    conn.busy_timeout(options.busy_timeout).map_err(&err)?;
    if wal {
        // WAL: readers never block the writer.
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
            .map_err(&err)?;
    }
    let sync = match options.synchronous {
        Synchronous::Normal => "NORMAL",
        Synchronous::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", sync)
        .map_err(&err)?;
    if wal {
        quick_check(&conn, path, schema.kind, &err)?;
    }
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(&err)?;
    let version: i32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(&err)?;
    if app != 0 && app != schema.application_id {
        return Err(Error::WrongKind {
            kind: schema.kind,
            path: path.to_path_buf(),
            found: app,
            expected: schema.application_id,
        });
    }
    if version != 0 && version != schema.version {
        return Err(Error::SchemaVersion {
            kind: schema.kind,
            path: path.to_path_buf(),
            found: version,
            expected: schema.version,
        });
    }
    conn.execute_batch(schema.ddl).map_err(&err)?;
    if app == 0 || version == 0 {
        // A new file, or one written before the stamps existed: stamp it.
        conn.pragma_update(None, "application_id", schema.application_id)
            .map_err(&err)?;
        conn.pragma_update(None, "user_version", schema.version)
            .map_err(&err)?;
    }
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Schema<'static> = Schema {
        kind: "test store",
        application_id: 0x7067_0001,
        version: 1,
        ddl: "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT NOT NULL);",
    };

    #[test]
    fn legacy_files_are_adopted_and_keep_their_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        {
            // As the caches wrote files before the stamps: no application id, version 0.
            let c = Connection::open(&path).unwrap();
            c.execute_batch(S.ddl).unwrap();
            c.execute("INSERT INTO t VALUES ('a', 'b')", []).unwrap();
        }
        let c = open(&path, &S, &Options::default()).unwrap();
        let v: String = c.query_row("SELECT v FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(v, "b");
        let app: i32 = c
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(app, S.application_id);
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn errors_name_the_file_and_both_versions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        drop(open(&path, &S, &Options::default()).unwrap());
        let e = open(&path, &Schema { version: 3, ..S }, &Options::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("s.sqlite") && e.contains("version 1") && e.contains("version 3"),
            "{e}"
        );
        let e = open(
            &path,
            &Schema {
                application_id: 5,
                ..S
            },
            &Options::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("not a test store"), "{e}");
    }

    #[test]
    fn not_a_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.sqlite");
        std::fs::write(
            &path,
            "this is not sqlite, just some text that is long enough",
        )
        .unwrap();
        let e = open(&path, &S, &Options::default()).unwrap_err();
        assert!(matches!(e, Error::Damaged { .. }), "{e}");
        assert!(e.to_string().contains("x.sqlite"), "{e}");
    }

    /// A store of `rows` rows, closed (its WAL checkpointed into the file); its bytes.
    fn written(path: &Path, rows: usize) -> Vec<u8> {
        let c = open(path, &S, &Options::default()).unwrap();
        for i in 0..rows {
            c.execute(
                "INSERT INTO t VALUES (?1, ?2)",
                (i.to_string(), "v".repeat(300)),
            )
            .unwrap();
        }
        drop(c);
        std::fs::read(path).unwrap()
    }

    #[test]
    fn damaged_files_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = written(&dir.path().join("good.sqlite"), 500);
        assert!(bytes.len() > 16 * 4096, "{}", bytes.len());
        let damaged = |name: &str, b: &[u8], want: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, b).unwrap();
            let e = open(&p, &S, &Options::default()).unwrap_err();
            assert!(matches!(e, Error::Damaged { .. }), "{name}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(name) && msg.contains(want), "{name}: {msg}");
            // Refused before anything was written: the file is as it was.
            assert_eq!(std::fs::read(&p).unwrap(), b, "{name} changed");
        };
        damaged("cut1.sqlite", &bytes[..bytes.len() - 1], "truncated");
        damaged(
            "half.sqlite",
            &bytes[..bytes.len() / 2 / 4096 * 4096],
            "truncated",
        );
        damaged(
            "header.sqlite",
            &bytes[..60],
            "shorter than a SQLite header",
        );
        let mut b = bytes.clone();
        b[0] = b'X';
        damaged("magic.sqlite", &b, "not a SQLite database");
        // A page of the table's b-tree overwritten with noise.
        let mut b = bytes.clone();
        for (i, x) in b[3 * 4096..4 * 4096].iter_mut().enumerate() {
            *x = (i * 131 % 251) as u8;
        }
        damaged("noise.sqlite", &b, "is damaged");
    }
}
