//! A differentiable llama-family forward pass in candle over f32 weights.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use candle_core::{Device, Tensor};
use pgraphrag_llm::{LlamaDims, LlamaF32, LlamaLayerF32};
use sha2::{Digest, Sha256};

use crate::attention::AttentionShape;
use crate::block;
use crate::error::{Ctx, Result, TrainError};
use crate::lora::{Lora, LoraTarget};
use crate::ops::{Frozen, attention, frozen_linear, rms_norm, rope_tables, swiglu};

/// One transformer block, every projection `[out, in]` and frozen. Q, K, V (and gate, up) are
/// separate products: slicing one stacked product would make the backward pass pad each
/// slice's gradient to the stacked width and add them up (a fifth of a training step).
struct Block {
    attn_norm: Tensor,
    q: Frozen,
    k: Frozen,
    v: Frozen,
    wo: Frozen,
    ffn_norm: Tensor,
    gate: Frozen,
    up: Frozen,
    down: Frozen,
}

/// A llama-architecture model (SmolLM2, Llama 2/3, Mistral-like) as candle tensors, frozen:
/// no weight is a [`candle_core::Var`], so a backward pass computes gradients only for what the
/// caller makes trainable (LoRA adapters, soft-token embeddings fed through
/// [`Llama::hidden`]). Semantics are the native engine's (`pgraphrag-llm`): RMSNorm,
/// interleaved RoPE on the first `rope_dim` values of a head, grouped-query attention, a
/// SiLU-gated MLP, the output tied to the embeddings when the file has no `output.weight`.
///
/// ```no_run
/// use candle_core::Device;
/// use pgraphrag_train::Llama;
/// let model = Llama::from_gguf("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), &Device::Cpu)?;
/// let logits = model.forward_ids(&[1, 504, 3458], None)?; // [3, vocab]
/// assert_eq!(logits.dims(), &[3, model.dims().vocab]);
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
pub struct Llama {
    dims: LlamaDims,
    device: Device,
    embed: Tensor,
    layers: Vec<Block>,
    norm: Tensor,
    head: Option<Tensor>,
    /// The output projection: `head`, else the (tied) embeddings.
    out_proj: Frozen,
    base_id: String,
}

impl std::fmt::Debug for Llama {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Llama")
            .field("dims", &self.dims)
            .field("base_id", &self.base_id)
            .finish_non_exhaustive()
    }
}

/// The text naming a model's shape, used in [`Llama::base_id`].
pub(crate) fn dims_text(d: &LlamaDims) -> String {
    format!(
        "llama:embd{}:heads{}/{}:hd{}:ff{}:layers{}:rope{}@{}:eps{}:vocab{}",
        d.n_embd,
        d.n_head,
        d.n_kv_head,
        d.head_dim,
        d.n_ff,
        d.n_layer,
        d.rope_dim,
        d.rope_base,
        d.eps,
        d.vocab
    )
}

/// sha256 of a file, hex.
pub(crate) fn file_sha256(path: &Path) -> Result<String> {
    let io = |source| TrainError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

impl Llama {
    /// Loads a llama-architecture GGUF, dequantizing every weight to f32 with the native
    /// engine's dequantization ([`pgraphrag_llm::load_llama_f32`]). The model's
    /// [`base_id`](Self::base_id) ends with the file's sha256.
    pub fn from_gguf(path: &Path, device: &Device) -> Result<Self> {
        let w = pgraphrag_llm::load_llama_f32(path)?;
        let sha = file_sha256(path)?;
        Self::from_f32(w, &format!("gguf-sha256:{sha}"), device)
    }

    /// A model from f32 weights (checked against `w.dims`). `source` names where they came
    /// from (a file hash, a test seed) and ends the [`base_id`](Self::base_id), which adapters
    /// and checkpoints record so that they are not applied to another model.
    ///
    /// ```
    /// use pgraphrag_llm::{LlamaDims, LlamaF32, LlamaLayerF32};
    /// let d = LlamaDims { n_embd: 4, n_head: 2, n_kv_head: 1, head_dim: 2, n_ff: 8, n_layer: 1,
    ///                     rope_dim: 2, rope_base: 10000.0, eps: 1e-5, vocab: 5 };
    /// let v = |n: usize| (0..n).map(|i| (i as f32 * 0.37).sin() * 0.5).collect::<Vec<f32>>();
    /// let layer = LlamaLayerF32 {
    ///     attn_norm: vec![1.0; 4], attn_q: v(16), attn_k: v(8), attn_v: v(8), attn_output: v(16),
    ///     ffn_norm: vec![1.0; 4], ffn_gate: v(32), ffn_up: v(32), ffn_down: v(32),
    /// };
    /// let w = LlamaF32 { dims: d, token_embd: v(20), layers: vec![layer], output_norm: vec![1.0; 4], output: None };
    /// let m = pgraphrag_train::Llama::from_f32(w, "doc-example", &candle_core::Device::Cpu)?;
    /// assert_eq!(m.forward_ids(&[0, 3], None)?.dims(), &[2, 5]);
    /// # Ok::<(), pgraphrag_train::TrainError>(())
    /// ```
    pub fn from_f32(w: LlamaF32, source: &str, device: &Device) -> Result<Self> {
        let d = w.dims;
        let bad = |what: String| TrainError::Input(format!("llama weights: {what}"));
        if d.n_head == 0
            || d.n_kv_head == 0
            || !d.n_head.is_multiple_of(d.n_kv_head)
            || d.n_head * d.head_dim != d.n_embd
            || d.rope_dim > d.head_dim
            || !d.rope_dim.is_multiple_of(2)
            || d.vocab == 0
        {
            return Err(bad(format!("inconsistent dimensions {d:?}")));
        }
        if w.layers.len() != d.n_layer {
            return Err(bad(format!(
                "{} layers for n_layer {}",
                w.layers.len(),
                d.n_layer
            )));
        }
        let t = |v: Vec<f32>, rows: usize, cols: usize, name: &str| -> Result<Tensor> {
            if v.len() != rows * cols {
                return Err(bad(format!(
                    "`{name}` has {} values, expected {rows}x{cols}",
                    v.len()
                )));
            }
            Tensor::from_vec(v, (rows, cols), device).ctx(|| format!("placing `{name}`"))
        };
        let v1 = |v: Vec<f32>, n: usize, name: &str| -> Result<Tensor> {
            t(v, 1, n, name)?.squeeze(0).ctx(|| name.to_string())
        };
        let (qd, kvd) = (d.n_head * d.head_dim, d.n_kv_head * d.head_dim);
        let frozen = |w: Tensor| Frozen::new(w).ctx(|| "packing weights".into());
        let mut layers = Vec::with_capacity(d.n_layer);
        for (i, l) in w.layers.into_iter().enumerate() {
            let LlamaLayerF32 {
                attn_norm,
                attn_q,
                attn_k,
                attn_v,
                attn_output,
                ffn_norm,
                ffn_gate,
                ffn_up,
                ffn_down,
            } = l;
            let n = |s: &str| format!("blk.{i}.{s}");
            layers.push(Block {
                attn_norm: v1(attn_norm, d.n_embd, &n("attn_norm"))?,
                q: frozen(t(attn_q, qd, d.n_embd, &n("attn_q"))?)?,
                k: frozen(t(attn_k, kvd, d.n_embd, &n("attn_k"))?)?,
                v: frozen(t(attn_v, kvd, d.n_embd, &n("attn_v"))?)?,
                wo: frozen(t(attn_output, d.n_embd, qd, &n("attn_output"))?)?,
                ffn_norm: v1(ffn_norm, d.n_embd, &n("ffn_norm"))?,
                gate: frozen(t(ffn_gate, d.n_ff, d.n_embd, &n("ffn_gate"))?)?,
                up: frozen(t(ffn_up, d.n_ff, d.n_embd, &n("ffn_up"))?)?,
                down: frozen(t(ffn_down, d.n_embd, d.n_ff, &n("ffn_down"))?)?,
            });
        }
        let head = match w.output {
            Some(o) => Some(t(o, d.vocab, d.n_embd, "output")?),
            None => None,
        };
        let embed = t(w.token_embd, d.vocab, d.n_embd, "token_embd")?;
        let out_proj = frozen(head.clone().unwrap_or_else(|| embed.clone()))?;
        Ok(Llama {
            dims: d,
            device: device.clone(),
            embed,
            layers,
            norm: v1(w.output_norm, d.n_embd, "output_norm")?,
            head,
            out_proj,
            base_id: format!("{}:{source}", dims_text(&d)),
        })
    }

    /// The hyper-parameters.
    pub fn dims(&self) -> &LlamaDims {
        &self.dims
    }

    /// The device the weights live on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// What this model is: its shape and where its weights came from (the GGUF file's sha256
    /// for [`Llama::from_gguf`]), e.g. `llama:embd576:heads9/3:...:gguf-sha256:…`. Adapters and
    /// checkpoints store it and are refused by any other model.
    pub fn base_id(&self) -> &str {
        &self.base_id
    }

    /// The token embedding table, `[vocab, n_embd]` (frozen).
    pub(crate) fn embedding_table(&self) -> &Tensor {
        &self.embed
    }

    /// The embeddings of `ids`, `[t, n_embd]` (frozen: no gradient flows into the table).
    /// An id outside the vocabulary is an error.
    pub fn embed(&self, ids: &[u32]) -> Result<Tensor> {
        if let Some(&bad) = ids.iter().find(|&&i| i as usize >= self.dims.vocab) {
            return Err(TrainError::Input(format!(
                "token id {bad} is outside the vocabulary of {}",
                self.dims.vocab
            )));
        }
        let ix = Tensor::new(ids, &self.device).ctx(|| "token ids".into())?;
        self.embed
            .index_select(&ix, 0)
            .ctx(|| "embedding lookup".into())
    }

    /// `prefix` embeddings, then `soft` (`[k, n_embd]`, e.g. a projected graph token), then
    /// `rest`: the sequence `[BOS, soft…, prompt…]` when `prefix` is `[BOS]`, as K-RagRec
    /// places its graph tokens. Gradients flow into `soft`.
    pub fn embed_with_soft_tokens(
        &self,
        prefix: &[u32],
        soft: &Tensor,
        rest: &[u32],
    ) -> Result<Tensor> {
        let (_, d) = soft
            .dims2()
            .ctx(|| "soft tokens must be [k, n_embd]".into())?;
        if d != self.dims.n_embd {
            return Err(TrainError::Input(format!(
                "soft tokens have {d} values, the model's hidden size is {}",
                self.dims.n_embd
            )));
        }
        let mut parts = Vec::with_capacity(3);
        if !prefix.is_empty() {
            parts.push(self.embed(prefix)?);
        }
        parts.push(soft.clone());
        if !rest.is_empty() {
            parts.push(self.embed(rest)?);
        }
        Tensor::cat(&parts, 0).ctx(|| "joining soft tokens".into())
    }

    /// The final hidden states (after the output norm), `[b, t, n_embd]`, of input embeddings
    /// `embeds` (`[b, t, n_embd]`, or `[t, n_embd]` for one sequence, giving `[t, n_embd]`) at
    /// positions `0..t`, with causal attention. Sequences of a batch padded on the right give
    /// their real positions the values they get alone. With `lora`, its adapters are added to
    /// their projections; `dropout_seed` (`Some` while training) switches the adapters'
    /// dropout on with masks drawn from that seed.
    pub fn hidden(
        &self,
        embeds: &Tensor,
        lora: Option<&Lora>,
        dropout_seed: Option<u64>,
    ) -> Result<Tensor> {
        let single = embeds.rank() == 2;
        let x = if single {
            embeds.unsqueeze(0).ctx(|| "embeddings".into())?
        } else {
            embeds.clone()
        };
        let (b, t, d) = x
            .dims3()
            .ctx(|| "input embeddings must be [b, t, n_embd] or [t, n_embd]".into())?;
        if d != self.dims.n_embd || t == 0 {
            return Err(TrainError::Input(format!(
                "input embeddings {:?}: need {} values per position and at least one position",
                embeds.dims(),
                self.dims.n_embd
            )));
        }
        if let Some(l) = lora
            && l.base_id() != self.base_id
        {
            return Err(TrainError::BaseModelMismatch {
                path: "<in memory>".into(),
                expected: self.base_id.clone(),
                found: l.base_id().to_string(),
            });
        }
        let h = self
            .forward_blocks(x, b, t, lora, dropout_seed, block::applies(embeds))
            .ctx(|| format!("forward pass over {b}x{t} positions"))?;
        let h = rms_norm(&h, &self.norm, self.dims.eps).ctx(|| "output norm".into())?;
        if single {
            h.squeeze(0).ctx(|| "output".into())
        } else {
            Ok(h)
        }
    }

    fn forward_blocks(
        &self,
        mut x: Tensor,
        b: usize,
        t: usize,
        lora: Option<&Lora>,
        seed: Option<u64>,
        fused: bool,
    ) -> candle_core::Result<Tensor> {
        let c = self.dims;
        let n = b * t;
        let (cos, sin) = rope_tables(t, c.rope_dim.max(2), c.rope_base, &self.device)?;
        if fused {
            return self.forward_fused(x, (b, t), lora, seed, (&cos, &sin));
        }
        let adapt = |li: usize, tg: LoraTarget, inp: &Tensor, y: Tensor| match lora {
            Some(l) => l.apply(li, tg, inp, y, seed),
            None => Ok(y),
        };
        for (li, blk) in self.layers.iter().enumerate() {
            let h = rms_norm(&x, &blk.attn_norm, c.eps)?.reshape((n, c.n_embd))?;
            let q = adapt(li, LoraTarget::Q, &h, frozen_linear(&h, &blk.q)?)?;
            let k = adapt(li, LoraTarget::K, &h, frozen_linear(&h, &blk.k)?)?;
            let v = adapt(li, LoraTarget::V, &h, frozen_linear(&h, &blk.v)?)?;
            let att = attention(&q, &k, &v, (b, t), &c, (&cos, &sin))?;
            let o = adapt(li, LoraTarget::O, &att, frozen_linear(&att, &blk.wo)?)?;
            x = (x + o.reshape((b, t, c.n_embd))?)?;
            let h = rms_norm(&x, &blk.ffn_norm, c.eps)?.reshape((n, c.n_embd))?;
            let g = adapt(li, LoraTarget::Gate, &h, frozen_linear(&h, &blk.gate)?)?;
            let u = adapt(li, LoraTarget::Up, &h, frozen_linear(&h, &blk.up)?)?;
            let a = swiglu(&g, &u)?;
            let dn = adapt(li, LoraTarget::Down, &a, frozen_linear(&a, &blk.down)?)?;
            x = (x + dn.reshape((b, t, c.n_embd))?)?;
        }
        Ok(x)
    }

    /// The hidden states of `x` (`[b, t, n_embd]`) before the output norm, through the fused
    /// CPU path (`fused`) or candle's chain of ops (any device): the chain is the reference
    /// the fused path is tested against.
    #[cfg(test)]
    pub(crate) fn blocks(
        &self,
        x: &Tensor,
        lora: Option<&Lora>,
        seed: Option<u64>,
        fused: bool,
    ) -> candle_core::Result<Tensor> {
        let (b, t, _) = x.dims3()?;
        self.forward_blocks(x.clone(), b, t, lora, seed, fused)
    }

    /// [`Llama::forward_blocks`] on the CPU: each block as its two fused halves
    /// ([`crate::block`]).
    fn forward_fused(
        &self,
        x: Tensor,
        (b, t): (usize, usize),
        lora: Option<&Lora>,
        seed: Option<u64>,
        (cos, sin): (&Tensor, &Tensor),
    ) -> candle_core::Result<Tensor> {
        let c = self.dims;
        let table = |x: &Tensor| -> candle_core::Result<Arc<Vec<f32>>> {
            Ok(Arc::new(x.narrow(0, 0, t)?.flatten_all()?.to_vec1()?))
        };
        let shape = AttentionShape {
            b,
            t,
            heads: c.n_head,
            kv_heads: c.n_kv_head,
            head_dim: c.head_dim,
            half: if c.rope_dim > 0 { c.rope_dim / 2 } else { 0 },
            cos: table(cos)?,
            sin: table(sin)?,
            scale: 1.0 / (c.head_dim as f32).sqrt(),
        };
        let mut halves = Vec::with_capacity(2 * self.layers.len());
        for (li, blk) in self.layers.iter().enumerate() {
            let attn = block::Half {
                norm: &blk.attn_norm,
                eps: c.eps,
                projs: vec![
                    (&blk.q, LoraTarget::Q),
                    (&blk.k, LoraTarget::K),
                    (&blk.v, LoraTarget::V),
                    (&blk.wo, LoraTarget::O),
                ],
                attention: Some(shape.clone()),
            };
            halves.push((li, attn));
            let mlp = block::Half {
                norm: &blk.ffn_norm,
                eps: c.eps,
                projs: vec![
                    (&blk.gate, LoraTarget::Gate),
                    (&blk.up, LoraTarget::Up),
                    (&blk.down, LoraTarget::Down),
                ],
                attention: None,
            };
            halves.push((li, mlp));
        }
        block::apply(&x.reshape((b * t, c.n_embd))?, halves, lora, seed)?.reshape((b, t, c.n_embd))
    }

    /// Logits of hidden states (`[..., n_embd]` → `[..., vocab]`); compute them only for the
    /// positions a loss needs (the vocabulary projection is the largest matrix).
    pub fn logits(&self, hidden: &Tensor) -> Result<Tensor> {
        frozen_linear(hidden, &self.out_proj).ctx(|| "output projection".into())
    }

    /// Logits `[t, vocab]` at every position of one token sequence (inference).
    pub fn forward_ids(&self, ids: &[u32], lora: Option<&Lora>) -> Result<Tensor> {
        let e = self.embed(ids)?;
        let h = self.hidden(&e, lora, None)?;
        self.logits(&h)
    }

    /// The model with `lora`'s adapters merged into its weights (`W + (α/r)·B·A` for every
    /// adapted projection): f32 weights computing what the model with the adapter computes
    /// (without dropout), for inference or export ([`Llama::to_f32`]). Its
    /// [`base_id`](Self::base_id) records the merge.
    pub fn merge(&self, lora: &Lora) -> Result<Llama> {
        if lora.base_id() != self.base_id {
            return Err(TrainError::BaseModelMismatch {
                path: "<in memory>".into(),
                expected: self.base_id.clone(),
                found: lora.base_id().to_string(),
            });
        }
        let c = self.dims;
        let mut layers = Vec::with_capacity(self.layers.len());
        for (li, blk) in self.layers.iter().enumerate() {
            let add = |w: &Frozen, tg: LoraTarget| -> Result<Frozen> {
                match lora
                    .delta(li, tg)
                    .ctx(|| format!("LoRA delta of blk.{li}"))?
                {
                    None => Ok(w.clone()),
                    Some(delta) => {
                        let merged =
                            (&w.w + &delta).ctx(|| format!("merging blk.{li}.{}", tg.name()))?;
                        Frozen::new(merged).ctx(|| format!("packing merged blk.{li}"))
                    }
                }
            };
            layers.push(Block {
                attn_norm: blk.attn_norm.clone(),
                q: add(&blk.q, LoraTarget::Q)?,
                k: add(&blk.k, LoraTarget::K)?,
                v: add(&blk.v, LoraTarget::V)?,
                wo: add(&blk.wo, LoraTarget::O)?,
                ffn_norm: blk.ffn_norm.clone(),
                gate: add(&blk.gate, LoraTarget::Gate)?,
                up: add(&blk.up, LoraTarget::Up)?,
                down: add(&blk.down, LoraTarget::Down)?,
            });
        }
        Ok(Llama {
            dims: c,
            device: self.device.clone(),
            embed: self.embed.clone(),
            layers,
            norm: self.norm.clone(),
            head: self.head.clone(),
            out_proj: self.out_proj.clone(),
            base_id: format!("{}+lora:{}", self.base_id, lora.digest()),
        })
    }

    /// The weights as plain f32 vectors (the layout of [`pgraphrag_llm::load_llama_f32`]),
    /// e.g. a merged model's ([`Llama::merge`]) for export.
    pub fn to_f32(&self) -> Result<LlamaF32> {
        let c = self.dims;
        let flat = |t: &Tensor| -> Result<Vec<f32>> {
            t.flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .ctx(|| "reading weights".into())
        };
        let mut layers = Vec::with_capacity(self.layers.len());
        for blk in &self.layers {
            layers.push(LlamaLayerF32 {
                attn_norm: flat(&blk.attn_norm)?,
                attn_q: flat(&blk.q.w)?,
                attn_k: flat(&blk.k.w)?,
                attn_v: flat(&blk.v.w)?,
                attn_output: flat(&blk.wo.w)?,
                ffn_norm: flat(&blk.ffn_norm)?,
                ffn_gate: flat(&blk.gate.w)?,
                ffn_up: flat(&blk.up.w)?,
                ffn_down: flat(&blk.down.w)?,
            });
        }
        Ok(LlamaF32 {
            dims: c,
            token_embd: flat(&self.embed)?,
            layers,
            output_norm: flat(&self.norm)?,
            output: self.head.as_ref().map(flat).transpose()?,
        })
    }
}
