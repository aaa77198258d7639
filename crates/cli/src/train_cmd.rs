//! `pgraphrag train`: training jobs of `pgraphrag-train`. `lora` fine-tunes the generator
//! (a llama-architecture GGUF such as SmolLM2) with LoRA on `{"prompt", "target"}` JSON lines
//! (`pgraphrag bench ... --export-prompts FILE` writes the bench's own prompts with their gold
//! answers), resumably, and writes the adapter `pgraphrag bench --adapter` generates with.
//! See `docs/train.md`.
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_train::{
    Llama, Lora, LoraConfig, LoraLm, LoraTarget, check_answer_file, load_answer_examples,
};

use crate::common::train::{TrainFlags, prepare_candle_process, train};
use crate::error::{OrUsage, usage};
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
    let config = LoraConfig {
        rank: a.rank,
        alpha: a.alpha,
        dropout: a.dropout,
        targets: a.targets.iter().map(|&t| t.into()).collect(),
    };
    // The examples' shape, before the model is read at all.
    check_answer_file(&a.train).or_usage()?;
    if let Some(v) = &a.val {
        check_answer_file(v).or_usage()?;
    }
    // The rank against the model's projections, from its header, before any weight loads.
    let dims = pgraphrag_llm::read_llama_dims(&a.model)
        .with_context(|| format!("--model {}", a.model.display()))
        .or_usage()?;
    config
        .check_dims(&dims)
        .map_err(|e| usage(format!("--rank: {e}")))?;
    // Examples are tokenized exactly as generation formats prompts (chat template, BOS).
    let (examples, val) = {
        let tok = GgufModel::load(&a.model, GgufOptions::default())
            .with_context(|| format!("loading {}", a.model.display()))
            .or_usage()?;
        let load = |p: &Path| {
            let d = load_answer_examples(p, &tok, Some(a.max_tokens)).or_usage()?;
            eprintln!(
                "{}: {} examples ({} lines, {} longer than {} tokens left out)",
                p.display(),
                d.examples.len(),
                d.lines,
                d.too_long,
                a.max_tokens
            );
            anyhow::Ok(d.examples)
        };
        let examples = load(&a.train)?;
        let val = a.val.as_deref().map(load).transpose()?.unwrap_or_default();
        (examples, val)
    };
    let model = Llama::from_gguf(
        &a.model,
        &pgraphrag_llm::candle_device(a.run.device).or_usage()?,
    )
    .with_context(|| format!("loading {} for training", a.model.display()))
    .or_usage()?;
    let lora = Lora::new(&model, config, a.run.seed).or_usage()?;
    let job = LoraLm::new(&model, &lora)?;
    let bar = Bar::new(a.run.quiet);
    let (_, summary) = train(&a.run, &job, &examples, &val, &bar)?;
    lora.save(&a.out)
        .with_context(|| format!("writing the adapter {}", a.out.display()))?;
    eprintln!("wrote {} {summary}", a.out.display());
    Ok(())
}
