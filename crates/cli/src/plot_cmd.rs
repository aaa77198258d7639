//! `pgraphrag plot`: a results CSV (as `pgraphrag bench` writes it) as an SVG bar chart.
use std::path::PathBuf;

use anyhow::Context;
use pgraphrag_eval::ResultsTable;

use crate::error::OrUsage;

/// Arguments of `pgraphrag plot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A results CSV (`mode_k,<metric>…`), e.g. `runs/x/results.csv`.
    #[arg(long)]
    pub csv: PathBuf,
    /// Where to write the SVG.
    #[arg(long)]
    pub out: PathBuf,
    /// The chart's title (default: the CSV's file name).
    #[arg(long)]
    pub title: Option<String>,
}

/// Reads the CSV and writes one panel per metric, one group of bars per mode, one bar per k;
/// a table too large to draw legibly is drawn in part, as the chart's foot and stderr say.
pub fn run(a: Args) -> anyhow::Result<()> {
    crate::output::file("--out", &a.out, &[("--csv", &a.csv)])?;
    let text = std::fs::read_to_string(&a.csv)
        .with_context(|| {
            format!(
                "reading {} (a results CSV from `pgraphrag bench`)",
                a.csv.display()
            )
        })
        .or_usage()?;
    let title = a.title.unwrap_or_else(|| {
        a.csv
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    });
    let table = ResultsTable::from_csv(title, &text)
        .with_context(|| a.csv.display().to_string())
        .or_usage()?;
    crate::output::write(&a.out, table.to_svg().as_bytes())?;
    match table.chart_note() {
        Some(note) => eprintln!("wrote {} ({note})", a.out.display()),
        None => eprintln!("wrote {}", a.out.display()),
    }
    Ok(())
}
