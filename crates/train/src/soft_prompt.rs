//! What puts a row's soft tokens into K-RagRec's prompt ([`GraphTokens`]): the trained graph
//! encoder, or, for the paper's "-Encoding" ablation (appendix A.6), a trainable soft prompt
//! that ignores the sub-graphs ([`SoftPrompt`]; the triples then go into the prompt as text).

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor, Var};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use crate::error::{Ctx, Result, TrainError};
use crate::gnn::{GraphEncoder, Subgraph};
use crate::llama::Llama;

/// The source of the soft tokens placed after BOS in a K-RagRec row that has retrieved
/// sub-graphs: what [`crate::Kragrec`] trains and [`crate::kragrec_letter_scores`] scores
/// with. Implemented by [`GraphEncoder`] (K-RagRec) and [`SoftPrompt`] (its "-Encoding"
/// ablation).
///
/// ```
/// use pgraphrag_train::{GnnConfig, GraphEncoder, GraphTokens};
/// let enc = GraphEncoder::new(GnnConfig::small(8, 16), 1, &candle_core::Device::Cpu)?;
/// let src: &dyn GraphTokens = &enc;
/// assert_eq!(src.named_vars().len(), enc.named_vars().len());
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
pub trait GraphTokens {
    /// Each row's soft tokens, `[k, llm_dim]`, from its (non-empty) sub-graphs. `dropout_seed`
    /// is `Some` while training and `None` in evaluation.
    fn soft_tokens_batch(
        &self,
        rows: &[&[Subgraph]],
        dropout_seed: Option<u64>,
    ) -> Result<Vec<Tensor>>;

    /// The trainable variables (and any state a checkpoint must keep), named.
    fn named_vars(&self) -> Vec<(String, Var)>;

    /// What the source is, for checkpoint identities: by default every variable's name and
    /// shape.
    fn identity(&self) -> String {
        self.named_vars()
            .iter()
            .map(|(n, v)| format!("{n}{:?}", v.dims()))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl GraphTokens for GraphEncoder {
    fn soft_tokens_batch(
        &self,
        rows: &[&[Subgraph]],
        dropout_seed: Option<u64>,
    ) -> Result<Vec<Tensor>> {
        GraphEncoder::soft_tokens_batch(self, rows, dropout_seed)
    }

    fn named_vars(&self) -> Vec<(String, Var)> {
        GraphEncoder::named_vars(self)
    }

    /// The [`crate::GnnConfig`] (what checkpoints have always recorded).
    fn identity(&self) -> String {
        format!("{:?}", self.config())
    }
}

/// A trainable soft prompt of `n` tokens, the same for every row (the sub-graphs are ignored):
/// the paper's "K-RagRec (-Encoding)" ablation, which "removes the GNN encoding and replaces
/// it with a trainable soft prompt", the retrieved triples going into the prompt as text.
///
/// ```
/// # use pgraphrag_llm::{LlamaDims, LlamaF32, LlamaLayerF32};
/// # let d = LlamaDims { n_embd: 4, n_head: 2, n_kv_head: 1, head_dim: 2, n_ff: 8, n_layer: 1,
/// #                     rope_dim: 2, rope_base: 10000.0, eps: 1e-5, vocab: 5 };
/// # let v = |n: usize| (0..n).map(|i| (i as f32 * 0.37).sin() * 0.5).collect::<Vec<f32>>();
/// # let layer = LlamaLayerF32 { attn_norm: vec![1.0; 4], attn_q: v(16), attn_k: v(8), attn_v: v(8),
/// #     attn_output: v(16), ffn_norm: vec![1.0; 4], ffn_gate: v(32), ffn_up: v(32), ffn_down: v(32) };
/// # let w = LlamaF32 { dims: d, token_embd: v(20), layers: vec![layer], output_norm: vec![1.0; 4], output: None };
/// use pgraphrag_train::{GraphTokens, Llama, SoftPrompt};
/// let model = Llama::from_f32(w, "doc", &candle_core::Device::Cpu)?;
/// let p = SoftPrompt::new(&model, 2, 0)?;
/// let t = p.soft_tokens_batch(&[&[]], None)?;
/// assert_eq!(t[0].dims(), &[2, 4]);
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("prompt.safetensors");
/// p.save(&path, model.base_id(), "features")?;
/// let back = SoftPrompt::load(&path, model.base_id(), "features", model.device())?;
/// assert_eq!(back.tokens(), 2);
/// assert!(SoftPrompt::load(&path, model.base_id(), "other", model.device()).is_err());
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
#[derive(Debug)]
pub struct SoftPrompt {
    tokens: Var,
}

const FORMAT: &str = "pgraphrag-kragrec-soft-prompt";
const VERSION: &str = "1";
const NAME: &str = "soft_prompt";

impl SoftPrompt {
    /// `n` tokens for `model`, drawn (from `seed`) uniformly with the variance of the model's
    /// token embeddings, so they start at the scale of real tokens. `n` must be at least 1.
    pub fn new(model: &Llama, n: usize, seed: u64) -> Result<Self> {
        if n == 0 {
            return Err(TrainError::Config(
                "a soft prompt needs at least one token".into(),
            ));
        }
        let table = model.embedding_table();
        let std = table
            .flatten_all()
            .and_then(|t| {
                let mean = t.mean_all()?;
                t.broadcast_sub(&mean)?.sqr()?.mean_all()?.sqrt()
            })
            .and_then(|s| s.to_scalar::<f32>())
            .ctx(|| "the embedding table's spread".into())?;
        let bound = std * 3f32.sqrt();
        let d = model.dims().n_embd;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let vals: Vec<f32> = (0..n * d)
            .map(|_| rng.random_range(-bound..=bound))
            .collect();
        let tokens = Tensor::from_vec(vals, (n, d), model.device())
            .and_then(|t| Var::from_tensor(&t))
            .ctx(|| "initialising the soft prompt".into())?;
        Ok(SoftPrompt { tokens })
    }

    /// How many tokens it has.
    pub fn tokens(&self) -> usize {
        self.tokens.dims()[0]
    }

    /// Writes the prompt to `path` (safetensors, atomically) with metadata `format`
    /// (`pgraphrag-kragrec-soft-prompt`), `format_version`, `base_model` and `features` (what
    /// the rows' retrieval was made with), as [`GraphEncoder::save`] does.
    pub fn save(&self, path: &Path, base_model: &str, features: &str) -> Result<()> {
        let md: HashMap<String, String> = [
            ("format", FORMAT),
            ("format_version", VERSION),
            ("base_model", base_model),
            ("features", features),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        crate::checkpoint::write_encoder_file(path, &[(NAME, self.tokens.as_tensor())], md)
    }

    /// Reads a prompt written by [`SoftPrompt::save`]. Refuses another base model
    /// ([`TrainError::BaseModelMismatch`]) and, with [`TrainError::EncoderFile`], other
    /// `features`, another kind of file, or a missing, mis-shaped or non-finite tensor.
    pub fn load(path: &Path, base_model: &str, features: &str, device: &Device) -> Result<Self> {
        let bad = |reason: String| TrainError::EncoderFile {
            path: path.to_path_buf(),
            reason,
        };
        let (bytes, _) = crate::checkpoint::read_for_features(
            path,
            &bad,
            (FORMAT, VERSION),
            base_model,
            features,
        )?;
        let mut tensors = candle_core::safetensors::load_buffer(&bytes, device)
            .map_err(|e| bad(format!("reading tensors: {e}")))?;
        let dims = tensors
            .get(NAME)
            .map(|t| t.dims().to_vec())
            .ok_or_else(|| bad(format!("tensor `{NAME}` is missing")))?;
        if dims.len() != 2 || dims[0] == 0 {
            return Err(bad(format!(
                "tensor `{NAME}` is {dims:?}, expected [tokens, hidden]"
            )));
        }
        let t = crate::checkpoint::take_tensor(&mut tensors, NAME, &dims, &bad)?;
        if let Some(extra) = tensors.keys().next() {
            return Err(bad(format!("unexpected tensor `{extra}`")));
        }
        let tokens = Var::from_tensor(&t).ctx(|| NAME.into())?;
        Ok(SoftPrompt { tokens })
    }
}

impl GraphTokens for SoftPrompt {
    fn soft_tokens_batch(
        &self,
        rows: &[&[Subgraph]],
        _dropout_seed: Option<u64>,
    ) -> Result<Vec<Tensor>> {
        Ok(vec![self.tokens.as_tensor().clone(); rows.len()])
    }

    fn named_vars(&self) -> Vec<(String, Var)> {
        vec![(NAME.to_string(), self.tokens.clone())]
    }
}
