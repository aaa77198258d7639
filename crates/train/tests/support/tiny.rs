//! A tiny llama with seeded random weights (2 layers, hidden 16, 2 query heads sharing one KV
//! head, 40 tokens) for gradient checks and trainer tests. Test-only: the library has no
//! random model.

#![allow(dead_code)]

use candle_core::Device;
use pgraphrag_llm::{LlamaDims, LlamaF32, LlamaLayerF32};
use pgraphrag_train::Llama;

pub fn dims() -> LlamaDims {
    LlamaDims {
        n_embd: 16,
        n_head: 2,
        n_kv_head: 1,
        head_dim: 8,
        n_ff: 32,
        n_layer: 2,
        rope_dim: 8,
        rope_base: 10000.0,
        eps: 1e-5,
        vocab: 40,
    }
}

/// Deterministic values in about [-scale, scale] (an LCG; no dependency needed).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

pub fn weights(seed: u64) -> LlamaF32 {
    let d = dims();
    let (e, qd, kvd, ff) = (
        d.n_embd,
        d.n_head * d.head_dim,
        d.n_kv_head * d.head_dim,
        d.n_ff,
    );
    let mut k = seed * 100;
    let mut v = |n: usize, scale: f32| {
        k += 1;
        values(n, k, scale)
    };
    let norm = |v: Vec<f32>| v.into_iter().map(|x| 1.0 + 0.2 * x).collect::<Vec<f32>>();
    let layers = (0..d.n_layer)
        .map(|_| LlamaLayerF32 {
            attn_norm: norm(v(e, 1.0)),
            attn_q: v(qd * e, 0.5),
            attn_k: v(kvd * e, 0.5),
            attn_v: v(kvd * e, 0.5),
            attn_output: v(e * qd, 0.3),
            ffn_norm: norm(v(e, 1.0)),
            ffn_gate: v(ff * e, 0.4),
            ffn_up: v(ff * e, 0.4),
            ffn_down: v(e * ff, 0.3),
        })
        .collect();
    LlamaF32 {
        dims: d,
        token_embd: v(d.vocab * e, 1.0),
        layers,
        output_norm: norm(v(e, 1.0)),
        output: None,
    }
}

/// The tiny model from `seed`.
pub fn model(seed: u64) -> Llama {
    Llama::from_f32(
        weights(seed),
        &format!("tiny-test-seed{seed}"),
        &Device::Cpu,
    )
    .unwrap()
}
