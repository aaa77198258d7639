//! `pgraphrag baselines`: answers without an LLM on the rows `pgraphrag bench` evaluates (the
//! same users, in the same order, for the same `--skip` and `--limit`), scored with the grid's
//! own scorers into the same results table (issue 36). The run is
//! `pgraphrag_runs::pgraphrag::BaselinesSpec`; this module maps the flags and writes the files.
//!
//! Writes into `--out`: `predictions.jsonl` (one line per user: every baseline's answer and
//! its scores alone), `results.md` (the table and its notes) and `results.csv`.
use std::path::PathBuf;

use clap::Parser;
use pgraphrag_core::Task;
use pgraphrag_runs::pgraphrag::{BaselinesReport, BaselinesSpec};

use crate::bench_args::LanguageArg;
use crate::progress::Bar;

/// Flags of `pgraphrag baselines`.
#[derive(Parser, Debug)]
pub struct Args {
    /// A PGraphRAG split file (e.g. $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json).
    #[arg(long)]
    pub split: PathBuf,
    /// The task (reviewText, reviewTitle, reviewRating also accepted).
    #[arg(long, value_parser = crate::args::task())]
    pub task: Task,
    /// Run on the first N users of the split, as `pgraphrag bench --limit N` (neighbours still
    /// come from the whole split).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Skip the first N users of the split, as `pgraphrag bench --skip N`.
    #[arg(long, default_value_t = 0)]
    pub skip: usize,
    /// Choose the constant answers (`const_val`) on the gold answers of the N users that follow
    /// the evaluated ones, never on the evaluated users.
    #[arg(long, default_value_t = 200)]
    pub validation: usize,
    /// k of the first-k-words title baseline.
    #[arg(long, default_value_t = 10)]
    pub words: usize,
    /// The first-sentence baseline's language (default: pt for b2w splits, en otherwise).
    #[arg(long, value_enum)]
    pub language: Option<LanguageArg>,
    /// Output folder: predictions.jsonl, results.md, results.csv (the table is printed either
    /// way).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `pgraphrag baselines`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(out) = &args.out {
        crate::output::folder(
            "--out",
            out,
            &BaselinesReport::FILES,
            &[("--split", &args.split)],
        )?;
    }
    let wordnet = match args.task {
        Task::Rating => None,
        Task::Text | Task::Title => {
            let found = crate::wordnet::locate().ok();
            if found.is_none() {
                eprintln!("{}", crate::wordnet::missing_note());
            }
            found
        }
    };
    let spec = BaselinesSpec {
        split: args.split.clone(),
        task: args.task,
        limit: args.limit,
        skip: args.skip,
        validation: args.validation,
        words: args.words,
        language: args.language.map(Into::into),
        wordnet,
    };
    crate::output::baselines(&spec.run(&Bar::new(true))?, args.out.as_deref())
}
