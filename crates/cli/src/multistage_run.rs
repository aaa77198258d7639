//! `pgraphrag multistage run`: the multistage writing paper's Table 2 grid on one split of a
//! `multistage build` examples file with a local GGUF model (`pgraphrag_runs::multistage::RunSpec`
//! does the work): the rankers (BM25, recency, MiniLM for the dense ones), keywords, the LLM
//! summaries and syntheses and every cell's answers through the resumable generation cache,
//! BLEU and ROUGE with bootstrap intervals and paired t-tests against `ImmedCtx` and
//! `RankDocBM25`. Writes `results.md`, `results.csv`, `results.svg`, `results.json`,
//! `stages.jsonl` and `predictions/<cell>.jsonl` into `--out`, prints the table and a
//! `stats {...}` line. See `docs/multistage.md`, "Grid".
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::ValueEnum;
use pgraphrag_corpora::lamp::SplitName;
use pgraphrag_eval::multistage::PrependStart;
use pgraphrag_runs::multistage::RunSpec;

use crate::error::OrUsage;
use crate::progress::Bar;

/// A part of the user split (`--split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SplitArg {
    /// Training users.
    Train,
    /// Validation users.
    Dev,
    /// Test users (the paper's Table 2).
    Test,
}

impl From<SplitArg> for SplitName {
    fn from(s: SplitArg) -> Self {
        match s {
            SplitArg::Train => SplitName::Train,
            SplitArg::Dev => SplitName::Dev,
            SplitArg::Test => SplitName::Test,
        }
    }
}

/// Which cells get the passage start prepended to their output (`--prepend-start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrependArg {
    /// As the paper: LLMZeroShot only.
    Paper,
    /// Every cell.
    All,
    /// No cell.
    None,
}

impl From<PrependArg> for PrependStart {
    fn from(p: PrependArg) -> Self {
        match p {
            PrependArg::Paper => PrependStart::Paper,
            PrependArg::All => PrependStart::All,
            PrependArg::None => PrependStart::None,
        }
    }
}

/// Arguments of `pgraphrag multistage run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The examples file of `pgraphrag multistage build` (DIR/examples.jsonl).
    #[arg(long)]
    pub examples: PathBuf,
    /// The local GGUF model for every cell and stage (e.g. models/SmolLM2-135M-Instruct.Q4_1.gguf).
    #[arg(long)]
    pub model: PathBuf,
    /// Output folder: results.md/csv/svg/json, stages.jsonl, predictions/<cell>.jsonl.
    #[arg(long)]
    pub out: PathBuf,
    /// The part of the user split evaluated.
    #[arg(long, value_enum, default_value = "test")]
    pub split: SplitArg,
    /// Only the first N examples of the split.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Comma-separated cells (ImmedCtx, LLMZeroShot, RecentDoc, RankDocBM25, RankDocDense,
    /// RankSnippet, RankDocBySnpt, SumCtxInd, SumCtx, SynCtxInd, SynCtx; `+start` / `-start`
    /// to prepend the passage start or not); default: all of Table 2.
    #[arg(long, value_delimiter = ',')]
    pub cells: Option<Vec<String>>,
    /// Which cells get the passage start prepended when a cell name does not say.
    #[arg(long, value_enum, default_value = "paper")]
    pub prepend_start: PrependArg,
    /// The ranker under the summary and synthesis cells (default: the best retrieval cell by ROUGE-1).
    #[arg(long)]
    pub best_ranker: Option<String>,
    /// The summary under the synthesis cells, SumCtxInd or SumCtx (default: the best by ROUGE-1).
    #[arg(long)]
    pub best_summary: Option<String>,
    /// New tokens per generated document.
    #[arg(long, default_value_t = 256, value_parser = crate::args::at_least_one)]
    pub max_tokens: usize,
    /// Sampling temperature (0 = greedy).
    #[arg(long, default_value_t = 0.0, value_parser = crate::args::non_negative)]
    pub temperature: f64,
    /// New tokens per LLM summary.
    #[arg(long, default_value_t = 128, value_parser = crate::args::at_least_one)]
    pub summary_tokens: usize,
    /// New tokens per LLM synthesis (a word list).
    #[arg(long, default_value_t = 64, value_parser = crate::args::at_least_one)]
    pub synthesis_tokens: usize,
    /// The LLM stages' context in tokens (prompt and answer; past passages that do not fit are dropped).
    #[arg(long, default_value_t = 2048, value_parser = crate::args::at_least_one)]
    pub stage_context: usize,
    /// Distinct prompts per model call.
    #[arg(long, default_value_t = 8, value_parser = crate::args::at_least_one)]
    pub batch: usize,
    /// The dense encoder of RankDocDense, RankSnippet and RankDocBySnpt (and of --labels).
    #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
    pub encoder: PathBuf,
    /// The encoder's linear layers: f32, or int8 (quantized at load; about twice as fast with
    /// AVX-512 VNNI, mean cosine 0.999 to f32; its embeddings are cached apart; docs/dense.md).
    #[arg(long, default_value = "f32")]
    pub encoder_precision: pgraphrag_retrieval::dense::Precision,
    /// WordNet 3.0 for the synthesis weak label of --labels (default: the METEOR search list).
    #[arg(long)]
    pub wordnet: Option<PathBuf>,
    /// Also compute the summary and synthesis weak labels into stages.jsonl.
    #[arg(long)]
    pub labels: bool,
    /// The generation cache (default: OUT/cache.sqlite; a rerun generates only what is missing).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Append `stored <cache key>` to this file right after each answer is committed.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `pgraphrag multistage run`.
pub fn run(a: RunArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    check_outputs(&a)?;
    let wordnet = match (&a.wordnet, a.labels) {
        (None, true) => Some(
            crate::wordnet::locate()
                .context("the synthesis weak label needs WordNet 3.0 (scripts/fetch-wordnet.sh, or --wordnet DIR)")
                .or_usage()?,
        ),
        (w, _) => w.clone(),
    };
    let spec = RunSpec {
        examples: a.examples.clone(),
        model: a.model.clone(),
        out: a.out.clone(),
        split: a.split.into(),
        limit: a.limit,
        cells: a.cells.clone(),
        prepend_start: a.prepend_start.into(),
        best_ranker: a
            .best_ranker
            .as_deref()
            .map(str::parse)
            .transpose()
            .or_usage()?,
        best_summary: a.best_summary.clone(),
        max_tokens: a.max_tokens,
        temperature: a.temperature,
        summary_tokens: a.summary_tokens,
        synthesis_tokens: a.synthesis_tokens,
        stage_context: a.stage_context,
        batch: a.batch,
        encoder: a.encoder.clone(),
        encoder_precision: a.encoder_precision,
        wordnet,
        labels: a.labels,
        cache: a.cache.clone(),
        journal: a.journal.clone(),
    };
    let report = spec.run(&Bar::new(a.quiet))?;
    println!("{}", report.markdown);
    println!("stats {}", serde_json::to_string(&report.stats)?);
    eprintln!(
        "{} distinct prompts ({} cached, {} generated), {} model calls generated in {:.0}s; wrote {}",
        report.distinct_prompts,
        report.cached,
        report.generated,
        report.model_calls,
        t0.elapsed().as_secs_f64(),
        a.out.display()
    );
    Ok(())
}

/// Refuses, before anything is read or loaded, an --out folder whose result files would be an
/// input, a link or not a regular file, and such a --journal.
fn check_outputs(a: &RunArgs) -> anyhow::Result<()> {
    let mut inputs = vec![
        ("--examples", a.examples.as_path()),
        ("--model", &a.model),
        ("--encoder", &a.encoder),
    ];
    for (flag, p) in [("--wordnet", &a.wordnet), ("--cache", &a.cache)] {
        if let Some(p) = p {
            inputs.push((flag, p));
        }
    }
    crate::output::folder("--out", &a.out, &RunSpec::FILES, &inputs)?;
    crate::output::optional("--journal", a.journal.as_deref(), &inputs)
}
