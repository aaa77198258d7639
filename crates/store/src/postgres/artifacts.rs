//! [`ArtifactTable`]: the one PostgreSQL setup behind the artifact stores (generation cache,
//! embedding cache, summary store), next to [`crate::sqlite`]: a connection checked for the
//! store's kind and schema version, its table created, statements run under a lock.

use std::sync::{Mutex, MutexGuard};

use ::postgres::Client;

use super::schema;
use super::store::{Error, Result, config, connect_config, query_err, redact};

/// What an artifact store keeps in PostgreSQL: its kind (also its row in
/// `public.pgraphrag_schema`), table and schema version. Each store owns its DDL, as with
/// [`crate::sqlite::Schema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactSchema<'a> {
    /// What the store is, e.g. `generation cache`.
    pub kind: &'a str,
    /// Its version; another version in the database is refused.
    pub version: i32,
    /// `CREATE TABLE IF NOT EXISTS ...` (idempotent).
    pub ddl: &'a str,
}

/// One artifact store's connection. Upserts should be idempotent
/// (`INSERT ... ON CONFLICT (key) DO UPDATE`), so concurrent writers and reruns agree.
///
/// ```no_run
/// use pgraphrag_store::postgres::{ArtifactSchema, ArtifactTable};
/// let schema = ArtifactSchema {
///     kind: "notes",
///     version: 1,
///     ddl: "CREATE TABLE IF NOT EXISTS pgraphrag_notes (key text PRIMARY KEY, body text NOT NULL)",
/// };
/// let t = ArtifactTable::open("postgres://postgres@127.0.0.1:55432/pgraphrag_single", &schema).unwrap();
/// t.run("storing a note", |c| c.execute(
///     "INSERT INTO pgraphrag_notes VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body",
///     &[&"k", &"hi"])).unwrap();
/// ```
pub struct ArtifactTable {
    client: Mutex<Client>,
    url: String,
    kind: String,
}

impl std::fmt::Debug for ArtifactTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArtifactTable")
            .field("url", &self.url)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl ArtifactTable {
    /// Connects to `url`, records or checks `schema`'s version in `public.pgraphrag_schema`
    /// (another version is [`Error::SchemaVersion`]) and creates its table.
    pub fn open(url: &str, schema: &ArtifactSchema<'_>) -> Result<Self> {
        let cfg = config(url)?;
        let mut client = connect_config(&cfg, url)?;
        schema::ensure_component(&mut client, url, schema.kind, schema.version)?;
        client.batch_execute(schema.ddl).map_err(query_err(format!(
            "{}: creating the {} table",
            redact(url),
            schema.kind
        )))?;
        Ok(ArtifactTable {
            client: Mutex::new(client),
            url: redact(url),
            kind: schema.kind.to_string(),
        })
    }

    /// The URL (password removed), for messages.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn lock(&self) -> MutexGuard<'_, Client> {
        // A panic while holding the lock leaves the connection usable (each statement is
        // atomic); keep going.
        self.client.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the connection; a failure is an [`Error::Query`] naming the store, the URL
    /// and `what`.
    pub fn run<T>(
        &self,
        what: &str,
        f: impl FnOnce(&mut Client) -> std::result::Result<T, ::postgres::Error>,
    ) -> Result<T> {
        f(&mut self.lock()).map_err(|source| Error::Query {
            what: format!("{} {}: {what}", self.kind, self.url),
            source,
        })
    }
}
