//! Times LoRA training steps (forward, backward, AdamW) of a llama GGUF model on the CPU or a
//! CUDA GPU, for `scripts/bench_train.sh`, which runs the same step in PyTorch.
//!
//! ```sh
//! RAYON_NUM_THREADS=2 cargo run --release -p pgraphrag-train --example bench_train -- \
//!     --model models/SmolLM2-135M-Instruct.Q4_1.gguf --batch 4 --seq 128 --answer 8 --steps 5 \
//!     [--export DIR] [--default-malloc] [--device cpu|cuda|cuda:N]
//! ```
//!
//! On a GPU the LoRA gradients of the first batch (without dropout) are also computed on the
//! CPU (same weights, same adapter) and the largest difference is reported (`grad_max_abs_diff_vs_cpu`
//! beside `grad_max_abs`), so a timing never stands without a check of what was computed.
//! `--device cuda` needs the `cuda` feature (`--features cuda`) and a CUDA toolkit at build time.
//!
//! The batch: `batch` windows of `seq` tokens of a real English text (tokenized with the model's
//! tokenizer), the loss the cross-entropy of each window's last `answer` tokens. LoRA: K-RagRec's
//! setting (rank 8, alpha 16, dropout 0.1, q and v). `--export DIR` writes what the PyTorch side
//! needs to run the identical step: the dequantized weights (`weights.safetensors`), the initial
//! adapter (`lora.safetensors`) and the batch (`batch.json`). One JSON line on stdout.
//!
//! Like `pgraphrag train`, it keeps freed memory for reuse
//! ([`pgraphrag_train::retain_freed_memory`]); `--default-malloc` leaves the C library's
//! allocator as it is, to measure what that setting is worth.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use candle_core::{Device, Tensor};
use pgraphrag_llm::DeviceChoice;
use pgraphrag_train::{AdamW, AnswerExample, Llama, Lora, LoraConfig, ParamsAdamW, answer_loss};

const TEXT: &str = "Rome was founded, according to legend, in 753 BC by Romulus. Over the following \
centuries it grew from a small settlement on the Tiber into the capital of an empire that stretched \
from Britain to Mesopotamia. Its republic gave way to emperors under Augustus, and its roads, laws, \
aqueducts and language shaped Europe for two thousand years. The city was sacked in 410 and again \
in 455, and the last western emperor was deposed in 476, while the eastern half of the empire \
lasted until 1453. Medieval Rome was the seat of the popes, and Renaissance artists such as \
Michelangelo and Raphael filled its churches and palaces with frescoes and sculpture. ";

struct Args {
    model: PathBuf,
    batch: usize,
    seq: usize,
    answer: usize,
    steps: usize,
    export: Option<PathBuf>,
    default_malloc: bool,
    device: DeviceChoice,
}

fn args() -> Result<Args> {
    let mut a = Args {
        model: "models/SmolLM2-135M-Instruct.Q4_1.gguf".into(),
        batch: 4,
        seq: 128,
        answer: 8,
        steps: 5,
        export: None,
        default_malloc: false,
        device: DeviceChoice::Cpu,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        if k == "--default-malloc" {
            a.default_malloc = true;
            continue;
        }
        let mut v = || it.next().with_context(|| format!("{k} needs a value"));
        match k.as_str() {
            "--model" => a.model = v()?.into(),
            "--batch" => a.batch = v()?.parse()?,
            "--seq" => a.seq = v()?.parse()?,
            "--answer" => a.answer = v()?.parse()?,
            "--steps" => a.steps = v()?.parse()?,
            "--export" => a.export = Some(v()?.into()),
            "--device" => a.device = v()?.parse().map_err(anyhow::Error::msg)?,
            _ => bail!("unknown argument {k}"),
        }
    }
    if a.answer == 0 || a.answer >= a.seq || a.batch == 0 || a.steps == 0 {
        bail!("need 0 < answer < seq, batch ≥ 1, steps ≥ 1");
    }
    Ok(a)
}

fn save(path: &std::path::Path, tensors: &[(String, Tensor)]) -> Result<()> {
    let bytes = safetensors::serialize(
        tensors.iter().map(|(n, t)| (n.as_str(), t)),
        None::<HashMap<String, String>>,
    )?;
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn main() -> Result<()> {
    let a = args()?;
    if !a.default_malloc {
        pgraphrag_train::retain_freed_memory();
    }
    let dev = pgraphrag_llm::candle_device(a.device)?;
    let t0 = Instant::now();
    let model = Llama::from_gguf(&a.model, &dev)?;
    let load_s = t0.elapsed().as_secs_f64();
    let tok = pgraphrag_llm::LlmTokenizer::from_gguf(&a.model)?;
    let mut ids = Vec::new();
    while ids.len() < a.seq + a.batch * 7 {
        ids.extend(tok.encode(TEXT)?);
    }
    let examples: Vec<AnswerExample> = (0..a.batch)
        .map(|i| {
            let w = &ids[i * 7..i * 7 + a.seq];
            AnswerExample {
                prompt: w[..a.seq - a.answer].to_vec(),
                answer: w[a.seq - a.answer..].to_vec(),
            }
        })
        .collect();
    let lora = Lora::new(&model, LoraConfig::kragrec(), 0)?;
    if let Some(dir) = &a.export {
        std::fs::create_dir_all(dir)?;
        let w = model.to_f32()?;
        let d = w.dims;
        // The export is written from host memory whatever device trains.
        let t = |v: Vec<f32>, r: usize, c: usize| Tensor::from_vec(v, (r, c), &Device::Cpu);
        let mut ts = vec![
            (
                "token_embd".to_string(),
                t(w.token_embd, d.vocab, d.n_embd)?,
            ),
            ("output_norm".into(), t(w.output_norm, 1, d.n_embd)?),
        ];
        let (qd, kvd) = (d.n_head * d.head_dim, d.n_kv_head * d.head_dim);
        for (i, l) in w.layers.into_iter().enumerate() {
            for (name, v, r, c) in [
                ("attn_norm", l.attn_norm, 1, d.n_embd),
                ("attn_q", l.attn_q, qd, d.n_embd),
                ("attn_k", l.attn_k, kvd, d.n_embd),
                ("attn_v", l.attn_v, kvd, d.n_embd),
                ("attn_output", l.attn_output, d.n_embd, qd),
                ("ffn_norm", l.ffn_norm, 1, d.n_embd),
                ("ffn_gate", l.ffn_gate, d.n_ff, d.n_embd),
                ("ffn_up", l.ffn_up, d.n_ff, d.n_embd),
                ("ffn_down", l.ffn_down, d.n_embd, d.n_ff),
            ] {
                ts.push((format!("blk.{i}.{name}"), t(v, r, c)?));
            }
        }
        save(&dir.join("weights.safetensors"), &ts)?;
        let lv: Vec<(String, Tensor)> = lora
            .named_vars()
            .into_iter()
            .map(|(n, v)| Ok((n, v.as_tensor().to_device(&Device::Cpu)?)))
            .collect::<Result<_>>()?;
        save(&dir.join("lora.safetensors"), &lv)?;
        let ex: Vec<String> = examples
            .iter()
            .map(|e| format!("{{\"prompt\":{:?},\"answer\":{:?}}}", e.prompt, e.answer))
            .collect();
        let cfg = format!(
            "{{\"dims\":{{\"n_embd\":{},\"n_head\":{},\"n_kv_head\":{},\"head_dim\":{},\"n_ff\":{},\"n_layer\":{},\"rope_dim\":{},\"rope_base\":{},\"eps\":{},\"vocab\":{}}},\"examples\":[{}]}}",
            d.n_embd,
            d.n_head,
            d.n_kv_head,
            d.head_dim,
            d.n_ff,
            d.n_layer,
            d.rope_dim,
            d.rope_base,
            d.eps,
            d.vocab,
            ex.join(",")
        );
        std::fs::write(dir.join("batch.json"), cfg)?;
    }
    let batch: Vec<&AnswerExample> = examples.iter().collect();
    let loss0 = answer_loss(&model, Some(&lora), &batch, None)?.to_scalar::<f32>()?;
    let check = if dev.is_cpu() {
        String::new()
    } else {
        let grads = |dev: &Device| -> Result<(f32, Vec<Vec<f32>>)> {
            let m = Llama::from_gguf(&a.model, dev)?;
            let l = Lora::new(&m, LoraConfig::kragrec(), 0)?;
            // Without dropout: the GPU draws its masks from its own generator.
            let loss = answer_loss(&m, Some(&l), &batch, None)?;
            let g = loss.backward()?;
            let mut out = Vec::new();
            for (name, v) in l.named_vars() {
                let t = g
                    .get(v.as_tensor())
                    .with_context(|| format!("no gradient for {name}"))?;
                out.push(t.flatten_all()?.to_vec1::<f32>()?);
            }
            Ok((loss.to_scalar::<f32>()?, out))
        };
        let (l_dev, g_dev) = grads(&dev)?;
        let (l_cpu, g_cpu) = grads(&Device::Cpu)?;
        let (mut diff, mut max) = (0f32, 0f32);
        for (x, y) in g_dev.iter().flatten().zip(g_cpu.iter().flatten()) {
            diff = diff.max((x - y).abs());
            max = max.max(y.abs());
        }
        format!(
            ",\"train_loss0\":{l_dev},\"train_loss0_cpu\":{l_cpu},\"grad_max_abs\":{max:e},\"grad_max_abs_diff_vs_cpu\":{diff:e}"
        )
    };
    let vars: Vec<_> = lora.named_vars().into_iter().map(|(_, v)| v).collect();
    let mut opt = AdamW::new(
        vars.clone(),
        ParamsAdamW {
            lr: 1e-4,
            weight_decay: 0.0,
            ..Default::default()
        },
    )?;
    let mut times = Vec::new();
    let mut losses = Vec::new();
    for step in 0..a.steps + 1 {
        let t = Instant::now();
        let loss = answer_loss(&model, Some(&lora), &batch, Some(step as u64))?;
        let grads = loss.backward()?;
        let g: Vec<_> = vars
            .iter()
            .map(|v| grads.get(v.as_tensor()).cloned())
            .collect();
        opt.step(&g)?;
        losses.push(loss.to_scalar::<f32>()?);
        // The first step warms up (allocations, page faults) and is not timed.
        if step > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let tokens = (a.batch * a.seq) as f64;
    println!(
        "{{\"impl\":\"rust-candle\",\"device\":\"{}\",\"batch\":{},\"seq\":{},\"answer\":{},\"steps\":{},\"load_s\":{:.2},\"loss0\":{},\"losses\":{:?},\"step_s_best\":{:.4},\"step_s_median\":{:.4},\"tokens_per_s\":{:.1}{}}}",
        a.device,
        a.batch,
        a.seq,
        a.answer,
        a.steps,
        load_s,
        loss0,
        losses,
        times[0],
        median,
        tokens / median,
        check
    );
    Ok(())
}
