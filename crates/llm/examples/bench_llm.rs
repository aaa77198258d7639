//! Candle side of `scripts/bench_llm.sh`: prompt-processing and greedy decode speed of a GGUF
//! model, one JSON line per repetition (same protocol as `scripts/bench_llm.py` for llama.cpp).
//!
//! ```sh
//! RAYON_NUM_THREADS=2 cargo run --release -p pgraphrag-llm --example bench_llm -- \
//!     --model models/SmolLM2-135M-Instruct.Q4_1.gguf --prompt-file prompt.txt --tg 64 --reps 3 [--q8] [--engine native|candle] [--f32-activations] [--prefill rowwise|gemm] [--portable-kernels | --avx2-kernels | --no-dotprod-kernels]
//! ```
//! The prompt text is fed as a raw prompt (tokenized exactly as llama.cpp does, see the
//! tokenizer test); the KV cache is reset per repetition (and the prefix cache of
//! `Prefill::Rowwise` cleared, so every repetition processes the whole prompt); decode tokens/s counts the tokens
//! after the first over their time.

use std::path::PathBuf;

use pgraphrag_core::{GenParams, Prompt};
use pgraphrag_llm::{Activations, Engine, GgufModel, GgufOptions, Kernels, Prefill, WeightFormat};

#[path = "../tests/support/model.rs"]
mod model;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut model = model::model_path();
    let mut kernels = Kernels::Auto;
    let mut prompt_file: Option<PathBuf> = None;
    let (mut tg, mut reps, mut q8) = (64usize, 3usize, false);
    let mut engine = Engine::Auto;
    let mut activations = Activations::Q8;
    let mut prefill = Prefill::Rowwise;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--model" => model = PathBuf::from(val()?),
            "--prompt-file" => prompt_file = Some(PathBuf::from(val()?)),
            "--tg" => tg = val()?.parse()?,
            "--reps" => reps = val()?.parse()?,
            "--q8" => q8 = true,
            "--f32-activations" => activations = Activations::F32,
            "--portable-kernels" => kernels = Kernels::Portable,
            "--avx2-kernels" => kernels = Kernels::Avx2,
            "--no-dotprod-kernels" => kernels = Kernels::NeonWithoutDotprod,
            "--prefill" => {
                prefill = match val()?.as_str() {
                    "rowwise" => Prefill::Rowwise,
                    "gemm" => Prefill::Gemm,
                    e => return Err(format!("unknown prefill {e}").into()),
                }
            }
            "--engine" => {
                engine = match val()?.as_str() {
                    "native" => Engine::Native,
                    "candle" => Engine::Candle,
                    "auto" => Engine::Auto,
                    e => return Err(format!("unknown engine {e}").into()),
                }
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let text = match prompt_file {
        Some(p) => std::fs::read_to_string(p)?,
        None => "The quick brown fox jumps over the lazy dog. ".repeat(40),
    };
    let opts = GgufOptions {
        weights: if q8 {
            WeightFormat::Q8_0
        } else {
            WeightFormat::AsStored
        },
        engine,
        activations,
        prefill,
        kernels,
        ..Default::default()
    };
    let name = format!(
        "{}{}{}{}{}",
        if engine == Engine::Candle {
            "candle"
        } else {
            "native"
        },
        if q8 { "-q8_0" } else { "" },
        if engine != Engine::Candle && activations == Activations::F32 {
            "-f32"
        } else {
            ""
        },
        if engine != Engine::Candle && prefill == Prefill::Gemm {
            "-gemm"
        } else {
            ""
        },
        match kernels {
            _ if engine == Engine::Candle => "",
            Kernels::Avx2 => "-avx2",
            Kernels::Portable => "-portable",
            Kernels::NeonWithoutDotprod => "-nodotprod",
            _ => "",
        }
    );
    let t = std::time::Instant::now();
    let m = GgufModel::load(&model, opts)?;
    let load_s = t.elapsed().as_secs_f64();
    let ids = m.prompt_tokens(&Prompt::Raw(text))?;
    // Generate exactly `tg` tokens: no stop token ends the run early.
    let params = GenParams {
        max_tokens: tg,
        temperature: 0.0,
        ..Default::default()
    };
    for rep in 0..reps {
        m.clear_prefix_cache();
        let g = m.generate_tokens(ids.clone(), &params)?;
        println!(
            "{}",
            serde_json::json!({
                "engine": name,
                "kernels": m.kernels_used(),
                "rep": rep,
                "load_s": load_s,
                "pp_tokens": g.prompt_tokens,
                "pp_tok_s": g.prompt_tok_per_s(),
                "tg_tokens": g.tokens.len(),
                "tg_tok_s": g.decode_tok_per_s(),
                "finish": format!("{:?}", g.finish),
                "text": g.text,
            })
        );
    }
    Ok(())
}
