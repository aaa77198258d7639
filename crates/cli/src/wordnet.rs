//! Where the `pgraphrag` binary finds WordNet 3.0 for METEOR: the library's search list
//! ([`pgraphrag_metrics::wordnet::search_paths`]) over this process's environment, working
//! directory and executable folder (so `models/wordnet` at the root of a checkout is found from
//! `target/release/pgraphrag` without any variable).
use std::path::PathBuf;

use pgraphrag_metrics::Error;
use pgraphrag_metrics::wordnet::{find, search_paths};

/// The folders searched, in order.
pub fn candidates() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(PathBuf::from))
    {
        roots.push(dir);
    }
    search_paths(|k| std::env::var_os(k), &roots)
}

/// The WordNet folder, or the library's "not found" error listing every folder tried.
pub fn locate() -> Result<PathBuf, Error> {
    find(&candidates())
}

/// The one line printed when METEOR is skipped.
pub fn missing_note() -> String {
    match locate() {
        Err(e) => format!("METEOR not computed: {e}"),
        Ok(_) => "METEOR not computed".into(),
    }
}
