//! The option enums of a GGUF model (device, engine, weight format, decoding arithmetic,
//! prompt processing, kernels, context overflow) and the model families by
//! `general.architecture`: plain values that every layer above (engines, model) reads, so they
//! sit at the bottom. [`GgufOptions`](crate::GgufOptions), which also holds a chat template,
//! gathers them in the model layer.

pub use pgraphrag_core::DeviceChoice;

/// What to do when the prompt plus `max_tokens` does not fit the context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextOverflow {
    /// Fail with [`LlmError::PromptTooLong`](crate::LlmError::PromptTooLong) (the default): nothing is silently dropped.
    #[default]
    Error,
    /// Drop the oldest prompt tokens (keeping a leading BOS) so that
    /// `prompt_tokens + max_tokens <= context`. Errors only when `max_tokens` alone does
    /// not fit.
    TruncateLeft,
}

/// How the weight matrices are held in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum WeightFormat {
    /// Exactly as stored in the file (bit-faithful to the GGUF).
    #[default]
    AsStored,
    /// `Q4_0`/`Q4_1`/`Q5_0`/`Q5_1` tensors are re-quantized to `Q8_0` at load time, which candle
    /// runs with SIMD kernels (its `Q4_1` path is scalar). Costs memory (about 2x for those
    /// tensors) and changes the logits by the tiny Q8_0 rounding error, so greedy outputs can
    /// differ from the stored-weights run on near-ties.
    Q8_0,
}

/// Which implementation runs the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Engine {
    /// The native CPU engine for llama-architecture models on the CPU, candle otherwise.
    #[default]
    Auto,
    /// candle-transformers' quantized models: every supported architecture, CPU or CUDA.
    /// On CPU its quantized matmuls quantize the activations to 8 bits first (as llama.cpp).
    Candle,
    /// The native CPU engine (llama architecture on the CPU only; an error otherwise): stored
    /// 4/8-bit blocks for decoding, a dequantized f32 copy with `gemm` for prompts, f32
    /// activations throughout. Needs about 4 bytes of memory per weight for the f32 copy.
    /// See `docs/llm.md`.
    Native,
}

/// How the native engine processes prompts (its f32 matrix-matrix products and attention).
///
/// Both compute the same network with f32 activations against the dequantized weights; they
/// differ in the order of the floating-point operations, so outputs can differ in the last
/// bits (and, rarely, a sampled token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Prefill {
    /// Packed AVX-512/AVX2 kernels in which every value of a token is one fixed chain of
    /// fused multiply-adds, whatever the prompt's length or split, and attention per (token,
    /// head) with the decoding kernel. A token's activations therefore do not depend on the
    /// rest of the batch, so the KV cache of a prefix shared with a recent prompt (the
    /// instructions, the first retrieved reviews) is reused, bit-identically, and only the
    /// rest is computed. About 1.5x faster than `Gemm` before any reuse.
    #[default]
    Rowwise,
    /// The `gemm` crate's blocked kernels on a row-major f32 copy (whose blocking depends on
    /// the matrix sizes), no prefix reuse. What the engine did before `Rowwise` existed; the
    /// title tables of `docs/results/` were made with it.
    Gemm,
}

/// How the native engine's decoding multiplies activations with the quantized weights.
///
/// Prompts run through the f32 path chosen by [`Prefill`]; this choice is about
/// single-token steps, whose cost is reading the weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Activations {
    /// Each 32-value block of the activations is quantized to `i8` with one scale, and a weight
    /// block's dot product with it is an exact integer sum: what candle's quantized matmuls
    /// (`vec_dot_q4_1_q8_1`, `vec_dot_q8_0_q8_0`) and llama.cpp do on the CPU. Fastest (AVX-512
    /// VNNI where available). Results are bit-identical on every CPU and for any batch size.
    #[default]
    Q8,
    /// f32 activations against the dequantized weights: the most precise, about a third
    /// slower to decode. Exactly what the engine did before `Q8` existed (the cached
    /// generations of `docs/results/` were made with it).
    F32,
}

/// Which of the native engine's compiled kernels run.
///
/// Every kernel set computes the same values (the SIMD sets are bit-identical to the portable
/// one wherever the tests say so); this exists to test and time the portable code on a CPU
/// that has the SIMD features.
///
/// ```
/// use pgraphrag_llm::{GgufOptions, Kernels};
/// let opts = GgufOptions { kernels: Kernels::Portable, ..Default::default() };
/// assert_eq!(opts.kernels, Kernels::Portable);
/// assert_eq!(GgufOptions::default().kernels, Kernels::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Kernels {
    /// The fastest set this CPU runs (x86: AVX-512 VNNI, AVX-512, AVX2+FMA; AArch64: NEON
    /// with the dot-product extension, NEON; else portable), detected at load with
    /// [`pgraphrag_core::simd::CpuFeatures::detect`].
    #[default]
    Auto,
    /// The portable kernels only (what a CPU without any SIMD extension runs).
    Portable,
    /// At most the AVX2 + FMA kernels, never the AVX-512 ones: what an AVX2-only CPU (AMD
    /// Zen 2/3, most Intel client CPUs) runs, for testing and timing that path on an AVX-512
    /// CPU. On a CPU without AVX2 it is the portable set.
    Avx2,
    /// The NEON kernels without the dot-product extension: what an Armv8.0 CPU (Cortex-A72,
    /// Raspberry Pi 4, AWS Graviton 1) runs, for testing that path on a newer ARM CPU. On
    /// other CPUs it is [`Kernels::Auto`].
    NeonWithoutDotprod,
}

impl Kernels {
    /// The CPU features the kernel dispatchers may use under this choice.
    pub(crate) fn features(self) -> pgraphrag_core::simd::CpuFeatures {
        match self {
            Kernels::Auto => pgraphrag_core::simd::CpuFeatures::detect(),
            Kernels::Portable => pgraphrag_core::simd::CpuFeatures::portable(),
            Kernels::Avx2 => pgraphrag_core::simd::CpuFeatures::detect().without_avx512(),
            Kernels::NeonWithoutDotprod => {
                pgraphrag_core::simd::CpuFeatures::detect().without_dotprod()
            }
        }
    }
}

/// The model families this crate runs, by `general.architecture`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Architecture {
    /// `llama` (SmolLM2, Llama 2/3, Mistral-style): `quantized_llama`.
    Llama,
    /// `gemma3`: `quantized_gemma3`.
    Gemma3,
    /// `qwen2`: `quantized_qwen2`.
    Qwen2,
    /// `qwen3`: `quantized_qwen3`.
    Qwen3,
}

impl Architecture {
    /// The family `general.architecture` names, if this crate runs it.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "llama" => Architecture::Llama,
            "gemma3" => Architecture::Gemma3,
            "qwen2" => Architecture::Qwen2,
            "qwen3" => Architecture::Qwen3,
            _ => return None,
        })
    }
    /// The name used in GGUF metadata keys.
    pub fn as_str(&self) -> &'static str {
        match self {
            Architecture::Llama => "llama",
            Architecture::Gemma3 => "gemma3",
            Architecture::Qwen2 => "qwen2",
            Architecture::Qwen3 => "qwen3",
        }
    }
}
