//! Where an artifact store lives: a SQLite file, or (feature `postgres`) a PostgreSQL URL for
//! one store shared by runs on any number of machines (`docs/store.md`, Artifact stores).
use std::path::Path;

use crate::{Error, Result};

/// An artifact store at `location`, opened by `open` (a store's `open_location`: a SQLite
/// file, or with the feature `postgres` a PostgreSQL URL); one that does not open is the
/// caller's input at fault.
pub(crate) fn open_location<T, E: std::error::Error + Send + Sync + 'static>(
    location: &Path,
    what: &str,
    open: impl FnOnce(&Path) -> std::result::Result<T, E>,
) -> Result<T> {
    let url = location
        .to_str()
        .filter(|s| pgraphrag_store::is_postgres_url(s));
    match url {
        #[cfg(feature = "postgres")]
        Some(url) => open(location).map_err(Error::input(format!(
            "{what} {}",
            pgraphrag_store::postgres::redact(url)
        ))),
        #[cfg(not(feature = "postgres"))]
        Some(_) => Err(Error::Setting(format!(
            "{what} at a postgres:// URL needs pgraphrag built with PostgreSQL support (feature `postgres`)"
        ))),
        None => open(location).map_err(Error::invalid),
    }
}

/// `location` as logs show it: a PostgreSQL URL without its password.
///
/// ```
/// use pgraphrag_runs::describe_location;
/// assert_eq!(describe_location("runs/cache.sqlite".as_ref()), "runs/cache.sqlite");
/// ```
pub fn describe_location(location: &Path) -> String {
    #[cfg(feature = "postgres")]
    if let Some(url) = location
        .to_str()
        .filter(|s| pgraphrag_store::is_postgres_url(s))
    {
        return pgraphrag_store::postgres::redact(url);
    }
    location.display().to_string()
}
