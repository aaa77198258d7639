//! The embedding cache of `pgraphrag embed`, opened from what the user typed: a SQLite file
//! path, or a PostgreSQL URL (`postgres://...`, feature `postgres`), for one store shared by
//! runs on any number of machines (docs/store.md, Artifact stores). The runs' stores open
//! through `pgraphrag_runs`.
use std::path::Path;

use pgraphrag_retrieval::dense::EmbeddingCache;

use crate::error::{OrUsage, usage};

/// The PostgreSQL URL in `location`, if it is one.
fn postgres_url(location: &Path) -> Option<&str> {
    location
        .to_str()
        .filter(|s| pgraphrag_store::is_postgres_url(s))
}

/// The refusal of a build without the PostgreSQL backends.
#[cfg(not(feature = "postgres"))]
fn no_postgres<T>(flag: &str) -> anyhow::Result<T> {
    Err(usage(format!(
        "{flag} postgres://... needs the PostgreSQL backend: build pgraphrag-cli with --features postgres"
    )))
}

/// The embedding cache at `location`.
pub fn embedding_cache(location: &Path, flag: &str) -> anyhow::Result<EmbeddingCache> {
    match postgres_url(location) {
        #[cfg(feature = "postgres")]
        Some(url) => EmbeddingCache::open_postgres(url)
            .map_err(|e| usage(format!("{flag}: {}", pgraphrag_core::error_chain(&e)))),
        #[cfg(not(feature = "postgres"))]
        Some(_) => no_postgres(flag),
        None => EmbeddingCache::open(location).or_usage(),
    }
}
