#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-llm
//!
//! [`Generator`](pgraphrag_core::Generator) backends:
//!
//! - [`GgufModel`]: a local GGUF model on candle (`llama` family such as SmolLM2, `gemma3`,
//!   `qwen2`, `qwen3`), with a tokenizer rebuilt faithfully from the GGUF metadata (or a
//!   `tokenizer.json`), the chat template the model declares ([`ChatTemplate`]), greedy or
//!   seeded temperature / top-p sampling, stop tokens and stop strings, a KV cache reset per
//!   prompt, CPU by default and CUDA behind the `cuda` feature. Llama-family models run on a
//!   native CPU engine by default ([`Engine`]): 8-bit or f32 decoding arithmetic
//!   ([`Activations`]), row-wise prompt kernels that reuse the KV cache of a prefix shared with
//!   a recent prompt, bit-identically ([`Prefill`]), and continuous batched decoding
//!   ([`GgufModel::generate_batch_full`]).
//! - [`OpenAiClient`]: any OpenAI-compatible chat-completions server, with timeouts and
//!   retries with exponential backoff on 429, 5xx and connection failures.
//!
//! ```no_run
//! use pgraphrag_core::{GenParams, Generator, Prompt};
//! use pgraphrag_llm::{GgufModel, GgufOptions, default_model_path};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = GgufModel::load(&default_model_path(), GgufOptions::default())?;
//! let params = GenParams { max_tokens: 32, ..Default::default() }; // greedy
//! let answer = model.generate(&Prompt::user("What is the capital of France?"), &params)?;
//! println!("{answer}");
//! # Ok(()) }
//! ```
//!
//! Fetch the default model with `scripts/fetch-llms.sh --smollm-only`. See `docs/llm.md`.
#![deny(missing_docs)]

mod error;
mod gguf;
mod native;
mod openai;
mod template;
mod tokenizer;

use std::path::{Path, PathBuf};

pub use error::{LlmError, Result};
pub use gguf::{
    Activations, Architecture, ContextOverflow, DeviceChoice, Engine, FinishReason, Generation,
    GgufModel, GgufOptions, Prefill, WeightFormat,
};
pub use openai::{Completion, OpenAiClient, OpenAiOptions};
pub use template::ChatTemplate;
pub use tokenizer::LlmTokenizer;

/// File name of the default model (SmolLM2-135M-Instruct, Q4_1).
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// The default model path: `$PGRAPHRAG_MODEL` when set; otherwise
/// `models/SmolLM2-135M-Instruct.Q4_1.gguf` in the first of the current directory and its
/// ancestors that has it; otherwise that path under this workspace's root (where
/// `scripts/fetch-llms.sh` puts it), which may not exist yet.
///
/// ```
/// let p = pgraphrag_llm::default_model_path();
/// assert!(p.to_string_lossy().ends_with(".gguf") || std::env::var("PGRAPHRAG_MODEL").is_ok());
/// ```
pub fn default_model_path() -> PathBuf {
    if let Some(p) = std::env::var_os("PGRAPHRAG_MODEL").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let rel = Path::new("models").join(DEFAULT_MODEL_FILE);
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            let p = dir.join(&rel);
            if p.exists() {
                return p;
            }
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}
