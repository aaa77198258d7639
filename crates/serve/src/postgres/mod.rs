//! [`PgDocuments`]: the service's documents and summaries in PostgreSQL (feature `postgres`),
//! on one server or on a coordinator whose partitions are on shard servers, shared by any
//! number of `serve` processes that follow each other's writes.
//!
//! One PostgreSQL schema (default `pgserve`, [`PgOptions::schema`]) holds
//!
//! * `documents`: hash-partitioned by `(tenant, user_id)` (8 partitions by default), with a
//!   `seq` from the sequence `document_seq` that keeps the order of first writes. On a
//!   coordinator with `postgres_fdw` servers `pgraphrag_shard<N>` (`scripts/cluster.sh`), the
//!   partitions are tables on the shards and foreign tables here, laid out by
//!   [`pgraphrag_store::postgres::PartitionedTable`] as the profile store's are;
//! * `summaries` (plain): one row per (tenant, user);
//! * `changes` (plain): the change log, one row per write (`id bigserial`, tenant, user,
//!   the writing process), kept for [`PgOptions::retention`]; `horizon` records per tenant the
//!   last id pruned, so a follower that fell behind further reloads the tenant;
//! * `layout`: the partition count and shard servers it was created with.
//!
//! A write is one transaction under a per-tenant advisory lock (so a tenant's log ids commit
//! in order, and the upsert, which cannot use `ON CONFLICT` through foreign partitions, is
//! race-free): the document change, a `changes` row and `pg_notify`. Followers `LISTEN` and
//! poll every [`PgOptions::poll`] as a fallback. See `docs/serve.md`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use pgraphrag_retrieval::live::Document;
use pgraphrag_store::postgres::{self as pg, Layout, PartitionedTable};
use postgres::{Client, Row};

use crate::store::StoredSummary;

mod error;
mod log;

pub(crate) use error::PgResult;
pub use error::{PgError, validate_schema_name};

/// The schema version of the tables (row `serve documents` of `public.pgraphrag_schema`).
pub const SCHEMA_VERSION: i32 = 1;
const COMPONENT: &str = "serve documents";
const DOCUMENT_COLUMNS: &str = "tenant text NOT NULL, user_id text NOT NULL, \
     doc_id text NOT NULL, seq bigint NOT NULL, item text, title text, body text NOT NULL, \
     rating double precision, time bigint";
const SELECT_DOC: &str = "user_id, doc_id, item, title, body, rating, time";
/// What to do when a server does not answer a read.
const READ_ADVICE: &str = "start it, then retry";

/// Options of [`PgDocuments::open`], set with a struct literal and `..Default::default()`.
///
/// ```
/// let o = pgraphrag_serve::postgres::PgOptions { schema: "pgserve_eu".into(), ..Default::default() };
/// assert_eq!(o.partitions, 8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// The PostgreSQL schema holding the tables (created if missing). Every process of one
    /// service names the same. Default `pgserve`.
    pub schema: String,
    /// Hash partitions of `documents` when the schema is created (spread round-robin over the
    /// shard servers); an existing schema keeps its own. Default 8.
    pub partitions: usize,
    /// The longest a follower waits before reading the change log again when no
    /// notification woke it. Default 500 ms.
    pub poll: Duration,
    /// Whether followers are woken by `LISTEN`/`NOTIFY` (writers always notify). Turn it off
    /// where `LISTEN` does not work, behind a pooler in transaction mode: followers then read
    /// the log every [`PgOptions::poll`]. Default on.
    pub listen: bool,
    /// How long the change log keeps a change. Default 1 hour.
    pub retention: Duration,
    /// Connecting gives up after this (unless the URL sets `connect_timeout`). Default 5 s.
    pub connect_timeout: Duration,
    /// A write statement gives up after this (a server that hangs). Default 10 s.
    pub statement_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            schema: "pgserve".into(),
            partitions: 8,
            poll: Duration::from_millis(500),
            listen: true,
            retention: Duration::from_secs(3600),
            connect_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(10),
        }
    }
}

/// The documents and summaries of every tenant in PostgreSQL, shared by several processes:
/// a [`DocumentStore`] whose [`cursor`](crate::store::DocumentStore::cursor) is `Some`, so a
/// [`crate::Service`] on it follows the other processes' writes. Every write is committed
/// before [`apply`](crate::store::DocumentStore::apply) returns; a write that fails is not
/// stored (see `docs/serve.md` for the one exception, a connection lost during commit).
///
/// [`DocumentStore`]: crate::store::DocumentStore
///
/// ```no_run
/// use pgraphrag_serve::{Keys, Service, ServiceOptions, postgres::{PgDocuments, PgOptions}};
/// let store = PgDocuments::open("postgres://postgres@127.0.0.1:55432/pgraphrag", PgOptions::default()).unwrap();
/// let keys = Keys::parse("[tenants.acme]\nkeys = [\"acme-secret-1\"]\n", "KEYS.toml").unwrap();
/// let service = Service::new(keys, store, ServiceOptions::default()).unwrap();
/// # let _ = service;
/// ```
pub struct PgDocuments {
    url: String,
    config: postgres::Config,
    opts: PgOptions,
    /// This handle's id in the change log (its own changes are not followed).
    origin: String,
    partitions: usize,
    /// The shard servers (partition `p` is on `servers[p % len]`); empty on a single server.
    servers: Vec<String>,
    writer: Mutex<Option<Client>>,
    /// The follower's connection: it `LISTEN`s, reads the log and the users it names.
    reader: Mutex<Option<Client>>,
    last_prune: Mutex<Instant>,
    /// Users whose write lost its connection while committing (stored or not: unknown); the
    /// follower reconciles them when their change appears in the log.
    uncertain: Mutex<HashSet<(String, String)>>,
}

impl std::fmt::Debug for PgDocuments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgDocuments")
            .field("url", &self.url)
            .field("schema", &self.opts.schema)
            .field("partitions", &self.partitions)
            .field("servers", &self.servers)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each statement is atomic on the server: a panic while holding a connection left nothing
    // half-done here.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn origin() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    format!("{}-{nanos:x}-{n}", std::process::id())
}

impl PgDocuments {
    /// Connects to `url` (a single server, or a coordinator with shard servers), checks the
    /// schema version and creates the schema's tables if missing (on the shards too). Several
    /// processes may open the same schema at once.
    ///
    /// ```no_run
    /// use pgraphrag_serve::postgres::{PgDocuments, PgOptions};
    /// let opts = PgOptions { schema: "pgserve_eu".into(), ..Default::default() };
    /// let store = PgDocuments::open("postgres://postgres@127.0.0.1:55432/pgraphrag", opts).unwrap();
    /// assert_eq!(store.schema(), "pgserve_eu");
    /// ```
    pub fn open(url: &str, opts: PgOptions) -> PgResult<Self> {
        validate_schema_name(&opts.schema)?;
        let mut config = pg::config(url)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(opts.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("pgraphrag-serve");
        }
        let mut client = pg::connect_config(&config, url)?;
        pg::ensure_component(&mut client, url, COMPONENT, SCHEMA_VERSION)?;
        let mut store = PgDocuments {
            url: pg::redact(url),
            config,
            origin: origin(),
            partitions: opts.partitions.clamp(1, 4096),
            servers: Vec::new(),
            opts,
            writer: Mutex::new(None),
            reader: Mutex::new(None),
            last_prune: Mutex::new(Instant::now()),
            uncertain: Mutex::default(),
        };
        store.setup(&mut client)?;
        store.start_session(&mut client)?;
        *lock(&store.writer) = Some(client);
        Ok(store)
    }

    /// Drops the schema and everything in it, here and on the shard servers (tests, and
    /// erasing a deployment). Dropping a schema that does not exist does nothing.
    ///
    /// ```no_run
    /// pgraphrag_serve::postgres::PgDocuments::drop_schema("postgres://postgres@127.0.0.1:55432/pgraphrag", "pgserve_test").unwrap();
    /// ```
    pub fn drop_schema(url: &str, schema: &str) -> PgResult<()> {
        validate_schema_name(schema)?;
        let config = pg::config(url)?;
        let mut client = pg::connect_config(&config, url)?;
        let drop = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
        if let Layout::Sharded(shards) = pg::layout(&mut client)? {
            for shard in &shards {
                shard
                    .connect(&config)?
                    .batch_execute(&drop)
                    .map_err(|e| pg::Error::Shard {
                        server: shard.server.clone(),
                        message: format!("dropping schema {schema}: {}", pg::driver_message(&e)),
                    })?;
            }
        }
        client
            .batch_execute(&drop)
            .map_err(|source| PgError::Query {
                url: pg::redact(url),
                schema: schema.into(),
                what: "dropping the schema".into(),
                message: pg::driver_message(&source),
                source,
            })
    }

    /// The shard server holding `user` of `tenant` (`local` on a single server) and the
    /// partition, schema-qualified.
    ///
    /// ```no_run
    /// # let store: pgraphrag_serve::postgres::PgDocuments = todo!();
    /// let (server, partition) = store.placement("acme", "ann").unwrap();
    /// println!("ann's documents are in {partition} on {server}");
    /// ```
    pub fn placement(&self, tenant: &str, user: &str) -> PgResult<(String, String)> {
        let mut guard = self.connection(&self.writer, false)?;
        let client = guard.as_mut().expect("connected above");
        self.placement_with(client, tenant, user)
    }

    /// The schema's name.
    pub fn schema(&self) -> &str {
        &self.opts.schema
    }

    fn table(&self) -> PartitionedTable<'_> {
        PartitionedTable {
            schema: &self.opts.schema,
            table: "documents",
            columns: DOCUMENT_COLUMNS,
            primary_key: "tenant, user_id, doc_id",
            partition_key: "tenant, user_id",
            partitions: self.partitions,
        }
    }

    fn channel(&self) -> String {
        format!("{}_changes", self.opts.schema)
    }

    fn query_err(&self, what: impl Into<String>) -> impl FnOnce(postgres::Error) -> PgError {
        let (url, schema, what) = (self.url.clone(), self.opts.schema.clone(), what.into());
        move |source| PgError::Query {
            url,
            schema,
            what,
            message: pg::driver_message(&source),
            source,
        }
    }

    /// Creates the tables once (serialised between processes), or reads the layout they were
    /// created with.
    fn setup(&mut self, client: &mut Client) -> PgResult<()> {
        let s = self.opts.schema.clone();
        let what = || format!("creating the schema {s}");
        let layout = pg::layout(client)?;
        let mut tx = client.transaction().map_err(self.query_err(what()))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('pgraphrag-serve'), hashtext($1))",
            &[&s],
        )
        .map_err(self.query_err(what()))?;
        let exists: bool = tx
            .query_one(
                "SELECT to_regclass($1) IS NOT NULL",
                &[&format!("{s}.layout")],
            )
            .map_err(self.query_err(what()))?
            .get(0);
        if exists {
            let row = tx
                .query_one(&format!("SELECT partitions, servers FROM {s}.layout"), &[])
                .map_err(self.query_err(format!("reading {s}.layout")))?;
            let partitions: i32 = self.col(&row, 0, "layout")?;
            self.partitions = partitions.max(1) as usize;
            self.servers = self.col(&row, 1, "layout")?;
            return tx.commit().map_err(self.query_err(what()));
        }
        if let Layout::Sharded(shards) = &layout {
            for (k, shard) in shards.iter().enumerate() {
                // Nothing here refers to tables left on a shard by an earlier schema of this
                // name (dropped here only): start them afresh, as the profile store does.
                let ddl = format!(
                    "DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s};\n{}",
                    self.table().shard_ddl(k, shards.len())
                );
                shard
                    .connect(&self.config)?
                    .batch_execute(&ddl)
                    .map_err(|e| pg::Error::Shard {
                        server: shard.server.clone(),
                        message: format!(
                            "creating the partitions of {s}.documents: {}",
                            pg::driver_message(&e)
                        ),
                    })?;
                self.servers.push(shard.server.clone());
            }
        }
        let ddl = format!(
            "CREATE SCHEMA IF NOT EXISTS {s};\n\
             CREATE SEQUENCE {s}.document_seq;\n{}\
             CREATE TABLE {s}.summaries (tenant text NOT NULL, user_id text NOT NULL, \
               body text NOT NULL, fingerprint bigint NOT NULL, PRIMARY KEY (tenant, user_id));\n\
             CREATE TABLE {s}.changes (id bigserial PRIMARY KEY, tenant text NOT NULL, \
               user_id text NOT NULL, origin text NOT NULL, kind text NOT NULL, doc_id text, \
               at timestamptz NOT NULL DEFAULT now());\n\
             CREATE INDEX ON {s}.changes (tenant, id);\n\
             CREATE INDEX ON {s}.changes (at);\n\
             CREATE TABLE {s}.horizon (tenant text PRIMARY KEY, through bigint NOT NULL);\n\
             CREATE TABLE {s}.layout (partitions integer NOT NULL, servers text[] NOT NULL);\n",
            self.table().coordinator_ddl(&layout)
        );
        tx.batch_execute(&ddl).map_err(self.query_err(what()))?;
        tx.execute(
            &format!("INSERT INTO {s}.layout VALUES ($1, $2)"),
            &[&(self.partitions as i32), &self.servers],
        )
        .map_err(self.query_err(what()))?;
        tx.commit().map_err(self.query_err(what()))
    }

    /// The writer's session settings: its statement timeout.
    fn start_session(&self, client: &mut Client) -> PgResult<()> {
        let ms = self.opts.statement_timeout.as_millis().max(1);
        client
            .batch_execute(&format!("SET statement_timeout = {ms}"))
            .map_err(self.query_err("setting the statement timeout"))
    }

    /// The connection in `slot`, (re)connected when missing or closed: the `reader` (the
    /// follower's: it `LISTEN`s, no statement timeout, as a load may be long) or the writer. A
    /// failure is [`PgError::Unavailable`].
    fn connection<'a>(
        &self,
        slot: &'a Mutex<Option<Client>>,
        reader: bool,
    ) -> PgResult<MutexGuard<'a, Option<Client>>> {
        let mut guard = lock(slot);
        if guard.as_ref().is_some_and(|c| !c.is_closed()) {
            return Ok(guard);
        }
        *guard = None;
        let mut client = pg::connect_config(&self.config, &self.url).map_err(|e| {
            let problem = match &e {
                pg::Error::Connect { source, .. } => format!(
                    "the database server does not answer ({})",
                    pg::driver_message(source)
                ),
                e => e.to_string(),
            };
            self.unavailable("connecting", problem, READ_ADVICE)
        })?;
        if !reader {
            self.start_session(&mut client)?;
        } else if self.opts.listen {
            client
                .batch_execute(&format!("LISTEN {}", self.channel()))
                .map_err(self.query_err("listening for changes"))?;
        }
        *guard = Some(client);
        Ok(guard)
    }

    fn unavailable(&self, what: impl Into<String>, problem: String, advice: &str) -> PgError {
        PgError::Unavailable {
            url: self.url.clone(),
            schema: self.opts.schema.clone(),
            what: what.into(),
            problem,
            advice: advice.into(),
        }
    }

    /// Reads column `i` of a row of `table`, a type mismatch being [`PgError::BadRow`].
    fn col<'r, T: postgres::types::FromSql<'r>>(
        &self,
        row: &'r Row,
        i: usize,
        table: &str,
    ) -> PgResult<T> {
        row.try_get(i).map_err(|e| PgError::BadRow {
            url: self.url.clone(),
            schema: self.opts.schema.clone(),
            table: table.into(),
            message: format!("column {i}: {e}"),
        })
    }

    fn document(&self, row: &Row, first: usize) -> PgResult<Document> {
        Ok(Document {
            user: self.col(row, first, "documents")?,
            id: self.col(row, first + 1, "documents")?,
            item: self.col(row, first + 2, "documents")?,
            title: self.col(row, first + 3, "documents")?,
            text: self.col(row, first + 4, "documents")?,
            rating: self.col(row, first + 5, "documents")?,
            time: self.col(row, first + 6, "documents")?,
        })
    }

    fn summary(&self, row: &Row, first: usize) -> PgResult<StoredSummary> {
        Ok(StoredSummary {
            user: self.col(row, first, "summaries")?,
            text: self.col(row, first + 1, "summaries")?,
            fingerprint: self.col::<i64>(row, first + 2, "summaries")? as u64,
        })
    }

    fn placement_with(
        &self,
        client: &mut Client,
        tenant: &str,
        user: &str,
    ) -> PgResult<(String, String)> {
        let s = &self.opts.schema;
        let row = client
            .query_one(
                "SELECT p FROM generate_series(0, $3 - 1) p \
                 WHERE satisfies_hash_partition(to_regclass($4)::oid, $3, p, $1::text, $2::text)",
                &[
                    &tenant,
                    &user,
                    &(self.partitions as i32),
                    &format!("{s}.documents"),
                ],
            )
            .map_err(self.query_err(format!("placing user {user:?} of tenant {tenant:?}")))?;
        let p = self.col::<i32>(&row, 0, "documents")?.max(0) as usize;
        let server = match self.servers.len() {
            0 => "local".to_string(),
            n => self.servers[p % n].clone(),
        };
        Ok((server, self.table().partition(p)))
    }

    /// The error of a failed write or read: [`PgError::Unavailable`] naming the server that
    /// does not answer when the connection (or the coordinator's to a shard) was lost.
    fn failed(
        &self,
        client: &mut Client,
        key: Option<(&str, &str)>,
        what: String,
        e: postgres::Error,
        advice: &str,
    ) -> PgError {
        let timed_out = e.code() == Some(&postgres::error::SqlState::QUERY_CANCELED);
        if !pg::connection_lost(&e) && !timed_out {
            return self.query_err(what)(e);
        }
        // Whether this client's own connection is gone, or the coordinator answers and the
        // server missing is behind it.
        let own = client.is_closed() || client.batch_execute("SELECT 1").is_err();
        let problem = if own {
            format!(
                "the database server does not answer ({})",
                pg::driver_message(&e)
            )
        } else {
            // The coordinator answers: probe the partition of the user, or one per shard.
            let probes: Vec<(String, String)> = match key {
                Some((t, u)) => self.placement_with(client, t, u).ok().into_iter().collect(),
                None => (0..self.servers.len().min(self.partitions))
                    .map(|p| (self.table().partition(p), self.servers[p].clone()))
                    .collect(),
            };
            let probes: Vec<(String, String)> = probes
                .into_iter()
                .map(|(server, part)| (part, server))
                .collect();
            let timeout = if timed_out {
                format!(" (no answer in {:?})", self.opts.statement_timeout)
            } else {
                String::new()
            };
            // The probe's own advice ("start it, then retry") is the caller's `advice`.
            pg::first_unanswering(client, &probes).map_or_else(
                || format!("{}{timeout}", pg::driver_message(&e)),
                |down| {
                    let down = down.trim_end_matches("; start it, then retry");
                    format!("{down}{timeout}")
                },
            )
        };
        self.unavailable(what, problem, advice)
    }
}
