//! LoRA adapters at inference on the real SmolLM2-135M-Instruct
//! (`models/SmolLM2-135M-Instruct.Q4_1.gguf`, `scripts/fetch-llms.sh --smollm-only`; fails
//! loudly without it): the native engine applying an adapter on the fly
//! (`GgufModel::set_adapter`) against the f32 model with the adapter merged
//! (`Llama::merge`), an all-zero `B` leaving every output bit as it was, the adapter file
//! round trip without the f32 model (`Lora::load_for_gguf`), and the training data loader
//! through the model's chat template.

use candle_core::{Device, Tensor};
use pgraphrag_core::{GenParams, Generator, Prompt};
use pgraphrag_llm::{Activations, GgufModel, GgufOptions, LlamaDims, LlamaF32, LlamaLayerF32};
use pgraphrag_train::{Llama, Lora, LoraConfig, LoraTarget, TrainError, load_answer_examples};

#[path = "../../llm/tests/support/model.rs"]
mod model;

/// The largest |difference| allowed between the native engine with the adapter applied on
/// the fly and the merged f32 model: the tolerance of the engine-parity test
/// (`tests/smollm2.rs`, measured 1.08e-4 without adapter), the adapter adding one f32
/// summation-order difference per adapted projection.
const TOLERANCE: f32 = 5e-4;

fn path() -> std::path::PathBuf {
    let p = model::model_path();
    assert!(
        p.exists(),
        "SmolLM2 model {} is missing: run scripts/fetch-llms.sh --smollm-only (or set PGRAPHRAG_MODEL)",
        p.display()
    );
    p
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max)
}

/// Sets every `B` of `lora` to seeded values of size about `amp`.
fn fill_b(lora: &Lora, amp: f32) {
    for (i, (name, var)) in lora.named_vars().into_iter().enumerate() {
        if name.ends_with("lora_b") {
            let dims = var.as_tensor().dims().to_vec();
            let n: usize = dims.iter().product();
            let v: Vec<f32> = (0..n)
                .map(|j| ((j * 31 + i * 7) as f32 * 0.618).sin() * amp)
                .collect();
            var.set(&Tensor::from_vec(v, dims, &Device::Cpu).unwrap())
                .unwrap();
        }
    }
}

#[test]
fn native_engine_applies_adapters_as_the_merged_model() {
    let gguf = path();
    let llama = Llama::from_gguf(&gguf, &Device::Cpu).unwrap();
    let opts = GgufOptions {
        activations: Activations::F32,
        ..Default::default()
    };
    let mut native = GgufModel::load(&gguf, opts).unwrap();
    let base_id = native.cache_id();
    let prompt = Prompt::user("Rate this product from 1 to 5: 'Great kettle, boils fast.'");
    let ids = native.prompt_tokens(&prompt).unwrap();
    let params = GenParams {
        max_tokens: 6,
        temperature: 0.0,
        ..Default::default()
    };
    let base_logits = native.next_token_logits(&ids).unwrap();
    let base_text = native.generate(&prompt, &params).unwrap();

    // A fresh adapter (B = 0), saved and read back without the f32 model: the same id, and
    // every logit and generated token exactly as without it.
    let config = LoraConfig {
        targets: LoraTarget::ALL.to_vec(),
        ..LoraConfig::kragrec()
    };
    let lora = Lora::new(&llama, config, 3).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zero.safetensors");
    lora.save(&file).unwrap();
    let zero = Lora::load_for_gguf(&gguf, &file)
        .unwrap()
        .to_adapter()
        .unwrap();
    assert_eq!(zero.id(), lora.to_adapter().unwrap().id());
    assert_eq!(zero.len(), 30 * 7);
    native.set_adapter(Some(zero)).unwrap();
    assert_ne!(
        native.cache_id(),
        base_id,
        "the adapter must be part of the cache key"
    );
    assert!(native.cache_id().starts_with(&base_id));
    let zero_logits = native.next_token_logits(&ids).unwrap();
    assert!(
        zero_logits
            .iter()
            .zip(&base_logits)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "a zero adapter changed the logits (max diff {})",
        max_diff(&zero_logits, &base_logits)
    );
    assert_eq!(native.generate(&prompt, &params).unwrap(), base_text);

    // A non-zero adapter on all seven projections: the engine's logits at the prompt's end and
    // in its middle match the merged f32 model's.
    fill_b(&lora, 0.02);
    native
        .set_adapter(Some(lora.to_adapter().unwrap()))
        .unwrap();
    let merged = llama.merge(&lora).unwrap();
    let all = merged
        .forward_ids(&ids, None)
        .unwrap()
        .to_vec2::<f32>()
        .unwrap();
    let mut moved = 0f32;
    for end in [ids.len() / 2, ids.len()] {
        let got = native.next_token_logits(&ids[..end]).unwrap();
        let diff = max_diff(&got, &all[end - 1]);
        eprintln!("position {end}: max |native - merged| {diff:e}");
        assert!(diff < TOLERANCE, "position {end}: max |diff| {diff}");
        if end == ids.len() {
            moved = max_diff(&got, &base_logits);
        }
    }
    eprintln!("the adapter moved the last logits by up to {moved}");
    assert!(
        moved > 0.1,
        "the adapter barely moved the logits ({moved}): the test is void"
    );

    // Removing it restores the base model exactly.
    native.set_adapter(None).unwrap();
    assert_eq!(native.cache_id(), base_id);
    assert_eq!(native.next_token_logits(&ids).unwrap(), base_logits);
}

#[test]
fn adapters_of_another_model_and_bad_data_are_refused() {
    let gguf = path();
    // An adapter for a tiny model is not SmolLM2's.
    let d = LlamaDims {
        n_embd: 4,
        n_head: 2,
        n_kv_head: 1,
        head_dim: 2,
        n_ff: 8,
        n_layer: 1,
        rope_dim: 2,
        rope_base: 10000.0,
        eps: 1e-5,
        vocab: 5,
    };
    let v = |n: usize| {
        (0..n)
            .map(|i| (i as f32 * 0.37).sin())
            .collect::<Vec<f32>>()
    };
    let layer = LlamaLayerF32 {
        attn_norm: vec![1.0; 4],
        attn_q: v(16),
        attn_k: v(8),
        attn_v: v(8),
        attn_output: v(16),
        ffn_norm: vec![1.0; 4],
        ffn_gate: v(32),
        ffn_up: v(32),
        ffn_down: v(32),
    };
    let w = LlamaF32 {
        dims: d,
        token_embd: v(20),
        layers: vec![layer],
        output_norm: vec![1.0; 4],
        output: None,
    };
    let tiny = Llama::from_f32(w, "tiny", &Device::Cpu).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tiny.safetensors");
    // Rank 2: the rank cannot exceed the tiny model's 2 × 4 value projection.
    let config = LoraConfig {
        rank: 2,
        ..LoraConfig::kragrec()
    };
    Lora::new(&tiny, config, 0).unwrap().save(&file).unwrap();
    let err = Lora::load_for_gguf(&gguf, &file).unwrap_err();
    assert!(matches!(err, TrainError::BaseModelMismatch { .. }), "{err}");
    // A truncated file (by half, by one byte) is refused naming it, before its metadata is
    // trusted.
    let bytes = std::fs::read(&file).unwrap();
    for cut in [bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&file, &bytes[..cut]).unwrap();
        let err = Lora::load_for_gguf(&gguf, &file).unwrap_err();
        assert!(matches!(err, TrainError::Adapter { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("tiny.safetensors") && msg.contains("truncated"),
            "{msg}"
        );
    }

    // Training data goes through the chat template generation uses, and ends the answer with
    // the end of the assistant turn.
    let native = GgufModel::load(&gguf, GgufOptions::default()).unwrap();
    let data = dir.path().join("train.jsonl");
    std::fs::write(
        &data,
        "{\"system\":\"S\",\"prompt\":\"Rate it.\",\"target\":\"Rating: 4\"}\n",
    )
    .unwrap();
    let got = load_answer_examples(&data, &native, None).unwrap();
    let want = native
        .prompt_tokens(&Prompt::user("Rate it.").with_system("S"))
        .unwrap();
    assert_eq!(got.examples[0].prompt, want);
    let answer = &got.examples[0].answer;
    assert_eq!(
        native
            .tokenizer()
            .decode(&answer[..answer.len() - 1])
            .unwrap(),
        "Rating: 4"
    );
    assert_eq!(
        answer.last().copied(),
        native.tokenizer().token_id("<|im_end|>")
    );
    std::fs::write(&data, "{\"prompt\":\"Rate it.\"}\n").unwrap();
    let err = load_answer_examples(&data, &native, None).unwrap_err();
    assert!(matches!(err, TrainError::DataLine { line: 1, .. }), "{err}");
    assert!(
        err.to_string().contains("train.jsonl:1: no `target`"),
        "{err}"
    );
}
