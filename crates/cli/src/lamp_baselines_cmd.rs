//! `pgraphrag lamp baselines`: answers without an LLM on the questions `pgraphrag lamp grid`
//! scores (the same questions file, order and `--limit`, golds from the same outputs file),
//! read and scored with the grid's own reading and metrics, and, given the grid's folder, the
//! strongest of them against the grid's best cell, paired per question (issue 36). The work is
//! `pgraphrag_runs::lamp::BaselinesSpec`; this module maps the flags and writes the results.
//!
//! Writes into `--out`: `predictions.jsonl` (one line per question: every baseline's answer
//! and its scores alone), `results.md` (with `--grid`, first the comparison; then the table and
//! its notes), `results.csv`, and with `--grid` `comparison.md` (the comparison as one row of a
//! Markdown table, for a README that lists several grids).
use std::path::PathBuf;

use pgraphrag_runs::lamp::{BaselinesReport, BaselinesSpec};

use crate::common::lamp::ReadingArg;

/// Arguments of `pgraphrag lamp baselines`.
#[derive(clap::Args, Debug)]
pub struct BaselinesArgs {
    #[command(flatten)]
    rows: crate::common::lamp::RowsArgs,
    /// Only the first N questions, as `pgraphrag lamp grid --limit N`.
    #[arg(long, value_parser = crate::args::at_least_one)]
    limit: Option<usize>,
    /// Questions of other users (`corpus lamp`'s `dev_questions.json`): the constant answer
    /// (`const_val`) is chosen on their golds, never on the evaluated users'.
    #[arg(long)]
    validation_questions: PathBuf,
    /// The outputs file of --validation-questions.
    #[arg(long)]
    validation_outputs: PathBuf,
    /// How answers are read before scoring (the grid's --reading).
    #[arg(long, value_enum, default_value = "strict")]
    reading: ReadingArg,
    /// k of the first-k-words baseline.
    #[arg(long, default_value_t = 10, value_parser = crate::args::at_least_one)]
    words: usize,
    /// The grid's output folder (`<cell>-seed<s>_outputs.json` per cell and seed): compare the
    /// strongest baseline with its best cell, per question.
    #[arg(long)]
    grid: Option<PathBuf>,
    /// The grid's cells (default: the paper's Table 3).
    #[arg(long, value_delimiter = ',')]
    configs: Option<Vec<String>>,
    /// The grid's seeds (a cell's per-question score is the mean over them, as in its table).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    seeds: Vec<u64>,
    /// The grid's model was fine-tuned (`lamp grid --adapter`): the comparison says so.
    #[arg(long, requires = "grid")]
    fine_tuned: bool,
    /// Output folder (the table is printed either way).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `pgraphrag lamp baselines`.
pub fn run(a: BaselinesArgs) -> anyhow::Result<()> {
    let configs = crate::common::lamp::configs(a.configs.as_deref())?;
    if let Some(out) = &a.out {
        let mut inputs = vec![
            ("--questions", a.rows.questions.as_path()),
            ("--outputs", &a.rows.outputs),
            ("--validation-questions", &a.validation_questions),
            ("--validation-outputs", &a.validation_outputs),
        ];
        if let Some(g) = &a.grid {
            inputs.push(("--grid", g));
        }
        crate::output::folder("--out", out, &BaselinesReport::FILES, &inputs)?;
    }
    let spec = BaselinesSpec {
        questions: a.rows.questions,
        outputs: a.rows.outputs,
        task: a.rows.task,
        limit: a.limit,
        validation_questions: a.validation_questions,
        validation_outputs: a.validation_outputs,
        reading: a.reading.into(),
        words: a.words,
        grid: a.grid,
        configs,
        seeds: a.seeds,
        fine_tuned: a.fine_tuned,
    };
    crate::output::baselines(&spec.run()?, a.out.as_deref())
}
