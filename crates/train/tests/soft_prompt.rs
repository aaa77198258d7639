//! The "-Encoding" ablation's trainable soft prompt on the tiny llama built by the test:
//! finite-difference check of its gradient through the frozen LLM, training lowering the
//! answer loss, rows without sub-graphs left alone, and its file refusing what it must.

use candle_core::Device;
use pgraphrag_train::{
    Flow, GnnConfig, GraphEncoder, GraphTokens, Kragrec, KragrecExample, Objective, ParamsAdamW,
    SoftPrompt, SoftTokens, Subgraph, TrainConfig, TrainError, Trainer, kragrec_loss,
};

#[path = "support/tiny.rs"]
mod tiny;

#[path = "support/fd.rs"]
mod fd;

fn graph() -> Subgraph {
    Subgraph {
        nodes: vec![0.5; 6],
        edges: vec![],
        edge_features: vec![],
    }
}

fn examples() -> Vec<KragrecExample> {
    (0..4)
        .map(|i| KragrecExample {
            prefix: vec![1],
            graphs: vec![graph()],
            rest: vec![5 + i as u32, 9, 14, 3],
            answer: [20, 21, 20, 22][i],
        })
        .collect()
}

#[test]
fn soft_prompt_gradient_matches_finite_differences() {
    let model = tiny::model(5);
    let p = SoftPrompt::new(&model, 2, 3).unwrap();
    let ex = examples();
    let batch: Vec<&KragrecExample> = ex.iter().take(2).collect();
    let loss_t = || kragrec_loss(&model, &p, None, &batch, Some(1)).unwrap();
    let grads = loss_t().backward().unwrap();
    let loss = || loss_t().to_scalar::<f32>().unwrap();
    let (name, v) = p.named_vars().remove(0);
    let g = grads.get(v.as_tensor()).expect("a gradient").clone();
    let biggest = fd::fd_check(&loss, &v, &g, &name, 8);
    assert!(biggest > 1e-5, "gradient {biggest}");
}

#[test]
fn training_the_soft_prompt_lowers_the_loss_and_leaves_rows_without_graphs_alone() {
    let model = tiny::model(5);
    let p = SoftPrompt::new(&model, 1, 3).unwrap();
    let ex = examples();
    let batch: Vec<&KragrecExample> = ex.iter().collect();
    let plain = KragrecExample {
        graphs: vec![],
        ..ex[0].clone()
    };
    let loss_of = |b: &[&KragrecExample]| {
        kragrec_loss(&model, &p, None, b, None)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    };
    let (before, plain_before) = (loss_of(&batch), loss_of(&[&plain]));
    let job = Kragrec::new(&model, &p, None).unwrap();
    let cfg = TrainConfig {
        epochs: 15,
        batch_size: 4,
        optimizer: ParamsAdamW {
            lr: 5e-2,
            weight_decay: 0.0,
            ..Default::default()
        },
        eval_every: None,
        ..Default::default()
    };
    Trainer::new(cfg, None)
        .unwrap()
        .run(&job, &ex, &[], &mut |_| Flow::Continue)
        .unwrap();
    let after = loss_of(&batch);
    assert!(after < before - 0.2, "loss {before} -> {after}");
    assert_eq!(loss_of(&[&plain]), plain_before);
}

#[test]
fn soft_prompt_file_refuses_other_models_features_and_files() {
    let dev = Device::Cpu;
    let model = tiny::model(5);
    let p = SoftPrompt::new(&model, 3, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prompt.safetensors");
    p.save(&path, model.base_id(), "f").unwrap();
    let back = SoftPrompt::load(&path, model.base_id(), "f", &dev).unwrap();
    let (a, b) = (&p.named_vars()[0].1, &back.named_vars()[0].1);
    assert_eq!(fd::flat(a.as_tensor()), fd::flat(b.as_tensor()));
    assert!(matches!(
        SoftPrompt::load(&path, "llama:other", "f", &dev),
        Err(TrainError::BaseModelMismatch { .. })
    ));
    let err = SoftPrompt::load(&path, model.base_id(), "g", &dev).unwrap_err();
    assert!(err.to_string().contains("features"), "{err}");
    // A graph encoder's file is not a soft prompt, and a truncated file is refused.
    let enc = GraphEncoder::new(GnnConfig::small(6, 16), 0, &dev).unwrap();
    let enc_path = dir.path().join("encoder.safetensors");
    enc.save(&enc_path, model.base_id(), "f").unwrap();
    let err = SoftPrompt::load(&enc_path, model.base_id(), "f", &dev).unwrap_err();
    assert!(matches!(err, TrainError::EncoderFile { .. }), "{err}");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert!(SoftPrompt::load(&path, model.base_id(), "f", &dev).is_err());
    assert!(SoftPrompt::new(&model, 0, 0).is_err());
}

#[test]
fn the_encoder_job_keeps_its_checkpoint_identity() {
    let model = tiny::model(5);
    let cfg = GnnConfig {
        tokens: SoftTokens::Mean,
        ..GnnConfig::small(6, 16)
    };
    let enc = GraphEncoder::new(cfg, 0, &Device::Cpu).unwrap();
    let job = Kragrec::new(&model, &enc, None).unwrap();
    // Checkpoints written before the GraphTokens trait named the GnnConfig this way.
    assert_eq!(
        job.identity(),
        format!("kragrec|{}|{:?}|None", model.base_id(), enc.config())
    );
    let p = SoftPrompt::new(&model, 1, 0).unwrap();
    let soft = Kragrec::new(&model, &p, None).unwrap();
    assert!(
        soft.identity().contains("soft_prompt[1, 16]"),
        "{}",
        soft.identity()
    );
}
