use std::path::{Path, PathBuf};

/// The four PGraphRAG datasets of the released splits, in the paper's order.
pub const DATASETS: [&str; 4] = ["amazon", "b2w", "gap", "hotel"];

/// Where the shared data lives.
///
/// 1. The environment variable `PGRAPHRAG_DATA`, if set and non-empty.
/// 2. Otherwise `../shared/data` relative to the workspace root, where the workspace root is
///    the nearest ancestor of the current directory whose `Cargo.toml` has a `[workspace]`
///    table (so it works from any crate or sub-folder of a checkout).
/// 3. Otherwise `../shared/data` relative to the workspace this crate was compiled in
///    (from `CARGO_MANIFEST_DIR` at compile time).
///
/// The path is returned even if it does not exist; loaders then fail with an error that names
/// it and says to set `PGRAPHRAG_DATA`.
///
/// ```
/// let d = pgraphrag_data::data_dir();
/// assert!(d.ends_with("data") || std::env::var_os("PGRAPHRAG_DATA").is_some());
/// ```
pub fn data_dir() -> PathBuf {
    if let Some(v) = std::env::var_os("PGRAPHRAG_DATA")
        && !v.is_empty()
    {
        return PathBuf::from(v);
    }
    if let Ok(cwd) = std::env::current_dir() {
        for a in cwd.ancestors() {
            if is_workspace_root(a) {
                return shared_data(a);
            }
        }
    }
    // crates/data -> workspace root
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().and_then(Path::parent).unwrap_or(manifest);
    shared_data(root)
}

fn shared_data(root: &Path) -> PathBuf {
    let p = root.join("..").join("shared").join("data");
    p.canonicalize().unwrap_or(p)
}

fn is_workspace_root(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .map(|s| s.lines().any(|l| l.trim() == "[workspace]"))
        .unwrap_or(false)
}

/// `data_dir()/pgraphrag/{dataset}_{split}.json`, e.g. `("amazon", "dev")`.
///
/// ```
/// let p = pgraphrag_data::pgraphrag_split_path("amazon", "dev");
/// assert!(p.ends_with("pgraphrag/amazon_dev.json"));
/// ```
pub fn pgraphrag_split_path(dataset: &str, split: &str) -> PathBuf {
    data_dir()
        .join("pgraphrag")
        .join(format!("{dataset}_{split}.json"))
}
