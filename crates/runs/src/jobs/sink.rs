//! Where the units' results go: the [`ResultSink`] trait and its SQLite store, [`JobStore`].
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pgraphrag_store::sqlite::{self, Options, Schema};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::common::{Error, Result};

/// A job as submitted: its id, kind, specification and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobInfo {
    /// The job id (`{kind}-{16 hex digits}`), the prefix of its units' dedup ids.
    pub id: String,
    /// The kind (`rank`).
    pub kind: String,
    /// The specification, as JSON.
    pub spec: String,
    /// Units the job was split into.
    pub units: u64,
    /// Records the whole job produces (users, for a ranking).
    pub items: u64,
}

/// A finished unit's bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitDone<'a> {
    /// The worker that computed it.
    pub worker: &'a str,
    /// Seconds the computation took.
    pub seconds: f64,
}

/// How far a job got, read from the store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobProgress {
    /// The job.
    pub job: JobInfo,
    /// Units stored.
    pub units_done: u64,
    /// Records stored.
    pub records: u64,
    /// Store attempts over all units: equal to `units_done` unless a unit was computed twice
    /// (its second result is discarded, and counted here).
    pub stores: u64,
    /// Seconds of computation stored.
    pub seconds: f64,
    /// Units stored per worker, by worker name.
    pub workers: Vec<(String, u64)>,
}

/// The narrow interface the job handlers write through: one job registry, one idempotent
/// commit per unit, progress and the records back. [`JobStore`] keeps it in SQLite; a
/// PostgreSQL backend implements the same five methods.
///
/// [`put_unit`](Self::put_unit) must be atomic (the unit's records and its done mark commit
/// together, or nothing does) and idempotent (a unit stored before keeps its first records; the
/// attempt is counted in [`JobProgress::stores`]).
pub trait ResultSink: Send + Sync {
    /// Records a job (again with the same id: nothing changes).
    fn register(&self, job: &JobInfo) -> Result<()>;
    /// Whether the unit's result is stored.
    fn is_done(&self, job: &str, unit: u64) -> Result<bool>;
    /// Stores a unit's records (`(position, JSON)`) and marks it done, in one transaction.
    /// `true` when it was new.
    fn put_unit(
        &self,
        job: &str,
        unit: u64,
        records: &[(u64, String)],
        done: &UnitDone<'_>,
    ) -> Result<bool>;
    /// Every job with its progress, in submission order.
    fn jobs(&self) -> Result<Vec<JobProgress>>;
    /// A job's records (JSON) in position order.
    fn records(&self, job: &str) -> Result<Vec<String>>;
}

/// The job store's file: jobs, done units (with a store counter) and records.
const SCHEMA: Schema<'static> = Schema {
    kind: "job store",
    // "PGjb"
    application_id: 0x5047_6a62,
    version: 1,
    ddl: "CREATE TABLE IF NOT EXISTS jobs (
              job      TEXT PRIMARY KEY,
              kind     TEXT NOT NULL,
              spec     TEXT NOT NULL,
              units    INTEGER NOT NULL,
              items    INTEGER NOT NULL,
              created  TEXT NOT NULL DEFAULT (datetime('now'))
          );
          CREATE TABLE IF NOT EXISTS units (
              job      TEXT NOT NULL,
              unit     INTEGER NOT NULL,
              worker   TEXT NOT NULL,
              seconds  REAL NOT NULL,
              stores   INTEGER NOT NULL DEFAULT 1,
              created  TEXT NOT NULL DEFAULT (datetime('now')),
              PRIMARY KEY (job, unit)
          );
          CREATE TABLE IF NOT EXISTS records (
              job      TEXT NOT NULL,
              pos      INTEGER NOT NULL,
              body     TEXT NOT NULL,
              PRIMARY KEY (job, pos)
          );",
};

/// The SQLite [`ResultSink`]: one file that every worker on a machine shares (WAL,
/// `synchronous = FULL`, 30 s busy timeout, through [`pgraphrag_store::sqlite`]); each unit is
/// one committed transaction, so `kill -9` loses no finished unit.
///
/// ```
/// use pgraphrag_runs::jobs::{JobInfo, JobStore, ResultSink, UnitDone};
/// let store = JobStore::in_memory().unwrap();
/// let job = JobInfo { id: "rank-0".into(), kind: "rank".into(), spec: "{}".into(), units: 2, items: 3 };
/// store.register(&job).unwrap();
/// let done = UnitDone { worker: "w1", seconds: 0.1 };
/// assert!(store.put_unit("rank-0", 1, &[(2, "\"c\"".into())], &done).unwrap());
/// assert!(!store.put_unit("rank-0", 1, &[(2, "\"other\"".into())], &done).unwrap());
/// assert!(store.is_done("rank-0", 1).unwrap() && !store.is_done("rank-0", 0).unwrap());
/// let p = &store.jobs().unwrap()[0];
/// assert_eq!((p.units_done, p.records, p.stores), (1, 1, 2));
/// assert_eq!(store.records("rank-0").unwrap(), ["\"c\""]);
/// ```
pub struct JobStore {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl JobStore {
    /// Opens (creating if needed, with its folders) the store at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let conn = sqlite::open(path, &SCHEMA, &Options::default())
            .map_err(|e| Error::StoreOpen(Box::new(e)))?;
        Ok(JobStore {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    /// A store in memory (tests).
    pub fn in_memory() -> Result<Self> {
        let conn = sqlite::open_in_memory(&SCHEMA, &Options::default())
            .map_err(|e| Error::StoreOpen(Box::new(e)))?;
        Ok(JobStore {
            conn: Mutex::new(conn),
            path: PathBuf::from(":memory:"),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent; keep going.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        move |source| Error::Store {
            path: self.path.clone(),
            source,
        }
    }
}

impl ResultSink for JobStore {
    fn register(&self, job: &JobInfo) -> Result<()> {
        let conn = self.lock();
        let known: Option<String> = conn
            .query_row(
                "SELECT spec FROM jobs WHERE job = ?1",
                params![job.id],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.err())?;
        match known {
            Some(spec) if spec != job.spec => Err(Error::JobMismatch {
                job: job.id.clone(),
                path: self.path.clone(),
            }),
            Some(_) => Ok(()),
            None => {
                conn.execute(
                    "INSERT INTO jobs (job, kind, spec, units, items) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        job.id,
                        job.kind,
                        job.spec,
                        job.units as i64,
                        job.items as i64
                    ],
                )
                .map_err(self.err())?;
                Ok(())
            }
        }
    }

    fn is_done(&self, job: &str, unit: u64) -> Result<bool> {
        self.lock()
            .query_row(
                "SELECT 1 FROM units WHERE job = ?1 AND unit = ?2",
                params![job, unit as i64],
                |_| Ok(()),
            )
            .optional()
            .map(|o| o.is_some())
            .map_err(self.err())
    }

    fn put_unit(
        &self,
        job: &str,
        unit: u64,
        records: &[(u64, String)],
        done: &UnitDone<'_>,
    ) -> Result<bool> {
        let mut conn = self.lock();
        let err = self.err();
        let tx = conn.transaction().map_err(&err)?;
        let new = tx
            .execute(
                "INSERT INTO units (job, unit, worker, seconds) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (job, unit) DO NOTHING",
                params![job, unit as i64, done.worker, done.seconds],
            )
            .map_err(&err)?
            == 1;
        if new {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO records (job, pos, body) VALUES (?1, ?2, ?3)",
                )
                .map_err(&err)?;
            for (pos, body) in records {
                stmt.execute(params![job, *pos as i64, body])
                    .map_err(&err)?;
            }
        } else {
            tx.execute(
                "UPDATE units SET stores = stores + 1 WHERE job = ?1 AND unit = ?2",
                params![job, unit as i64],
            )
            .map_err(&err)?;
        }
        tx.commit().map_err(&err)?;
        Ok(new)
    }

    fn jobs(&self) -> Result<Vec<JobProgress>> {
        let conn = self.lock();
        let err = self.err();
        let mut stmt = conn
            .prepare(
                "SELECT j.job, j.kind, j.spec, j.units, j.items,
                        (SELECT COUNT(*) FROM units u WHERE u.job = j.job),
                        (SELECT COUNT(*) FROM records r WHERE r.job = j.job),
                        (SELECT COALESCE(SUM(stores), 0) FROM units u WHERE u.job = j.job),
                        (SELECT COALESCE(SUM(seconds), 0.0) FROM units u WHERE u.job = j.job)
                 FROM jobs j ORDER BY j.rowid",
            )
            .map_err(&err)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(JobProgress {
                    job: JobInfo {
                        id: r.get(0)?,
                        kind: r.get(1)?,
                        spec: r.get(2)?,
                        units: r.get::<_, i64>(3)? as u64,
                        items: r.get::<_, i64>(4)? as u64,
                    },
                    units_done: r.get::<_, i64>(5)? as u64,
                    records: r.get::<_, i64>(6)? as u64,
                    stores: r.get::<_, i64>(7)? as u64,
                    seconds: r.get(8)?,
                    workers: Vec::new(),
                })
            })
            .map_err(&err)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(&err)?;
        let mut out = Vec::with_capacity(rows.len());
        let mut per_worker = conn
            .prepare(
                "SELECT worker, COUNT(*) FROM units WHERE job = ?1 GROUP BY worker ORDER BY worker",
            )
            .map_err(&err)?;
        for mut p in rows {
            p.workers = per_worker
                .query_map(params![p.job.id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
                })
                .map_err(&err)?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(&err)?;
            out.push(p);
        }
        Ok(out)
    }

    fn records(&self, job: &str) -> Result<Vec<String>> {
        let conn = self.lock();
        let err = self.err();
        let mut stmt = conn
            .prepare("SELECT body FROM records WHERE job = ?1 ORDER BY pos")
            .map_err(&err)?;
        stmt.query_map(params![job], |r| r.get(0))
            .map_err(&err)?
            .collect::<rusqlite::Result<Vec<String>>>()
            .map_err(&err)
    }
}
