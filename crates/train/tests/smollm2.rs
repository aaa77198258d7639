//! The forward pass on the real SmolLM2-135M-Instruct (`models/SmolLM2-135M-Instruct.Q4_1.gguf`,
//! `scripts/fetch-llms.sh --smollm-only`; fails loudly without it): its logits against the
//! native engine's f32 path on real prompts, and a few LoRA training steps lowering the loss
//! of a small real batch.

use std::sync::OnceLock;

use candle_core::Device;
use pgraphrag_core::Prompt;
use pgraphrag_llm::{Activations, GgufModel, GgufOptions};
use pgraphrag_train::{
    AnswerExample, Flow, Llama, Lora, LoraConfig, LoraLm, ParamsAdamW, TrainConfig, TrainEvent,
    Trainer, answer_loss,
};

#[path = "../../llm/tests/support/model.rs"]
mod model;

/// The largest |difference| allowed between our logits and the native engine's f32 path
/// (measured 1.08e-4 over 9 positions of 3 prompts, the largest logit about 30: see docs/train.md).
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

fn native() -> &'static GgufModel {
    static M: OnceLock<GgufModel> = OnceLock::new();
    M.get_or_init(|| {
        let opts = GgufOptions {
            activations: Activations::F32,
            ..Default::default()
        };
        GgufModel::load(&path(), opts).unwrap()
    })
}

fn llama() -> &'static Llama {
    static M: OnceLock<Llama> = OnceLock::new();
    M.get_or_init(|| Llama::from_gguf(&path(), &Device::Cpu).unwrap())
}

fn argmax(v: &[f32]) -> usize {
    (0..v.len()).fold(0, |b, i| if v[i] > v[b] { i } else { b })
}

#[test]
fn logits_equal_the_native_engines_f32_path() {
    let native = native();
    let ours = llama();
    let prompts = [
        Prompt::user("What is the capital of France? Answer in one word."),
        Prompt::user(
            "Here is a review of a kettle: \"Boils fast, but the lid broke after a week.\" \
             Write a short title for it.",
        ),
        Prompt::Raw("The quick brown fox".into()),
    ];
    let mut worst = 0f32;
    let mut compared = 0;
    for p in &prompts {
        let ids = native.prompt_tokens(p).unwrap();
        let all = ours.forward_ids(&ids, None).unwrap();
        let all = all.to_vec2::<f32>().unwrap();
        // Every position whose logits the engine gives: the last of each prefix.
        for end in [1, ids.len() / 2, ids.len()] {
            let reference = native.next_token_logits(&ids[..end]).unwrap();
            let mine = &all[end - 1];
            assert_eq!(mine.len(), reference.len());
            let diff = mine
                .iter()
                .zip(&reference)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert_eq!(argmax(mine), argmax(&reference), "{p:?} prefix {end}");
            worst = worst.max(diff);
            compared += 1;
        }
    }
    println!("max |logit difference| over {compared} positions x 49152 logits: {worst:e}");
    assert!(worst < TOLERANCE, "logits differ by {worst}");
}

fn chat(tok: &pgraphrag_llm::LlmTokenizer, q: &str, a: &str) -> AnswerExample {
    let prompt = format!("<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n");
    AnswerExample {
        prompt: tok.encode(&prompt).unwrap(),
        answer: tok.encode(&format!("{a}<|im_end|>")).unwrap(),
    }
}

#[test]
fn lora_steps_lower_the_loss_of_a_real_batch() {
    let model = llama();
    let tok = pgraphrag_llm::LlmTokenizer::from_gguf(&path()).unwrap();
    let data = vec![
        chat(
            &tok,
            "Pick a movie for a fan of Toy Story. Answer with a letter: A) Heat B) Cars",
            "B",
        ),
        chat(
            &tok,
            "Pick a movie for a fan of Alien. Answer with a letter: A) Aliens B) Bambi",
            "A",
        ),
        chat(
            &tok,
            "Pick a movie for a fan of Fargo. Answer with a letter: A) Dumbo B) Blood Simple",
            "B",
        ),
        chat(
            &tok,
            "Pick a movie for a fan of Heat. Answer with a letter: A) Ronin B) Cinderella",
            "A",
        ),
    ];
    let lora = Lora::new(model, LoraConfig::kragrec(), 0).unwrap();
    let batch: Vec<&AnswerExample> = data.iter().collect();
    let loss = |l: &Lora| {
        answer_loss(model, Some(l), &batch, None)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    };
    let before = loss(&lora);
    let job = LoraLm::new(model, &lora).unwrap();
    let cfg = TrainConfig {
        seed: 1,
        epochs: 10,
        batch_size: 4,
        grad_accum: 1,
        optimizer: ParamsAdamW {
            lr: 2e-3,
            weight_decay: 0.0,
            ..Default::default()
        },
        max_steps: Some(3),
        eval_every: None,
        patience: None,
        checkpoint_every: 100,
    };
    let mut tok_s = Vec::new();
    Trainer::new(cfg, None)
        .unwrap()
        .run(&job, &data, &[], &mut |e| {
            if let TrainEvent::Step {
                loss, tokens_per_s, ..
            } = e
            {
                println!("step loss {loss:.4}, {tokens_per_s:.0} tokens/s");
                tok_s.push(*tokens_per_s);
            }
            Flow::Continue
        })
        .unwrap();
    let after = loss(&lora);
    println!("answer loss {before:.4} -> {after:.4}");
    assert_eq!(tok_s.len(), 3);
    assert!(after < before - 0.1, "loss {before} -> {after}");
}
