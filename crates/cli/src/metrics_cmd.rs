//! `pgraphrag metrics`: score prediction/reference pairs with ROUGE, METEOR and BLEU.
//!
//! Input: JSON Lines `{"id": .., "prediction": "..", "reference": ".."}`. Output: one line per
//! pair, `{"id","rouge1","rouge2","rougeL","rougeLsum","meteor","bleu"}` in input order (ROUGE
//! F-measures as rouge-score computes them, METEOR as HF `evaluate`/nltk, sentence BLEU as
//! sacreBLEU), then a summary table on stderr: the mean and a 95% bootstrap interval of each
//! metric.
//!
//! The run is `pgraphrag_runs::metrics::MetricsSpec`; this module finds WordNet (the METEOR
//! search list) and maps the flags.
use std::path::PathBuf;

use pgraphrag_metrics::rouge::RougeTokenizer;
use pgraphrag_runs::metrics::MetricsSpec;

use crate::progress::Bar;

/// Arguments of `pgraphrag metrics`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// JSON Lines file of `{"id", "prediction", "reference"}` objects.
    #[arg(long)]
    pub pairs: PathBuf,
    /// Where to write one JSON line of scores per pair.
    #[arg(long)]
    pub out: PathBuf,
    /// Porter-stem ROUGE tokens longer than 3 characters (rouge-score's `use_stemmer=True`).
    #[arg(long)]
    pub stemmer: bool,
    /// ROUGE tokenizer.
    #[arg(long, value_enum, default_value = "ascii")]
    pub tokenizer: TokenizerArg,
    /// Seed of the bootstrap intervals in the summary.
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Scoring threads (default: all cores). WordNet is loaded on one more, short-lived thread.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// The ROUGE tokenizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TokenizerArg {
    /// rouge-score's: lowercase ASCII letters and digits (the reference).
    Ascii,
    /// Keeps accented letters (not comparable with published numbers).
    Unicode,
}

/// Runs `pgraphrag metrics`.
pub fn run(args: Args) -> anyhow::Result<()> {
    crate::output::file("--out", &args.out, &[("--pairs", &args.pairs)])?;
    let wordnet = crate::wordnet::locate().ok();
    if wordnet.is_none() {
        eprintln!("{}", crate::wordnet::missing_note());
    }
    let spec = MetricsSpec {
        pairs: args.pairs,
        out: args.out,
        stemmer: args.stemmer,
        tokenizer: match args.tokenizer {
            TokenizerArg::Ascii => RougeTokenizer::Ascii,
            TokenizerArg::Unicode => RougeTokenizer::Unicode,
        },
        seed: args.seed,
        threads: args.threads,
        wordnet,
    };
    let report = spec.run(&Bar::new(args.quiet))?;
    eprintln!("{} pairs scored -> {}", report.pairs, spec.out.display());
    eprint!("{}", report.summary);
    Ok(())
}
