//! Finite-difference checks of the backward pass on a tiny llama built by the test (random
//! weights: 2 layers, hidden 16, 2 query heads sharing one KV head): LoRA parameters on every
//! projection (with dropout on, its masks seeded) and soft-token input embeddings. Plus the
//! forward pass's batch padding and the LoRA merge.

use candle_core::{Device, Tensor, Var};
use pgraphrag_train::{AnswerExample, Lora, LoraConfig, LoraTarget, answer_loss};

#[path = "support/tiny.rs"]
mod tiny;

#[path = "support/fd.rs"]
mod fd;
use fd::{fd_check, flat};

fn examples() -> Vec<AnswerExample> {
    vec![
        AnswerExample {
            prompt: vec![1, 7, 12, 30, 5],
            answer: vec![9, 2],
        },
        AnswerExample {
            prompt: vec![1, 22, 3],
            answer: vec![17],
        },
    ]
}

#[test]
fn lora_gradients_match_finite_differences_on_every_projection() {
    let model = tiny::model(1);
    let cfg = LoraConfig {
        rank: 3,
        alpha: 6.0,
        dropout: 0.1,
        targets: LoraTarget::ALL.to_vec(),
    };
    let lora = Lora::new(&model, cfg, 5).unwrap();
    // B starts at zero (so A's gradient would be zero): give it values.
    for (i, (name, v)) in lora.named_vars().into_iter().enumerate() {
        if name.ends_with("lora_b") {
            let n = v.elem_count();
            let vals: Vec<f32> = (0..n)
                .map(|k| ((k * 7 + i) as f32 * 0.61).sin() * 0.3)
                .collect();
            v.set(&Tensor::from_vec(vals, v.shape().clone(), &Device::Cpu).unwrap())
                .unwrap();
        }
    }
    let ex = examples();
    let batch: Vec<&AnswerExample> = ex.iter().collect();
    let seed = Some(77);
    let loss = || {
        answer_loss(&model, Some(&lora), &batch, seed)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    };
    let l = answer_loss(&model, Some(&lora), &batch, seed).unwrap();
    let grads = l.backward().unwrap();
    let mut checked = 0;
    for (name, v) in lora.named_vars() {
        let g = grads
            .get(v.as_tensor())
            .unwrap_or_else(|| panic!("no gradient for {name}"))
            .clone();
        let biggest = fd_check(&loss, &v, &g, &name, 6);
        assert!(
            biggest > 1e-3,
            "{name}: gradients too small to check ({biggest})"
        );
        checked += 1;
    }
    assert_eq!(checked, 2 * 7 * 2);
}

#[test]
fn soft_token_gradients_match_finite_differences() {
    let model = tiny::model(2);
    let dev = Device::Cpu;
    let init: Vec<f32> = (0..32).map(|k| (k as f32 * 0.37).cos() * 0.8).collect();
    let soft = Var::from_tensor(&Tensor::from_vec(init, (2, 16), &dev).unwrap()).unwrap();
    let target = Tensor::new(&[11u32], &dev).unwrap();
    let loss_t = || {
        let x = model
            .embed_with_soft_tokens(&[1], soft.as_tensor(), &[4, 25, 8])
            .unwrap();
        let h = model.hidden(&x, None, None).unwrap();
        let last = h.narrow(0, 5, 1).unwrap();
        let logits = model.logits(&last).unwrap();
        candle_nn::loss::cross_entropy(&logits, &target).unwrap()
    };
    let grads = loss_t().backward().unwrap();
    let g = grads
        .get(soft.as_tensor())
        .expect("gradient reaches the soft tokens");
    let loss = || loss_t().to_scalar::<f32>().unwrap();
    let biggest = fd_check(&loss, &soft, g, "soft tokens", 32);
    assert!(biggest > 1e-3);
}

#[test]
fn right_padding_leaves_real_positions_unchanged() {
    let model = tiny::model(3);
    let a = [1u32, 5, 9, 33, 2, 7];
    let b = [1u32, 12, 4];
    let alone = flat(&model.forward_ids(&b, None).unwrap());
    let mut ids = a.to_vec();
    ids.extend(b);
    ids.extend([0, 0, 0]);
    let e = model.embed(&ids).unwrap().reshape((2, 6, 16)).unwrap();
    let h = model.hidden(&e, None, None).unwrap();
    let batched = flat(
        &model
            .logits(&h.get(1).unwrap().narrow(0, 0, 3).unwrap())
            .unwrap(),
    );
    let diff = alone
        .iter()
        .zip(&batched)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(diff < 1e-5, "padded batch differs by {diff}");
}

#[test]
fn merged_weights_compute_what_the_adapter_computes() {
    let model = tiny::model(4);
    let lora = Lora::new(&model, LoraConfig::kragrec(), 9).unwrap();
    for (name, v) in lora.named_vars() {
        if name.ends_with("lora_b") {
            let vals: Vec<f32> = (0..v.elem_count())
                .map(|k| (k as f32).sin() * 0.2)
                .collect();
            v.set(&Tensor::from_vec(vals, v.shape().clone(), &Device::Cpu).unwrap())
                .unwrap();
        }
    }
    let ids = [1u32, 3, 17, 29, 8];
    let base = flat(&model.forward_ids(&ids, None).unwrap());
    let adapted = flat(&model.forward_ids(&ids, Some(&lora)).unwrap());
    let merged_model = model.merge(&lora).unwrap();
    let merged = flat(&merged_model.forward_ids(&ids, None).unwrap());
    let max = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max)
    };
    assert!(
        max(&base, &adapted) > 1e-2,
        "the adapter must change the logits"
    );
    assert!(
        max(&adapted, &merged) < 1e-4,
        "merged differs by {}",
        max(&adapted, &merged)
    );
    // The merged weights export as plain f32 and load back to the same function.
    let again = pgraphrag_train::Llama::from_f32(merged_model.to_f32().unwrap(), "m", &Device::Cpu)
        .unwrap();
    assert_eq!(flat(&again.forward_ids(&ids, None).unwrap()), merged);
}
