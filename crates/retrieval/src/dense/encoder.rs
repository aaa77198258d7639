//! [`BertEncoder`]: a BERT checkpoint (native CPU forward pass or candle) with masked mean
//! pooling (the Contriever and sentence-transformers recipe), the CLS token, or BERT's
//! `pooler_output`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use candle_core::{DType, Device, IndexOp, Tensor};
use candle_nn::{Linear, Module, VarBuilder};
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::files::{check_safetensors, compute, model_err, tokenizer_config, tokenizer_from_vocab};
use super::kernels::Kernels;
use super::native::NativeBert;
use super::options::candle_device;
pub use super::options::{DenseDevice, EncoderBackend, EncoderOptions, Pooling};
use super::qmatmul::QKernels;
use super::quant::Precision;
use crate::{Error, Result};

/// A BERT encoder (our native CPU forward pass by default, candle as an option and on a GPU;
/// see [`EncoderBackend`]): `config.json`, `model.safetensors` (or `pytorch_model.bin`) and
/// `tokenizer.json` (or a BERT `vocab.txt`) from one folder.
///
/// Implements [`pgraphrag_core::Encoder`] with the pooling and normalisation of its
/// [`EncoderOptions`]; [`BertEncoder::embed`] gives any pooling, never normalised.
///
/// ```no_run
/// use pgraphrag_core::Encoder;
/// use pgraphrag_retrieval::dense::BertEncoder;
/// let enc = BertEncoder::load(std::path::Path::new("models/all-MiniLM-L6-v2")).unwrap();
/// let e = enc.encode(&["a short review", "another one"]).unwrap();
/// assert_eq!((e.rows(), e.dim()), (2, 384));
/// ```
pub struct BertEncoder {
    model: Model,
    has_pooler: bool,
    tokenizer: Tokenizer,
    dir: PathBuf,
    weights: PathBuf,
    config_json: String,
    hidden: usize,
    max_length: usize,
    pad_id: u32,
    opts: EncoderOptions,
    device: Device,
    fingerprint: OnceLock<String>,
}

impl std::fmt::Debug for BertEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEncoder")
            .field("dir", &self.dir)
            .field("weights", &self.weights)
            .field("hidden", &self.hidden)
            .field("max_length", &self.max_length)
            .field("has_pooler", &self.has_pooler)
            .field("backend", &self.backend_name())
            .field("opts", &self.opts)
            .finish()
    }
}

/// The forward pass in use (one per encoder, so the size difference does not matter).
#[allow(clippy::large_enum_variant)]
enum Model {
    Candle {
        model: BertModel,
        pooler: Option<Linear>,
    },
    Native(Box<NativeBert>),
}

impl BertEncoder {
    /// Loads the model in `dir` with default options (mean pooling, not normalised, CPU).
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_with(dir, EncoderOptions::default())
    }

    /// Loads the model in `dir` with `opts`.
    ///
    /// Errors ([`Error::Model`]) name the file and the problem: a missing folder, no
    /// `config.json`, a config that is not BERT's, no weights file, weights that do not
    /// match the config, no tokenizer, or a `max_length` above the model's limit.
    pub fn load_with(dir: &Path, opts: EncoderOptions) -> Result<Self> {
        if !dir.is_dir() {
            return Err(model_err(
                dir,
                "not a folder; expected a folder with config.json, model.safetensors (or \
                 pytorch_model.bin) and tokenizer.json (scripts/fetch-minilm.sh fetches the default)",
            ));
        }
        if opts.batch_size == 0 {
            return Err(Error::InvalidInput("batch_size must be at least 1".into()));
        }
        let config_path = dir.join("config.json");
        let config_json = std::fs::read_to_string(&config_path)
            .map_err(|e| model_err(&config_path, format!("cannot read config.json: {e}")))?;
        let config: Config = serde_json::from_str(&config_json).map_err(|e| {
            model_err(
                &config_path,
                format!("not a BERT config (expected vocab_size, hidden_size, num_hidden_layers, hidden_act gelu/relu, ...): {e}"),
            )
        })?;
        if let Some(mt) = &config.model_type
            && mt != "bert"
        {
            return Err(model_err(
                &config_path,
                format!(
                    "model_type is {mt:?}; only BERT checkpoints (model_type \"bert\") are supported"
                ),
            ));
        }
        if config.hidden_size == 0
            || config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(model_err(
                &config_path,
                format!(
                    "hidden_size {} is not a positive multiple of num_attention_heads {}",
                    config.hidden_size, config.num_attention_heads
                ),
            ));
        }
        let device = candle_device(opts.device)?;
        let st = dir.join("model.safetensors");
        let pth = dir.join("pytorch_model.bin");
        let (vb, weights) = if st.is_file() {
            check_safetensors(&st)?;
            // SAFETY: the file is memory-mapped read-only; like every safetensors user we
            // assume nobody truncates it while the model is alive.
            let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&st], DType::F32, &device) }
                .map_err(|e| model_err(&st, format!("cannot read the safetensors weights: {e}")))?;
            (vb, st)
        } else if pth.is_file() {
            let vb = VarBuilder::from_pth(&pth, DType::F32, &device)
                .map_err(|e| model_err(&pth, format!("cannot read the PyTorch weights: {e}")))?;
            (vb, pth)
        } else {
            return Err(model_err(
                dir,
                "no weights: expected model.safetensors or pytorch_model.bin",
            ));
        };
        let mismatch = |e: String| {
            model_err(
                &weights,
                format!(
                    "the weights do not match config.json (a BERT checkpoint is expected): {e}"
                ),
            )
        };
        let mut prefixes = vec![String::new(), "bert.".to_string()];
        if let Some(mt) = &config.model_type {
            prefixes.push(format!("{mt}."));
        }
        let pooler_prefix = prefixes
            .iter()
            .find(|p| vb.contains_tensor(&format!("{p}pooler.dense.weight")))
            .cloned();
        let native = opts.backend == EncoderBackend::Native && opts.device == DenseDevice::Cpu;
        if opts.precision != Precision::F32 && !native {
            return Err(Error::InvalidInput(format!(
                "precision {} needs the native backend on the CPU",
                opts.precision.name()
            )));
        }
        let qk = (opts.precision == Precision::Int8).then(|| QKernels::for_cpu(opts.cpu));
        let model = if native {
            // The prefix under which `embeddings.*` lives (as candle's BertModel::load tries).
            let root = prefixes
                .iter()
                .find(|p| vb.contains_tensor(&format!("{p}embeddings.word_embeddings.weight")))
                .cloned()
                .unwrap_or_default();
            let vb_root = if root.is_empty() {
                vb.clone()
            } else {
                vb.pp(root.trim_end_matches('.'))
            };
            // The pooler may sit outside the `bert.` prefix; address it from the top.
            let n =
                NativeBert::load_with_kernels(&vb_root, &config, Kernels::for_cpu(opts.cpu), qk)
                    .map_err(mismatch)?;
            let n = match &pooler_prefix {
                Some(p) => n
                    .with_pooler(&vb, p, config.hidden_size)
                    .map_err(|e| model_err(&weights, format!("bad pooler weights: {e}")))?,
                None => n,
            };
            Model::Native(Box::new(n))
        } else {
            let model =
                BertModel::load(vb.clone(), &config).map_err(|e| mismatch(e.to_string()))?;
            let pooler = match &pooler_prefix {
                Some(p) => Some(
                    candle_nn::linear(
                        config.hidden_size,
                        config.hidden_size,
                        vb.pp(format!("{p}pooler.dense")),
                    )
                    .map_err(|e| model_err(&weights, format!("bad pooler weights: {e}")))?,
                ),
                None => None,
            };
            Model::Candle { model, pooler }
        };
        if opts.pooling == Pooling::Pooler && pooler_prefix.is_none() {
            return Err(Error::MissingPooler {
                path: dir.to_path_buf(),
            });
        }

        let (tc_max, lower) = tokenizer_config(dir);
        let tok_path = dir.join("tokenizer.json");
        let mut tokenizer = if tok_path.is_file() {
            Tokenizer::from_file(&tok_path)
                .map_err(|e| model_err(&tok_path, format!("cannot load tokenizer.json: {e}")))?
        } else if dir.join("vocab.txt").is_file() {
            tokenizer_from_vocab(dir, lower.unwrap_or(true))?
        } else {
            return Err(model_err(
                dir,
                "no tokenizer: expected tokenizer.json (or a BERT vocab.txt)",
            ));
        };
        let limit = tc_max
            .map(|m| m.min(config.max_position_embeddings))
            .unwrap_or(config.max_position_embeddings);
        let max_length = match opts.max_length {
            None => limit,
            Some(0) => return Err(Error::InvalidInput("max_length must be at least 1".into())),
            Some(n) if n > limit => {
                return Err(Error::InvalidInput(format!(
                    "max_length {n} exceeds the model's limit of {limit} tokens \
                     (max_position_embeddings / model_max_length of {})",
                    dir.display()
                )));
            }
            Some(n) => n,
        };
        let added = {
            use tokenizers::PostProcessor;
            tokenizer
                .get_post_processor()
                .map(|p| p.added_tokens(false))
                .unwrap_or(0)
        };
        if max_length <= added {
            return Err(Error::InvalidInput(format!(
                "max_length {max_length} leaves no room for text after the {added} special tokens"
            )));
        }
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|e| model_err(&tok_path, format!("cannot set truncation: {e}")))?;
        // We pad ourselves, per length-sorted batch.
        tokenizer.with_padding(None);
        let pad_id = tokenizer
            .token_to_id("[PAD]")
            .unwrap_or(config.pad_token_id as u32);
        Ok(BertEncoder {
            model,
            has_pooler: pooler_prefix.is_some(),
            tokenizer,
            dir: dir.to_path_buf(),
            weights,
            config_json,
            hidden: config.hidden_size,
            max_length,
            pad_id,
            opts,
            device,
            fingerprint: OnceLock::new(),
        })
    }

    /// Downloads `repo` (e.g. `sentence-transformers/all-MiniLM-L6-v2`, `facebook/contriever`)
    /// from the Hugging Face hub into its usual cache and loads it. Needs network access.
    #[cfg(feature = "hf-hub")]
    pub fn from_hub(repo: &str, opts: EncoderOptions) -> Result<Self> {
        let api = hf_hub::api::sync::Api::new()
            .map_err(|e| model_err(Path::new(repo), format!("hub: {e}")))?;
        let r = api.model(repo.to_string());
        let config = r
            .get("config.json")
            .map_err(|e| model_err(Path::new(repo), format!("hub config.json: {e}")))?;
        let _ = r
            .get("model.safetensors")
            .or_else(|_| r.get("pytorch_model.bin"))
            .map_err(|e| model_err(Path::new(repo), format!("hub weights: {e}")))?;
        if r.get("tokenizer.json").is_err() {
            r.get("vocab.txt")
                .map_err(|e| model_err(Path::new(repo), format!("hub tokenizer: {e}")))?;
        }
        let _ = r.get("tokenizer_config.json");
        let dir = config
            .parent()
            .ok_or_else(|| model_err(&config, "hub file has no parent folder"))?
            .to_path_buf();
        Self::load_with(&dir, opts)
    }

    /// The model folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The embedding dimension (`hidden_size`).
    pub fn dim(&self) -> usize {
        self.hidden
    }
    /// The truncation length in tokens (special tokens included).
    pub fn max_length(&self) -> usize {
        self.max_length
    }
    /// Whether the checkpoint has `pooler.dense.*` weights ([`Pooling::Pooler`] works).
    pub fn has_pooler(&self) -> bool {
        self.has_pooler
    }
    /// Which forward pass runs: `native (avx512)`, `native (avx2)`, `native (portable)` or
    /// `candle`; int8 adds its tiles, e.g. `native (avx512, int8 avx512-vnni)`.
    pub fn backend_name(&self) -> String {
        match &self.model {
            Model::Native(n) => format!("native ({})", n.kernels_name()),
            Model::Candle { .. } => "candle".into(),
        }
    }
    /// The options the encoder was loaded with.
    pub fn options(&self) -> &EncoderOptions {
        &self.opts
    }

    /// A stable identity of the model for cache keys: sha256 of `config.json`, of the
    /// weights file and of the truncation length. The weights are hashed once, on first use.
    pub fn fingerprint(&self) -> Result<String> {
        if let Some(f) = self.fingerprint.get() {
            return Ok(f.clone());
        }
        let mut file = std::fs::File::open(&self.weights).map_err(|e| {
            model_err(
                &self.weights,
                format!("cannot read weights to hash them: {e}"),
            )
        })?;
        let mut w = Sha256::new();
        std::io::copy(&mut file, &mut w)
            .map_err(|e| model_err(&self.weights, format!("cannot hash weights: {e}")))?;
        let weights_hash = w.finalize();
        let mut h = Sha256::new();
        h.update(b"pgraphrag-dense-v1\0");
        h.update(self.config_json.as_bytes());
        h.update(weights_hash);
        h.update((self.max_length as u64).to_le_bytes());
        if self.opts.precision != Precision::F32 {
            // f32 keys stay what they were; int8 vectors are never read as f32 ones.
            h.update(b"\0precision=");
            h.update(self.opts.precision.name().as_bytes());
        }
        let f: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Ok(self.fingerprint.get_or_init(|| f).clone())
    }

    /// Token ids of `text` after truncation, special tokens included.
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        Ok(enc.get_ids().to_vec())
    }

    /// Encodes `texts` with `pooling`, never normalised; one row per text, in order.
    ///
    /// Texts longer than [`BertEncoder::max_length`] tokens are truncated (their tail is
    /// dropped), as transformers does with `truncation=True`. An empty text encodes as
    /// `[CLS] [SEP]`, as in transformers.
    pub fn embed(&self, texts: &[&str], pooling: Pooling) -> Result<pgraphrag_core::Embeddings> {
        if pooling == Pooling::Pooler && !self.has_pooler {
            return Err(Error::MissingPooler {
                path: self.dir.clone(),
            });
        }
        let mut out = vec![0f32; texts.len() * self.hidden];
        if !texts.is_empty() {
            let encs = self
                .tokenizer
                .encode_batch(texts.to_vec(), true)
                .map_err(|e| Error::Tokenizer(e.to_string()))?;
            let mut order: Vec<usize> = (0..encs.len()).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(encs[i].get_ids().len()));
            for chunk in order.chunks(self.opts.batch_size) {
                let rows = self.forward(chunk.iter().map(|&i| &encs[i]), chunk.len(), pooling)?;
                for (r, &i) in chunk.iter().enumerate() {
                    out[i * self.hidden..(i + 1) * self.hidden]
                        .copy_from_slice(&rows[r * self.hidden..(r + 1) * self.hidden]);
                }
            }
        }
        pgraphrag_core::Embeddings::new(self.hidden, out).map_err(|e| Error::Compute(e.to_string()))
    }

    /// One batch through the model; returns `b x hidden` floats.
    fn forward<'a>(
        &self,
        encs: impl Iterator<Item = &'a tokenizers::Encoding> + Clone,
        b: usize,
        pooling: Pooling,
    ) -> Result<Vec<f32>> {
        let (model, pooler) = match &self.model {
            Model::Native(n) => {
                let seqs: Vec<(&[u32], &[u32])> =
                    encs.map(|e| (e.get_ids(), e.get_type_ids())).collect();
                let mut out = vec![0f32; b * self.hidden];
                n.forward(&seqs, pooling, &mut out)?;
                return Ok(out);
            }
            Model::Candle { model, pooler } => (model, pooler),
        };
        let len = encs.clone().map(|e| e.get_ids().len()).max().unwrap_or(0);
        let mut ids = vec![self.pad_id; b * len];
        let mut types = vec![0u32; b * len];
        let mut mask = vec![0u32; b * len];
        for (r, e) in encs.enumerate() {
            let n = e.get_ids().len();
            ids[r * len..r * len + n].copy_from_slice(e.get_ids());
            types[r * len..r * len + n].copy_from_slice(e.get_type_ids());
            for m in &mut mask[r * len..r * len + n] {
                *m = 1;
            }
        }
        let t = |v: Vec<u32>| Tensor::from_vec(v, (b, len), &self.device).map_err(compute);
        let (ids, types, mask) = (t(ids)?, t(types)?, t(mask)?);
        let hidden = model.forward(&ids, &types, Some(&mask)).map_err(compute)?;
        let pooled = match pooling {
            Pooling::Mean => {
                let m = mask
                    .to_dtype(DType::F32)
                    .map_err(compute)?
                    .unsqueeze(2)
                    .map_err(compute)?;
                let sum = hidden
                    .broadcast_mul(&m)
                    .and_then(|x| x.sum(1))
                    .map_err(compute)?;
                // sentence-transformers clamps the token count at 1e-9.
                let count = m
                    .sum(1)
                    .and_then(|c| c.clamp(1e-9f32, f32::MAX))
                    .map_err(compute)?;
                sum.broadcast_div(&count).map_err(compute)?
            }
            Pooling::Cls => hidden.i((.., 0)).map_err(compute)?,
            Pooling::Pooler => {
                let lin = pooler.as_ref().ok_or_else(|| Error::MissingPooler {
                    path: self.dir.clone(),
                })?;
                let cls = hidden.i((.., 0)).map_err(compute)?;
                lin.forward(&cls).and_then(|x| x.tanh()).map_err(compute)?
            }
        };
        pooled
            .to_dtype(DType::F32)
            .and_then(|p| p.flatten_all())
            .and_then(|p| p.to_vec1::<f32>())
            .map_err(compute)
    }
}

/// L2-normalises `v` in place (`v / max(‖v‖, 1e-12)`, as `torch.nn.functional.normalize`).
///
/// ```
/// let mut v = [3.0f32, 4.0];
/// pgraphrag_retrieval::dense::l2_normalize(&mut v);
/// assert_eq!(v, [0.6, 0.8]);
/// ```
pub fn l2_normalize(v: &mut [f32]) {
    let n = v
        .iter()
        .map(|x| (*x as f64) * (*x as f64))
        .sum::<f64>()
        .sqrt()
        .max(1e-12);
    for x in v {
        *x = (*x as f64 / n) as f32;
    }
}

impl pgraphrag_core::Encoder for BertEncoder {
    fn encode(&self, texts: &[&str]) -> pgraphrag_core::Result<pgraphrag_core::Embeddings> {
        let e = self.embed(texts, self.opts.pooling)?;
        if !self.opts.normalize {
            return Ok(e);
        }
        let dim = e.dim();
        let mut v = e.into_vec();
        for row in v.chunks_mut(dim) {
            l2_normalize(row);
        }
        pgraphrag_core::Embeddings::new(dim, v)
    }
    fn dim(&self) -> Option<usize> {
        Some(BertEncoder::dim(self))
    }
}
