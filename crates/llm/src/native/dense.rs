//! The weights of a llama-architecture GGUF as plain f32 matrices, dequantized exactly as the
//! native engine dequantizes them, for code that runs its own forward pass (training with
//! autograd in `pgraphrag-train`).

use std::path::Path;

use super::formats::QRows;
use crate::error::{Result, invalid};
use crate::gguf::dims::{LlamaDims, read_llama};

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

/// Reads a llama-architecture GGUF and dequantizes every weight to f32 with the native
/// engine's own dequantization (the values [`crate::Activations::F32`] computes with), so a
/// forward pass over them reproduces the engine up to f32 summation order.
///
/// Errors: [`LlmError::ModelNotFound`](crate::LlmError::ModelNotFound),
/// [`LlmError::InvalidGguf`](crate::LlmError::InvalidGguf) (bad header, missing or mis-shaped
/// tensor, mixture-of-experts file),
/// [`LlmError::UnsupportedArchitecture`](crate::LlmError::UnsupportedArchitecture) for anything
/// but `llama`.
///
/// ```no_run
/// let w = pgraphrag_llm::load_llama_f32("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref())?;
/// assert_eq!((w.dims.n_layer, w.dims.n_embd), (30, 576));
/// assert!(w.output.is_none()); // tied to the embeddings
/// # Ok::<(), pgraphrag_llm::LlmError>(())
/// ```
pub fn load_llama_f32(path: &Path) -> Result<LlamaF32> {
    let (ct, mut r, mut dims) = read_llama(path, "load_llama_f32")?;
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
