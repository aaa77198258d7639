//! What the LaMP commands (`lamp prompts`, `lamp grid`, `lamp baselines`) share: the summary
//! placement, answer reading and cell flags. The summaries file is read by
//! `pgraphrag_runs::lamp::read_summaries`.
use clap::ValueEnum;
use pgraphrag_eval::lamp_grid::{AnswerReading, LampConfig};

use crate::error::OrUsage;
use pgraphrag_prompt::lamp::SummaryPlacement;

/// Where the summary goes (`--summary-placement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum PlacementArg {
    /// `{summary}. {LaMP's prompt}`.
    Prefix,
    /// `{items}. {summary}. {input}` (LaMP-1: as prefix).
    BeforeInput,
}

impl From<PlacementArg> for SummaryPlacement {
    fn from(p: PlacementArg) -> Self {
        match p {
            PlacementArg::Prefix => SummaryPlacement::Prefix,
            PlacementArg::BeforeInput => SummaryPlacement::BeforeInput,
        }
    }
}

/// How answers are read (`--reading`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReadingArg {
    /// As LaMP's evaluation.py: the stripped output must be the label or number.
    Strict,
    /// The first label (or digit 1-5 for LaMP-3) anywhere in the output.
    FirstLabel,
}

impl From<ReadingArg> for AnswerReading {
    fn from(r: ReadingArg) -> Self {
        match r {
            ReadingArg::Strict => AnswerReading::Strict,
            ReadingArg::FirstLabel => AnswerReading::FirstLabel,
        }
    }
}

/// `--configs` parsed into cells (`None`: the grid's default, the paper's Table 3).
pub(crate) fn configs(names: Option<&[String]>) -> anyhow::Result<Option<Vec<LampConfig>>> {
    names
        .map(|names| {
            names
                .iter()
                .map(|n| n.parse::<LampConfig>())
                .collect::<Result<Vec<_>, _>>()
                .or_usage()
        })
        .transpose()
}

/// The questions a LaMP grid answers: the flags `lamp grid`, `lamp baselines` and `lamp
/// rescore` share.
#[derive(clap::Args, Debug)]
pub(crate) struct RowsArgs {
    /// The grid's LaMP questions file (e.g. `corpus lamp`'s `train_questions.json`).
    #[arg(long)]
    pub questions: std::path::PathBuf,
    /// Its outputs file (`{"task", "golds": [{id, output}]}`).
    #[arg(long)]
    pub outputs: std::path::PathBuf,
    /// The task: LaMP-1 … LaMP-7 or LaMP-2-old.
    #[arg(long, value_parser = crate::args::lamp_task)]
    pub task: pgraphrag_core::LampTask,
}
