//! K-RagRec's trainable parts on the tiny llama built by the test: finite-difference checks of
//! every graph-encoder and projector parameter through the frozen LLM (both soft-token modes,
//! dropout on with seeded masks), and a few trainer steps lowering the answer-letter loss.

use candle_core::Device;
use pgraphrag_train::{
    Flow, GnnConfig, GraphEncoder, Kragrec, KragrecExample, ParamsAdamW, SoftTokens, Subgraph,
    TrainConfig, Trainer, kragrec_loss,
};

#[path = "support/tiny.rs"]
mod tiny;

#[path = "support/fd.rs"]
mod fd;

const IN: usize = 6;

fn graph(seed: usize, n: usize, edges: &[(u32, u32)]) -> Subgraph {
    let v = |k: usize, m: usize| -> Vec<f32> {
        (0..m)
            .map(|i| ((i * 13 + k * 7 + seed * 31) as f32 * 0.41).sin())
            .collect()
    };
    Subgraph {
        nodes: v(1, n * IN),
        edges: edges.to_vec(),
        edge_features: v(2, edges.len() * IN),
    }
}

fn examples() -> Vec<KragrecExample> {
    (0..4)
        .map(|i| KragrecExample {
            prefix: vec![1],
            graphs: vec![
                graph(i, 3, &[(0, 1), (0, 2), (2, 1)]),
                graph(i + 10, 2, &[(1, 0)]),
            ],
            rest: vec![5 + i as u32, 9, 14, 3],
            answer: [20, 21, 20, 22][i],
        })
        .collect()
}

fn config(tokens: SoftTokens) -> GnnConfig {
    GnnConfig {
        in_dim: IN,
        layers: 2,
        hidden: 8,
        heads: 2,
        dropout: 0.1,
        projector_hidden: 8,
        llm_dim: 16,
        tokens,
    }
}

#[test]
fn encoder_gradients_match_finite_differences() {
    let model = tiny::model(5);
    for tokens in [SoftTokens::Mean, SoftTokens::PerSubgraph] {
        let enc = GraphEncoder::new(config(tokens), 3, &Device::Cpu).unwrap();
        let ex = examples();
        let batch: Vec<&KragrecExample> = ex.iter().take(2).collect();
        let seed = Some(4);
        let loss_t = || kragrec_loss(&model, &enc, None, &batch, seed).unwrap();
        let grads = loss_t().backward().unwrap();
        let loss = || loss_t().to_scalar::<f32>().unwrap();
        let mut checked = 0;
        for (name, v) in enc.named_vars() {
            if name.contains("running_") {
                assert!(grads.get(v.as_tensor()).is_none(), "{name} has a gradient");
                continue;
            }
            let g = grads
                .get(v.as_tensor())
                .unwrap_or_else(|| panic!("{tokens:?}: no gradient for {name}"))
                .clone();
            let biggest = fd::fd_check(&loss, &v, &g, &name, 4);
            // Two biases have a zero gradient, and the finite differences agree: a key bias
            // shifts every score of a query by the same amount, which softmax ignores; the
            // skip bias of a layer followed by BatchNorm (training mode) is a per-channel
            // constant that the batch mean removes.
            let zero = name.ends_with("lin_key.bias") || name == "gnn.conv0.lin_skip.bias";
            if !zero {
                assert!(biggest > 1e-5, "{tokens:?} {name}: gradient {biggest}");
            }
            checked += 1;
        }
        // 2 convs × (q, k, v with bias, edge without, skip with bias) + 1 BatchNorm + projector.
        assert_eq!(checked, 2 * 9 + 2 + 4, "{tokens:?}");
    }
}

#[test]
fn per_subgraph_tokens_are_one_per_graph_and_the_mean_is_one() {
    let ex = examples();
    let mean = GraphEncoder::new(config(SoftTokens::Mean), 1, &Device::Cpu).unwrap();
    let per = GraphEncoder::new(config(SoftTokens::PerSubgraph), 1, &Device::Cpu).unwrap();
    let a = mean.soft_tokens(&ex[0].graphs, None).unwrap();
    let b = per.soft_tokens(&ex[0].graphs, None).unwrap();
    assert_eq!(a.dims(), &[1, 16]);
    assert_eq!(b.dims(), &[2, 16]);
    // Same seed, same weights: the mean token is the mean of the per-graph tokens.
    let diff = (a - b.mean_keepdim(0).unwrap())
        .unwrap()
        .abs()
        .unwrap()
        .max_all()
        .unwrap()
        .to_scalar::<f32>()
        .unwrap();
    assert!(diff < 1e-6, "{diff}");
}

#[test]
fn training_the_encoder_lowers_the_answer_loss() {
    let model = tiny::model(5);
    let enc = GraphEncoder::new(config(SoftTokens::PerSubgraph), 3, &Device::Cpu).unwrap();
    let ex = examples();
    let batch: Vec<&KragrecExample> = ex.iter().collect();
    let before = kragrec_loss(&model, &enc, None, &batch, None)
        .unwrap()
        .to_scalar::<f32>()
        .unwrap();
    let job = Kragrec::new(&model, &enc, None).unwrap();
    let cfg = TrainConfig {
        epochs: 15,
        batch_size: 4,
        optimizer: ParamsAdamW {
            lr: 1e-2,
            weight_decay: 0.0,
            ..Default::default()
        },
        eval_every: None,
        ..Default::default()
    };
    let report = Trainer::new(cfg, None)
        .unwrap()
        .run(&job, &ex, &[], &mut |_| Flow::Continue)
        .unwrap();
    assert_eq!(report.steps, 15);
    let after = kragrec_loss(&model, &enc, None, &batch, None)
        .unwrap()
        .to_scalar::<f32>()
        .unwrap();
    assert!(after < before - 0.2, "loss {before} -> {after}");
}
