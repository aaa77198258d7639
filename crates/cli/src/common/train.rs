//! What the training commands (`train lora`, `train kragrec`) share, and what `recsys eval
//! --adapter` needs of them: the training run's flags (mapped to
//! `pgraphrag_runs::TrainSettings`) and the candle process settings.
use std::path::PathBuf;

use pgraphrag_runs::TrainSettings;

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

impl TrainFlags {
    /// The training run these flags say.
    pub fn settings(&self) -> TrainSettings {
        TrainSettings {
            checkpoint: self.checkpoint.clone(),
            epochs: self.epochs,
            max_steps: self.max_steps,
            lr: self.lr,
            weight_decay: self.weight_decay,
            batch_size: self.batch_size,
            grad_accum: self.grad_accum,
            seed: self.seed,
            eval_every: self.eval_every,
            patience: self.patience,
            checkpoint_every: self.checkpoint_every,
            device: self.device,
        }
    }
}

/// Process settings for the candle forward and backward passes: freed memory is kept for
/// reuse ([`pgraphrag_train::retain_freed_memory`]). candle's element-wise pool
/// (`CANDLE_NUM_THREADS`) keeps its default (every core): since the frozen projections run on
/// the packed tiles, two element-wise threads beat one on 2 cores (`docs/train.md`, "Speed").
pub fn prepare_candle_process() {
    pgraphrag_train::retain_freed_memory();
}
