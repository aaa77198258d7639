//! Model dimensions: the hyper-parameters of a llama-architecture GGUF ([`LlamaDims`]), read
//! from the metadata and checked once, for the native engine, the f32 export, LoRA shapes and
//! training.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use super::content::read_content;
use super::file::GgufFile;
use crate::error::{LlmError, Result, invalid};

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

/// The hyper-parameters of a llama-architecture GGUF (`ct` read from `path`), checked for
/// consistency (heads divide the embedding, KV heads divide the heads, an even RoPE dimension
/// no larger than a head); `vocab` is 0 here (the embedding matrix gives it). Mixture-of-experts
/// files are refused.
pub(crate) fn read_dims(ct: &GgufFile, path: &Path) -> Result<LlamaDims> {
    let need = |k: &str| {
        ct.md_u32_exact(k)
            .ok_or_else(|| invalid(path, format!("missing metadata `{k}`")))
    };
    if ct.md_u32_exact("llama.expert_count").unwrap_or(0) > 0 {
        return Err(invalid(
            path,
            "mixture-of-experts llama models need the candle engine (Engine::Candle)",
        ));
    }
    let n_embd = need("llama.embedding_length")?;
    let n_head = need("llama.attention.head_count")?;
    let n_kv_head = ct
        .md_u32_exact("llama.attention.head_count_kv")
        .unwrap_or(n_head);
    if n_head == 0
        || n_kv_head == 0
        || !n_embd.is_multiple_of(n_head)
        || !n_head.is_multiple_of(n_kv_head)
    {
        return Err(invalid(
            path,
            format!("inconsistent heads: embedding {n_embd}, heads {n_head}, kv heads {n_kv_head}"),
        ));
    }
    let head_dim = n_embd / n_head;
    let rope_dim = ct
        .md_u32_exact("llama.rope.dimension_count")
        .unwrap_or(head_dim);
    if rope_dim > head_dim || !rope_dim.is_multiple_of(2) {
        return Err(invalid(
            path,
            format!("rope dimension {rope_dim} for head size {head_dim}"),
        ));
    }
    let n_layer = need("llama.block_count")?;
    let n_ff = need("llama.feed_forward_length")?;
    let eps = ct
        .md_f32("llama.attention.layer_norm_rms_epsilon")
        .ok_or_else(|| invalid(path, "missing `llama.attention.layer_norm_rms_epsilon`"))?;
    let rope_base = ct.md_f32("llama.rope.freq_base").unwrap_or(10000.0);
    Ok(LlamaDims {
        n_embd,
        n_head,
        n_kv_head,
        head_dim,
        n_ff,
        n_layer,
        rope_dim,
        rope_base,
        eps,
        vocab: 0,
    })
}

/// `general.architecture`, the model family the file declares (an error when absent).
pub(crate) fn architecture_name<'a>(ct: &'a GgufFile, path: &Path) -> Result<&'a str> {
    ct.md_str("general.architecture")
        .ok_or_else(|| invalid(path, "no `general.architecture` in the metadata"))
}

/// Opens a llama-architecture GGUF for `reader` (the public function asking, named in the
/// error for any other architecture): the checked header, the reader, and the dimensions
/// with `vocab` 0 (the embedding matrix gives it).
pub(crate) fn read_llama(
    path: &Path,
    reader: &str,
) -> Result<(GgufFile, BufReader<File>, LlamaDims)> {
    let (ct, r, _) = read_content(path)?;
    let arch = architecture_name(&ct, path)?;
    if arch != "llama" {
        return Err(LlmError::UnsupportedArchitecture {
            path: path.to_path_buf(),
            architecture: format!("{arch} ({reader} reads llama models only)"),
        });
    }
    let dims = read_dims(&ct, path)?;
    Ok((ct, r, dims))
}

/// The hyper-parameters of a llama-architecture GGUF, read from its header (metadata and
/// the shape of `token_embd.weight`) without loading any weight: the
/// [`LlamaDims`] of [`load_llama_f32`](crate::load_llama_f32). Errors as
/// [`load_llama_f32`](crate::load_llama_f32).
///
/// ```no_run
/// let d = pgraphrag_llm::read_llama_dims("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref())?;
/// assert_eq!((d.n_layer, d.n_embd, d.vocab), (30, 576, 49152));
/// # Ok::<(), pgraphrag_llm::LlmError>(())
/// ```
pub fn read_llama_dims(path: &Path) -> Result<LlamaDims> {
    let (ct, _, mut dims) = read_llama(path, "read_llama_dims")?;
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
