//! The trainer and the files it writes, on the tiny llama built by the test: a killed run
//! resumed from its checkpoint ends bit-identical to an uninterrupted run and repeats no
//! finished step; early stopping; and bad input (corrupt checkpoint, another run's
//! checkpoint, an adapter for another model, a corrupt adapter, a NaN loss) gives clear errors.

use std::path::Path;

use candle_core::{Device, Tensor, Var};
use pgraphrag_train::{
    AnswerExample, Flow, Lora, LoraConfig, LoraLm, Objective, ParamsAdamW, TrainConfig, TrainError,
    TrainEvent, Trainer,
};

#[path = "support/tiny.rs"]
mod tiny;

fn data() -> Vec<AnswerExample> {
    (0..10u32)
        .map(|i| AnswerExample {
            prompt: vec![1, 2 + i, (7 * i) % 40, 3],
            answer: vec![(11 + 3 * i) % 40, 5],
        })
        .collect()
}

fn config() -> TrainConfig {
    TrainConfig {
        seed: 3,
        epochs: 2,
        batch_size: 3,
        grad_accum: 2,
        optimizer: ParamsAdamW {
            lr: 1e-2,
            weight_decay: 0.01,
            ..Default::default()
        },
        max_steps: None,
        eval_every: Some(2),
        patience: None,
        checkpoint_every: 2,
    }
}

fn bits(lora: &Lora) -> Vec<(String, Vec<u32>)> {
    lora.named_vars()
        .into_iter()
        .map(|(n, v)| {
            let vals = v
                .as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap();
            (n, vals.iter().map(|x| x.to_bits()).collect())
        })
        .collect()
}

/// Trains a fresh adapter (seed 11) with `ckpt`, stopping when `stop_at` steps are done.
fn run(ckpt: Option<&Path>, stop_at: Option<u64>) -> (Vec<(String, Vec<u32>)>, Vec<TrainEvent>) {
    let model = tiny::model(7);
    let lora = Lora::new(&model, LoraConfig::kragrec(), 11).unwrap();
    let job = LoraLm::new(&model, &lora).unwrap();
    let d = data();
    let (train, val) = d.split_at(8);
    let mut events = Vec::new();
    let trainer = Trainer::new(config(), ckpt.map(Path::to_path_buf)).unwrap();
    trainer
        .run(&job, train, val, &mut |e| {
            events.push(e.clone());
            match (e, stop_at) {
                (TrainEvent::Step { step, .. }, Some(s)) if *step == s => Flow::Stop,
                _ => Flow::Continue,
            }
        })
        .unwrap();
    (bits(&lora), events)
}

fn steps(events: &[TrainEvent]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            TrainEvent::Step { step, .. } => Some(*step),
            _ => None,
        })
        .collect()
}

#[test]
fn a_killed_run_resumes_bit_identical_without_repeating_steps() {
    let dir = tempfile::tempdir().unwrap();
    // 8 examples, batch 3 → 3 micro-batches per epoch, 2 per step → 2 steps per epoch, 4 in all.
    let (straight, ev) = run(None, None);
    assert_eq!(steps(&ev), vec![1, 2, 3, 4]);
    assert!(ev.iter().any(|e| matches!(e, TrainEvent::Eval { .. })));

    let ckpt = dir.path().join("run.safetensors");
    // Killed after step 3; the last checkpoint holds step 2.
    let (_, ev1) = run(Some(&ckpt), Some(3));
    assert_eq!(steps(&ev1), vec![1, 2, 3]);
    assert!(ev1.contains(&TrainEvent::Checkpoint { step: 2 }));
    // A new process: fresh model and adapter, resumed from the checkpoint.
    let (resumed, ev2) = run(Some(&ckpt), None);
    assert_eq!(ev2[0], TrainEvent::Resumed { step: 2, epoch: 1 });
    assert_eq!(steps(&ev2), vec![3, 4], "finished steps are not repeated");
    assert_eq!(
        resumed, straight,
        "resumed weights differ from the uninterrupted run's"
    );
    // Training moved the weights (B starts at zero).
    let fresh = bits(&Lora::new(&tiny::model(7), LoraConfig::kragrec(), 11).unwrap());
    assert_ne!(fresh, straight);
    // A finished run resumed again does nothing more.
    let (again, ev3) = run(Some(&ckpt), None);
    assert_eq!(steps(&ev3), Vec::<u64>::new());
    assert_eq!(again, straight);
}

#[test]
fn corrupt_and_foreign_checkpoints_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("c.safetensors");
    run(Some(&ckpt), None);
    let good = std::fs::read(&ckpt).unwrap();

    // Another run (other seed) refuses it.
    let model = tiny::model(7);
    let lora = Lora::new(&model, LoraConfig::kragrec(), 11).unwrap();
    let job = LoraLm::new(&model, &lora).unwrap();
    let d = data();
    let mut cfg = config();
    cfg.seed = 4;
    let err = Trainer::new(cfg, Some(ckpt.clone()))
        .unwrap()
        .run(&job, &d[..8], &[], &mut |_| Flow::Continue)
        .unwrap_err();
    assert!(
        matches!(&err, TrainError::Checkpoint { reason, .. } if reason.contains("another run")),
        "{err}"
    );

    // Truncated, then garbage.
    for bytes in [
        &good[..good.len() / 2],
        b"not a checkpoint at all".as_slice(),
    ] {
        std::fs::write(&ckpt, bytes).unwrap();
        let err = Trainer::new(config(), Some(ckpt.clone()))
            .unwrap()
            .run(&job, &d[..8], &[], &mut |_| Flow::Continue)
            .unwrap_err();
        assert!(matches!(err, TrainError::Checkpoint { .. }), "{err}");
        assert!(err.to_string().contains("c.safetensors"), "{err}");
    }
}

#[test]
fn adapters_round_trip_and_refuse_another_model_or_a_corrupt_file() {
    let dir = tempfile::tempdir().unwrap();
    let model = tiny::model(7);
    let lora = Lora::new(&model, LoraConfig::kragrec(), 11).unwrap();
    let path = dir.path().join("a.safetensors");
    lora.save(&path).unwrap();
    let back = Lora::load(&model, &path).unwrap();
    assert_eq!(bits(&back), bits(&lora));
    assert_eq!(back.config(), lora.config());

    let other = tiny::model(8);
    let err = Lora::load(&other, &path).unwrap_err();
    assert!(matches!(err, TrainError::BaseModelMismatch { .. }), "{err}");
    assert!(err.to_string().contains("tiny-test-seed7"), "{err}");

    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    let err = Lora::load(&model, &path).unwrap_err();
    assert!(matches!(err, TrainError::Adapter { .. }), "{err}");
}

/// A quadratic pulling `w` towards `train_to`, validated against `val_to`; `nan_at` makes
/// that call's loss NaN. A test double for the trainer's own logic.
struct Quadratic {
    w: Var,
    train_to: f32,
    val_to: f32,
    nan_at: Option<usize>,
    calls: std::cell::Cell<usize>,
}

impl Objective for Quadratic {
    type Example = f32;
    fn named_vars(&self) -> Vec<(String, Var)> {
        vec![("w".into(), self.w.clone())]
    }
    fn identity(&self) -> String {
        "quadratic".into()
    }
    fn loss(&self, batch: &[&f32], seed: Option<u64>) -> pgraphrag_train::Result<Tensor> {
        let c = self.calls.get();
        self.calls.set(c + 1);
        let to = if seed.is_some() {
            self.train_to
        } else {
            self.val_to
        };
        let scale = if self.nan_at == Some(c) {
            f32::NAN
        } else {
            1.0
        };
        let x: Vec<f32> = batch.iter().map(|_| to).collect();
        let x = Tensor::new(x.as_slice(), &Device::Cpu).unwrap();
        Ok(((x
            .broadcast_sub(self.w.as_tensor())
            .unwrap()
            .sqr()
            .unwrap()
            .mean_all()
            .unwrap())
            * scale as f64)
            .unwrap())
    }
}

fn quadratic(nan_at: Option<usize>) -> Quadratic {
    Quadratic {
        w: Var::new(&[0f32], &Device::Cpu).unwrap(),
        train_to: 5.0,
        val_to: -1.0,
        nan_at,
        calls: std::cell::Cell::new(0),
    }
}

#[test]
fn early_stopping_ends_the_run_when_validation_stops_improving() {
    let obj = quadratic(None);
    let mut cfg = config();
    cfg.epochs = 100;
    cfg.eval_every = Some(1);
    cfg.patience = Some(2);
    cfg.optimizer.lr = 0.1;
    let data = vec![1.0f32; 6];
    let report = Trainer::new(cfg, None)
        .unwrap()
        .run(&obj, &data, &[0.0], &mut |_| Flow::Continue)
        .unwrap();
    // Validation gets worse from the first step on: best at step 1, stop after two more.
    assert!(report.stopped_early);
    assert_eq!(report.steps, 3);
    // AdamW's first step moves w by lr = 0.1 towards 5: validation (w + 1)² = 1.21.
    let best = report.best_val.unwrap();
    assert!((best - 1.21).abs() < 1e-3, "best validation loss {best}");
}

#[test]
fn a_nan_loss_is_an_error_naming_the_step() {
    let obj = quadratic(Some(3));
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("nan.safetensors");
    let mut cfg = config();
    cfg.checkpoint_every = 1;
    cfg.grad_accum = 1;
    cfg.batch_size = 1;
    let err = Trainer::new(cfg, Some(ckpt.clone()))
        .unwrap()
        .run(&obj, &[1.0, 2.0, 3.0, 4.0, 5.0], &[], &mut |_| {
            Flow::Continue
        })
        .unwrap_err();
    assert!(
        matches!(err, TrainError::NonFinite { step: 4, .. }),
        "{err}"
    );
    // The checkpoint of the last good step is kept.
    assert!(ckpt.exists());
}

#[test]
fn the_best_validation_s_parameters_are_kept_apart_and_restored() {
    let obj = quadratic(None);
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("q.safetensors");
    let mut cfg = config();
    cfg.epochs = 100;
    cfg.eval_every = Some(1);
    cfg.patience = Some(2);
    cfg.checkpoint_every = 1;
    cfg.optimizer.lr = 0.1;
    let data = vec![1.0f32; 6];
    let trainer = Trainer::new(cfg, Some(ckpt.clone())).unwrap();
    let mut best_steps = Vec::new();
    let report = trainer
        .run(&obj, &data, &[0.0], &mut |e| {
            if let TrainEvent::Best { step, .. } = e {
                best_steps.push(*step);
            }
            Flow::Continue
        })
        .unwrap();
    // Validation is best after step 1 and worse after steps 2 and 3 (early stop).
    assert_eq!((best_steps.as_slice(), report.steps), (&[1][..], 3));
    let w = |o: &Quadratic| o.w.as_tensor().to_vec1::<f32>().unwrap()[0];
    let last = w(&obj);
    assert!(last > 0.25, "w after three steps {last}");
    let best = trainer.best_path().unwrap();
    assert_eq!(best, dir.path().join("q.best.safetensors"));
    assert!(best.exists() && ckpt.exists());
    assert_eq!(trainer.restore_best(&obj, data.len()).unwrap(), Some(1));
    assert!((w(&obj) - 0.1).abs() < 1e-4, "restored w {}", w(&obj));
    // Another run (another data size) does not take this run's best weights.
    let err = trainer.restore_best(&obj, data.len() + 1).unwrap_err();
    assert!(matches!(err, TrainError::Checkpoint { .. }), "{err}");
    // Without a checkpoint path there is nothing to restore.
    let plain = Trainer::new(config(), None).unwrap();
    assert_eq!(plain.restore_best(&obj, data.len()).unwrap(), None);
}
