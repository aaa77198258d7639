//! `pgraphrag train kragrec`: K-RagRec's graph encoder and projector trained on recsys rows
//! (retrieval as the KG-Text method does it, cached per row; the released `train.py` prompt
//! around the graph token; the cross-entropy of the answer letter through the frozen LLM),
//! resumably, written as `ENCODER.safetensors` for `pgraphrag recsys eval --adapter`.
//! See `docs/train.md` and `docs/kragrec.md`.
use std::path::PathBuf;

use pgraphrag_recsys::PromptStyle;
use pgraphrag_runs::kragrec::{GnnSize, TrainSpec};
use pgraphrag_train::Ablation;

use crate::common::kragrec::{DataArgs, Inputs, check_outputs};
use crate::common::train::TrainFlags;
use crate::error::OrUsage;
use crate::progress::Bar;

/// Soft tokens of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SoftTokensArg {
    /// One token, the mean over the sub-graphs (the released code).
    Mean,
    /// One token per sub-graph (the paper).
    PerSubgraph,
}

/// Encoder size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GnnArg {
    /// 2 layers, hidden 128, 4 heads, projector 256.
    Small,
    /// The paper's 4 layers, hidden 1024, 4 heads, projector 2048.
    Paper,
}

/// Arguments of `pgraphrag train kragrec`.
#[derive(clap::Args, Debug)]
pub struct KragrecArgs {
    #[command(flatten)]
    data: DataArgs,
    /// The frozen LLM: a llama-architecture GGUF (e.g. models/SmolLM2-135M-Instruct.Q4_1.gguf).
    #[arg(long)]
    model: PathBuf,
    /// Where the trained encoder is written (safetensors, atomically) when the run ends.
    #[arg(long)]
    out: PathBuf,
    /// The retrieval cache (default: --out with `.retrieval.json`).
    #[arg(long)]
    retrieval_cache: Option<PathBuf>,
    /// First row index of the training range (ML-1M: rows 0..9000 are the released training
    /// rows, 9000..10000 the test rows).
    #[arg(long, default_value_t = 0)]
    start: usize,
    /// Rows in the training range.
    #[arg(long, default_value_t = 9000)]
    rows: usize,
    /// Train on at most this many rows (the first of the range that have sub-graphs, unless
    /// --all-rows).
    #[arg(long)]
    max_rows: Option<usize>,
    /// Validation rows: the next this many usable rows after the training rows.
    #[arg(long, default_value_t = 0)]
    val_rows: usize,
    /// Also train on rows the popularity gate gives no sub-graph (no soft token; with a
    /// frozen LLM they give the encoder no gradient).
    #[arg(long)]
    all_rows: bool,
    /// Candidates per row (option letters A..).
    #[arg(long, default_value_t = 20)]
    m: usize,
    /// Candidate sampling seed (the evaluation's).
    #[arg(long, default_value_t = 2025)]
    sample_seed: u64,
    /// Instruction wording: released-train (the released train.py), released-eval or paper.
    #[arg(long, default_value = "released-train")]
    style: String,
    /// One mean soft token (released code) or one per sub-graph (paper).
    #[arg(long, value_enum, default_value = "mean")]
    soft_tokens: SoftTokensArg,
    /// Encoder size.
    #[arg(long, value_enum, default_value = "small")]
    gnn: GnnArg,
    /// Train an ablated variant (the paper's appendix A.6): none (K-RagRec), -indexing,
    /// -popularity, -re-ranking or -encoding (a soft prompt, the triples as text; --out is
    /// then the soft prompt).
    #[arg(long, default_value = "none", allow_hyphen_values = true)]
    ablation: String,
    /// Also train LoRA adapters on the LLM (the paper's "LoRA w/ K-RagRec": rank 8, alpha
    /// 16, dropout 0.1 on q and v) and write them here (for `recsys eval --lora`).
    #[arg(long)]
    lora_out: Option<PathBuf>,
    #[command(flatten)]
    run: TrainFlags,
}

/// Runs `pgraphrag train kragrec` (the caller has limited candle's threads).
pub fn run(a: KragrecArgs) -> anyhow::Result<()> {
    let style = PromptStyle::parse(&a.style).or_usage()?;
    let ablation = Ablation::parse(&a.ablation).or_usage()?;
    let d = &a.data;
    let inputs = Inputs::dataset(&d.ml100k, d.ml1m.as_deref())
        .with("--encoder", Some(&d.encoder))
        .with("--model", Some(&a.model));
    let outputs = [
        ("--out", Some(a.out.as_path())),
        ("--lora-out", a.lora_out.as_deref()),
        ("--retrieval-cache", a.retrieval_cache.as_deref()),
        ("--checkpoint", Some(a.run.checkpoint.as_path())),
    ];
    check_outputs(inputs, &d.index, &outputs, None)?;
    let spec = TrainSpec {
        data: a.data.spec()?,
        model: a.model.clone(),
        out: a.out.clone(),
        retrieval_cache: a.retrieval_cache.clone(),
        start: a.start,
        rows: a.rows,
        max_rows: a.max_rows,
        val_rows: a.val_rows,
        all_rows: a.all_rows,
        m: a.m,
        sample_seed: a.sample_seed,
        style,
        per_subgraph_tokens: a.soft_tokens == SoftTokensArg::PerSubgraph,
        gnn: match a.gnn {
            GnnArg::Small => GnnSize::Small,
            GnnArg::Paper => GnnSize::Paper,
        },
        ablation,
        lora_out: a.lora_out.clone(),
        train: a.run.settings(),
    };
    let report = spec.run(&Bar::for_training(a.run.quiet))?;
    eprintln!("wrote {} {}", a.out.display(), report.summary);
    Ok(())
}
