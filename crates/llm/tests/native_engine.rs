//! The native CPU engine against candle on the same (dequantized) weights, and its two code
//! paths (f32 `gemm` for prompts, stored blocks for single tokens) against each other.
//! Needs the real SmolLM2 file (`scripts/fetch-llms.sh --smollm-only`); fails loudly without it.

use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_llm::{Activations, Engine, GgufModel, GgufOptions, default_model_path};

fn load(engine: Engine) -> GgufModel {
    load_with(engine, Activations::F32)
}

fn load_with(engine: Engine, activations: Activations) -> GgufModel {
    let p = default_model_path();
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
/// The only differences are summation orders.
#[test]
fn native_matches_candle_on_dequantized_weights() {
    // SAFETY: this is the only test in this binary that reads the variable, and it sets it
    // before candle's first (per-thread, lazy) read.
    unsafe { std::env::set_var("CANDLE_DEQUANTIZE_ALL", "1") };
    let native = load(Engine::Native);
    let candle = load(Engine::Candle);
    let params = GenParams {
        max_tokens: 24,
        temperature: 0.0,
        ..Default::default()
    };
    for p in prompts() {
        let ids = native.prompt_tokens(&p).unwrap();
        let a = native.next_token_logits(&ids).unwrap();
        let b = candle.next_token_logits(&ids).unwrap();
        assert_eq!(a.len(), b.len());
        let scale = b.iter().fold(0f32, |m, x| m.max(x.abs()));
        let diff = a
            .iter()
            .zip(&b)
            .fold(0f32, |m, (x, y)| m.max((x - y).abs()));
        eprintln!("max abs logit difference {diff:e} (largest logit {scale})");
        assert!(
            diff <= 1e-3 * scale.max(1.0),
            "{p:?}: max abs logit difference {diff} (largest logit {scale})"
        );
        assert_eq!(argmax(&a), argmax(&b));
        let ga = native.generate_full(&p, &params).unwrap();
        let gb = candle.generate_full(&p, &params).unwrap();
        assert_eq!(ga.tokens, gb.tokens, "{p:?}");
    }
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
    assert_eq!(load(Engine::Candle).activations(), None);
    let params = GenParams {
        max_tokens: 24,
        temperature: 0.0,
        ..Default::default()
    };
    for p in prompts() {
        let a = q8.generate_full(&p, &params).unwrap().tokens;
        let b = f32.generate_full(&p, &params).unwrap().tokens;
        let same = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        eprintln!(
            "{p:?}: {same} of {} greedy tokens equal",
            a.len().min(b.len())
        );
        assert!(
            same >= 8.min(a.len().min(b.len())),
            "{p:?}: q8 {a:?} vs f32 {b:?}"
        );
    }
}

/// Batched decoding gives each prompt exactly what it gets alone, greedy and sampled, with
/// stop strings, a bad prompt in the middle, and sequences finishing at different steps, with
/// either activation arithmetic.
#[test]
fn batched_generation_equals_one_at_a_time() {
    for act in [Activations::Q8, Activations::F32] {
        batched_equals_one_at_a_time(&load_with(Engine::Native, act));
    }
}

fn batched_equals_one_at_a_time(m: &GgufModel) {
    let mut ps = prompts();
    ps.push(Prompt::user("Write a haiku about rain."));
    ps.insert(2, Prompt::Raw(String::new()));
    for params in [
        GenParams {
            max_tokens: 20,
            temperature: 0.0,
            ..Default::default()
        },
        GenParams {
            max_tokens: 30,
            temperature: 0.7,
            top_p: Some(0.9),
            seed: 7,
            stop: vec![".".into()],
        },
    ] {
        let batch = m.generate_batch_full(&ps, &params);
        assert_eq!(batch.len(), ps.len());
        for (p, b) in ps.iter().zip(batch) {
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
    let e = m.next_token_logits(&[]).unwrap_err();
    assert!(e.to_string().contains("no tokens"), "{e}");
    let e = m.next_token_logits(&[u32::MAX]).unwrap_err();
    assert!(e.to_string().contains("outside the vocabulary"), "{e}");
}
