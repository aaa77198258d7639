//! The native CPU engine for llama-architecture GGUF models (SmolLM2, Llama, Mistral, …).
//!
//! candle's quantized llama runs every op through its generic tensor machinery and, on CPU,
//! quantizes the activations to 8 bits before each quantized matmul (as llama.cpp does). On a
//! small model most of a decode step then goes to per-op overhead and thread barriers rather
//! than to arithmetic. This engine computes the same network directly on slices:
//!
//! * **Weights** are kept in the file's blocks (`Q4_1`, `Q8_0`; any other type is dequantized
//!   to f32 rows) for single-token decoding, where the cost is reading the weights, and as a
//!   dequantized f32 copy for prompt processing, where the cost is arithmetic and the `gemm`
//!   crate's blocked f32 kernels win. Both compute `Σ dequant(w)·x` with f32 activations: no
//!   activation quantization, so results follow the stored weights exactly up to f32 rounding.
//! * **Kernels**: the row dot products are written so that LLVM vectorises them, compiled for
//!   AVX-512, AVX2+FMA and plain x86-64/other targets, picked at run time.
//! * **Fused projections**: Q, K and V are one matrix, gate and up are one matrix, so a layer is
//!   four parallel regions (rayon) per token.
//! * **KV cache** grows with the sequence; RoPE tables are computed as candle computes them
//!   (f32 angles), for any position up to the model's declared context.
//!
//! Semantics are candle's `quantized_llama` (and llama.cpp's `LLM_ARCH_LLAMA`): RMSNorm,
//! interleaved ("normal") RoPE over `rope.dimension_count` dimensions, grouped-query attention,
//! SiLU-gated MLP, output weights tied to the embeddings when `output.weight` is absent.
//! Mixture-of-experts llama files are not supported here (use the candle engine).

// The kernels index several fixed-size arrays in lockstep; that is clearer than zipped iterators.
#![allow(clippy::needless_range_loop)]

use crate::gguf::dims::LlamaDims;
use crate::gguf::options::Prefill;
use crate::lora::LoraAdapter;

mod adapter;
mod attention;
pub(crate) mod dense;
mod formats;
mod kernels;
mod load;
mod prefill;
mod q8;
mod step;
#[cfg(test)]
mod testing;
#[cfg(all(test, feature = "candle"))]
pub(crate) use testing::pseudo_random;

use formats::QRows;
use kernels::Kernels;

/// A linear layer: stored blocks for matrix-vector products (and their 8-bit-activation
/// repacking when [`Activations::Q8`](crate::Activations::Q8) is on), an f32 copy for
/// prompts: row-major for [`Prefill::Gemm`], packed in panels for [`Prefill::Rowwise`].
struct Linear {
    q: QRows,
    i8: Option<q8::I8Rows>,
    dense: Vec<f32>,
    packed: Option<prefill::Packed>,
}

struct Layer {
    attn_norm: Vec<f32>,
    /// Q, K, V stacked: `(n_head + 2·n_kv_head)·head_dim` rows.
    qkv: Linear,
    wo: Linear,
    ffn_norm: Vec<f32>,
    /// gate, up stacked: `2·n_ff` rows.
    gate_up: Linear,
    down: Linear,
}

#[derive(Default, Clone)]
struct KvCache {
    /// `[pos][kv_head][head_dim]`.
    k: Vec<f32>,
    v: Vec<f32>,
}

/// Minimum rows for which a linear layer uses the f32 `gemm` path instead of per-row dots.
const GEMM_MIN_ROWS: usize = 2;

/// A llama-architecture model on the native CPU engine.
pub(crate) struct NativeLlama {
    /// The hyper-parameters read from the GGUF metadata, `vocab` from the embedding matrix.
    cfg: LlamaDims,
    tok_embd: QRows,
    layers: Vec<Layer>,
    out_norm: Vec<f32>,
    /// `None`: tied to `tok_embd`.
    output: Option<QRows>,
    /// The output matrix repacked for 8-bit activations
    /// ([`Activations::Q8`](crate::Activations::Q8)).
    output_i8: Option<q8::I8Rows>,
    /// The 8-bit activation kernel.
    k8: q8::RowsDotI8,
    /// The sequence of the single-sequence API ([`Self::forward`]).
    seq: Seq,
    cos: Vec<f32>,
    sin: Vec<f32>,
    k: Kernels,
    /// How prompts are processed.
    prefill: Prefill,
    /// The row-wise prompt kernels ([`Prefill::Rowwise`]).
    pk: prefill::Kernels,
    /// The names of the kernel sets in `k8`, `k` and `pk`.
    kernel_names: [&'static str; 3],
    /// Recent prompts and their KV caches ([`Prefill::Rowwise`] only), most recent last.
    prefixes: Vec<(Vec<u32>, Seq)>,
    /// The threads of this model. Work runs inside [`rayon::ThreadPool::install`], so the
    /// calling thread is one of the pool's workers and each parallel region is a cheap
    /// fork-join instead of a hand-off to sleeping threads.
    pool: std::sync::Arc<rayon::ThreadPool>,
    /// The LoRA adapter applied on the fly ([`Self::set_adapter`]), if any.
    lora: Option<LoraAdapter>,
}

/// The state of one sequence: its KV cache and length.
#[derive(Default, Clone)]
pub(crate) struct Seq {
    cache: Vec<KvCache>,
    len: usize,
}

impl Seq {
    /// Empties the KV cache (keeps its memory).
    pub(crate) fn reset(&mut self) {
        self.len = 0;
        for c in &mut self.cache {
            c.k.clear();
            c.v.clear();
        }
    }

    /// Positions held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// A copy of the first `n` positions.
    fn prefix(&self, n: usize) -> Seq {
        let n = n.min(self.len);
        Seq {
            cache: self
                .cache
                .iter()
                .map(|c| {
                    let per = c.k.len().checked_div(self.len).unwrap_or(0);
                    KvCache {
                        k: c.k[..n * per].to_vec(),
                        v: c.v[..n * per].to_vec(),
                    }
                })
                .collect(),
            len: n,
        }
    }

    fn bytes(&self) -> usize {
        self.cache.iter().map(|c| (c.k.len() + c.v.len()) * 4).sum()
    }
}

/// Memory kept for the KV caches of recent prompts under [`Prefill::Rowwise`].
const PREFIX_CACHE_BYTES: usize = 512 << 20;

impl NativeLlama {
    /// Vocabulary size (rows of the embedding matrix).
    pub(crate) fn vocab(&self) -> usize {
        self.cfg.vocab
    }

    /// The kernel sets picked at load, as `decode <8-bit>/<f32>, prompt <rowwise>` (e.g.
    /// `decode avx512vnni/avx512, prompt avx512`).
    pub(crate) fn kernel_names(&self) -> String {
        let [k8, k, pk] = self.kernel_names;
        format!("decode {k8}/{k}, prompt {pk}")
    }

    /// The model's thread pool (run generation inside `pool.install`).
    pub(crate) fn pool(&self) -> std::sync::Arc<rayon::ThreadPool> {
        self.pool.clone()
    }

    /// Empties the single-sequence KV cache.
    pub(crate) fn reset(&mut self) {
        self.seq.reset();
    }

    /// A new, empty sequence for [`Self::step`].
    pub(crate) fn new_seq(&self) -> Seq {
        Seq {
            cache: (0..self.layers.len()).map(|_| KvCache::default()).collect(),
            len: 0,
        }
    }

    /// A sequence holding the longest prefix of `ids` (at most all but its last token) whose KV
    /// cache a recent prompt left ([`Self::remember`]); empty without [`Prefill::Rowwise`],
    /// whose results do not depend on where a prompt is split.
    pub(crate) fn cached_prefix(&self, ids: &[u32]) -> Seq {
        let best = self
            .prefixes
            .iter()
            .map(|(toks, seq)| {
                let n = toks.iter().zip(ids).take_while(|(a, b)| a == b).count();
                (n.min(ids.len().saturating_sub(1)).min(seq.len), seq)
            })
            .max_by_key(|(n, _)| *n);
        match best {
            Some((n, seq)) if n > 0 && self.prefill == Prefill::Rowwise => seq.prefix(n),
            _ => self.new_seq(),
        }
    }

    /// Keeps the KV cache of a processed prompt `ids` (`seq` before any decoding) for
    /// [`Self::cached_prefix`], dropping the oldest beyond a memory budget.
    pub(crate) fn remember(&mut self, ids: &[u32], seq: &Seq) {
        if self.prefill != Prefill::Rowwise || seq.len != ids.len() {
            return;
        }
        self.prefixes.push((ids.to_vec(), seq.clone()));
        let mut total: usize = self.prefixes.iter().map(|(_, s)| s.bytes()).sum();
        while total > PREFIX_CACHE_BYTES && !self.prefixes.is_empty() {
            total -= self.prefixes.remove(0).1.bytes();
        }
    }

    /// Forgets the KV caches of earlier prompts.
    pub(crate) fn clear_prefixes(&mut self) {
        self.prefixes.clear();
    }

    /// Makes the RoPE tables cover positions `0..n` (call before [`Self::step`] from `&self`).
    pub(crate) fn reserve(&mut self, n: usize) {
        self.ensure_rope(n);
    }
}

#[cfg(test)]
mod tests;
