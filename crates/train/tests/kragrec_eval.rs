//! A trained K-RagRec encoder at work, on the tiny llama built by the test: the letter scores
//! are the log-probabilities the training loss is the negative of, rows without sub-graphs
//! are scored without soft tokens, and the encoder file round-trips and refuses what does not
//! fit.

use candle_core::Device;
use pgraphrag_train::{
    GnnConfig, GraphEncoder, KragrecExample, SoftTokens, Subgraph, TrainError,
    kragrec_letter_scores, kragrec_loss,
};

#[path = "support/tiny.rs"]
mod tiny;

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

fn config(tokens: SoftTokens) -> GnnConfig {
    GnnConfig {
        in_dim: IN,
        layers: 2,
        hidden: 8,
        heads: 2,
        dropout: 0.0,
        projector_hidden: 8,
        llm_dim: 16,
        tokens,
    }
}

fn example(graphs: Vec<Subgraph>, answer: u32) -> KragrecExample {
    KragrecExample {
        prefix: vec![1],
        graphs,
        rest: vec![5, 9, 14, 3],
        answer,
    }
}

#[test]
fn letter_scores_are_the_log_probabilities_the_loss_trains() {
    let model = tiny::model(3);
    let letters = [20u32, 21, 22, 23];
    for tokens in [SoftTokens::Mean, SoftTokens::PerSubgraph] {
        let enc = GraphEncoder::new(config(tokens), 7, &Device::Cpu).unwrap();
        for graphs in [
            vec![graph(0, 3, &[(0, 1), (2, 1)]), graph(1, 2, &[(1, 0)])],
            vec![],
        ] {
            let no_graph = graphs.is_empty();
            let ex = example(graphs, 22);
            let s = kragrec_letter_scores(&model, &enc, None, &ex, &letters).unwrap();
            assert_eq!(s.len(), 4);
            assert!(s.iter().all(|v| *v < 0.0 && v.is_finite()), "{s:?}");
            let loss = kragrec_loss(&model, &enc, None, &[&ex], None)
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(
                (f64::from(loss) + s[2]).abs() < 1e-4,
                "loss {loss} against score {} ({tokens:?}, no graph: {no_graph})",
                s[2]
            );
        }
    }
    // Without sub-graphs the row is the prompt alone: the same logits as the plain ids.
    let enc = GraphEncoder::new(config(SoftTokens::Mean), 7, &Device::Cpu).unwrap();
    let ex = example(vec![], 20);
    let s = kragrec_letter_scores(&model, &enc, None, &ex, &[20]).unwrap();
    let logits = model.forward_ids(&[1, 5, 9, 14, 3], None).unwrap();
    let last: Vec<f32> = logits.get(4).unwrap().to_vec1().unwrap();
    let max = last.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let lse = max
        + last
            .iter()
            .map(|&x| (x as f64 - max).exp())
            .sum::<f64>()
            .ln();
    assert!((s[0] - (last[20] as f64 - lse)).abs() < 1e-4);
    // A letter outside the vocabulary is an error, not a panic.
    assert!(kragrec_letter_scores(&model, &enc, None, &ex, &[10_000]).is_err());
}

#[test]
fn encoder_file_round_trips_and_refuses_mismatches() {
    let dev = Device::Cpu;
    let enc = GraphEncoder::new(config(SoftTokens::PerSubgraph), 11, &dev).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("encoder.safetensors");
    enc.save(&p, "base-a", "minilm|mean").unwrap();
    let back = GraphEncoder::load(&p, "base-a", "minilm|mean", &dev).unwrap();
    assert_eq!(back.config(), enc.config());
    let g = [graph(2, 3, &[(0, 1), (1, 2)]), graph(3, 2, &[(0, 1)])];
    let a: Vec<Vec<f32>> = enc.soft_tokens(&g, None).unwrap().to_vec2().unwrap();
    let b: Vec<Vec<f32>> = back.soft_tokens(&g, None).unwrap().to_vec2().unwrap();
    assert_eq!(a, b, "the loaded encoder computes the same soft tokens");
    assert_eq!(a.len(), 2, "one token per sub-graph");

    match GraphEncoder::load(&p, "base-b", "minilm|mean", &dev) {
        Err(TrainError::BaseModelMismatch {
            expected, found, ..
        }) => {
            assert_eq!((expected.as_str(), found.as_str()), ("base-b", "base-a"));
        }
        other => panic!("expected a base-model mismatch, got {other:?}"),
    }
    let e = GraphEncoder::load(&p, "base-a", "other-encoder", &dev).unwrap_err();
    assert!(matches!(e, TrainError::EncoderFile { .. }), "{e}");
    assert!(e.to_string().contains("other-encoder"), "{e}");

    // Truncated, garbage, and a LoRA-like file that is not an encoder file.
    let bytes = std::fs::read(&p).unwrap();
    let t = dir.path().join("truncated.safetensors");
    std::fs::write(&t, &bytes[..bytes.len() / 2]).unwrap();
    let e = GraphEncoder::load(&t, "base-a", "minilm|mean", &dev).unwrap_err();
    assert!(matches!(e, TrainError::EncoderFile { .. }), "{e}");
    assert!(e.to_string().contains("truncated.safetensors"), "{e}");
    let g2 = dir.path().join("garbage.safetensors");
    std::fs::write(&g2, b"not a safetensors file at all").unwrap();
    assert!(matches!(
        GraphEncoder::load(&g2, "base-a", "minilm|mean", &dev),
        Err(TrainError::EncoderFile { .. })
    ));
    assert!(GraphEncoder::load(&dir.path().join("none"), "base-a", "x", &dev).is_err());
}
