//! `pgraphrag baselines`: answers without an LLM on the rows `pgraphrag bench` evaluates (the
//! same users, in the same order, for the same `--skip` and `--limit`), scored with the grid's
//! own scorers into the same results table (issue 36). The work is the library's
//! (`pgraphrag_eval::baselines`); this module reads the flags and writes the files.
//!
//! Writes into `--out`: `predictions.jsonl` (one line per user: every baseline's answer and
//! its scores alone), `results.md` (the table and its notes) and `results.csv`.
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use pgraphrag_core::{Language, Task};
use pgraphrag_eval::baselines::{
    AnswerKind, BaselineOptions, bench_rows, pgraphrag_baselines, run_baselines, split_examples,
    split_golds, validation_rows,
};
use pgraphrag_eval::{RatingScorer, Recipe, Scorer, TextScorer};
use pgraphrag_metrics::Meteor;

use crate::bench_args::{LanguageArg, names};
use crate::error::usage;

/// The files written into `--out`.
const FILES: [&str; 3] = ["predictions.jsonl", "results.md", "results.csv"];

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

/// The grid's scorer for `task` (`pgraphrag bench`'s: ROUGE-1/L and METEOR over WordNet, or
/// MAE/RMSE).
fn scorer(task: Task) -> anyhow::Result<Box<dyn Scorer>> {
    Ok(match task {
        Task::Rating => Box::new(RatingScorer::default()),
        Task::Text | Task::Title => {
            let meteor =
                crate::wordnet::load()?.map(|wn| Meteor::with_wordnet(wn, Default::default()));
            if meteor.is_none() {
                eprintln!("{}", crate::wordnet::missing_note());
            }
            Box::new(TextScorer::new(meteor))
        }
    })
}

/// Runs `pgraphrag baselines`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(out) = &args.out {
        crate::output::folder("--out", out, &FILES, &[("--split", &args.split)])?;
    }
    let task = args.task;
    let (dataset, split_name) = names(&args.split);
    let split = crate::args::load_split(&args.split)?;
    let n = split.users.len();
    let rows = bench_rows(n, args.skip, args.limit);
    if rows.is_empty() {
        return Err(usage(
            "no users to run (--limit 0, --skip past the end, or an empty split)",
        ));
    }
    let val_rows = validation_rows(n, &rows, args.validation);
    if val_rows.is_empty() {
        return Err(usage(format!(
            "no users after the evaluated ones ({}–{} of {n}) to choose the constant answers on: \
             lower --limit or --skip, or raise --validation",
            rows.start,
            rows.end - 1
        )));
    }
    let validation_golds = split_golds(&split, task, val_rows.clone())?;
    let options = BaselineOptions {
        words: args.words,
        language: args
            .language
            .map_or_else(|| Language::for_dataset(&dataset), Into::into),
    };
    let baselines = pgraphrag_baselines(task, options, &validation_golds)?;

    // The grid's graph (the released code's recipe, as `pgraphrag bench` ranks with).
    let recipe = Recipe::ReleasedCode;
    let graph = recipe.graph(&split);
    let examples = split_examples(&split, &graph, recipe.id_policy(), task, rows.clone())?;
    let golds = split_golds(&split, task, rows.clone())?;
    let kind = match task {
        Task::Rating => AnswerKind::Rating,
        Task::Text | Task::Title => AnswerKind::Text,
    };
    let title = format!("{dataset}_{split_name}_{}_baselines", task.reference_name());
    let scorer = scorer(task)?;
    eprintln!(
        "baselines: users {}–{} of {dataset}_{split_name} ({} rows), task {}, {} baselines, \
         constants chosen on users {}–{}",
        rows.start,
        rows.end - 1,
        rows.len(),
        task.reference_name(),
        baselines.len(),
        val_rows.start,
        val_rows.end - 1
    );
    let report = run_baselines(title, kind, &examples, &golds, &baselines, scorer.as_ref())?;
    let mut markdown = report.to_markdown();
    markdown.push_str(&format!(
        "\nRows: users {}–{} of the split in file order, counted from 0 (`pgraphrag bench \
         --skip {} --limit {}`); `const_val` chosen on the gold answers of users {}–{}.\n",
        rows.start,
        rows.end - 1,
        args.skip,
        rows.len(),
        val_rows.start,
        val_rows.end - 1
    ));
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .with_context(|| format!("creating the output folder {}", out.display()))?;
        crate::output::write(&out.join(FILES[0]), report.to_jsonl()?.as_bytes())?;
        crate::output::write(&out.join(FILES[1]), markdown.as_bytes())?;
        crate::output::write(&out.join(FILES[2]), report.table.to_csv().as_bytes())?;
        eprintln!("wrote {}", out.display());
    }
    println!("{markdown}");
    Ok(())
}
