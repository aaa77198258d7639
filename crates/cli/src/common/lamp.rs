//! What the LaMP commands (`lamp prompts`, `lamp grid`, `lamp baselines`) share: the summary
//! placement and answer reading flags, and the summaries file they read.
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use anyhow::Context;
use clap::ValueEnum;
use pgraphrag_eval::lamp_grid::AnswerReading;
use pgraphrag_prompt::lamp::SummaryPlacement;
use serde::Deserialize;

use crate::error::{OrUsage, usage};

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

/// Reads a summaries file (JSON lines `{"id", "summary"}`, `pgraphrag summarize --export`):
/// an unreadable file, a line of another shape, an id given twice or no summary at all is bad
/// input (exit code 2).
pub(crate) fn read_summaries(path: &Path) -> anyhow::Result<HashMap<String, String>> {
    #[derive(Deserialize)]
    struct S {
        id: String,
        summary: String,
    }
    let f = std::fs::File::open(path)
        .with_context(|| format!("cannot open {}", path.display()))
        .or_usage()?;
    let mut out = HashMap::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line
            .with_context(|| format!("{}: line {}: cannot read", path.display(), i + 1))
            .or_usage()?;
        if line.trim().is_empty() {
            continue;
        }
        let s: S = serde_json::from_str(&line)
            .with_context(|| {
                format!(
                    "{}: line {}: expected {{\"id\", \"summary\"}} strings",
                    path.display(),
                    i + 1
                )
            })
            .or_usage()?;
        if out.contains_key(&s.id) {
            return Err(usage(format!(
                "{}: line {}: user {:?} has a second summary; each id must appear once",
                path.display(),
                i + 1,
                s.id
            )));
        }
        out.insert(s.id, s.summary);
    }
    if out.is_empty() {
        return Err(usage(format!(
            "{}: no summaries in the file (it is empty); write them with `pgraphrag summarize --export`",
            path.display()
        )));
    }
    Ok(out)
}
