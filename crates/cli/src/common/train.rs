//! What the training commands (`train lora`, `train kragrec`) share, and what `recsys eval
//! --adapter` needs of them: the training run's flags, the run itself with its progress bar
//! and event lines, and the candle process settings.
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use pgraphrag_core::Progress;
use pgraphrag_train::{Flow, Objective, TrainConfig, TrainEvent, TrainReport, Trainer};

use crate::error::OrUsage;
use crate::progress::Bar;

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
pub fn train<O: Objective>(
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

/// Process settings for the candle forward and backward passes: freed memory is kept for
/// reuse ([`pgraphrag_train::retain_freed_memory`]). candle's element-wise pool
/// (`CANDLE_NUM_THREADS`) keeps its default (every core): since the frozen projections run on
/// the packed tiles, two element-wise threads beat one on 2 cores (`docs/train.md`, "Speed").
pub fn prepare_candle_process() {
    pgraphrag_train::retain_freed_memory();
}

/// Shows one trainer event: the bar moves with steps; every step, validation, checkpoint
/// and resumption is also a line on stderr (logs keep them when the bar is hidden).
pub fn render(e: &TrainEvent, bar: &Bar, quiet: bool) {
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
