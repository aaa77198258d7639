//! The embedded durable store: every tenant's documents in one SQLite file (WAL,
//! `synchronous = FULL`), through `pgraphrag-store`'s one SQLite setup. A write returns only
//! once its transaction is committed, so an acknowledged write survives a crash.

use std::path::Path;
use std::sync::Mutex;

use pgraphrag_retrieval::live::Document;
use pgraphrag_store::sqlite::{self, Schema};
use rusqlite::{Connection, params};

use crate::{Error, Result};

const SCHEMA: Schema<'static> = Schema {
    kind: "pgraphrag-serve documents",
    application_id: 0x5047_5356, // "PGSV"
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
          );",
};

/// The documents of every tenant, in one SQLite file.
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

    fn conn(&self) -> Result<std::sync::MutexGuard<'_, Connection>> {
        self.conn
            .lock()
            .map_err(|_| Error::Store("a writer panicked while holding the store".into()))
    }

    /// Every document of every tenant in the order they were first written: (tenant, doc).
    pub fn load(&self) -> Result<Vec<(String, Document)>> {
        let conn = self.conn()?;
        let mut st = conn
            .prepare(
                "SELECT tenant, user, doc, item, title, text, rating, time FROM documents \
                 ORDER BY seq",
            )
            .map_err(db)?;
        let rows = st
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
            .map_err(db)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db)
    }

    /// Creates or replaces one document (a replaced one keeps its place in the order).
    pub fn upsert(&self, tenant: &str, d: &Document) -> Result<()> {
        self.conn()?
            .execute(
                "INSERT INTO documents (tenant, user, doc, item, title, text, rating, time) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
                 ON CONFLICT (tenant, user, doc) DO UPDATE SET item = excluded.item, \
                 title = excluded.title, text = excluded.text, rating = excluded.rating, \
                 time = excluded.time",
                params![
                    tenant, d.user, d.id, d.item, d.title, d.text, d.rating, d.time
                ],
            )
            .map_err(db)?;
        Ok(())
    }

    /// Deletes one document; false when there was none.
    pub fn remove(&self, tenant: &str, user: &str, doc: &str) -> Result<bool> {
        let n = self
            .conn()?
            .execute(
                "DELETE FROM documents WHERE tenant = ?1 AND user = ?2 AND doc = ?3",
                params![tenant, user, doc],
            )
            .map_err(db)?;
        Ok(n > 0)
    }

    /// Deletes every document of a user; how many.
    pub fn remove_user(&self, tenant: &str, user: &str) -> Result<usize> {
        self.conn()?
            .execute(
                "DELETE FROM documents WHERE tenant = ?1 AND user = ?2",
                params![tenant, user],
            )
            .map_err(db)
    }
}
