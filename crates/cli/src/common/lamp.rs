//! What the LaMP commands (`lamp prompts`, `lamp grid`, `lamp baselines`) share: the summary
//! placement and answer reading flags. The summaries file is read by
//! `pgraphrag_runs::lamp::read_summaries`.
use clap::ValueEnum;
use pgraphrag_eval::lamp_grid::AnswerReading;
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
