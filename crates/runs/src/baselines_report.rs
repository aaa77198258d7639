//! [`BaselinesReport`]: the files of every baselines run (PGraphRAG, LaMP, multistage).
use std::path::Path;

use pgraphrag_eval::RunDir;

use crate::Result;

/// The files of a baselines run (`pgraphrag::BaselinesSpec`, `lamp::BaselinesSpec`,
/// `multistage::BaselinesSpec`).
///
/// ```
/// let r = pgraphrag_runs::BaselinesReport { markdown: "# t\n".into(), predictions: String::new(),
///     csv: "mode_k\n".into(), comparison: None };
/// let dir = tempfile::tempdir()?;
/// r.write(dir.path())?;
/// assert!(dir.path().join("results.md").is_file() && !dir.path().join("comparison.md").exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct BaselinesReport {
    /// `results.md`: with a grid, first the comparison; then the table and its notes.
    pub markdown: String,
    /// `predictions.jsonl`: one line per row, every baseline's answer and its scores.
    pub predictions: String,
    /// `results.csv`.
    pub csv: String,
    /// `comparison.md` (a LaMP run with a grid): the comparison as one row of a Markdown table,
    /// for a README that lists several grids.
    pub comparison: Option<String>,
}

impl BaselinesReport {
    /// The files [`BaselinesReport::write`] may write.
    pub const FILES: [&'static str; 4] = [
        "predictions.jsonl",
        "results.md",
        "results.csv",
        "comparison.md",
    ];

    /// Writes the files into `dir`, each atomically.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let d = RunDir::new(dir);
        d.write(Self::FILES[0], self.predictions.as_bytes())?;
        d.write(Self::FILES[1], self.markdown.as_bytes())?;
        d.write(Self::FILES[2], self.csv.as_bytes())?;
        if let Some(row) = &self.comparison {
            d.write(Self::FILES[3], row.as_bytes())?;
        }
        Ok(())
    }
}
