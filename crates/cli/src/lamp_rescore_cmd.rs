//! `pgraphrag lamp rescore`: a LaMP grid's table recomputed from its predictions files alone
//! (`pgraphrag_runs::lamp::RescoreSpec`): no model, no prompt, no cache. The test command
//! recomputes every committed grid of `docs/results/lamp/` this way.
use std::path::PathBuf;

use pgraphrag_eval::RunDir;
use pgraphrag_runs::lamp::RescoreSpec;

use crate::common::lamp::ReadingArg;

/// Arguments of `pgraphrag lamp rescore`.
#[derive(clap::Args, Debug)]
pub struct RescoreArgs {
    #[command(flatten)]
    rows: crate::common::lamp::RowsArgs,
    /// The grid's --limit.
    #[arg(long, value_parser = crate::args::at_least_one)]
    limit: Option<usize>,
    /// The grid's --reading.
    #[arg(long, value_enum, default_value = "strict")]
    reading: ReadingArg,
    /// The grid's cells (default: the paper's Table 3).
    #[arg(long, value_delimiter = ',')]
    configs: Option<Vec<String>>,
    /// The grid's seeds.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    seeds: Vec<u64>,
    /// The grid's folder (`<cell>-seed<s>_outputs.json` per cell and seed).
    #[arg(long)]
    grid: PathBuf,
    /// Output folder: results.md, results.csv, results.svg.
    #[arg(long)]
    out: PathBuf,
}

/// Runs `pgraphrag lamp rescore`.
pub fn run(a: RescoreArgs) -> anyhow::Result<()> {
    let configs = crate::common::lamp::configs(a.configs.as_deref())?;
    let inputs = [
        ("--questions", a.rows.questions.as_path()),
        ("--outputs", &a.rows.outputs),
        ("--grid", &a.grid),
    ];
    crate::output::folder("--out", &a.out, &RunDir::RESULTS, &inputs)?;
    let spec = RescoreSpec {
        questions: a.rows.questions,
        outputs: a.rows.outputs,
        task: a.rows.task,
        limit: a.limit,
        reading: a.reading.into(),
        configs,
        seeds: a.seeds,
        grid: a.grid,
    };
    println!("{}", spec.run(&a.out)?);
    Ok(())
}
