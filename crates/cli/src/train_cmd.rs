//! `pgraphrag train`: training jobs of `pgraphrag-train`. `lora` fine-tunes the generator
//! (a llama-architecture GGUF such as SmolLM2) with LoRA on `{"prompt", "target"}` JSON lines
//! (`pgraphrag bench ... --export-prompts FILE` writes the bench's own prompts with their gold
//! answers), resumably, and writes the adapter `pgraphrag bench --adapter` generates with.
//! See `docs/train.md`.
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;
use pgraphrag_core::{Progress, RankedProfile};
use pgraphrag_eval::Bench;
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_train::{
    Flow, Llama, Lora, LoraConfig, LoraLm, LoraTarget, Objective, TrainConfig, TrainEvent,
    TrainReport, Trainer, check_answer_file, load_answer_examples,
};

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

/// The training run's options, shared by every `pgraphrag train` job.
#[derive(clap::Args, Debug)]
pub struct TrainFlags {
    /// The run's checkpoint: resumed from when it exists (a killed run continues where its
    /// last checkpoint left it, bit for bit), written every --checkpoint-every steps. The best
    /// validation's weights are kept beside it (CHECKPOINT.best.safetensors).
    #[arg(long)]
    pub checkpoint: PathBuf,
    /// Passes over the training data.
    #[arg(long, default_value_t = 1, value_parser = crate::args::at_least_one_u64)]
    pub epochs: u64,
    /// Stop after this many optimizer steps in total (across resumptions).
    #[arg(long, value_parser = crate::args::at_least_one_u64)]
    pub max_steps: Option<u64>,
    /// AdamW learning rate.
    #[arg(long, default_value_t = 1e-4, value_parser = crate::args::positive)]
    pub lr: f64,
    /// AdamW weight decay.
    #[arg(long, default_value_t = 0.0, value_parser = crate::args::non_negative)]
    pub weight_decay: f64,
    /// Examples per micro-batch (1 to 1024: each example's activations stay in memory for the
    /// backward pass; use --grad-accum for larger effective batches).
    #[arg(long, default_value_t = 4, value_parser = crate::args::train_batch)]
    pub batch_size: usize,
    /// Micro-batches per optimizer step (their gradients are averaged).
    #[arg(long, default_value_t = 1, value_parser = crate::args::at_least_one)]
    pub grad_accum: usize,
    /// Seeds the trained weights' initialisation, the data order and dropout.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Validate every this many optimizer steps (and at the end), when there is validation data.
    #[arg(long, default_value_t = 50, value_parser = crate::args::at_least_one_u64)]
    pub eval_every: u64,
    /// Stop early after this many validations without a lower validation loss.
    #[arg(long, value_parser = crate::args::at_least_one_u64)]
    pub patience: Option<u64>,
    /// Write the checkpoint every this many optimizer steps (and at the end).
    #[arg(long, default_value_t = 10, value_parser = crate::args::at_least_one_u64)]
    pub checkpoint_every: u64,
    /// No progress bar and no step lines.
    #[arg(long)]
    pub quiet: bool,
    /// Where the model trains: cpu, cuda or cuda:N (a GPU needs a build with `--features
    /// pgraphrag-cli/cuda`).
    #[arg(long, default_value = "cpu")]
    pub device: pgraphrag_llm::DeviceChoice,
}

/// Trains `job` on `train` (validating on `val`) as `flags` say: the trainer's settings, the
/// checkpoint's folder, the progress bar and event lines; with validation data, the job's
/// variables end as those of the best validation. Returns the report and a summary line
/// (`after N steps (resumed from step S), last loss …, best validation loss …`).
pub(crate) fn train<O: Objective>(
    flags: &TrainFlags,
    job: &O,
    train: &[O::Example],
    val: &[O::Example],
    bar: &Bar,
) -> anyhow::Result<(TrainReport, String)> {
    let f = flags;
    let mut cfg = TrainConfig {
        seed: f.seed,
        epochs: f.epochs,
        batch_size: f.batch_size,
        grad_accum: f.grad_accum,
        max_steps: f.max_steps,
        eval_every: Some(f.eval_every),
        patience: f.patience,
        checkpoint_every: f.checkpoint_every,
        ..Default::default()
    };
    cfg.optimizer.lr = f.lr;
    cfg.optimizer.weight_decay = f.weight_decay;
    let per_step = (f.batch_size * f.grad_accum).max(1);
    let mut total = f.epochs * train.len().div_ceil(per_step) as u64;
    if let Some(m) = f.max_steps {
        total = total.min(m);
    }
    if let Some(dir) = f.checkpoint.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the folder of {}", f.checkpoint.display()))?;
    }
    let trainer = Trainer::new(cfg, Some(f.checkpoint.clone())).or_usage()?;
    bar.start(total, "steps");
    let report = trainer.run(job, train, val, &mut |e| {
        render(e, bar, f.quiet);
        Flow::Continue
    });
    bar.finish();
    let report =
        report.with_context(|| format!("training (checkpoint {})", f.checkpoint.display()))?;
    if !val.is_empty()
        && let Some(step) = trainer.restore_best(job, train.len())?
    {
        eprintln!("keeping the weights of step {step}, the best validation");
    }
    let summary = format!(
        "after {} steps{}{}{}",
        report.steps,
        report
            .resumed_from
            .map(|s| format!(" (resumed from step {s})"))
            .unwrap_or_default(),
        report
            .last_loss
            .map(|l| format!(", last loss {l:.4}"))
            .unwrap_or_default(),
        report
            .best_val
            .map(|l| format!(", best validation loss {l:.4}"))
            .unwrap_or_default(),
    );
    Ok((report, summary))
}

/// Runs `pgraphrag train`.
pub fn run(args: Args) -> anyhow::Result<()> {
    prepare_candle_process();
    match args.command {
        TrainCommand::Lora(a) => lora(a),
        TrainCommand::Kragrec(a) => crate::train_kragrec_cmd::run(a),
    }
}

/// Process settings for the candle forward and backward passes: freed memory is kept for
/// reuse ([`pgraphrag_train::retain_freed_memory`]). candle's element-wise pool
/// (`CANDLE_NUM_THREADS`) keeps its default (every core): since the frozen projections run on
/// the packed tiles, two element-wise threads beat one on 2 cores (`docs/train.md`, "Speed").
pub(crate) fn prepare_candle_process() {
    pgraphrag_train::retain_freed_memory();
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

/// Shows one trainer event: the bar moves with steps; every step, validation, checkpoint
/// and resumption is also a line on stderr (logs keep them when the bar is hidden).
pub(crate) fn render(e: &TrainEvent, bar: &Bar, quiet: bool) {
    let line = match e {
        TrainEvent::Resumed { step, epoch } => {
            bar.advance(*step);
            format!("resumed from the checkpoint after step {step} (epoch {epoch})")
        }
        TrainEvent::Step {
            step,
            epoch,
            loss,
            tokens_per_s,
            ..
        } => {
            bar.advance(1);
            bar.message(&format!("loss {loss:.4}, {tokens_per_s:.0} tokens/s"));
            format!("step {step} (epoch {epoch}): loss {loss:.4}, {tokens_per_s:.1} tokens/s")
        }
        TrainEvent::Eval { step, loss, best } => {
            format!("step {step}: validation loss {loss:.4} (best {best:.4})")
        }
        TrainEvent::Checkpoint { step } => format!("checkpoint at step {step}"),
        TrainEvent::Best { step, loss } => {
            format!("step {step}: best validation loss so far ({loss:.4}), its weights kept")
        }
        TrainEvent::EarlyStop { step, best } => {
            format!("early stop at step {step} (best validation loss {best:.4})")
        }
        other => format!("{other:?}"),
    };
    if quiet {
        return;
    }
    if std::io::stderr().is_terminal() {
        if !matches!(e, TrainEvent::Step { .. }) {
            bar.message(&line);
        }
    } else {
        eprintln!("{line}");
    }
}

/// `pgraphrag bench --adapter FILE`: applies the LoRA adapter (checked against the GGUF
/// file it must have been trained on) to the model, on either engine.
pub fn apply_adapter(model: &mut GgufModel, gguf: &Path, adapter: &Path) -> anyhow::Result<()> {
    let lora = Lora::load_for_gguf(gguf, adapter)
        .with_context(|| format!("--adapter {}", adapter.display()))
        .or_usage()?;
    let ad = lora.to_adapter()?;
    eprintln!(
        "adapter {}: {} ({} updates, rank {}, alpha {})",
        adapter.display(),
        ad.id(),
        ad.len(),
        lora.config().rank,
        lora.config().alpha
    );
    model
        .set_adapter(Some(ad))
        .with_context(|| format!("--adapter {}", adapter.display()))
        .or_usage()
}

/// `pgraphrag bench --export-prompts FILE`: the grid's distinct prompts with their gold
/// answers as JSON lines, the input of `pgraphrag train lora`.
pub fn export_prompts(
    bench: &Bench,
    profiles: &[RankedProfile],
    path: &Path,
) -> anyhow::Result<()> {
    let records = bench.prompt_records(profiles)?;
    pgraphrag_eval::write_prompt_records(path, &records)
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!(
        "wrote {} prompts ({} users, {} cells) to {}",
        records.len(),
        profiles.len(),
        bench.configs.len(),
        path.display()
    );
    Ok(())
}
