use std::path::{Path, PathBuf};

/// The four PGraphRAG datasets of the released splits, in the paper's order.
pub const DATASETS: [&str; 4] = ["amazon", "b2w", "gap", "hotel"];

/// `{data_dir}/pgraphrag/{dataset}_{split}.json`, e.g. `("amazon", "dev")`: where the shared
/// data folder holds a released split. The caller says where the data lives (the library
/// reads no environment variable).
///
/// ```
/// let p = pgraphrag_data::pgraphrag_split_path("/data".as_ref(), "amazon", "dev");
/// assert!(p.ends_with("pgraphrag/amazon_dev.json"));
/// ```
pub fn pgraphrag_split_path(data_dir: &Path, dataset: &str, split: &str) -> PathBuf {
    data_dir
        .join("pgraphrag")
        .join(format!("{dataset}_{split}.json"))
}
