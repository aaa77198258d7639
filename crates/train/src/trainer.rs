//! The trainer every training job shares: seeded data order, gradient accumulation, AdamW,
//! validation and early stopping, and atomic checkpoints a killed run resumes from.

use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::{Tensor, Var};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

use crate::checkpoint::{self, RunState};
use crate::error::{Ctx, Result, TrainError};
use crate::ops::mix;
use crate::optim::{AdamW, ParamsAdamW};

/// What a training job trains: its variables, and the loss of a batch of its examples.
///
/// The trainer owns order, accumulation, optimisation, validation and checkpoints; an
/// objective only computes losses (see [`crate::LoraLm`] for LoRA fine-tuning of a llama
/// model on answer tokens).
pub trait Objective {
    /// One training example.
    type Example;
    /// The trainable variables with stable names (the checkpoint's tensor names), in the
    /// same order at every call.
    fn named_vars(&self) -> Vec<(String, Var)>;
    /// What is being trained (base model, adapter settings, …): a checkpoint records it and a
    /// run with another identity refuses the checkpoint.
    fn identity(&self) -> String;
    /// The mean loss over `batch`, a scalar f32 tensor. `dropout_seed` is `Some` while
    /// training (dropout on, masks drawn from that seed) and `None` for validation.
    fn loss(&self, batch: &[&Self::Example], dropout_seed: Option<u64>) -> Result<Tensor>;
    /// Tokens in `batch`, for the throughput reported ([`TrainEvent::Step`]); the number of
    /// examples by default.
    fn tokens(&self, batch: &[&Self::Example]) -> usize {
        batch.len()
    }
}

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct TrainConfig {
    /// Seeds the data order (a new permutation each epoch) and dropout.
    pub seed: u64,
    /// Passes over the training examples.
    pub epochs: u64,
    /// Examples per micro-batch (the last one of an epoch may be smaller).
    pub batch_size: usize,
    /// Micro-batches per optimizer step; their gradients are averaged.
    pub grad_accum: usize,
    /// AdamW's settings.
    pub optimizer: ParamsAdamW,
    /// Stop after this many optimizer steps in total (across resumptions).
    pub max_steps: Option<u64>,
    /// Validate every this many optimizer steps (and at the end), when validation examples
    /// are given.
    pub eval_every: Option<u64>,
    /// Stop early after this many validations without a lower validation loss.
    pub patience: Option<u64>,
    /// Write the checkpoint every this many optimizer steps (and at the end).
    pub checkpoint_every: u64,
}

impl Default for TrainConfig {
    /// Seed 0, one epoch, batch 4, no accumulation, AdamW at lr 1e-4 (no weight decay),
    /// validation and checkpoint every 50 steps, no early stopping.
    fn default() -> Self {
        TrainConfig {
            seed: 0,
            epochs: 1,
            batch_size: 4,
            grad_accum: 1,
            optimizer: ParamsAdamW {
                lr: 1e-4,
                weight_decay: 0.0,
                ..Default::default()
            },
            max_steps: None,
            eval_every: Some(50),
            patience: None,
            checkpoint_every: 50,
        }
    }
}

/// What the trainer reports while it runs ([`Trainer::run`]'s callback).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TrainEvent {
    /// The run continues from a checkpoint after `step` finished optimizer steps.
    Resumed {
        /// Optimizer steps already done.
        step: u64,
        /// The epoch it continues in.
        epoch: u64,
    },
    /// An optimizer step finished.
    Step {
        /// Optimizer steps done (1-based).
        step: u64,
        /// The epoch of the step.
        epoch: u64,
        /// Mean training loss of the step's micro-batches.
        loss: f32,
        /// Examples per second over the step.
        examples_per_s: f64,
        /// [`Objective::tokens`] per second over the step.
        tokens_per_s: f64,
    },
    /// A validation finished.
    Eval {
        /// Optimizer steps done.
        step: u64,
        /// Mean validation loss.
        loss: f32,
        /// The best validation loss so far (this one included).
        best: f32,
    },
    /// The validation loss reached a new best: the parameters were written to
    /// [`Trainer::best_path`] (when the run has a checkpoint path).
    Best {
        /// Optimizer steps done.
        step: u64,
        /// The validation loss.
        loss: f32,
    },
    /// A checkpoint was written.
    Checkpoint {
        /// Optimizer steps it holds.
        step: u64,
    },
    /// Validation stopped improving for `patience` evaluations: the run ends.
    EarlyStop {
        /// Optimizer steps done.
        step: u64,
        /// The best validation loss.
        best: f32,
    },
}

/// The callback's answer: go on, or stop now (like a kill: nothing more is written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Continue,
    /// Stop at once and return.
    Stop,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainReport {
    /// Optimizer steps done in total.
    pub steps: u64,
    /// The step the run resumed from, when it did.
    pub resumed_from: Option<u64>,
    /// The training loss of the last step of this call.
    pub last_loss: Option<f32>,
    /// The best validation loss.
    pub best_val: Option<f32>,
    /// Early stopping ended the run.
    pub stopped_early: bool,
    /// The callback stopped the run ([`Flow::Stop`]).
    pub interrupted: bool,
}

/// Runs training jobs ([`Trainer::run`]).
///
/// ```
/// use candle_core::{Device, Tensor, Var};
/// use pgraphrag_train::{Flow, Objective, Result, TrainConfig, Trainer};
///
/// /// Fits `w` to the mean of the examples.
/// struct Mean(Var);
/// impl Objective for Mean {
///     type Example = f32;
///     fn named_vars(&self) -> Vec<(String, Var)> { vec![("w".into(), self.0.clone())] }
///     fn identity(&self) -> String { "mean".into() }
///     fn loss(&self, batch: &[&f32], _seed: Option<u64>) -> Result<Tensor> {
///         let xs: Vec<f32> = batch.iter().map(|x| **x).collect();
///         let x = Tensor::new(xs.as_slice(), &Device::Cpu).unwrap();
///         Ok(x.broadcast_sub(self.0.as_tensor()).unwrap().sqr().unwrap().mean_all().unwrap())
///     }
/// }
/// let obj = Mean(Var::new(&[0f32], &Device::Cpu).unwrap());
/// let mut cfg = TrainConfig { epochs: 20, batch_size: 2, ..Default::default() };
/// cfg.optimizer.lr = 0.1;
/// let report = Trainer::new(cfg, None)?.run(&obj, &[1.0, 2.0, 3.0, 4.0], &[], &mut |_| Flow::Continue)?;
/// assert_eq!(report.steps, 40);
/// assert!((obj.0.as_tensor().to_vec1::<f32>().unwrap()[0] - 2.5).abs() < 0.5);
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Trainer {
    config: TrainConfig,
    checkpoint: Option<PathBuf>,
}

/// The order of the examples in `epoch`: a ChaCha8 stream per epoch, so the order depends
/// only on the seed, the epoch and the number of examples.
fn epoch_order(seed: u64, epoch: u64, n: usize) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(epoch);
    let mut v: Vec<usize> = (0..n).collect();
    v.shuffle(&mut rng);
    v
}

impl Trainer {
    /// A trainer with `config`, writing and resuming from `checkpoint` when given.
    pub fn new(config: TrainConfig, checkpoint: Option<PathBuf>) -> Result<Self> {
        if config.batch_size == 0 || config.grad_accum == 0 || config.checkpoint_every == 0 {
            return Err(TrainError::Config(
                "batch_size, grad_accum and checkpoint_every must be at least 1".into(),
            ));
        }
        if config.eval_every == Some(0) {
            return Err(TrainError::Config("eval_every must be at least 1".into()));
        }
        let o = &config.optimizer;
        let ok = o.lr > 0.0
            && o.lr.is_finite()
            && (0.0..1.0).contains(&o.beta1)
            && (0.0..1.0).contains(&o.beta2);
        if !ok {
            return Err(TrainError::Config(format!(
                "AdamW needs lr > 0 and betas in [0, 1) (got {o:?})"
            )));
        }
        Ok(Trainer { config, checkpoint })
    }

    /// The settings.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// Trains `obj` on `train` (validating on `val` when not empty), calling `on_event` with
    /// every [`TrainEvent`]. With a checkpoint path, a checkpoint found there is resumed
    /// (parameters, AdamW moments, step, data position, validation state: the run continues
    /// exactly as if it had not stopped, bit for bit), and checkpoints are written every
    /// `checkpoint_every` steps and at the end. The data order of epoch `e` is a seeded
    /// permutation; micro-batch `j` of step `s` draws its dropout from `(seed, s, j)`.
    ///
    /// Errors: [`TrainError::NonFinite`] when a loss or gradient is NaN or infinite (nothing is
    /// updated or written for that step), [`TrainError::Checkpoint`] for an unreadable
    /// checkpoint or one from another run, and the objective's own errors.
    pub fn run<O: Objective>(
        &self,
        obj: &O,
        train: &[O::Example],
        val: &[O::Example],
        on_event: &mut dyn FnMut(&TrainEvent) -> Flow,
    ) -> Result<TrainReport> {
        let cfg = &self.config;
        if train.is_empty() {
            return Err(TrainError::Input("no training examples".into()));
        }
        let (names, vars): (Vec<String>, Vec<Var>) = obj.named_vars().into_iter().unzip();
        if vars.is_empty() {
            return Err(TrainError::Input(
                "the objective has no trainable variables".into(),
            ));
        }
        let identity = self.identity(obj, train.len());
        let mut opt = AdamW::new(vars.clone(), cfg.optimizer.clone())?;
        let mut st = RunState {
            step: 0,
            epoch: 0,
            next_batch: 0,
            best_val: None,
            evals_since_best: 0,
            stopped: false,
            identity,
        };
        let mut report = TrainReport {
            steps: 0,
            resumed_from: None,
            last_loss: None,
            best_val: None,
            stopped_early: false,
            interrupted: false,
        };
        if let Some(path) = self.checkpoint.as_deref().filter(|p| p.exists()) {
            let shapes: Vec<Vec<usize>> = vars.iter().map(|v| v.dims().to_vec()).collect();
            let dev = vars[0].device().clone();
            let saved = checkpoint::load(path, &names, &shapes, &st.identity, &dev)?;
            for (v, t) in vars.iter().zip(&saved.params) {
                v.set(t).ctx(|| "restoring a parameter".into())?;
            }
            opt.set_state(saved.m, saved.v, saved.adam_t)?;
            st = saved.state;
            report.resumed_from = Some(st.step);
            if on_event(&TrainEvent::Resumed {
                step: st.step,
                epoch: st.epoch,
            }) == Flow::Stop
            {
                report.interrupted = true;
                return Ok(self.finish(report, &st));
            }
        }
        let n = train.len();
        let bs = cfg.batch_size;
        let n_batches = n.div_ceil(bs) as u64;
        let (mut ord, mut ord_epoch) = (Vec::new(), None);
        let mut last_eval = None;
        let mut saved_at = report.resumed_from;
        while !st.stopped && st.epoch < cfg.epochs && cfg.max_steps.is_none_or(|m| st.step < m) {
            if ord_epoch != Some(st.epoch) {
                ord = epoch_order(cfg.seed, st.epoch, n);
                ord_epoch = Some(st.epoch);
            }
            let t0 = Instant::now();
            let end = (st.next_batch + cfg.grad_accum as u64).min(n_batches);
            let k = (end - st.next_batch) as f64;
            let mut acc: Vec<Option<Tensor>> = vec![None; vars.len()];
            let (mut loss_sum, mut toks, mut exs) = (0f32, 0usize, 0usize);
            for (j, bi) in (st.next_batch..end).enumerate() {
                let lo = bi as usize * bs;
                let batch: Vec<&O::Example> = ord[lo..(lo + bs).min(n)]
                    .iter()
                    .map(|&i| &train[i])
                    .collect();
                let seed = mix(cfg.seed ^ mix(((st.step + 1) << 16) | j as u64));
                let loss = obj.loss(&batch, Some(seed))?;
                let lv = loss
                    .to_dtype(candle_core::DType::F32)
                    .and_then(|l| l.to_scalar::<f32>())
                    .ctx(|| "the loss must be a scalar".into())?;
                if !lv.is_finite() {
                    return Err(TrainError::NonFinite {
                        step: st.step + 1,
                        epoch: st.epoch,
                        loss: lv,
                    });
                }
                let grads = (loss / k)
                    .and_then(|l| l.backward())
                    .ctx(|| format!("backward pass of step {}", st.step + 1))?;
                for (slot, v) in acc.iter_mut().zip(&vars) {
                    if let Some(g) = grads.get(v.as_tensor()) {
                        *slot = Some(match slot.take() {
                            None => g.clone(),
                            Some(a) => (a + g).ctx(|| "accumulating gradients".into())?,
                        });
                    }
                }
                loss_sum += lv;
                toks += obj.tokens(&batch);
                exs += batch.len();
            }
            let mut gsq = 0f32;
            for g in acc.iter().flatten() {
                gsq += g
                    .sqr()
                    .and_then(|s| s.sum_all())
                    .and_then(|s| s.to_scalar::<f32>())
                    .ctx(|| "gradient norm".into())?;
            }
            let loss = loss_sum / k as f32;
            if !gsq.is_finite() {
                return Err(TrainError::NonFinite {
                    step: st.step + 1,
                    epoch: st.epoch,
                    loss: if loss.is_finite() { gsq } else { loss },
                });
            }
            opt.step(&acc)?;
            st.step += 1;
            st.next_batch = end;
            if st.next_batch >= n_batches {
                st.epoch += 1;
                st.next_batch = 0;
            }
            report.last_loss = Some(loss);
            let secs = t0.elapsed().as_secs_f64().max(1e-9);
            let ev = TrainEvent::Step {
                step: st.step,
                epoch: st.epoch - u64::from(st.next_batch == 0),
                loss,
                examples_per_s: exs as f64 / secs,
                tokens_per_s: toks as f64 / secs,
            };
            if on_event(&ev) == Flow::Stop {
                report.interrupted = true;
                return Ok(self.finish(report, &st));
            }
            if !val.is_empty() && cfg.eval_every.is_some_and(|e| st.step.is_multiple_of(e)) {
                last_eval = Some(st.step);
                let saved = (&names[..], &vars[..], &opt);
                if self.validate(obj, val, &mut st, saved, on_event)? == Flow::Stop {
                    report.interrupted = true;
                    return Ok(self.finish(report, &st));
                }
            }
            if st.stopped || st.step.is_multiple_of(cfg.checkpoint_every) {
                self.save(&names, &vars, &opt, &st)?;
                saved_at = Some(st.step);
                if self.checkpoint.is_some()
                    && on_event(&TrainEvent::Checkpoint { step: st.step }) == Flow::Stop
                {
                    report.interrupted = true;
                    return Ok(self.finish(report, &st));
                }
            }
        }
        if !val.is_empty() && !st.stopped && last_eval != Some(st.step) && cfg.eval_every.is_some()
        {
            let _ = self.validate(obj, val, &mut st, (&names, &vars, &opt), on_event)?;
        }
        if saved_at != Some(st.step) {
            self.save(&names, &vars, &opt, &st)?;
            if self.checkpoint.is_some() {
                let _ = on_event(&TrainEvent::Checkpoint { step: st.step });
            }
        }
        report.stopped_early = st.stopped;
        Ok(self.finish(report, &st))
    }

    /// What identifies a run of `obj` on `n` training examples in its checkpoints: the
    /// objective's identity and the settings that fix the data order and the updates.
    fn identity<O: Objective>(&self, obj: &O, n: usize) -> String {
        let cfg = &self.config;
        format!(
            "{}|seed={}|batch={}|accum={}|n={n}|opt={:?}",
            obj.identity(),
            cfg.seed,
            cfg.batch_size,
            cfg.grad_accum,
            cfg.optimizer
        )
    }

    /// Where the parameters of the best validation so far are kept: the checkpoint path with
    /// `.best` before its extension (`run.safetensors` → `run.best.safetensors`). `None`
    /// without a checkpoint path. The file is a checkpoint of the step that validated best
    /// (written atomically when a validation improves), so a killed run keeps it too.
    ///
    /// ```
    /// use pgraphrag_train::{TrainConfig, Trainer};
    /// let t = Trainer::new(TrainConfig::default(), Some("runs/lora.safetensors".into()))?;
    /// assert_eq!(t.best_path().unwrap(), std::path::Path::new("runs/lora.best.safetensors"));
    /// # Ok::<(), pgraphrag_train::TrainError>(())
    /// ```
    pub fn best_path(&self) -> Option<PathBuf> {
        let path = self.checkpoint.as_deref()?;
        let stem = path.file_stem()?.to_string_lossy();
        Some(match path.extension() {
            Some(ext) => path.with_file_name(format!("{stem}.best.{}", ext.to_string_lossy())),
            None => path.with_file_name(format!("{stem}.best")),
        })
    }

    /// Sets `obj`'s variables to the parameters of the best validation of its run on `n_train`
    /// training examples (the file at [`Trainer::best_path`]); returns that step, or `None`
    /// when there is no such file (no checkpoint path, or no validation yet). A file of another
    /// run, or a damaged one, is a [`TrainError::Checkpoint`].
    pub fn restore_best<O: Objective>(&self, obj: &O, n_train: usize) -> Result<Option<u64>> {
        let Some(path) = self.best_path().filter(|p| p.exists()) else {
            return Ok(None);
        };
        let (names, vars): (Vec<String>, Vec<Var>) = obj.named_vars().into_iter().unzip();
        let Some(dev) = vars.first().map(|v| v.device().clone()) else {
            return Err(TrainError::Input(
                "the objective has no trainable variables".into(),
            ));
        };
        let shapes: Vec<Vec<usize>> = vars.iter().map(|v| v.dims().to_vec()).collect();
        let identity = self.identity(obj, n_train);
        let saved = checkpoint::load(&path, &names, &shapes, &identity, &dev)?;
        for (v, t) in vars.iter().zip(&saved.params) {
            v.set(t).ctx(|| "restoring a parameter".into())?;
        }
        Ok(Some(saved.state.step))
    }

    fn finish(&self, mut report: TrainReport, st: &RunState) -> TrainReport {
        report.steps = st.step;
        report.best_val = st.best_val;
        report.stopped_early = st.stopped;
        report
    }

    fn save(&self, names: &[String], vars: &[Var], opt: &AdamW, st: &RunState) -> Result<()> {
        let Some(path) = self.checkpoint.as_deref() else {
            return Ok(());
        };
        save_to(path, names, vars, opt, st)
    }

    /// Mean validation loss (batches weighted by their size); updates the best loss and the
    /// patience count, marking the run stopped when patience runs out.
    fn validate<O: Objective>(
        &self,
        obj: &O,
        val: &[O::Example],
        st: &mut RunState,
        (names, vars, opt): (&[String], &[Var], &AdamW),
        on_event: &mut dyn FnMut(&TrainEvent) -> Flow,
    ) -> Result<Flow> {
        let mut sum = 0f64;
        for chunk in val.chunks(self.config.batch_size) {
            let batch: Vec<&O::Example> = chunk.iter().collect();
            let l = obj
                .loss(&batch, None)?
                .to_scalar::<f32>()
                .ctx(|| "validation loss".into())?;
            sum += l as f64 * chunk.len() as f64;
        }
        let loss = (sum / val.len() as f64) as f32;
        if !loss.is_finite() {
            return Err(TrainError::NonFinite {
                step: st.step,
                epoch: st.epoch,
                loss,
            });
        }
        let improved = st.best_val.is_none_or(|b| loss < b);
        if improved {
            st.best_val = Some(loss);
            st.evals_since_best = 0;
        } else {
            st.evals_since_best += 1;
        }
        let best = st.best_val.unwrap_or(loss);
        let mut flow = on_event(&TrainEvent::Eval {
            step: st.step,
            loss,
            best,
        });
        if improved && let Some(path) = self.best_path() {
            save_to(&path, names, vars, opt, st)?;
            if on_event(&TrainEvent::Best {
                step: st.step,
                loss,
            }) == Flow::Stop
            {
                flow = Flow::Stop;
            }
        }
        if self
            .config
            .patience
            .is_some_and(|p| st.evals_since_best >= p)
        {
            st.stopped = true;
            if on_event(&TrainEvent::EarlyStop {
                step: st.step,
                best,
            }) == Flow::Stop
            {
                flow = Flow::Stop;
            }
        }
        Ok(flow)
    }
}

/// Writes a checkpoint of `vars` (and the optimizer's moments, and `st`) to `path`.
fn save_to(path: &Path, names: &[String], vars: &[Var], opt: &AdamW, st: &RunState) -> Result<()> {
    let params: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
    checkpoint::save(path, names, &params, opt.state(), st)
}
