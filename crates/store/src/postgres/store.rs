//! The profile store's connection, its errors and the helpers its parts share.
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
/// through [`super::PgProfiles`].
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
    /// The underlying driver connection.
    pub fn client(&mut self) -> &mut ::postgres::Client {
        &mut self.client
    }
}
