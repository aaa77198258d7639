//! Where the service keeps its data durably: the [`DocumentStore`] trait (two required
//! methods: [`DocumentStore::load`] and [`DocumentStore::apply`]) and the embedded
//! [`Store`], every tenant's documents and summaries in one SQLite file (WAL,
//! `synchronous = FULL`) through `pgraphrag-store`'s one SQLite setup. A write returns only
//! once its transaction is committed, so an acknowledged write survives a crash.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use pgraphrag_retrieval::live::Document;
use pgraphrag_store::sqlite::{self, Schema};
use rusqlite::{Connection, params};

use crate::{Error, Result};

/// A user's stored task summary: its text and a fingerprint of the documents it was made
/// from (so that a summary of documents that have changed since is known to be stale).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSummary {
    /// The user.
    pub user: String,
    /// The summary.
    pub text: String,
    /// [`crate::summaries::fingerprint`] of the user's documents it summarises.
    pub fingerprint: u64,
}

/// One durable change of one tenant's data.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// Create or replace a document (a replaced one keeps its place in the order).
    Upsert(Document),
    /// Delete one document.
    Remove {
        /// Its user.
        user: String,
        /// Its id.
        doc: String,
    },
    /// Delete every document and the summary of a user.
    RemoveUser {
        /// The user.
        user: String,
    },
    /// Store (replace) a user's summary.
    Summary(StoredSummary),
}

/// What [`DocumentStore::load`] gives back: every record of every tenant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// (tenant, document) in the order the documents were first written.
    pub documents: Vec<(String, Document)>,
    /// (tenant, summary).
    pub summaries: Vec<(String, StoredSummary)>,
}

/// A durable store of the service's documents and summaries.
///
/// Two methods are required: [`DocumentStore::load`] (everything, at start) and
/// [`DocumentStore::apply`] (one write, durable when it returns `Ok`).
///
/// ```
/// use pgraphrag_retrieval::live::Document;
/// use pgraphrag_serve::store::{DocumentStore, Store, Write};
/// let store = Store::in_memory().unwrap();
/// let doc = Document { user: "u1".into(), id: "d1".into(), text: "Great pan.".into(), ..Default::default() };
/// assert_eq!(store.apply("acme", &Write::Upsert(doc)).unwrap(), 1);
/// assert_eq!(store.load().unwrap().documents.len(), 1);
/// assert_eq!(store.apply("acme", &Write::RemoveUser { user: "u1".into() }).unwrap(), 1);
/// ```
pub trait DocumentStore: Send + Sync + std::fmt::Debug {
    /// Every document and summary of every tenant.
    fn load(&self) -> Result<Loaded>;

    /// Applies `write` to `tenant`'s data; durable once it returns. Answers how many rows
    /// (documents, or the summary) it changed.
    fn apply(&self, tenant: &str, write: &Write) -> Result<usize>;

    /// For a store that several processes write (each with its own indexes): where its
    /// change log stands for `tenants`, read *before* [`DocumentStore::load`], so that the
    /// data loaded after it holds every change up to it. A [`crate::Service`] on a store that
    /// answers `Some` runs a follower that applies the other processes' changes (see
    /// `docs/serve.md`). The default, `None`, says this store has one writer, this process:
    /// nothing to follow, and the other provided methods are never called.
    ///
    /// ```
    /// use pgraphrag_serve::store::{DocumentStore, Store};
    /// let store = Store::in_memory().unwrap(); // one SQLite file, one process
    /// assert_eq!(store.cursor(&["acme".to_string()]).unwrap(), None);
    /// ```
    fn cursor(&self, tenants: &[String]) -> Result<Option<Cursor>> {
        let _ = tenants;
        Ok(None)
    }

    /// The changes after `after` of its tenants, oldest first, at most `limit` (default:
    /// none, one writer).
    fn changes(&self, after: &Cursor, limit: usize) -> Result<Changes> {
        let _ = (after, limit);
        Ok(Changes::default())
    }

    /// One user's documents (in first-write order) and summary as stored now (default: picked
    /// out of [`DocumentStore::load`]).
    fn user_data(&self, tenant: &str, user: &str) -> Result<UserData> {
        Ok(UserData::from_loaded(self.load()?, tenant, user))
    }

    /// Blocks until another process may have written, or a store-chosen poll interval passed
    /// (default: one second). On an error it has waited too.
    fn wait_for_changes(&self) -> Result<()> {
        std::thread::sleep(std::time::Duration::from_secs(1));
        Ok(())
    }
}

const SCHEMA: Schema<'static> = Schema {
    kind: "pgraphrag-serve documents",
    application_id: 0x5047_5356, // "PGSV"
    // Version 1 files gain the summaries table on open (`CREATE TABLE IF NOT EXISTS`).
    version: 1,
    ddl: "CREATE TABLE IF NOT EXISTS documents (
              seq    INTEGER PRIMARY KEY AUTOINCREMENT,
              tenant TEXT NOT NULL,
              user   TEXT NOT NULL,
              doc    TEXT NOT NULL,
              item   TEXT,
              title  TEXT,
              text   TEXT NOT NULL,
              rating REAL,
              time   INTEGER,
              UNIQUE (tenant, user, doc)
          );
          CREATE TABLE IF NOT EXISTS summaries (
              tenant      TEXT NOT NULL,
              user        TEXT NOT NULL,
              text        TEXT NOT NULL,
              fingerprint INTEGER NOT NULL,
              PRIMARY KEY (tenant, user)
          );",
};

const UPSERT: &str = "INSERT INTO documents (tenant, user, doc, item, title, text, rating, time) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
     ON CONFLICT (tenant, user, doc) DO UPDATE SET item = excluded.item, \
     title = excluded.title, text = excluded.text, rating = excluded.rating, time = excluded.time";

/// The embedded store: every tenant's documents and summaries in one SQLite file.
#[derive(Debug)]
pub struct Store {
    conn: Mutex<Connection>,
}

fn db(e: impl std::fmt::Display) -> Error {
    Error::Store(e.to_string())
}

impl Store {
    /// Opens (creating) `dir/documents.sqlite`.
    pub fn open(dir: &Path) -> Result<Self> {
        let conn = sqlite::open(&dir.join("documents.sqlite"), &SCHEMA, &Default::default())
            .map_err(db)?;
        // Deleted documents are overwritten on disk, not left in free pages.
        conn.pragma_update(None, "secure_delete", "ON")
            .map_err(db)?;
        Ok(Store {
            conn: Mutex::new(conn),
        })
    }

    /// An in-memory store (tests, throw-away servers).
    pub fn in_memory() -> Result<Self> {
        let conn = sqlite::open_in_memory(&SCHEMA, &Default::default()).map_err(db)?;
        Ok(Store {
            conn: Mutex::new(conn),
        })
    }

    /// Creates or replaces many documents of `tenant` in one transaction (a bulk load before
    /// the service starts: one commit instead of one per document); how many.
    ///
    /// ```
    /// use pgraphrag_retrieval::live::Document;
    /// use pgraphrag_serve::store::{DocumentStore, Store};
    /// let store = Store::in_memory().unwrap();
    /// let docs: Vec<Document> = (0..3).map(|i| Document { user: "u".into(), id: i.to_string(),
    ///     text: "Sturdy pan.".into(), ..Default::default() }).collect();
    /// assert_eq!(store.import("acme", &docs).unwrap(), 3);
    /// assert_eq!(store.load().unwrap().documents.len(), 3);
    /// ```
    pub fn import(&self, tenant: &str, docs: &[Document]) -> Result<usize> {
        let mut conn = self.conn()?;
        let tx = conn.transaction().map_err(db)?;
        {
            let mut st = tx.prepare(UPSERT).map_err(db)?;
            for d in docs {
                st.execute(params![
                    tenant, d.user, d.id, d.item, d.title, d.text, d.rating, d.time
                ])
                .map_err(db)?;
            }
        }
        tx.commit().map_err(db)?;
        Ok(docs.len())
    }

    fn conn(&self) -> Result<std::sync::MutexGuard<'_, Connection>> {
        self.conn
            .lock()
            .map_err(|_| Error::Store("a writer panicked while holding the store".into()))
    }
}

impl DocumentStore for Store {
    fn load(&self) -> Result<Loaded> {
        let conn = self.conn()?;
        let mut st = conn
            .prepare(
                "SELECT tenant, user, doc, item, title, text, rating, time FROM documents \
                 ORDER BY seq",
            )
            .map_err(db)?;
        let documents = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Document {
                        user: r.get(1)?,
                        id: r.get(2)?,
                        item: r.get(3)?,
                        title: r.get(4)?,
                        text: r.get(5)?,
                        rating: r.get(6)?,
                        time: r.get(7)?,
                    },
                ))
            })
            .map_err(db)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(db)?;
        let mut st = conn
            .prepare("SELECT tenant, user, text, fingerprint FROM summaries ORDER BY tenant, user")
            .map_err(db)?;
        let summaries = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    StoredSummary {
                        user: r.get(1)?,
                        text: r.get(2)?,
                        fingerprint: r.get::<_, i64>(3)? as u64,
                    },
                ))
            })
            .map_err(db)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(db)?;
        Ok(Loaded {
            documents,
            summaries,
        })
    }

    fn apply(&self, tenant: &str, write: &Write) -> Result<usize> {
        let mut conn = self.conn()?;
        match write {
            Write::Upsert(d) => conn.execute(
                UPSERT,
                params![
                    tenant, d.user, d.id, d.item, d.title, d.text, d.rating, d.time
                ],
            ),
            Write::Remove { user, doc } => conn.execute(
                "DELETE FROM documents WHERE tenant = ?1 AND user = ?2 AND doc = ?3",
                params![tenant, user, doc],
            ),
            Write::RemoveUser { user } => {
                // One transaction: the documents and the summary go together or not at all.
                let tx = conn.transaction().map_err(db)?;
                let n = tx
                    .execute(
                        "DELETE FROM documents WHERE tenant = ?1 AND user = ?2",
                        params![tenant, user],
                    )
                    .map_err(db)?;
                tx.execute(
                    "DELETE FROM summaries WHERE tenant = ?1 AND user = ?2",
                    params![tenant, user],
                )
                .map_err(db)?;
                tx.commit().map_err(db)?;
                Ok(n)
            }
            Write::Summary(s) => conn.execute(
                "INSERT INTO summaries (tenant, user, text, fingerprint) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (tenant, user) DO UPDATE SET text = excluded.text, \
                 fingerprint = excluded.fingerprint",
                params![tenant, s.user, s.text, s.fingerprint as i64],
            ),
        }
        .map_err(db)
    }
}

/// Where a follower stands in a shared store's change log: per tenant, the id of the last
/// change it has applied (every change of that tenant up to it is in its index).
///
/// ```
/// use pgraphrag_serve::store::Cursor;
/// let mut c = Cursor::new(["acme"]);
/// c.advance("acme", 7);
/// c.advance("acme", 3); // never goes back
/// assert_eq!(c.get("acme"), Some(7));
/// assert_eq!(c.get("beta"), None); // not followed
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cursor {
    tenants: BTreeMap<String, u64>,
}

impl Cursor {
    /// A cursor at the start of the log for each of `tenants`.
    pub fn new<S: Into<String>>(tenants: impl IntoIterator<Item = S>) -> Self {
        Cursor {
            tenants: tenants.into_iter().map(|t| (t.into(), 0)).collect(),
        }
    }

    /// `tenant`'s position, or `None` when it is not followed.
    pub fn get(&self, tenant: &str) -> Option<u64> {
        self.tenants.get(tenant).copied()
    }

    /// Moves `tenant`'s position to `id` if that is later (a followed tenant only).
    pub fn advance(&mut self, tenant: &str, id: u64) {
        if let Some(at) = self.tenants.get_mut(tenant) {
            *at = (*at).max(id);
        }
    }

    /// Sets `tenant`'s position (after a reload), following it from now on.
    pub fn set(&mut self, tenant: &str, id: u64) {
        self.tenants.insert(tenant.to_string(), id);
    }

    /// The followed tenants and their positions.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.tenants.iter().map(|(t, &id)| (t.as_str(), id))
    }
}

/// One entry of a shared store's change log: a write to one user of one tenant.
///
/// ```
/// use pgraphrag_serve::store::Change;
/// let c = Change { id: 12, tenant: "acme".into(), user: "ann".into(), own: false };
/// assert!(!c.own); // another process wrote it: the follower applies it
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its position in the log (increasing within a tenant).
    pub id: u64,
    /// The tenant.
    pub tenant: String,
    /// The user whose documents or summary changed.
    pub user: String,
    /// Whether this process (this store handle) made it.
    pub own: bool,
}

/// What [`DocumentStore::changes`] found after a cursor.
///
/// ```
/// use pgraphrag_serve::store::Changes;
/// let none = Changes::default();
/// assert!(none.changes.is_empty() && none.reload.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// The changes after the cursor, oldest first.
    pub changes: Vec<Change>,
    /// Tenants some of whose changes after the cursor are no longer in the log (it keeps
    /// them for a limited time): a follower reloads these tenants whole.
    pub reload: Vec<String>,
}

/// One user's data as a store holds it now.
///
/// ```
/// use pgraphrag_serve::store::{Loaded, UserData};
/// assert_eq!(UserData::from_loaded(Loaded::default(), "acme", "ann"), UserData::default());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserData {
    /// The user's documents, in the order they were first written.
    pub documents: Vec<Document>,
    /// The user's summary, if one is stored.
    pub summary: Option<StoredSummary>,
}

impl UserData {
    /// `user` of `tenant` picked out of everything a store loaded (the provided
    /// [`DocumentStore::user_data`]).
    pub fn from_loaded(loaded: Loaded, tenant: &str, user: &str) -> Self {
        UserData {
            documents: loaded
                .documents
                .into_iter()
                .filter(|(t, d)| t == tenant && d.user == user)
                .map(|(_, d)| d)
                .collect(),
            summary: loaded
                .summaries
                .into_iter()
                .find(|(t, s)| t == tenant && s.user == user)
                .map(|(_, s)| s),
        }
    }
}
