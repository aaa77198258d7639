//! The PostgreSQL profile store (feature `postgres`): a PGraphRAG review graph in PostgreSQL,
//! partitioned for profile fetches, behind [`pgraphrag_graph::ProfileSource`].
//!
//! What spreads over machines is candidate assembly, not the search: a profile is the user's
//! reviews (keyed by user) and the target item's reviews (keyed by item). Each dataset is a
//! PostgreSQL schema `pgraphrag_<name>` holding
//!
//! * `reviews_by_user`: every review of the graph, hash-partitioned by `user_id`;
//! * `reviews_by_item`: the same reviews, hash-partitioned by `item` (so each scope is one
//!   query on one partition, and a profile is fetched in two steps, never with a
//!   cross-partition `IN (SELECT ...)`);
//! * `users` (first-appearance order, for the random review) and `targets` (each split
//!   record's `profile[0]`, raw);
//! * `meta`: the graph options it was built with and its sizes.
//!
//! Each review keeps its graph slot (`slot`): profiles are read `ORDER BY slot`, which is the
//! in-memory graph's order, so rankings are byte-identical to the in-memory path. Duplicate
//! handling and the id policy are applied when loading (the loader builds the graph with
//! `pgraphrag-graph` and stores its slots).
//!
//! On a coordinator with `postgres_fdw` foreign servers named `pgraphrag_shard<N>` (what
//! `scripts/cluster.sh` sets up) the partitions are foreign tables on the shard servers; on a
//! plain server they are local tables. `public.pgraphrag_schema` records the schema version;
//! another version, a missing dataset or a missing partition is an [`Error`] that says what to
//! fix. See `docs/store.md`.
//!
//! ```no_run
//! use pgraphrag_graph::{GraphOptions, ItemId, ProfileSource, Scope};
//! use pgraphrag_data::IdPolicy;
//! use pgraphrag_store::postgres::{LoadOptions, PgProfiles, PgStore};
//!
//! let split = pgraphrag_data::load_split("amazon_dev.json".as_ref()).unwrap();
//! let mut store = PgStore::connect("postgres://postgres@127.0.0.1:55432/pgraphrag").unwrap();
//! let opts = LoadOptions { graph: GraphOptions::notebook(), ids: IdPolicy::KeepJsonType, ..Default::default() };
//! store.load("amazon_dev", &split, &[], &opts, &()).unwrap();
//! let profiles = PgProfiles::open("postgres://postgres@127.0.0.1:55432/pgraphrag", "amazon_dev").unwrap();
//! let p = profiles.profile(&split.users[0].id, &ItemId::from("B0001"), Scope::Both).unwrap();
//! println!("{} candidates", p.len());
//! ```

mod artifacts;
mod load;
mod profiles;
mod schema;

pub use ::postgres::{Client, Error as DriverError, Row};
pub use artifacts::{ArtifactSchema, ArtifactTable};
pub use load::{LoadOptions, LoadSummary, parse_review_line};
pub use profiles::PgProfiles;
pub use schema::{
    DatasetInfo, Layout, PartitionedTable, SCHEMA_VERSION, Shard, dataset_schema, ensure_component,
    first_unanswering, layout, validate_dataset_name,
};

use std::path::PathBuf;

/// Errors of the PostgreSQL store. Each names the URL, dataset, table or file involved and
/// says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not a PostgreSQL connection string.
    #[error("{url}: not a PostgreSQL URL ({message}); expected postgres://USER@HOST:PORT/DATABASE")]
    Url {
        /// The URL (password removed).
        url: String,
        /// What the parser said.
        message: String,
    },
    /// The server could not be reached or refused the connection.
    #[error(
        "cannot connect to {url}: {source}; is the server running and the URL right? (a loopback \
         cluster: scripts/cluster.sh start, then source runs/cluster/env.sh)"
    )]
    Connect {
        /// The URL (password removed).
        url: String,
        /// The driver's error.
        #[source]
        source: ::postgres::Error,
    },
    /// The database holds a pgraphrag schema of another version.
    #[error(
        "{url}: the pgraphrag {component} schema is version {found}, this build reads version \
         {expected}; use a new database, or drop the old tables (pgraphrag store drop for \
         datasets) and the {component:?} row of public.pgraphrag_schema, then load again"
    )]
    SchemaVersion {
        /// The URL (password removed).
        url: String,
        /// Which store (`profiles`, `generation cache`, ...).
        component: String,
        /// The version found.
        found: i32,
        /// The version this build reads and writes.
        expected: i32,
    },
    /// The dataset was never loaded into this database.
    #[error(
        "{url}: no dataset {dataset:?} (schema {schema} is missing or incomplete); load it first: \
         pgraphrag store load --url URL --split FILE --dataset {dataset}"
    )]
    NoDataset {
        /// The URL (password removed).
        url: String,
        /// The dataset name.
        dataset: String,
        /// Its PostgreSQL schema.
        schema: String,
    },
    /// A partition of a dataset's table is missing or unreachable.
    #[error(
        "dataset {dataset:?}: partition {partition} of {table} is {problem}; reload the dataset \
         (pgraphrag store load --replace ...), or on a sharded cluster check that shard server \
         {server} is up and holds the table"
    )]
    MissingPartition {
        /// The dataset.
        dataset: String,
        /// The partitioned table.
        table: String,
        /// The partition expected (schema-qualified).
        partition: String,
        /// `missing` or the error reading it.
        problem: String,
        /// The foreign server holding it (`local` on a single server).
        server: String,
    },
    /// The dataset name cannot be a PostgreSQL schema name.
    #[error(
        "dataset name {name:?}: use 1 to 48 lowercase ASCII letters, digits or '_', starting with a letter"
    )]
    DatasetName {
        /// The name given.
        name: String,
    },
    /// The dataset exists and replacing it was not asked for.
    #[error("dataset {dataset:?} already exists in {url}; pass --replace to load it again")]
    Exists {
        /// The dataset.
        dataset: String,
        /// The URL (password removed).
        url: String,
    },
    /// A shard server registered on the coordinator cannot be used.
    #[error("shard server {server}: {message}")]
    Shard {
        /// The foreign server's name.
        server: String,
        /// What is wrong.
        message: String,
    },
    /// A statement failed.
    #[error("{what}")]
    Query {
        /// What was being done (table, dataset).
        what: String,
        /// The driver's error.
        #[source]
        source: ::postgres::Error,
    },
    /// A statement on a sharded dataset failed because the coordinator lost its connection to
    /// a shard server (the server stopped, restarted or became unreachable mid-query).
    #[error("{what}: the coordinator lost its connection to a shard server; {probe}")]
    ShardLost {
        /// What was being done (table, dataset).
        what: String,
        /// What probing the dataset's partitions right after found: the partition and shard
        /// server that does not answer, or that every shard answers again.
        probe: String,
        /// The driver's error.
        #[source]
        source: ::postgres::Error,
    },
    /// A stored row cannot be read back (a hand-edited table).
    #[error("dataset {dataset:?}: bad row in {table}: {message}")]
    BadRow {
        /// The dataset.
        dataset: String,
        /// The table.
        table: String,
        /// What is wrong.
        message: String,
    },
    /// A review JSONL line is not a review.
    #[error(
        "{path}:{line}: {message} (a review line is {{\"user\": str, \"item\": str or int, \"title\", \"text\": str or null, \"rating\": number or null, \"time\": int or null}})"
    )]
    Jsonl {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The graph cannot take more reviews.
    #[error(transparent)]
    Graph(#[from] pgraphrag_graph::Error),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `url` without its password, for messages.
///
/// ```
/// use pgraphrag_store::postgres::redact;
/// assert_eq!(redact("postgres://u:secret@h:5/db"), "postgres://u:***@h:5/db");
/// assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
/// ```
pub fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let Some(at) = rest.find('@') else {
        return url.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end + 3],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

/// Parses `url` into a driver configuration; a malformed URL is [`Error::Url`] (password
/// removed from the message).
///
/// ```
/// use pgraphrag_store::postgres::config;
/// assert_eq!(config("postgres://u@127.0.0.1:55432/db").unwrap().get_dbname(), Some("db"));
/// assert!(config("postgres://u@h:notaport/db").unwrap_err().to_string().contains("postgres://USER@HOST:PORT/DATABASE"));
/// ```
pub fn config(url: &str) -> Result<::postgres::Config> {
    url.parse::<::postgres::Config>().map_err(|e| Error::Url {
        url: redact(url),
        message: e.to_string(),
    })
}

/// Connects to `cfg` (no TLS: loopback and private networks; put TLS in front otherwise); a
/// failure is [`Error::Connect`] naming `url` (password removed) and what to check.
///
/// ```no_run
/// use pgraphrag_store::postgres::{config, connect_config};
/// let url = "postgres://postgres@127.0.0.1:55432/pgraphrag";
/// let mut client = connect_config(&config(url).unwrap(), url).unwrap();
/// client.batch_execute("SELECT 1").unwrap();
/// ```
pub fn connect_config(cfg: &::postgres::Config, url: &str) -> Result<::postgres::Client> {
    cfg.connect(::postgres::NoTls)
        .map_err(|source| Error::Connect {
            url: redact(url),
            source,
        })
}

/// The driver's error in one line: the server's message for an error the server sent.
///
/// ```no_run
/// use pgraphrag_store::postgres::{config, connect_config, driver_message};
/// let url = "postgres://postgres@127.0.0.1:55432/pgraphrag";
/// let mut client = connect_config(&config(url).unwrap(), url).unwrap();
/// let e = client.batch_execute("SELECT * FROM no_such_table").unwrap_err();
/// assert_eq!(driver_message(&e), "relation \"no_such_table\" does not exist");
/// ```
pub fn driver_message(e: &::postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    }
}

/// Whether a server on the way answered with a lost or refused connection: SQLSTATE class 08
/// (connection exception, which `postgres_fdw` reports when it cannot reach a shard server or
/// its connection to one breaks) or 57P (the server, or a shard relaying it, shutting down or
/// not yet accepting connections). Errors without a SQLSTATE are this client's own connection:
/// see [`connection_lost`].
///
/// ```no_run
/// # let e: postgres::Error = todo!();
/// if pgraphrag_store::postgres::server_lost(&e) { /* a shard or the server is down: retry later */ }
/// ```
pub fn server_lost(e: &::postgres::Error) -> bool {
    e.code()
        .is_some_and(|c| c.code().starts_with("08") || c.code().starts_with("57P"))
}

/// Whether `e` means the database cannot be reached now, rather than that the statement was
/// wrong: this client's connection is closed or broke (an I/O error), or [`server_lost`].
/// Such a statement may succeed when retried once the server is back.
///
/// ```no_run
/// # let e: postgres::Error = todo!();
/// if pgraphrag_store::postgres::connection_lost(&e) { /* reconnect, then retry */ }
/// ```
pub fn connection_lost(e: &::postgres::Error) -> bool {
    e.is_closed()
        || server_lost(e)
        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// A query error saying what was being done.
pub(crate) fn query_err(what: impl Into<String>) -> impl FnOnce(::postgres::Error) -> Error {
    let what = what.into();
    move |source| Error::Query { what, source }
}

/// A connection to one PostgreSQL database (a single server, or a coordinator with shard
/// servers), checked for the pgraphrag schema version: loads and drops datasets. Read profiles
/// through [`PgProfiles`].
pub struct PgStore {
    pub(crate) client: ::postgres::Client,
    pub(crate) url: String,
    pub(crate) config: ::postgres::Config,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &redact(&self.url))
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to `url` and creates or checks `public.pgraphrag_schema`.
    ///
    /// ```no_run
    /// let mut store = pgraphrag_store::postgres::PgStore::connect("postgres://postgres@127.0.0.1:55432/pgraphrag").unwrap();
    /// println!("{:?}", store.layout().unwrap());
    /// ```
    pub fn connect(url: &str) -> Result<Self> {
        let config = config(url)?;
        let mut client = connect_config(&config, url)?;
        schema::ensure_version(&mut client, url)?;
        Ok(PgStore {
            client,
            url: url.to_string(),
            config,
        })
    }

    /// Where partitions go: local tables, or foreign tables on the shard servers registered
    /// on this coordinator.
    pub fn layout(&mut self) -> Result<Layout> {
        schema::layout(&mut self.client)
    }

    /// The datasets loaded into this database, by name.
    pub fn datasets(&mut self) -> Result<Vec<DatasetInfo>> {
        schema::datasets(&mut self.client)
    }

    /// Drops a dataset (its schema here and its partitions on the shards). Dropping a dataset
    /// that does not exist does nothing.
    pub fn drop_dataset(&mut self, dataset: &str) -> Result<()> {
        schema::drop_dataset(self, dataset)
    }

    /// The underlying driver connection.
    pub fn client(&mut self) -> &mut ::postgres::Client {
        &mut self.client
    }
}
