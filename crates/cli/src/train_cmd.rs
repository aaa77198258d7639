//! `pgraphrag train`: training jobs of `pgraphrag-train`. `lora` fine-tunes the generator
//! (a llama-architecture GGUF such as SmolLM2) with LoRA on `{"prompt", "target"}` JSON lines
//! (`pgraphrag bench ... --export-prompts FILE` writes the bench's own prompts with their gold
//! answers), resumably, and writes the adapter `pgraphrag bench --adapter` generates with.
//! See `docs/train.md`.
use std::path::PathBuf;

use clap::Subcommand;
use pgraphrag_llm::LoraTarget;
use pgraphrag_runs::lora::LoraSpec;

use crate::common::train::{TrainFlags, prepare_candle_process};
use crate::progress::Bar;

/// Arguments of `pgraphrag train`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: TrainCommand,
}

/// The `train` subcommands.
#[derive(Subcommand, Debug)]
pub enum TrainCommand {
    /// LoRA fine-tuning of a GGUF llama model on `{"prompt", "target"}` JSON lines; the loss
    /// is the cross-entropy of the target's tokens. Resumes from --checkpoint.
    Lora(LoraArgs),
    /// K-RagRec's graph encoder and projector on recsys rows (the LLM frozen); writes the
    /// encoder `pgraphrag recsys eval --adapter` scores with. Resumes from --checkpoint.
    Kragrec(crate::train_kragrec_cmd::KragrecArgs),
}

/// A projection LoRA can adapt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TargetArg {
    /// Query (`attn_q`).
    Q,
    /// Key (`attn_k`).
    K,
    /// Value (`attn_v`).
    V,
    /// Attention output (`attn_output`).
    O,
    /// MLP gate (`ffn_gate`).
    Gate,
    /// MLP up (`ffn_up`).
    Up,
    /// MLP down (`ffn_down`).
    Down,
}

impl From<TargetArg> for LoraTarget {
    fn from(t: TargetArg) -> Self {
        match t {
            TargetArg::Q => LoraTarget::Q,
            TargetArg::K => LoraTarget::K,
            TargetArg::V => LoraTarget::V,
            TargetArg::O => LoraTarget::O,
            TargetArg::Gate => LoraTarget::Gate,
            TargetArg::Up => LoraTarget::Up,
            TargetArg::Down => LoraTarget::Down,
        }
    }
}

/// Arguments of `pgraphrag train lora`.
#[derive(clap::Args, Debug)]
pub struct LoraArgs {
    /// The base model: a llama-architecture GGUF (e.g. models/SmolLM2-135M-Instruct.Q4_1.gguf).
    #[arg(long)]
    pub model: PathBuf,
    /// Training data: JSON lines with "prompt" and "target" (and optionally "system", "raw").
    #[arg(long)]
    pub train: PathBuf,
    /// Validation data, same format: its mean loss is reported every --eval-every steps, and
    /// the adapter written is the one of the best validation (kept beside the checkpoint as
    /// CHECKPOINT.best.safetensors).
    #[arg(long)]
    pub val: Option<PathBuf>,
    /// Where the adapter is written (safetensors, atomically) when the run ends.
    #[arg(long)]
    pub out: PathBuf,
    /// LoRA rank: at least 1, at most the smaller side of every adapted projection (checked
    /// against the model's header before anything loads).
    #[arg(long, default_value_t = 8, value_parser = crate::args::at_least_one)]
    pub rank: usize,
    /// LoRA alpha (updates are scaled by alpha / rank).
    #[arg(long, default_value_t = 16.0, value_parser = crate::args::finite_f32)]
    pub alpha: f32,
    /// Dropout on the adapters' inputs while training (at least 0, below 1).
    #[arg(long, default_value_t = 0.1, value_parser = crate::args::dropout)]
    pub dropout: f32,
    /// The projections adapted in every block (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "q,v")]
    pub targets: Vec<TargetArg>,
    /// Leave out examples longer than this many tokens (prompt and target).
    #[arg(long, default_value_t = 2048, value_parser = crate::args::at_least_one)]
    pub max_tokens: usize,
    #[command(flatten)]
    pub run: TrainFlags,
}

/// Runs `pgraphrag train`.
pub fn run(args: Args) -> anyhow::Result<()> {
    prepare_candle_process();
    match args.command {
        TrainCommand::Lora(a) => lora(a),
        TrainCommand::Kragrec(a) => crate::train_kragrec_cmd::run(a),
    }
}

fn lora(a: LoraArgs) -> anyhow::Result<()> {
    let mut inputs = vec![("--train", a.train.as_path()), ("--model", &a.model)];
    if let Some(v) = &a.val {
        inputs.push(("--val", v));
    }
    let with = |flag, p| {
        inputs
            .iter()
            .copied()
            .chain([(flag, p)])
            .collect::<Vec<_>>()
    };
    crate::output::file("--out", &a.out, &with("--checkpoint", &a.run.checkpoint))?;
    crate::output::file("--checkpoint", &a.run.checkpoint, &with("--out", &a.out))?;
    let spec = LoraSpec {
        model: a.model.clone(),
        train: a.train.clone(),
        val: a.val.clone(),
        out: a.out.clone(),
        rank: a.rank,
        alpha: a.alpha,
        dropout: a.dropout,
        targets: a.targets.iter().map(|&t| t.into()).collect(),
        max_tokens: a.max_tokens,
        train_settings: a.run.settings(),
    };
    let report = spec.run(&Bar::for_training(a.run.quiet))?;
    eprintln!("wrote {} {}", a.out.display(), report.summary);
    Ok(())
}
