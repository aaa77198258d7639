//! The native CPU engine against candle on the same (dequantized) weights, and its two code
//! paths (f32 `gemm` for prompts, stored blocks for single tokens) against each other.
//! Needs the real SmolLM2 file (`scripts/fetch-llms.sh --smollm-only`); fails loudly without it.

use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_llm::{Activations, Engine, GgufModel, GgufOptions, Kernels, Prefill};
#[cfg(feature = "candle")]
use pgraphrag_llm::{LoraTarget, LowRank};

#[path = "support/model.rs"]
mod model;

fn load(engine: Engine) -> GgufModel {
    load_with(engine, Activations::F32)
}

fn load_with(engine: Engine, activations: Activations) -> GgufModel {
    load_full(engine, activations, Prefill::default())
}

fn load_full(engine: Engine, activations: Activations, prefill: Prefill) -> GgufModel {
    load_kernels(engine, activations, prefill, Kernels::Auto)
}

fn load_kernels(
    engine: Engine,
    activations: Activations,
    prefill: Prefill,
    kernels: Kernels,
) -> GgufModel {
    let p = model::model_path();
    assert!(
        p.exists(),
        "SmolLM2 model {} is missing: run scripts/fetch-llms.sh --smollm-only (or set PGRAPHRAG_MODEL)",
        p.display()
    );
    GgufModel::load(
        &p,
        GgufOptions {
            engine,
            activations,
            prefill,
            kernels,
            ..Default::default()
        },
    )
    .unwrap()
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::user("What is the capital of France? Answer in one word."),
        Prompt::user(
            "Here is a review of a kettle: \"Boils fast, but the lid broke after a week.\" \
             Write a short title for it.",
        ),
        Prompt::Raw("The quick brown fox".into()),
    ]
}

fn argmax(v: &[f32]) -> usize {
    v.iter()
        .enumerate()
        .fold(
            (0, f32::NEG_INFINITY),
            |b, (i, &x)| if x > b.1 { (i, x) } else { b },
        )
        .0
}

/// candle with every weight dequantized to f32 (`CANDLE_DEQUANTIZE_ALL`) computes the same
/// function as the native engine: f32 weights equal to the stored blocks, f32 activations.
/// The only differences are summation orders. The same holds with a LoRA adapter on every
/// projection, added on the fly by the native engine and merged into the weights by candle.
#[cfg(feature = "candle")]
#[test]
fn native_matches_candle_on_dequantized_weights() {
    // SAFETY: this is the only test in this binary that reads the variable, and it sets it
    // before candle's first (per-thread, lazy) read.
    unsafe { std::env::set_var("CANDLE_DEQUANTIZE_ALL", "1") };
    let mut native = load(Engine::Native);
    let mut candle = load(Engine::Candle);
    let base: Vec<Vec<f32>> = prompts()
        .iter()
        .map(|p| agree(&native, &candle, p))
        .collect();

    let adapter = random_adapter();
    native.set_adapter(Some(adapter.clone())).unwrap();
    candle.set_adapter(Some(adapter)).unwrap();
    assert!(candle.cache_id().ends_with(":adapter:random"));
    for (p, before) in prompts().iter().zip(&base) {
        let after = agree(&native, &candle, p);
        // The adapter changes the function by far more than the engines' tolerance.
        let scale = before.iter().fold(0f32, |m, x| m.max(x.abs()));
        let moved = max_abs_diff(before, &after);
        eprintln!("the adapter moves the logits by up to {moved:e}");
        assert!(
            moved > 1e-2 * scale.max(1.0),
            "{p:?}: the adapter moved the logits by {moved}"
        );
    }

    // An adapter that does not fit is refused, and the model keeps the one it had.
    let mut beyond = pgraphrag_llm::LoraAdapter::new("beyond");
    beyond.insert(99, LoraTarget::Q, low_rank(576, 576, 1));
    let err = candle.set_adapter(Some(beyond)).unwrap_err();
    assert!(err.to_string().contains("blk.99.attn_q.weight"), "{err}");
    let mut narrow = pgraphrag_llm::LoraAdapter::new("narrow");
    narrow.insert(0, LoraTarget::Q, low_rank(576, 100, 1));
    let err = candle.set_adapter(Some(narrow)).unwrap_err();
    assert!(
        err.to_string()
            .contains("the update of `blk.0.attn_q.weight` is 576x100"),
        "{err}"
    );
    assert!(candle.cache_id().ends_with(":adapter:random"));
    // Removing it reloads the file's weights: the logits of before, to the bit.
    candle.set_adapter(None).unwrap();
    let p = &prompts()[0];
    let ids = candle.prompt_tokens(p).unwrap();
    assert_eq!(candle.next_token_logits(&ids).unwrap(), base[0]);
}

/// The native engine's and candle's logits for `p` agree to 10⁻³ of the largest, with the
/// same argmax and the same greedy tokens; returns candle's logits.
#[cfg(feature = "candle")]
fn agree(native: &GgufModel, candle: &GgufModel, p: &Prompt) -> Vec<f32> {
    let params = GenParams {
        max_tokens: 24,
        temperature: 0.0,
        ..Default::default()
    };
    let ids = native.prompt_tokens(p).unwrap();
    let a = native.next_token_logits(&ids).unwrap();
    let b = candle.next_token_logits(&ids).unwrap();
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0f32, |m, x| m.max(x.abs()));
    let diff = max_abs_diff(&a, &b);
    eprintln!("max abs logit difference {diff:e} (largest logit {scale})");
    assert!(
        diff <= 1e-3 * scale.max(1.0),
        "{p:?}: max abs logit difference {diff} (largest logit {scale})"
    );
    assert_eq!(argmax(&a), argmax(&b));
    let ga = native.generate_full(p, &params).unwrap();
    let gb = candle.generate_full(p, &params).unwrap();
    assert_eq!(ga.tokens, gb.tokens, "{p:?}");
    b
}

#[cfg(feature = "candle")]
fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs()))
}

/// A rank-`rank` update of an `out × in` projection with values in ±0.05 from a fixed
/// sequence (a 64-bit LCG), scale 2 (LoRA's alpha 16 over rank 8).
#[cfg(feature = "candle")]
fn low_rank(out: usize, inp: usize, rank: usize) -> LowRank {
    let mut state = (out * 31 + inp * 7 + rank) as u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.1
    };
    let a = (0..rank * inp).map(|_| next()).collect();
    let b = (0..out * rank).map(|_| next()).collect();
    LowRank::new(a, b, rank, 2.0).unwrap()
}

/// Rank-8 updates of all seven projections of blocks 0, 7 and 29 (SmolLM2-135M: 576 wide,
/// 9 query and 3 key/value heads of 64, 1536 in the MLP, 30 blocks).
#[cfg(feature = "candle")]
fn random_adapter() -> pgraphrag_llm::LoraAdapter {
    let d = pgraphrag_llm::LlamaDims {
        n_embd: 576,
        n_head: 9,
        n_kv_head: 3,
        head_dim: 64,
        n_ff: 1536,
        n_layer: 30,
        rope_dim: 64,
        rope_base: 1e5,
        eps: 1e-5,
        vocab: 49152,
    };
    let mut ad = pgraphrag_llm::LoraAdapter::new("random");
    for layer in [0, 7, 29] {
        for t in LoraTarget::ALL {
            let (out, inp) = t.shape(&d);
            ad.insert(layer, t, low_rank(out, inp, 8));
        }
    }
    ad
}

/// Greedy decoding runs single tokens through the stored blocks; re-scoring the same prefix
/// as one prompt runs it through the f32 copy and gemm. Both must pick the same next tokens.
#[test]
fn prompt_path_and_decode_path_agree() {
    let m = load(Engine::Native);
    let params = GenParams {
        max_tokens: 16,
        temperature: 0.0,
        ..Default::default()
    };
    for p in prompts() {
        let ids = m.prompt_tokens(&p).unwrap();
        let g = m.generate_tokens(ids.clone(), &params).unwrap();
        assert!(!g.tokens.is_empty());
        for k in [1, g.tokens.len() / 2, g.tokens.len() - 1] {
            if k == 0 || k >= g.tokens.len() {
                continue;
            }
            let prefix = [ids.as_slice(), &g.tokens[..k]].concat();
            let logits = m.next_token_logits(&prefix).unwrap();
            assert_eq!(
                argmax(&logits) as u32,
                g.tokens[k],
                "{p:?} at generated token {k}"
            );
        }
    }
}

/// 8-bit activations (the default) change the decode logits by the activation rounding only:
/// greedy continuations follow the f32 ones closely, and the default is what loads.
/// (Checked with `Prefill::Gemm` in session 3: the first 8 tokens agreed; with `Rowwise` the
/// third prompt meets a near-tie at token 5 and agrees again from token 6 to 19.)
#[test]
fn q8_activations_follow_f32_activations() {
    let q8 = load_with(Engine::Native, Activations::Q8);
    assert_eq!(q8.activations(), Some(Activations::Q8));
    assert_eq!(
        load_with(Engine::Native, Activations::default()).activations(),
        Some(Activations::Q8)
    );
    let f32 = load(Engine::Native);
    assert_eq!(f32.activations(), Some(Activations::F32));
    #[cfg(feature = "candle")]
    assert_eq!(load(Engine::Candle).activations(), None);
    let params = GenParams {
        max_tokens: 24,
        temperature: 0.0,
        ..Default::default()
    };
    for p in prompts() {
        let a = q8.generate_full(&p, &params).unwrap().tokens;
        let b = f32.generate_full(&p, &params).unwrap().tokens;
        // A near-tie can flip one greedy token (the rounding differs), after which the two
        // usually fall back in step: ask for the same start and mostly the same tokens.
        let n = a.len().min(b.len());
        let start = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        eprintln!("{p:?}: first {start}, in all {same} of {n} greedy tokens equal");
        assert!(
            start >= 4.min(n) && 2 * same >= n,
            "{p:?}: q8 {a:?} vs f32 {b:?}"
        );
    }
}

/// Batched decoding gives each prompt exactly what it gets alone, greedy and sampled, with
/// stop strings, a bad prompt in the middle, sequences finishing at different steps and new
/// ones taking their places, with either activation arithmetic and either prompt path.
#[test]
fn batched_generation_equals_one_at_a_time() {
    for act in [Activations::Q8, Activations::F32] {
        batched_equals_one_at_a_time(&load_with(Engine::Native, act), true);
    }
    // The Gemm prompt path only changes how prompts enter the batch: greedy shows it.
    batched_equals_one_at_a_time(
        &load_full(Engine::Native, Activations::F32, Prefill::Gemm),
        false,
    );
}

/// Under `Prefill::Rowwise` prompts that share a prefix with a recent one reuse its KV cache;
/// what they generate (greedy and sampled) is exactly what a model with nothing cached
/// generates, and the `Gemm` prompt path stays close (same greedy start).
#[test]
fn prefix_reuse_changes_nothing() {
    let m = load_with(Engine::Native, Activations::F32);
    assert_eq!(m.prefill(), Some(Prefill::Rowwise));
    let shared = "Given the following reviews from the user:\nReview title: \"Great kettle\", \
                  Review text: \"Boils fast and looks good on the counter.\"\n";
    let ps: Vec<Prompt> = [
        "",
        "Review title: \"Leaks\", Review text: \"The lid does not close.\"\n",
        "Review title: \"Leaks\", Review text: \"The handle got hot.\"\n",
    ]
    .iter()
    .flat_map(|more| {
        [
            Prompt::user(format!("{shared}{more}Generate a title for: \"Nice mug\".")),
            Prompt::user(format!(
                "{shared}{more}Generate a rating for: \"Nice mug\"."
            )),
        ]
    })
    .collect();
    let gemm = load_full(Engine::Native, Activations::F32, Prefill::Gemm);
    for params in [
        GenParams {
            max_tokens: 12,
            temperature: 0.0,
            ..Default::default()
        },
        GenParams {
            max_tokens: 20,
            temperature: 0.8,
            seed: 3,
            ..Default::default()
        },
    ] {
        m.clear_prefix_cache();
        let batch = m.generate_batch_full(&ps, &params);
        for (p, b) in ps.iter().zip(batch) {
            m.clear_prefix_cache();
            let one = m.generate_full(p, &params).unwrap();
            let b = b.unwrap();
            assert_eq!((&b.tokens, &b.text), (&one.tokens, &one.text), "{p:?}");
            if params.temperature == 0.0 {
                let g = gemm.generate_full(p, &params).unwrap();
                let same = g
                    .tokens
                    .iter()
                    .zip(&b.tokens)
                    .take_while(|(x, y)| x == y)
                    .count();
                assert!(
                    same >= 4.min(b.tokens.len()),
                    "{p:?}: gemm {g:?} vs rowwise {b:?}"
                );
            }
        }
    }
    #[cfg(feature = "candle")]
    assert_eq!(load(Engine::Candle).prefill(), None);
}

fn batched_equals_one_at_a_time(m: &GgufModel, sampled: bool) {
    let mut ps = prompts();
    ps.push(Prompt::user("Write a haiku about rain."));
    ps.insert(2, Prompt::Raw(String::new()));
    // More prompts than decode together (8), so finished sequences are replaced mid-batch.
    for i in 0..6 {
        ps.push(Prompt::user(format!("List {i} animals, then stop.")));
    }
    let greedy = GenParams {
        max_tokens: 12,
        temperature: 0.0,
        ..Default::default()
    };
    let sample = GenParams {
        max_tokens: 24,
        temperature: 0.7,
        top_p: Some(0.9),
        seed: 7,
        stop: vec![".".into()],
    };
    let runs = if sampled {
        vec![greedy, sample]
    } else {
        vec![greedy]
    };
    for params in runs {
        let batch = m.generate_batch_full(&ps, &params);
        assert_eq!(batch.len(), ps.len());
        for (p, b) in ps.iter().zip(batch) {
            m.clear_prefix_cache();
            match m.generate_full(p, &params) {
                Ok(one) => {
                    let b = b.unwrap();
                    assert_eq!(
                        (b.tokens, b.text, b.finish),
                        (one.tokens, one.text, one.finish),
                        "{p:?}"
                    );
                }
                Err(e) => assert_eq!(b.unwrap_err().to_string(), e.to_string()),
            }
        }
    }
}

#[test]
fn native_is_refused_for_other_architectures_and_errors_are_clear() {
    let m = load(Engine::Native);
    assert_eq!(m.engine(), Engine::Native);
    let e = pgraphrag_core::error_chain(&m.next_token_logits(&[]).unwrap_err());
    assert!(e.contains("no tokens"), "{e}");
    let e = pgraphrag_core::error_chain(&m.next_token_logits(&[u32::MAX]).unwrap_err());
    assert!(e.contains("outside the vocabulary"), "{e}");
    assert_eq!(
        e.matches("outside the vocabulary").count(),
        1,
        "each fact once: {e}"
    );
}

/// The portable kernels (what `Kernels::Portable` forces, as a CPU without SIMD extensions
/// runs) and the AVX2 ones (`Kernels::Avx2`, as an AVX2-only CPU runs) compute exactly what
/// the detected SIMD kernels compute under the default options (8-bit activations, row-wise
/// prompts): the same logits, bit for bit, and the same tokens.
#[test]
fn portable_and_avx2_kernels_are_bit_identical_to_the_detected_ones() {
    let auto = load_kernels(
        Engine::Native,
        Activations::Q8,
        Prefill::Rowwise,
        Kernels::Auto,
    );
    for other in [Kernels::Portable, Kernels::Avx2] {
        let plain = load_kernels(Engine::Native, Activations::Q8, Prefill::Rowwise, other);
        same_as(&auto, &plain, other);
    }
}

fn same_as(auto: &GgufModel, plain: &GgufModel, kernels: Kernels) {
    let params = GenParams {
        max_tokens: 12,
        temperature: 0.0,
        ..Default::default()
    };
    for p in prompts() {
        let ids = auto.prompt_tokens(&p).unwrap();
        let (a, b) = (
            auto.next_token_logits(&ids).unwrap(),
            plain.next_token_logits(&ids).unwrap(),
        );
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "{kernels:?}: logits of {p:?}"
        );
        let (ga, gb) = (
            auto.generate_full(&p, &params).unwrap(),
            plain.generate_full(&p, &params).unwrap(),
        );
        assert_eq!(ga.tokens, gb.tokens, "{kernels:?}: tokens of {p:?}");
    }
}

/// `next_token_logits` reuses the KV cache of a prefix shared with an earlier prompt; the
/// logits must be bit-identical to scoring the prompt from an empty cache.
#[test]
fn next_token_logits_prefix_reuse_is_exact() {
    let m = load(Engine::Native);
    let a = m
        .prompt_tokens(&Prompt::user(
            "Pick a film for a fan of Heat and Fargo: A or B?",
        ))
        .unwrap();
    let b = m
        .prompt_tokens(&Prompt::user(
            "Pick a film for a fan of Heat and Se7en: A or B?",
        ))
        .unwrap();
    let shared = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    assert!(
        shared > 5 && shared < b.len(),
        "the prompts share {shared} tokens"
    );
    m.clear_prefix_cache();
    let fresh_b = m.next_token_logits(&b).unwrap();
    m.clear_prefix_cache();
    let fresh_a = m.next_token_logits(&a).unwrap();
    // b now reuses a's prefix; a again reuses all but its last token.
    assert_eq!(m.next_token_logits(&b).unwrap(), fresh_b);
    assert_eq!(m.next_token_logits(&a).unwrap(), fresh_a);
    // A prefix of a scored prompt, and the same prompt twice.
    m.clear_prefix_cache();
    let fresh_prefix = m.next_token_logits(&a[..shared]).unwrap();
    m.clear_prefix_cache();
    m.next_token_logits(&a).unwrap();
    assert_eq!(m.next_token_logits(&a[..shared]).unwrap(), fresh_prefix);
}
