#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-llm
//!
//! [`Generator`](pgraphrag_core::Generator) backends:
//!
//! - [`GgufModel`]: a local GGUF model (`llama` family such as SmolLM2, `gemma3`, `qwen2`,
//!   `qwen3`), with a tokenizer rebuilt faithfully from the GGUF metadata (or a
//!   `tokenizer.json`), the chat template the model declares ([`ChatTemplate`]), greedy or
//!   seeded temperature / top-p sampling, stop tokens and stop strings, a KV cache reset per
//!   prompt. Llama-family models run on a native CPU engine by default ([`Engine`]): 8-bit or
//!   f32 decoding arithmetic ([`Activations`]), row-wise prompt kernels that reuse the KV
//!   cache of a prefix shared with a recent prompt, bit-identically ([`Prefill`]), continuous
//!   batched decoding ([`GgufModel::generate_batch_full`]), SIMD kernels picked at load
//!   ([`Kernels`]). Other architectures, K-quant tensors and CUDA run on candle. The native
//!   engine applies LoRA adapters on the fly ([`LoraAdapter`], [`GgufModel::set_adapter`]).
//!
//! Cargo features: `candle` (default) adds candle-transformers' models ([`Engine::Candle`]);
//! without it the crate has no candle dependency, runs llama-architecture GGUF files with
//! `F32`/`F16`/`BF16`/`Q4_1`/`Q8_0` tensors on the native engine, and answers a request for
//! candle with [`LlmError::FeatureDisabled`]. `cuda` (implies `candle`) runs candle on an
//! NVIDIA GPU; `tls` enables `https` for the OpenAI-compatible clients; `async` adds the async
//! path below.
//! - [`OpenAiClient`]: any OpenAI-compatible chat-completions server, with timeouts and
//!   retries with exponential backoff on 429, 5xx and connection failures (blocking, for
//!   scripts and the batch pipelines).
//! - With the `async` feature (tokio + reqwest): `AsyncOpenAiClient`, the same client for
//!   async programs, which also streams answers as they are written (server-sent events), and
//!   the `AsyncGenerator` trait it implements, with `Blocking` to run any blocking
//!   [`Generator`](pgraphrag_core::Generator) (a local [`GgufModel`]) on tokio's blocking
//!   threads.
//!
//! ```no_run
//! use pgraphrag_core::{GenParams, Generator, Prompt};
//! use pgraphrag_llm::{GgufModel, GgufOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), GgufOptions::default())?;
//! let params = GenParams { max_tokens: 32, ..Default::default() }; // greedy
//! let answer = model.generate(&Prompt::user("What is the capital of France?"), &params)?;
//! println!("{answer}");
//! # Ok(()) }
//! ```
//!
//! Fetch the default model with `scripts/fetch-llms.sh --smollm-only`. See `docs/llm.md`.
//!
//! The library reads no environment variables and assumes no default paths: every function
//! takes the model file it should load, and [`OpenAiOptions::api_key`] is a plain field
//! (binaries read `OPENAI_API_KEY` themselves).
#![deny(missing_docs)]

// The modules are layers, bottom to top (README.md, "Layers", says what each may import):
// 1 format: error, gguf; 2 parts: tokenizer, template, lora, async_generator; 3 engines:
// native, candle, openai; 4 model: model (GgufModel, options, weights); 5 generation:
// model::{batch, sampler}; 6 this facade, which only re-exports.
#[cfg(feature = "async")]
mod async_generator;
#[cfg(feature = "candle")]
mod candle;
mod error;
mod gguf;
mod lora;
mod model;
mod native;
mod openai;
mod template;
mod tokenizer;

#[cfg(feature = "async")]
pub use async_generator::{AsyncGenerator, Blocking};
#[cfg(feature = "candle")]
pub use candle::candle_device;
pub use error::{LlmError, Result};
pub use gguf::dims::{LlamaDims, read_llama_dims};
pub use gguf::file::{GgufHeader, read_gguf_header};
pub use gguf::options::{
    Activations, Architecture, ContextOverflow, DeviceChoice, Engine, Kernels, Prefill,
    WeightFormat,
};
pub use lora::{LoraAdapter, LoraTarget, LowRank};
pub use model::GgufModel;
pub use model::options::{FinishReason, Generation, GgufOptions};
pub use native::dense::{LlamaF32, LlamaLayerF32, load_llama_f32};
pub use openai::OpenAiClient;
#[cfg(feature = "async")]
pub use openai::async_client::{AsyncOpenAiClient, TextStream};
pub use openai::options::{Completion, OpenAiOptions};
pub use template::ChatTemplate;
pub use tokenizer::LlmTokenizer;

/// File name of the default model (SmolLM2-135M-Instruct, Q4_1), as `scripts/fetch-llms.sh`
/// names it under `models/`. The library never looks for it: callers pass paths.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// The README's examples, run as doctests (the async one needs the feature `async`).
#[cfg(all(doctest, feature = "async"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[cfg(all(test, feature = "async"))]
mod tests {
    /// The facade's unit test: the generators of the layers below fit [`crate::Blocking`]
    /// (its own tests sit in its layer, which does not know them).
    #[test]
    fn this_crates_generators_fit_blocking() {
        fn fits<G: pgraphrag_core::Generator + Send + Sync + 'static>() {}
        fits::<crate::GgufModel>();
        fits::<crate::OpenAiClient>();
    }
}
