//! [`SummaryStore`]: the offline summaries in SQLite, readable at run time without a model.

// Without the feature `postgres` the connection has one kind, and a `match` on it one arm.
#![cfg_attr(
    not(feature = "postgres"),
    allow(clippy::infallible_destructuring_match)
)]
use std::path::Path;

use pgraphrag_store::artifacts::{Artifact, Artifacts, Conn};
use pgraphrag_store::sqlite::{Options, Schema};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::fit::FitReport;
use crate::{Error, Result};

/// The store's tables: `summaries`, one row per (user, model, version), in a SQLite file, and
/// `pgraphrag_summaries` with the same key and columns in PostgreSQL.
const ARTIFACT: Artifact<'static> = Artifact {
    sqlite: Schema {
        kind: "summary store",
        // "PGsu"
        application_id: 0x5047_7375,
        version: 1,
        ddl: "CREATE TABLE IF NOT EXISTS summaries (
              user_id      TEXT NOT NULL,
              model        TEXT NOT NULL,
              version      TEXT NOT NULL,
              profile_hash TEXT NOT NULL,
              summary      TEXT NOT NULL,
              kept         INTEGER NOT NULL,
              dropped      INTEGER NOT NULL,
              truncated    INTEGER NOT NULL,
              seconds      REAL NOT NULL,
              created      TEXT NOT NULL DEFAULT (datetime('now')),
              PRIMARY KEY (user_id, model, version)
          );",
    },
    options: Options::DURABLE,
    postgres: Some(
        "CREATE TABLE IF NOT EXISTS pgraphrag_summaries (
              user_id      text NOT NULL,
              model        text NOT NULL,
              version      text NOT NULL,
              profile_hash text NOT NULL,
              summary      text NOT NULL,
              kept         bigint NOT NULL,
              dropped      bigint NOT NULL,
              truncated    boolean NOT NULL,
              seconds      double precision NOT NULL,
              created      timestamptz NOT NULL DEFAULT now(),
              PRIMARY KEY (user_id, model, version)
          )",
    ),
};

/// What identifies one summary: the user, the hash of the profile it summarised
/// ([`crate::profile_hash`]), the model (e.g. `GgufModel::cache_id()`) and the summarizer
/// version ([`crate::LlmSummarizer::version`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryKey<'a> {
    /// The user key ([`crate::user_key`]).
    pub user: &'a str,
    /// The SHA-256 of the profile.
    pub profile_hash: &'a str,
    /// The model id.
    pub model: &'a str,
    /// The summarizer version.
    pub version: &'a str,
}

/// A stored summary.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSummary {
    /// The summary text.
    pub summary: String,
    /// What the summarizer read of the profile.
    pub fit: FitReport,
    /// Seconds it took (the wall time since the previous summary of its batch finished).
    pub seconds: f64,
}

/// Why a key needs a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staleness {
    /// The store has no summary of this user for this (model, version).
    Absent,
    /// It has one, of another profile: the profile changed since.
    ProfileChanged,
}

/// How many summaries the store holds of one (model, version).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreConfig {
    /// The model id.
    pub model: String,
    /// The summarizer version.
    pub version: String,
    /// Its number of summaries.
    pub summaries: usize,
}

/// The offline user summaries: a SQLite file (through [`pgraphrag_store::sqlite`]: WAL,
/// `synchronous = FULL`, kind and schema checks) with one row per (user, model, version)
/// holding the summary of the profile whose hash it carries.
///
/// Every [`put`](Self::put) is its own committed transaction, so a crash, `kill -9` or
/// Ctrl-C loses no finished summary. A put for a changed profile replaces the old summary
/// of that (user, model, version); [`get`](Self::get) returns a summary only when the
/// profile hash matches too, so a stale one is never served. Readers need no model: the
/// model id and version are plain strings (see [`configs`](Self::configs)).
///
/// ```
/// use pgraphrag_stages::{FitReport, Staleness, Summary, SummaryKey, SummaryStore};
/// let store = SummaryStore::in_memory().unwrap();
/// let key = SummaryKey { user: "u1", profile_hash: "h1", model: "m", version: "v" };
/// assert_eq!(store.missing(&[key]).unwrap(), [(0, Staleness::Absent)]);
/// store.put(&key, &Summary { text: "Likes cats.".into(), fit: FitReport::all(3) }, 0.5).unwrap();
/// assert_eq!(store.get(&key).unwrap().unwrap().summary, "Likes cats.");
/// let changed = SummaryKey { profile_hash: "h2", ..key };
/// assert_eq!(store.get(&changed).unwrap(), None);
/// assert_eq!(store.missing(&[key, changed]).unwrap(), [(1, Staleness::ProfileChanged)]);
/// ```
pub struct SummaryStore {
    store: Artifacts,
}

/// Runs `f` on the PostgreSQL store, its error as [`Error::Store`].
#[cfg(feature = "postgres")]
fn pg<T>(
    t: &pgraphrag_store::postgres::ArtifactTable,
    what: &str,
    f: impl FnOnce(
        &mut pgraphrag_store::postgres::Client,
    ) -> std::result::Result<T, pgraphrag_store::postgres::DriverError>,
) -> Result<T> {
    t.run(what, f)
        .map_err(|e| pgraphrag_store::Error::from(e).into())
}

impl SummaryStore {
    /// Opens (creating if needed, with its parent folders) the store at `path`. A file of
    /// another kind (a generation cache, say) or schema version is refused with
    /// [`Error::Store`] naming it.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = pgraphrag_stages::SummaryStore::open(&dir.path().join("s.sqlite")).unwrap();
    /// assert_eq!(store.len().unwrap(), 0);
    /// ```
    pub fn open(path: &Path) -> Result<Self> {
        Ok(SummaryStore {
            store: Artifacts::open(path, &ARTIFACT)?,
        })
    }

    /// Opens the store in the PostgreSQL database at `url` (feature `postgres`): table
    /// `pgraphrag_summaries` with the SQLite file's key and columns, every
    /// [`put`](Self::put) an idempotent upsert committed before it returns, shared by any
    /// number of processes and machines.
    ///
    /// ```no_run
    /// let s = pgraphrag_stages::SummaryStore::open_postgres("postgres://postgres@127.0.0.1:55432/pgraphrag_single").unwrap();
    /// println!("{} summaries", s.len().unwrap());
    /// ```
    #[cfg(feature = "postgres")]
    pub fn open_postgres(url: &str) -> Result<Self> {
        Ok(SummaryStore {
            store: Artifacts::open_postgres(url, &ARTIFACT)?,
        })
    }

    /// Opens `location`: a PostgreSQL URL (feature `postgres`) or a SQLite file path
    /// ([`Artifacts::open_location`]).
    pub fn open_location(location: &Path) -> Result<Self> {
        Ok(SummaryStore {
            store: Artifacts::open_location(location, &ARTIFACT)?,
        })
    }

    /// A store in memory only (tests, one-off runs).
    ///
    /// ```
    /// assert!(pgraphrag_stages::SummaryStore::in_memory().unwrap().is_empty().unwrap());
    /// ```
    pub fn in_memory() -> Result<Self> {
        Ok(SummaryStore {
            store: Artifacts::in_memory(&ARTIFACT)?,
        })
    }

    /// The file (`:memory:` for [`in_memory`](Self::in_memory), the URL without its password
    /// for `open_postgres` (feature `postgres`)).
    pub fn path(&self) -> &Path {
        self.store.location()
    }

    /// A failed SQLite statement, as [`Error::Store`] naming the file.
    fn err(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        let failed = self.store.failed("reading or writing summaries");
        move |source| failed(source).into()
    }

    /// The summary for `key` when the store has it for this very profile.
    pub fn get(&self, key: &SummaryKey<'_>) -> Result<Option<StoredSummary>> {
        let conn = match self.store.conn() {
            Conn::Sqlite(conn) => conn,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => {
                let row = pg(t, "reading a summary", |c| {
                    c.query_opt(
                        "SELECT summary, kept, dropped, truncated, seconds FROM pgraphrag_summaries \
                         WHERE user_id = $1 AND model = $2 AND version = $3 AND profile_hash = $4",
                        &[&key.user, &key.model, &key.version, &key.profile_hash],
                    )
                })?;
                return Ok(row.map(|r| StoredSummary {
                    summary: r.get(0),
                    fit: FitReport {
                        kept: r.get::<_, i64>(1).max(0) as usize,
                        dropped: r.get::<_, i64>(2).max(0) as usize,
                        truncated: r.get(3),
                    },
                    seconds: r.get(4),
                }));
            }
        };
        conn.query_row(
            "SELECT summary, kept, dropped, truncated, seconds FROM summaries
                 WHERE user_id = ?1 AND model = ?2 AND version = ?3 AND profile_hash = ?4",
            params![key.user, key.model, key.version, key.profile_hash],
            |r| {
                Ok(StoredSummary {
                    summary: r.get(0)?,
                    fit: FitReport {
                        kept: r.get::<_, i64>(1)? as usize,
                        dropped: r.get::<_, i64>(2)? as usize,
                        truncated: r.get(3)?,
                    },
                    seconds: r.get(4)?,
                })
            },
        )
        .optional()
        .map_err(self.err())
    }

    /// Stores a summary (committed before returning), replacing any summary of the same
    /// (user, model, version). `seconds` is how long it took.
    pub fn put(&self, key: &SummaryKey<'_>, summary: &crate::Summary, seconds: f64) -> Result<()> {
        let conn = match self.store.conn() {
            Conn::Sqlite(conn) => conn,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => {
                let (kept, dropped) = (summary.fit.kept as i64, summary.fit.dropped as i64);
                pg(t, "storing a summary", |c| {
                    c.execute(
                        "INSERT INTO pgraphrag_summaries (user_id, model, version, profile_hash, \
                         summary, kept, dropped, truncated, seconds) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                         ON CONFLICT (user_id, model, version) DO UPDATE SET \
                         profile_hash = EXCLUDED.profile_hash, summary = EXCLUDED.summary, \
                         kept = EXCLUDED.kept, dropped = EXCLUDED.dropped, \
                         truncated = EXCLUDED.truncated, seconds = EXCLUDED.seconds, created = now()",
                        &[
                            &key.user,
                            &key.model,
                            &key.version,
                            &key.profile_hash,
                            &summary.text,
                            &kept,
                            &dropped,
                            &summary.fit.truncated,
                            &seconds,
                        ],
                    )
                })?;
                return Ok(());
            }
        };
        conn.execute(
            "INSERT OR REPLACE INTO summaries
                 (user_id, model, version, profile_hash, summary, kept, dropped, truncated, seconds)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                key.user,
                key.model,
                key.version,
                key.profile_hash,
                summary.text,
                summary.fit.kept as i64,
                summary.fit.dropped as i64,
                summary.fit.truncated,
                seconds
            ],
        )
        .map_err(self.err())?;
        Ok(())
    }

    /// Whether `key` needs a summary: `None` when the store has it.
    pub fn status(&self, key: &SummaryKey<'_>) -> Result<Option<Staleness>> {
        let hash: Option<String> = match self.store.conn() {
            Conn::Sqlite(conn) => conn
                .query_row(
                    "SELECT profile_hash FROM summaries WHERE user_id = ?1 AND model = ?2 AND version = ?3",
                    params![key.user, key.model, key.version],
                    |r| r.get(0),
                )
                .optional()
                .map_err(self.err())?,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => pg(t, "reading a summary's profile hash", |c| {
                c.query_opt(
                    "SELECT profile_hash FROM pgraphrag_summaries \
                     WHERE user_id = $1 AND model = $2 AND version = $3",
                    &[&key.user, &key.model, &key.version],
                )
            })?
            .map(|r| r.get(0)),
        };
        Ok(match hash {
            None => Some(Staleness::Absent),
            Some(h) if h == key.profile_hash => None,
            Some(_) => Some(Staleness::ProfileChanged),
        })
    }

    /// The keys (by index into `keys`) that need a summary, and why.
    pub fn missing(&self, keys: &[SummaryKey<'_>]) -> Result<Vec<(usize, Staleness)>> {
        let mut out = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            if let Some(s) = self.status(k)? {
                out.push((i, s));
            }
        }
        Ok(out)
    }

    /// Every (model, version) the store holds, with its number of summaries, sorted.
    pub fn configs(&self) -> Result<Vec<StoreConfig>> {
        let conn = match self.store.conn() {
            Conn::Sqlite(conn) => conn,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => {
                let rows = pg(t, "listing the models and versions", |c| {
                    c.query(
                        "SELECT model, version, count(*) FROM pgraphrag_summaries \
                         GROUP BY model, version ORDER BY model, version",
                        &[],
                    )
                })?;
                return Ok(rows
                    .iter()
                    .map(|r| StoreConfig {
                        model: r.get(0),
                        version: r.get(1),
                        summaries: r.get::<_, i64>(2).max(0) as usize,
                    })
                    .collect());
            }
        };
        let mut st = conn
            .prepare(
                "SELECT model, version, COUNT(*) FROM summaries GROUP BY model, version ORDER BY model, version",
            )
            .map_err(self.err())?;
        let rows = st
            .query_map([], |r| {
                Ok(StoreConfig {
                    model: r.get(0)?,
                    version: r.get(1)?,
                    summaries: r.get::<_, i64>(2)? as usize,
                })
            })
            .map_err(self.err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err())
    }

    /// `Ok` when the store is empty or holds summaries of (`model`, `version`); otherwise
    /// [`Error::OtherConfig`] listing what it does hold (the wrong file, another model file,
    /// or changed settings).
    ///
    /// ```
    /// use pgraphrag_stages::{FitReport, Summary, SummaryKey, SummaryStore};
    /// let store = SummaryStore::in_memory().unwrap();
    /// store.check_config("m", "v").unwrap();
    /// let key = SummaryKey { user: "u", profile_hash: "h", model: "m", version: "v" };
    /// store.put(&key, &Summary { text: "s".into(), fit: FitReport::all(1) }, 0.0).unwrap();
    /// let e = store.check_config("other", "v").unwrap_err().to_string();
    /// assert!(e.contains("holds 1 of model \"m\" version \"v\""), "{e}");
    /// ```
    pub fn check_config(&self, model: &str, version: &str) -> Result<()> {
        let configs = self.configs()?;
        if configs.is_empty()
            || configs
                .iter()
                .any(|c| c.model == model && c.version == version)
        {
            return Ok(());
        }
        let holds = configs
            .iter()
            .map(|c| {
                format!(
                    "{} of model {:?} version {:?}",
                    c.summaries, c.model, c.version
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        Err(Error::OtherConfig {
            path: self.path().to_path_buf(),
            model: model.to_string(),
            version: version.to_string(),
            holds,
        })
    }

    /// Every (user, summary) of (`model`, `version`), sorted by user: what a prompt builder
    /// reads at run time. Checked with [`check_config`](Self::check_config) first.
    pub fn summaries(&self, model: &str, version: &str) -> Result<Vec<(String, String)>> {
        self.check_config(model, version)?;
        let conn = match self.store.conn() {
            Conn::Sqlite(conn) => conn,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => {
                let rows = pg(t, "reading the summaries", |c| {
                    c.query(
                        "SELECT user_id, summary FROM pgraphrag_summaries \
                         WHERE model = $1 AND version = $2 ORDER BY user_id COLLATE \"C\"",
                        &[&model, &version],
                    )
                })?;
                return Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect());
            }
        };
        let mut st = conn
            .prepare(
                "SELECT user_id, summary FROM summaries WHERE model = ?1 AND version = ?2 ORDER BY user_id",
            )
            .map_err(self.err())?;
        let rows = st
            .query_map(params![model, version], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err())
    }

    /// Writes the summaries of (`model`, `version`) to `path` as JSON lines
    /// `{"id": user, "summary": text}`, sorted by user, atomically (a temporary file renamed
    /// into place); returns how many. Checked with [`check_config`](Self::check_config).
    ///
    /// ```
    /// use pgraphrag_stages::{FitReport, Summary, SummaryKey, SummaryStore};
    /// let store = SummaryStore::in_memory().unwrap();
    /// let key = SummaryKey { user: "u1", profile_hash: "h", model: "m", version: "v" };
    /// store.put(&key, &Summary { text: "Short titles.".into(), fit: FitReport::all(2) }, 0.1).unwrap();
    /// let dir = tempfile::tempdir().unwrap();
    /// let out = dir.path().join("s.jsonl");
    /// assert_eq!(store.export_jsonl(&out, "m", "v").unwrap(), 1);
    /// assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"id\":\"u1\",\"summary\":\"Short titles.\"}\n");
    /// ```
    pub fn export_jsonl(&self, path: &Path, model: &str, version: &str) -> Result<usize> {
        #[derive(Serialize)]
        struct Line<'a> {
            id: &'a str,
            summary: &'a str,
        }
        let rows = self.summaries(model, version)?;
        pgraphrag_data::write_atomic(path, |w: &mut dyn std::io::Write| {
            for (id, summary) in &rows {
                serde_json::to_writer(&mut *w, &Line { id, summary })?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })
        .map_err(|source| Error::Export { source })?;
        Ok(rows.len())
    }

    /// How many summaries the store holds (all models and versions).
    pub fn len(&self) -> Result<usize> {
        let n: i64 = match self.store.conn() {
            Conn::Sqlite(conn) => conn
                .query_row("SELECT COUNT(*) FROM summaries", [], |r| r.get(0))
                .map_err(self.err())?,
            #[cfg(not(feature = "postgres"))]
            #[allow(unreachable_patterns)]
            _ => return Err(self.store.no_postgres().into()),
            #[cfg(feature = "postgres")]
            Conn::Postgres(t) => pg(t, "counting summaries", |c| {
                c.query_one("SELECT count(*) FROM pgraphrag_summaries", &[])
            })?
            .get(0),
        };
        Ok(n.max(0) as usize)
    }

    /// `true` when the store holds nothing.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Summary;

    fn s(text: &str) -> Summary {
        Summary {
            text: text.into(),
            fit: FitReport {
                kept: 2,
                dropped: 1,
                truncated: true,
            },
        }
    }

    #[test]
    fn survives_reopen_and_replaces_changed_profiles() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/s.sqlite");
        let k = SummaryKey {
            user: "u",
            profile_hash: "h1",
            model: "m",
            version: "v",
        };
        SummaryStore::open(&path)
            .unwrap()
            .put(&k, &s("a"), 1.0)
            .unwrap();
        let store = SummaryStore::open(&path).unwrap();
        let got = store.get(&k).unwrap().unwrap();
        assert_eq!(
            (got.summary.as_str(), got.fit, got.seconds),
            ("a", s("a").fit, 1.0)
        );
        let k2 = SummaryKey {
            profile_hash: "h2",
            ..k
        };
        store.put(&k2, &s("b"), 2.0).unwrap();
        assert_eq!(
            store.len().unwrap(),
            1,
            "one row per (user, model, version)"
        );
        assert_eq!(store.get(&k).unwrap(), None);
        assert_eq!(store.status(&k2).unwrap(), None);
        let other = SummaryKey { model: "m2", ..k2 };
        store.put(&other, &s("c"), 0.0).unwrap();
        assert_eq!(store.len().unwrap(), 2);
        assert_eq!(
            store.summaries("m", "v").unwrap(),
            [("u".into(), "b".into())]
        );
    }

    #[test]
    fn a_store_of_other_models_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let store = SummaryStore::open(&path).unwrap();
        let k = SummaryKey {
            user: "u",
            profile_hash: "h",
            model: "gguf:a.gguf",
            version: "v1",
        };
        store.put(&k, &s("x"), 0.0).unwrap();
        let out = dir.path().join("out.jsonl");
        let e = store.export_jsonl(&out, "gguf:b.gguf", "v1").unwrap_err();
        assert!(matches!(e, Error::OtherConfig { .. }));
        let msg = e.to_string();
        assert!(
            msg.contains("s.sqlite")
                && msg.contains("\"gguf:b.gguf\"")
                && msg.contains("1 of model \"gguf:a.gguf\" version \"v1\""),
            "{msg}"
        );
        assert!(!out.exists());
    }

    #[test]
    fn another_kind_of_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.sqlite");
        let other = Schema {
            kind: "generation cache",
            application_id: 0x5047_6763,
            version: 1,
            ddl: "CREATE TABLE IF NOT EXISTS generations (key TEXT);",
        };
        drop(pgraphrag_store::sqlite::open(&path, &other, &Options::default()).unwrap());
        let e = SummaryStore::open(&path).err().unwrap();
        assert!(e.to_string().contains("not a summary store"), "{e}");
    }
}
