//! The training run's settings, shared by every training spec ([`crate::lora::LoraSpec`],
//! [`crate::kragrec::TrainSpec`]), and the run itself: the trainer, its checkpoint folder, and
//! its events as progress and notes.
use std::path::PathBuf;

use pgraphrag_core::{DeviceChoice, Progress};
use pgraphrag_train::{Flow, Objective, TrainConfig, TrainEvent, TrainReport, Trainer};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// How a training run goes: its checkpoint (resumed from when it exists), epochs, optimizer,
/// batches, validation and device.
///
/// ```
/// use pgraphrag_runs::TrainSettings;
/// let s = TrainSettings::new("runs/lora.ckpt");
/// assert_eq!((s.epochs, s.batch_size, s.lr), (1, 4, 1e-4));
/// let json = serde_json::to_string(&s)?;
/// assert_eq!(serde_json::from_str::<TrainSettings>(&json)?, s);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainSettings {
    /// The run's checkpoint: resumed from when it exists (a killed run continues where its
    /// last checkpoint left it, bit for bit). The best validation's weights are kept beside it
    /// (`CHECKPOINT.best.safetensors`).
    pub checkpoint: PathBuf,
    /// Passes over the training data.
    pub epochs: u64,
    /// Stop after this many optimizer steps in total (across resumptions).
    pub max_steps: Option<u64>,
    /// AdamW learning rate.
    pub lr: f64,
    /// AdamW weight decay.
    pub weight_decay: f64,
    /// Examples per micro-batch.
    pub batch_size: usize,
    /// Micro-batches per optimizer step (their gradients are averaged).
    pub grad_accum: usize,
    /// Seeds the trained weights' initialisation, the data order and dropout.
    pub seed: u64,
    /// Validate every this many optimizer steps (and at the end), when there is validation
    /// data.
    pub eval_every: u64,
    /// Stop early after this many validations without a lower validation loss.
    pub patience: Option<u64>,
    /// Write the checkpoint every this many optimizer steps (and at the end).
    pub checkpoint_every: u64,
    /// Where the model trains.
    #[serde(with = "crate::names")]
    pub device: DeviceChoice,
}

impl TrainSettings {
    /// The defaults (one epoch, AdamW at 1e-4, micro-batches of 4, validation every 50
    /// steps, a checkpoint every 10, on the CPU) with this checkpoint.
    pub fn new(checkpoint: impl Into<PathBuf>) -> TrainSettings {
        TrainSettings {
            checkpoint: checkpoint.into(),
            epochs: 1,
            max_steps: None,
            lr: 1e-4,
            weight_decay: 0.0,
            batch_size: 4,
            grad_accum: 1,
            seed: 0,
            eval_every: 50,
            patience: None,
            checkpoint_every: 10,
            device: DeviceChoice::Cpu,
        }
    }
}

/// Trains `job` on `train` (validating on `val`) with `s`; with validation data, the job's
/// variables end as those of the best validation. Progress moves with the steps; every event
/// is a note. Returns the report and a summary (`after N steps (resumed from step S), last
/// loss …, best validation loss …`).
pub(crate) fn train<O: Objective>(
    s: &TrainSettings,
    job: &O,
    train: &[O::Example],
    val: &[O::Example],
    progress: &dyn Progress,
) -> Result<(TrainReport, String)> {
    let mut cfg = TrainConfig {
        seed: s.seed,
        epochs: s.epochs,
        batch_size: s.batch_size,
        grad_accum: s.grad_accum,
        max_steps: s.max_steps,
        eval_every: Some(s.eval_every),
        patience: s.patience,
        checkpoint_every: s.checkpoint_every,
        ..Default::default()
    };
    cfg.optimizer.lr = s.lr;
    cfg.optimizer.weight_decay = s.weight_decay;
    let per_step = (s.batch_size * s.grad_accum).max(1);
    let mut total = s.epochs * train.len().div_ceil(per_step) as u64;
    if let Some(m) = s.max_steps {
        total = total.min(m);
    }
    if let Some(dir) = s.checkpoint.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(Error::work(format!(
            "creating the folder of {}",
            s.checkpoint.display()
        )))?;
    }
    let trainer = Trainer::new(cfg, Some(s.checkpoint.clone()))
        .map_err(Error::input("the training settings"))?;
    progress.start(total, "steps");
    let report = trainer.run(job, train, val, &mut |e| {
        event(e, progress);
        Flow::Continue
    });
    progress.finish();
    let report = report.map_err(Error::work(format!(
        "training (checkpoint {})",
        s.checkpoint.display()
    )))?;
    if !val.is_empty()
        && let Some(step) = trainer.restore_best(job, train.len())?
    {
        progress.note(&format!(
            "keeping the weights of step {step}, the best validation"
        ));
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

/// One trainer event as progress (steps move it; the loss is its message) and a note.
fn event(e: &TrainEvent, progress: &dyn Progress) {
    let line = match e {
        TrainEvent::Resumed { step, epoch } => {
            progress.advance(*step);
            format!("resumed from the checkpoint after step {step} (epoch {epoch})")
        }
        TrainEvent::Step {
            step,
            epoch,
            loss,
            tokens_per_s,
            ..
        } => {
            progress.advance(1);
            progress.message(&format!("loss {loss:.4}, {tokens_per_s:.0} tokens/s"));
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
    progress.note(&line);
}
