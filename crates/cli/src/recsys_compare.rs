//! `pgraphrag recsys compare`: the K-RagRec tables recomputed from rows files alone (no model,
//! no index), `pgraphrag_runs::kragrec::CompareSpec`: ACC and Recall@k with bootstrap
//! intervals for every (method, M) the files hold, and, for each `--pair A:B`, A against B on
//! the rows both scored, paired per row.
//!
//! Writes into `--out`: `results.md` (the two tables) and `results.json` (the same figures).
use std::path::{Path, PathBuf};

use pgraphrag_runs::kragrec::{CompareSpec, RESULT_FILES, parse_pair};

/// Arguments of `pgraphrag recsys compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// Rows files of `recsys eval --out` (JSON lines), as many as needed; a (row, method, M)
    /// in two of them is refused.
    #[arg(long, required = true)]
    rows: Vec<PathBuf>,
    /// `A:B`: method A against method B (names as in the rows files) at every M both have,
    /// on the rows both scored, paired per row. Repeatable.
    #[arg(long)]
    pair: Vec<String>,
    /// Output folder (the tables are printed either way).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `pgraphrag recsys compare`.
pub fn run(a: CompareArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.out {
        let inputs: Vec<(&str, &Path)> = a.rows.iter().map(|p| ("--rows", p.as_path())).collect();
        crate::output::folder("--out", out, &RESULT_FILES, &inputs)?;
    }
    let spec = CompareSpec {
        rows: a.rows,
        pairs: a
            .pair
            .iter()
            .map(|p| parse_pair(p))
            .collect::<Result<_, _>>()?,
    };
    let report = spec.run()?;
    if let Some(out) = &a.out {
        report.write(out)?;
    }
    print!("{}", report.markdown);
    Ok(())
}
