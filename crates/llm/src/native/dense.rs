//! The weights of a llama-architecture GGUF as plain f32 matrices, dequantized exactly as the
//! native engine dequantizes them, for code that runs its own forward pass (training with
//! autograd in `pgraphrag-train`).

use std::path::Path;

use super::formats::QRows;
use super::invalid;
use super::load::read_dims;
use crate::error::{LlmError, Result};
use crate::gguf::weights::read_content;
use crate::tokenizer::md_str;

/// The hyper-parameters of a llama-architecture model (SmolLM2, Llama 2/3, Mistral-like), as
/// its GGUF metadata gives them.
///
/// ```
/// let d = pgraphrag_llm::LlamaDims {
///     n_embd: 16, n_head: 2, n_kv_head: 1, head_dim: 8, n_ff: 32, n_layer: 2,
///     rope_dim: 8, rope_base: 10000.0, eps: 1e-5, vocab: 40,
/// };
/// assert_eq!(d.n_head / d.n_kv_head, 2); // query heads per KV head
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LlamaDims {
    /// Hidden size (`llama.embedding_length`).
    pub n_embd: usize,
    /// Query heads.
    pub n_head: usize,
    /// Key/value heads (grouped-query attention when fewer than `n_head`).
    pub n_kv_head: usize,
    /// Values per head (`n_embd / n_head`).
    pub head_dim: usize,
    /// Hidden size of the SiLU-gated MLP.
    pub n_ff: usize,
    /// Transformer blocks.
    pub n_layer: usize,
    /// Leading dimensions of each head rotated by RoPE (interleaved pairs), at most `head_dim`.
    pub rope_dim: usize,
    /// RoPE frequency base.
    pub rope_base: f32,
    /// RMSNorm epsilon.
    pub eps: f32,
    /// Vocabulary size (rows of the token embedding matrix).
    pub vocab: usize,
}

/// One transformer block's weights, dequantized to f32. Matrices are row-major
/// `[out, in]` (the GGUF layout, as a PyTorch `nn.Linear.weight`); norms are vectors.
#[derive(Debug, Clone)]
pub struct LlamaLayerF32 {
    /// RMSNorm weight before attention (`blk.N.attn_norm.weight`), `n_embd`.
    pub attn_norm: Vec<f32>,
    /// Query projection, `n_head·head_dim × n_embd`.
    pub attn_q: Vec<f32>,
    /// Key projection, `n_kv_head·head_dim × n_embd`.
    pub attn_k: Vec<f32>,
    /// Value projection, `n_kv_head·head_dim × n_embd`.
    pub attn_v: Vec<f32>,
    /// Attention output projection, `n_embd × n_head·head_dim`.
    pub attn_output: Vec<f32>,
    /// RMSNorm weight before the MLP, `n_embd`.
    pub ffn_norm: Vec<f32>,
    /// MLP gate, `n_ff × n_embd`.
    pub ffn_gate: Vec<f32>,
    /// MLP up projection, `n_ff × n_embd`.
    pub ffn_up: Vec<f32>,
    /// MLP down projection, `n_embd × n_ff`.
    pub ffn_down: Vec<f32>,
}

/// A llama-architecture model's weights, dequantized to f32 ([`load_llama_f32`]).
#[derive(Debug, Clone)]
pub struct LlamaF32 {
    /// The hyper-parameters.
    pub dims: LlamaDims,
    /// Token embeddings, `vocab × n_embd`.
    pub token_embd: Vec<f32>,
    /// The blocks, first to last.
    pub layers: Vec<LlamaLayerF32>,
    /// Final RMSNorm weight, `n_embd`.
    pub output_norm: Vec<f32>,
    /// Output projection, `vocab × n_embd`; `None` when tied to `token_embd` (SmolLM2).
    pub output: Option<Vec<f32>>,
}

/// The hyper-parameters of a llama-architecture GGUF, read from its header (metadata and
/// the shape of `token_embd.weight`) without loading any weight: the
/// [`LlamaDims`] of [`load_llama_f32`]. Errors as [`load_llama_f32`].
///
/// ```no_run
/// let d = pgraphrag_llm::read_llama_dims("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref())?;
/// assert_eq!((d.n_layer, d.n_embd, d.vocab), (30, 576, 49152));
/// # Ok::<(), pgraphrag_llm::LlmError>(())
/// ```
pub fn read_llama_dims(path: &Path) -> Result<LlamaDims> {
    let (ct, _, _) = read_content(path)?;
    let arch = md_str(&ct, "general.architecture")
        .ok_or_else(|| invalid(path, "no `general.architecture` in the metadata"))?;
    if arch != "llama" {
        return Err(LlmError::UnsupportedArchitecture {
            path: path.to_path_buf(),
            architecture: format!("{arch} (read_llama_dims reads llama models only)"),
        });
    }
    let mut dims = read_dims(&ct, path)?;
    let emb = ct
        .tensors
        .get("token_embd.weight")
        .ok_or_else(|| invalid(path, "no tensor `token_embd.weight`"))?;
    match emb.dims.as_slice() {
        [vocab, n] if *n == dims.n_embd && *vocab > 0 => dims.vocab = *vocab,
        other => {
            return Err(invalid(
                path,
                format!(
                    "`token_embd.weight` is {other:?}, expected [vocab, {}]",
                    dims.n_embd
                ),
            ));
        }
    }
    Ok(dims)
}

/// Reads a llama-architecture GGUF and dequantizes every weight to f32 with the native
/// engine's own dequantization (the values [`crate::Activations::F32`] computes with), so a
/// forward pass over them reproduces the engine up to f32 summation order.
///
/// Errors: [`LlmError::ModelNotFound`], [`LlmError::InvalidGguf`] (bad header, missing or
/// mis-shaped tensor, mixture-of-experts file), [`LlmError::UnsupportedArchitecture`] for
/// anything but `llama`.
///
/// ```no_run
/// let w = pgraphrag_llm::load_llama_f32("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref())?;
/// assert_eq!((w.dims.n_layer, w.dims.n_embd), (30, 576));
/// assert!(w.output.is_none()); // tied to the embeddings
/// # Ok::<(), pgraphrag_llm::LlmError>(())
/// ```
pub fn load_llama_f32(path: &Path) -> Result<LlamaF32> {
    let (ct, mut r, _) = read_content(path)?;
    let arch = md_str(&ct, "general.architecture")
        .ok_or_else(|| invalid(path, "no `general.architecture` in the metadata"))?;
    if arch != "llama" {
        return Err(LlmError::UnsupportedArchitecture {
            path: path.to_path_buf(),
            architecture: format!("{arch} (load_llama_f32 reads llama models only)"),
        });
    }
    let mut dims = read_dims(&ct, path)?;
    let mut get = |name: &str, rows: Option<usize>, cols: usize| -> Result<(usize, Vec<f32>)> {
        let (info, raw) = ct
            .tensor_bytes(&mut r, name)
            .map_err(|e| invalid(path, format!("reading tensor `{name}`: {e}")))?;
        let q = QRows::from_raw(info.dtype, &info.dims, &raw, name, path)?;
        let ok = q.cols == cols && rows.is_none_or(|r| r == q.rows);
        if !ok || (rows.is_none() && q.rows == 0) {
            return Err(invalid(
                path,
                format!(
                    "`{name}` is {}x{}, expected {}x{cols}",
                    q.rows,
                    q.cols,
                    rows.map_or("?".to_string(), |r| r.to_string())
                ),
            ));
        }
        Ok((q.rows, q.dense()))
    };
    let d = dims;
    let (vocab, token_embd) = get("token_embd.weight", None, d.n_embd)?;
    dims.vocab = vocab;
    let (q_dim, kv_dim) = (d.n_head * d.head_dim, d.n_kv_head * d.head_dim);
    let mut layers = Vec::with_capacity(d.n_layer);
    for i in 0..d.n_layer {
        let p = |s: &str| format!("blk.{i}.{s}.weight");
        let mut m = |s: &str, rows: usize, cols: usize| -> Result<Vec<f32>> {
            get(&p(s), Some(rows), cols).map(|(_, v)| v)
        };
        layers.push(LlamaLayerF32 {
            attn_norm: m("attn_norm", 1, d.n_embd)?,
            attn_q: m("attn_q", q_dim, d.n_embd)?,
            attn_k: m("attn_k", kv_dim, d.n_embd)?,
            attn_v: m("attn_v", kv_dim, d.n_embd)?,
            attn_output: m("attn_output", d.n_embd, q_dim)?,
            ffn_norm: m("ffn_norm", 1, d.n_embd)?,
            ffn_gate: m("ffn_gate", d.n_ff, d.n_embd)?,
            ffn_up: m("ffn_up", d.n_ff, d.n_embd)?,
            ffn_down: m("ffn_down", d.n_embd, d.n_ff)?,
        });
    }
    let (_, output_norm) = get("output_norm.weight", Some(1), d.n_embd)?;
    let output = if ct.tensors.contains_key("output.weight") {
        Some(get("output.weight", Some(vocab), d.n_embd)?.1)
    } else {
        None
    };
    Ok(LlamaF32 {
        dims,
        token_embd,
        layers,
        output_norm,
        output,
    })
}
