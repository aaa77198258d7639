//! [`PgError`] and the schema name check.

use pgraphrag_store::postgres as pg;

/// Errors of [`PgDocuments`](super::PgDocuments). Each names the URL (password removed), the
/// schema and what was being done. [`PgError::is_unavailable`] errors become
/// [`crate::Error::StoreUnavailable`] (HTTP 503 `store_unavailable`), the others
/// [`crate::Error::Postgres`].
///
/// ```
/// use pgraphrag_serve::postgres::{PgDocuments, PgOptions};
/// let e = PgDocuments::open("mysql://x", PgOptions::default()).unwrap_err();
/// assert!(!e.is_unavailable());
/// assert!(e.to_string().contains("expected postgres://USER@HOST:PORT/DATABASE"));
/// let e = PgDocuments::open("postgres://u@127.0.0.1:1/db", PgOptions::default()).unwrap_err();
/// assert!(e.is_unavailable()); // nothing listens there: 503 when it happens to a write
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgError {
    /// Opening failed: a malformed URL, a server that cannot be reached, another schema
    /// version, a shard server that refused the setup.
    #[error("document store: {0}")]
    Open(#[from] pg::Error),
    /// The schema name cannot be used.
    #[error(
        "document store schema {name:?}: use 1 to 48 lowercase ASCII letters, digits or '_', \
         starting with a letter and not with \"pgraphrag_\" (the profile store's datasets)"
    )]
    SchemaName {
        /// The name given.
        name: String,
    },
    /// The database, or the shard server holding the data, cannot be reached (or did not
    /// answer in time).
    #[error("PostgreSQL {url} (schema {schema}): {what}: {problem}; {advice}")]
    Unavailable {
        /// The URL (password removed).
        url: String,
        /// The schema.
        schema: String,
        /// What was being done (tenant, user, document).
        what: String,
        /// Which server does not answer, and why.
        problem: String,
        /// What happened to the request and what to do.
        advice: String,
    },
    /// A statement failed.
    #[error("document store {url} (schema {schema}): {what}: {message}")]
    Query {
        /// The URL (password removed).
        url: String,
        /// The schema.
        schema: String,
        /// What was being done (table, tenant, user).
        what: String,
        /// The server's message.
        message: String,
        /// The driver's error.
        #[source]
        source: postgres::Error,
    },
    /// A stored row cannot be read back (a table written by another program).
    #[error("document store {url} (schema {schema}): bad row in {table}: {message}")]
    BadRow {
        /// The URL (password removed).
        url: String,
        /// The schema.
        schema: String,
        /// The table.
        table: String,
        /// What is wrong.
        message: String,
    },
}

impl PgError {
    /// Whether the request may succeed unchanged once a server is back (answered with 503).
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            PgError::Unavailable { .. } | PgError::Open(pg::Error::Connect { .. })
        )
    }
}

/// `Result` with [`PgError`].
pub(crate) type PgResult<T> = std::result::Result<T, PgError>;

/// Checks a schema name (it is written unquoted into statements).
///
/// ```
/// use pgraphrag_serve::postgres::validate_schema_name;
/// assert!(validate_schema_name("pgserve").is_ok());
/// assert!(validate_schema_name("pgraphrag_amazon").is_err()); // a profile dataset's
/// assert!(validate_schema_name("x; DROP").is_err());
/// ```
pub fn validate_schema_name(name: &str) -> PgResult<()> {
    let ok = (1..=48).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with("pgraphrag_")
        && !name.starts_with("pg_")
        && !matches!(name, "public" | "information_schema");
    if ok {
        Ok(())
    } else {
        Err(PgError::SchemaName { name: name.into() })
    }
}
