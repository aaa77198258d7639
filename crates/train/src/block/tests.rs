use candle_core::{Device, Tensor, Var};
use pgraphrag_llm::{LlamaDims, LlamaF32, LlamaLayerF32};

use crate::{Llama, Lora, LoraConfig, LoraTarget};

/// A llama whose projections are multiples of 32 wide (so the packed tiles run them where
/// the CPU has AVX2), 2 layers, 4 query heads on 2 KV heads, partial RoPE.
fn model() -> Llama {
    let d = LlamaDims {
        n_embd: 64,
        n_head: 4,
        n_kv_head: 2,
        head_dim: 16,
        n_ff: 96,
        n_layer: 2,
        rope_dim: 8,
        rope_base: 10000.0,
        eps: 1e-5,
        vocab: 50,
    };
    let mut k = 0u32;
    let mut v = |n: usize, scale: f32| -> Vec<f32> {
        k += 1;
        (0..n)
            .map(|i| ((i as f32 * 0.731 + k as f32 * 1.37).sin()) * scale)
            .collect()
    };
    let (e, ff, kvd) = (d.n_embd, d.n_ff, d.n_kv_head * d.head_dim);
    let layers = (0..d.n_layer)
        .map(|_| LlamaLayerF32 {
            attn_norm: v(e, 0.3).iter().map(|x| 1.0 + x).collect(),
            attn_q: v(e * e, 0.2),
            attn_k: v(kvd * e, 0.2),
            attn_v: v(kvd * e, 0.2),
            attn_output: v(e * e, 0.2),
            ffn_norm: v(e, 0.3).iter().map(|x| 1.0 + x).collect(),
            ffn_gate: v(ff * e, 0.2),
            ffn_up: v(ff * e, 0.2),
            ffn_down: v(e * ff, 0.2),
        })
        .collect();
    let w = LlamaF32 {
        dims: d,
        token_embd: v(d.vocab * e, 0.5),
        layers,
        output_norm: vec![1.0; e],
        output: None,
    };
    Llama::from_f32(w, "block-test", &Device::Cpu).unwrap()
}

fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
    (a - b)
        .unwrap()
        .abs()
        .unwrap()
        .flatten_all()
        .unwrap()
        .max(0)
        .unwrap()
        .to_scalar::<f32>()
        .unwrap()
}

/// The fused halves compute what candle's chain computes: the hidden states, and the
/// gradients of the input and of adapters on all seven projections, with dropout on.
#[test]
fn fused_blocks_match_candles_chain_forward_and_backward() {
    let m = model();
    let cfg = LoraConfig {
        rank: 4,
        alpha: 8.0,
        dropout: 0.2,
        targets: LoraTarget::ALL.to_vec(),
    };
    let lora = Lora::new(&m, cfg, 3).unwrap();
    for (i, (name, v)) in lora.named_vars().into_iter().enumerate() {
        if name.ends_with("lora_b") {
            let n = v.elem_count();
            let vals: Vec<f32> = (0..n)
                .map(|k| ((k * 3 + i) as f32 * 0.41).cos() * 0.2)
                .collect();
            v.set(&Tensor::from_vec(vals, v.shape().clone(), &Device::Cpu).unwrap())
                .unwrap();
        }
    }
    let (b, t, d) = (3, 37, 64);
    let x0: Vec<f32> = (0..b * t * d).map(|i| (i as f32 * 0.173).sin()).collect();
    let x = Var::from_tensor(&Tensor::from_vec(x0, (b, t, d), &Device::Cpu).unwrap()).unwrap();
    let w: Vec<f32> = (0..b * t * d).map(|i| (i as f32 * 0.029).cos()).collect();
    let w = Tensor::from_vec(w, (b, t, d), &Device::Cpu).unwrap();
    let run = |fused: bool| {
        let h = m
            .blocks(x.as_tensor(), Some(&lora), Some(9), fused)
            .unwrap();
        let loss = (&h * &w).unwrap().sum_all().unwrap();
        (h, loss.backward().unwrap())
    };
    let (hf, gf) = run(true);
    let (hc, gc) = run(false);
    let scale = hc.abs().unwrap().flatten_all().unwrap().max(0).unwrap();
    let scale = scale.to_scalar::<f32>().unwrap();
    assert!(max_diff(&hf, &hc) <= 1e-5 * scale, "hidden states");
    let mut checked = 0;
    let vars = std::iter::once(("input".to_string(), x.clone())).chain(lora.named_vars());
    for (name, v) in vars {
        let (a, c) = (
            gf.get(v.as_tensor()).unwrap(),
            gc.get(v.as_tensor()).unwrap(),
        );
        let big = c.abs().unwrap().flatten_all().unwrap().max(0).unwrap();
        let big = big.to_scalar::<f32>().unwrap();
        assert!(big > 1e-3, "{name}: gradient too small to compare");
        let diff = max_diff(a, c);
        assert!(diff <= 1e-4 * big, "{name}: {diff} against {big}");
        checked += 1;
    }
    assert_eq!(checked, 1 + 2 * 7 * 2);
}

/// The fused path's values and gradients are the same bits on 1 and 3 threads.
#[test]
fn fused_blocks_do_not_depend_on_the_threads() {
    let m = model();
    let lora = Lora::new(&m, LoraConfig::kragrec(), 3).unwrap();
    let (b, t, d) = (2, 70, 64);
    let x0: Vec<f32> = (0..b * t * d).map(|i| (i as f32 * 0.173).sin()).collect();
    let x = Var::from_tensor(&Tensor::from_vec(x0, (b, t, d), &Device::Cpu).unwrap()).unwrap();
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let h = m.blocks(x.as_tensor(), Some(&lora), Some(5), true).unwrap();
            let g = h.sqr().unwrap().sum_all().unwrap().backward().unwrap();
            let bits = |t: &Tensor| -> Vec<u32> {
                let v = t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                v.iter().map(|x| x.to_bits()).collect()
            };
            let mut out = vec![bits(&h), bits(g.get(x.as_tensor()).unwrap())];
            for (_, v) in lora.named_vars() {
                out.push(bits(g.get(v.as_tensor()).unwrap()));
            }
            out
        })
    };
    assert_eq!(run(1), run(3));
}
