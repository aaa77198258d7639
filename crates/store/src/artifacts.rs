//! [`Artifacts`]: the one backend of the four artifact stores (the generation cache, the
//! embedding cache, the summary store and the K-RagRec score cache): a SQLite file opened
//! through [`crate::sqlite`], an in-memory SQLite database, or (feature `postgres`) a
//! PostgreSQL table opened through `postgres::ArtifactTable`. Each store declares its tables
//! once ([`Artifact`]) and writes its statements against [`Conn`]; opening, locking, the
//! location shown in messages and the errors of a failed statement live here.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

use crate::sqlite::{self, Error, Options, Result, Schema};

/// What an artifact store keeps: its SQLite schema (whose `kind` names the store in every
/// message), how its file is opened, and its PostgreSQL table (`None`: SQLite only).
///
/// ```
/// use pgraphrag_store::artifacts::Artifact;
/// use pgraphrag_store::sqlite::{Options, Schema};
/// const NOTES: Artifact<'static> = Artifact {
///     sqlite: Schema { kind: "notes", application_id: 0x4e4f_5445, version: 1,
///                      ddl: "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, body TEXT NOT NULL);" },
///     options: Options::DURABLE,
///     postgres: Some("CREATE TABLE IF NOT EXISTS pgraphrag_notes (key text PRIMARY KEY, body text NOT NULL)"),
/// };
/// assert_eq!(NOTES.kind(), "notes");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Artifact<'a> {
    /// The SQLite file's kind, identity stamp, schema version and tables.
    pub sqlite: Schema<'a>,
    /// How the file is opened (durability, busy timeout).
    pub options: Options,
    /// `CREATE TABLE IF NOT EXISTS ...` of the PostgreSQL table, recorded under the SQLite
    /// schema's kind and version; `None` for a store that lives in SQLite only.
    pub postgres: Option<&'a str>,
}

impl Artifact<'_> {
    /// The store's kind (e.g. `generation cache`).
    pub fn kind(&self) -> &'static str {
        self.sqlite.kind
    }
}

/// An open artifact store: one connection behind a lock, and where it lives.
///
/// ```
/// use pgraphrag_store::artifacts::{Artifact, Artifacts, Conn};
/// use pgraphrag_store::sqlite::Schema;
/// let notes = Artifact {
///     sqlite: Schema { kind: "notes", application_id: 0x4e4f_5445, version: 1,
///                      ddl: "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, body TEXT NOT NULL);" },
///     options: Default::default(),
///     postgres: None,
/// };
/// let store = Artifacts::in_memory(&notes).unwrap();
/// assert_eq!(store.location(), std::path::Path::new(":memory:"));
/// let n: i64 = match store.conn() {
///     Conn::Sqlite(c) => c.query_row("SELECT COUNT(*) FROM notes", [], |r| r.get(0))
///         .map_err(store.failed("counting notes")).unwrap(),
///     #[allow(unreachable_patterns)]
///     _ => unreachable!(),
/// };
/// assert_eq!(n, 0);
/// ```
pub struct Artifacts {
    backend: Backend,
    location: PathBuf,
    kind: &'static str,
}

impl std::fmt::Debug for Artifacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Artifacts")
            .field("kind", &self.kind)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

enum Backend {
    Sqlite(Mutex<Connection>),
    #[cfg(feature = "postgres")]
    Postgres(Box<crate::postgres::ArtifactTable>),
}

/// The connection of an [`Artifacts`], for one statement or transaction: the SQLite
/// connection (locked for as long as this lives) or the PostgreSQL table.
pub enum Conn<'a> {
    /// A SQLite file or in-memory database.
    Sqlite(MutexGuard<'a, Connection>),
    /// A PostgreSQL table (feature `postgres`); its statements run through
    /// `ArtifactTable::run`, which names the store and URL in its errors.
    #[cfg(feature = "postgres")]
    Postgres(&'a crate::postgres::ArtifactTable),
}

impl Artifacts {
    /// Opens (creating if needed, with its parent folders) the store's SQLite file at `path`.
    /// A file of another kind or schema version, or a damaged one, is refused with the
    /// [`Error`] naming it.
    pub fn open(path: &Path, artifact: &Artifact<'_>) -> Result<Self> {
        let conn = sqlite::open(path, &artifact.sqlite, &artifact.options)?;
        Ok(Self::sqlite(conn, path.to_path_buf(), artifact))
    }

    /// The store in memory only (tests, one-off runs); its location is `:memory:`.
    pub fn in_memory(artifact: &Artifact<'_>) -> Result<Self> {
        let conn = sqlite::open_in_memory(&artifact.sqlite, &artifact.options)?;
        Ok(Self::sqlite(conn, PathBuf::from(":memory:"), artifact))
    }

    fn sqlite(conn: Connection, location: PathBuf, artifact: &Artifact<'_>) -> Self {
        Artifacts {
            backend: Backend::Sqlite(Mutex::new(conn)),
            location,
            kind: artifact.kind(),
        }
    }

    /// Opens the store's table in the PostgreSQL database at `url` (feature `postgres`),
    /// checking its version in `public.pgraphrag_schema`; its location is the URL without
    /// its password. A store without a PostgreSQL table is [`Error::NoPostgres`].
    #[cfg(feature = "postgres")]
    pub fn open_postgres(url: &str, artifact: &Artifact<'_>) -> Result<Self> {
        let Some(ddl) = artifact.postgres else {
            return Err(Error::NoPostgres {
                kind: artifact.kind(),
            });
        };
        let schema = crate::postgres::ArtifactSchema {
            kind: artifact.kind(),
            version: artifact.sqlite.version,
            ddl,
        };
        let table = crate::postgres::ArtifactTable::open(url, &schema)?;
        Ok(Artifacts {
            location: PathBuf::from(table.url()),
            backend: Backend::Postgres(Box::new(table)),
            kind: artifact.kind(),
        })
    }

    /// Opens `location`: a PostgreSQL URL (`postgres://...`, feature `postgres`) or a SQLite
    /// file path, the one rule of every option that takes either. A URL in a build without the
    /// feature is [`Error::NoPostgres`].
    ///
    /// ```
    /// # use pgraphrag_store::artifacts::{Artifact, Artifacts};
    /// # use pgraphrag_store::sqlite::Schema;
    /// # let notes = Artifact { sqlite: Schema { kind: "notes", application_id: 0x4e4f_5445, version: 1,
    /// #     ddl: "CREATE TABLE IF NOT EXISTS notes (k TEXT);" }, options: Default::default(), postgres: None };
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("notes.sqlite");
    /// let store = Artifacts::open_location(&path, &notes).unwrap();
    /// assert_eq!(store.location(), path);
    /// ```
    pub fn open_location(location: &Path, artifact: &Artifact<'_>) -> Result<Self> {
        if let Some(url) = location.to_str().filter(|s| is_postgres_url(s)) {
            #[cfg(feature = "postgres")]
            return Self::open_postgres(url, artifact);
            #[cfg(not(feature = "postgres"))]
            {
                let _ = url;
                return Err(Error::NoPostgres {
                    kind: artifact.kind(),
                });
            }
        }
        Self::open(location, artifact)
    }

    /// The file (`:memory:` for [`in_memory`](Self::in_memory), the URL without its password
    /// for a PostgreSQL store).
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// The store's kind.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The connection, locked for as long as the returned value lives.
    pub fn conn(&self) -> Conn<'_> {
        match &self.backend {
            // A panic while holding the lock cannot leave SQLite inconsistent; keep going.
            Backend::Sqlite(c) => Conn::Sqlite(c.lock().unwrap_or_else(|e| e.into_inner())),
            #[cfg(feature = "postgres")]
            Backend::Postgres(t) => Conn::Postgres(t),
        }
    }

    /// The SQLite connection, for a store that lives in SQLite only (its [`Artifact`] has no
    /// PostgreSQL table, so it cannot have been opened there): [`Error::NoPostgres`] otherwise.
    pub fn sqlite_conn(&self) -> Result<MutexGuard<'_, Connection>> {
        match self.conn() {
            Conn::Sqlite(c) => Ok(c),
            #[cfg(feature = "postgres")]
            Conn::Postgres(_) => Err(Error::NoPostgres { kind: self.kind }),
        }
    }

    /// [`Error::NoPostgres`] for this store: what a store answers when its own crate was built
    /// without PostgreSQL support but this crate with it, so a [`Conn::Postgres`] arm exists
    /// that the store has no statements for. (Its [`Artifact`] then declares no PostgreSQL
    /// table, so it is never opened there; the arm only makes the store's `match` whole under
    /// every combination of features.)
    pub fn no_postgres(&self) -> Error {
        Error::NoPostgres { kind: self.kind }
    }

    /// Turns a failed SQLite statement into [`Error::Query`], naming the store, its file and
    /// `what` was being done.
    pub fn failed(&self, what: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
        let what = what.to_string();
        move |source| Error::Query {
            kind: self.kind,
            path: self.location.clone(),
            what: what.clone(),
            source: Box::new(source),
        }
    }
}

/// Whether a store location is a PostgreSQL connection URL (`postgres://...` or
/// `postgresql://...`) rather than a file path: the one rule every option that takes either
/// follows.
///
/// ```
/// assert!(pgraphrag_store::is_postgres_url("postgres://u@127.0.0.1:55432/db"));
/// assert!(!pgraphrag_store::is_postgres_url("runs/x/cache.sqlite"));
/// ```
pub fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}
