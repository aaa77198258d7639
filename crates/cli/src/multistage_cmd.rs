//! `pgraphrag multistage`: the multistage writing paper (Li et al. 2023). `build` turns an
//! `AuthoredDoc` corpus (from `pgraphrag corpus convert`) into the paper's examples under its
//! data rules, `DIR/examples.jsonl`, and prints the counts per split; `baselines` answers the
//! grid's examples without a model. See `docs/multistage.md`.
use std::path::PathBuf;

use clap::Subcommand;
use pgraphrag_corpora::multistage;
use pgraphrag_runs::corpus::ExamplesSpec;
use pgraphrag_runs::multistage::{BaselinesReport, BaselinesSpec};

/// Arguments of `pgraphrag multistage`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: MultistageCmd,
}

/// The `multistage` subcommands.
#[derive(Subcommand, Debug)]
pub enum MultistageCmd {
    /// Build the paper's examples (immediate context, target, earlier documents) from a corpus.
    Build(BuildArgs),
    /// Run the paper's Table 2 grid zero-shot with a local model: BLEU, ROUGE, paired t-tests.
    Run(crate::multistage_run::RunArgs),
    /// Export the training records (weak labels, generation, author pairs) as JSON lines.
    Export(crate::multistage_export::ExportArgs),
    /// Answers without a model on the grid's examples (the passage start, the author's earlier
    /// documents), scored as the grid; with --grid, the strongest against its best cell.
    Baselines(BaselinesArgs),
}

/// Arguments of `pgraphrag multistage baselines`.
#[derive(clap::Args, Debug)]
pub struct BaselinesArgs {
    /// The examples file of `pgraphrag multistage build`.
    #[arg(long)]
    pub examples: PathBuf,
    /// The part of the user split, as the grid's --split.
    #[arg(long, value_enum, default_value = "test")]
    pub split: crate::multistage_run::SplitArg,
    /// Only the first N examples of the split, as the grid's --limit.
    #[arg(long)]
    pub limit: Option<usize>,
    /// The grid's output folder (`multistage run --out`): compare the strongest baseline with
    /// its best cell by ROUGE-1 (paired when the folder has predictions/).
    #[arg(long)]
    pub grid: Option<PathBuf>,
    /// Output folder: results.md, results.csv, predictions.jsonl (the table is printed either
    /// way).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `pgraphrag multistage build`.
#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// A corpus from `pgraphrag corpus convert` (AuthoredDoc JSON Lines).
    #[arg(long)]
    pub corpus: PathBuf,
    /// The output folder (created if missing): examples.jsonl.
    #[arg(long)]
    pub out: PathBuf,
    /// Seed of the user split and of the choice of targets beyond 50 per author [default: 42].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `pgraphrag multistage`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        MultistageCmd::Build(a) => build(a),
        MultistageCmd::Run(a) => crate::multistage_run::run(a),
        MultistageCmd::Export(a) => crate::multistage_export::run(a),
        MultistageCmd::Baselines(a) => baselines(a),
    }
}

fn baselines(a: BaselinesArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.out {
        let mut inputs = vec![("--examples", a.examples.as_path())];
        if let Some(g) = &a.grid {
            inputs.push(("--grid", g));
        }
        crate::output::folder("--out", out, &BaselinesReport::FILES, &inputs)?;
    }
    let spec = BaselinesSpec {
        examples: a.examples,
        split: a.split.into(),
        limit: a.limit,
        grid: a.grid,
    };
    crate::output::baselines(&spec.run()?, a.out.as_deref())
}

fn build(a: BuildArgs) -> anyhow::Result<()> {
    crate::output::folder(
        "--out",
        &a.out,
        &[multistage::EXAMPLES_FILE],
        &[("--corpus", &a.corpus)],
    )?;
    let mut spec = ExamplesSpec::paper(&a.corpus, &a.out);
    if let Some(s) = a.seed {
        spec.options.seed = s;
    }
    let (built, path) = spec.run()?;
    if !a.quiet {
        println!("{}: examples {}", path.display(), built.report);
        print!("{}", built.stats_table());
        let name = a.corpus.file_stem().map(|s| s.to_string_lossy());
        let name = name.as_deref().unwrap_or("corpus");
        print!("\n{}{}", multistage::TABLE1_HEADER, built.table1_row(name));
    }
    Ok(())
}
