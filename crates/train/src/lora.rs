//! LoRA adapters (Hu et al., 2021) on the llama projections, saved and loaded as safetensors
//! that name their base model.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Tensor, Var};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use sha2::{Digest, Sha256};

use crate::error::{Ctx, Result, TrainError};
use crate::llama::Llama;
use crate::ops::{dropout, mix};
use pgraphrag_llm::LlamaDims;

/// The projections an adapter can target: `pgraphrag-llm`'s, which its native engine applies.
pub use pgraphrag_llm::LoraTarget;

/// LoRA hyper-parameters: `W x + (alpha / rank) · B A dropout(x)` on each target projection.
///
/// ```
/// let c = pgraphrag_train::LoraConfig::kragrec();
/// assert_eq!((c.rank, c.alpha, c.dropout), (8, 16.0, 0.1));
/// assert_eq!(c.scale(), 2.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LoraConfig {
    /// Rank `r` of `B A`.
    pub rank: usize,
    /// Scale numerator: the update is multiplied by `alpha / rank`.
    pub alpha: f32,
    /// Dropout probability on the adapter's input while training.
    pub dropout: f32,
    /// The projections adapted in every block.
    pub targets: Vec<LoraTarget>,
}

impl LoraConfig {
    /// K-RagRec's fine-tuning setting (paper appendix Table 4 and the released `train.py`):
    /// rank 8, alpha 16, dropout 0.1, on the query and value projections.
    pub fn kragrec() -> Self {
        LoraConfig {
            rank: 8,
            alpha: 16.0,
            dropout: 0.1,
            targets: vec![LoraTarget::Q, LoraTarget::V],
        }
    }

    /// `alpha / rank`.
    pub fn scale(&self) -> f64 {
        self.alpha as f64 / self.rank as f64
    }

    fn check(&self) -> Result<()> {
        if self.rank == 0 || !(0.0..1.0).contains(&self.dropout) || !self.alpha.is_finite() {
            return Err(TrainError::Config(format!(
                "LoRA needs rank ≥ 1, 0 ≤ dropout < 1 and a finite alpha (got {self:?})"
            )));
        }
        if self.targets.is_empty() {
            return Err(TrainError::Config("LoRA needs at least one target".into()));
        }
        Ok(())
    }

    /// Checks the rank against the model's projections before anything is allocated: it must
    /// be at most `min(out, in)` of every target ([`TrainError::RankTooLarge`] names the
    /// narrowest target and the largest rank that fits). [`Lora::new`] calls it; a caller with
    /// only the model's header ([`pgraphrag_llm::read_llama_dims`]) calls it before loading.
    ///
    /// ```
    /// use pgraphrag_train::{LoraConfig, TrainError};
    /// let d = pgraphrag_llm::LlamaDims { n_embd: 16, n_head: 2, n_kv_head: 1, head_dim: 8, n_ff: 32,
    ///     n_layer: 1, rope_dim: 8, rope_base: 1e4, eps: 1e-5, vocab: 10 };
    /// let mut c = LoraConfig::kragrec(); // q and v: 16 × 16 and 8 × 16
    /// c.rank = 8;
    /// assert!(c.check_dims(&d).is_ok());
    /// c.rank = 9;
    /// let e = c.check_dims(&d).unwrap_err();
    /// assert!(matches!(e, TrainError::RankTooLarge { max: 8, target: "attn_v", .. }), "{e}");
    /// ```
    pub fn check_dims(&self, dims: &LlamaDims) -> Result<()> {
        let side = |t: LoraTarget| {
            let (out, inp) = t.shape(dims);
            out.min(inp)
        };
        // The projection with the smallest side bounds the rank.
        let Some(narrowest) = self.targets.iter().copied().min_by_key(|&t| side(t)) else {
            return Ok(());
        };
        let max = side(narrowest);
        if self.rank <= max {
            return Ok(());
        }
        let (out, inp) = narrowest.shape(dims);
        Err(TrainError::RankTooLarge {
            rank: self.rank,
            target: narrowest.name(),
            out,
            inp,
            max,
        })
    }
}

impl Default for LoraConfig {
    /// [`LoraConfig::kragrec`].
    fn default() -> Self {
        Self::kragrec()
    }
}

/// Where one adapter lies in [`Lora::block_params`]' flat tensor: `A` (`[rank, inp]`) from
/// `at`, then `B` (`[out, rank]`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AdapterSlot {
    pub target: LoraTarget,
    pub at: usize,
    pub rank: usize,
    pub inp: usize,
    pub out: usize,
}

struct Pair {
    a: Var,
    b: Var,
}

/// LoRA adapters for one base model: per block and target, `A` (`[rank, in]`, Kaiming-uniform
/// as PEFT: `U(−1/√in, 1/√in)`, seeded) and `B` (`[out, rank]`, zeros), both trainable
/// [`Var`]s. Pass it to [`Llama::hidden`]; save it with [`Lora::save`], merge it with
/// [`Llama::merge`].
///
/// ```
/// # use pgraphrag_llm::{LlamaDims, LlamaF32, LlamaLayerF32};
/// # let d = LlamaDims { n_embd: 4, n_head: 2, n_kv_head: 1, head_dim: 2, n_ff: 8, n_layer: 1,
/// #                     rope_dim: 2, rope_base: 10000.0, eps: 1e-5, vocab: 5 };
/// # let v = |n: usize| (0..n).map(|i| (i as f32 * 0.37).sin() * 0.5).collect::<Vec<f32>>();
/// # let layer = LlamaLayerF32 { attn_norm: vec![1.0; 4], attn_q: v(16), attn_k: v(8), attn_v: v(8),
/// #     attn_output: v(16), ffn_norm: vec![1.0; 4], ffn_gate: v(32), ffn_up: v(32), ffn_down: v(32) };
/// # let w = LlamaF32 { dims: d, token_embd: v(20), layers: vec![layer], output_norm: vec![1.0; 4], output: None };
/// use pgraphrag_train::{Llama, Lora, LoraConfig};
/// let model = Llama::from_f32(w, "doc", &candle_core::Device::Cpu)?;
/// // Rank 2: the toy model's attn_v is 2 × 4 (a rank is at most the smaller side).
/// let lora = Lora::new(&model, LoraConfig { rank: 2, ..LoraConfig::kragrec() }, 42)?;
/// assert_eq!(lora.named_vars().len(), 2 * 2); // A and B for q and v in one block
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("adapter.safetensors");
/// lora.save(&path)?;
/// let again = Lora::load(&model, &path)?;
/// assert_eq!(again.config(), lora.config());
/// # Ok::<(), pgraphrag_train::TrainError>(())
/// ```
pub struct Lora {
    config: LoraConfig,
    base_id: String,
    pairs: HashMap<(usize, LoraTarget), Pair>,
    n_layer: usize,
}

impl std::fmt::Debug for Lora {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lora")
            .field("config", &self.config)
            .field("base_id", &self.base_id)
            .finish_non_exhaustive()
    }
}

const FORMAT: &str = "pgraphrag-lora";
const VERSION: &str = "1";

impl Lora {
    /// Fresh adapters for `model` (`B = 0`, so the model's outputs are unchanged until
    /// training moves `B`), `A` drawn from `seed`.
    pub fn new(model: &Llama, config: LoraConfig, seed: u64) -> Result<Self> {
        config.check()?;
        let d = *model.dims();
        config.check_dims(&d)?;
        let dev = model.device();
        let mut pairs = HashMap::new();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for li in 0..d.n_layer {
            for &tg in &config.targets {
                let (out, inp) = tg.shape(&d);
                let bound = 1.0 / (inp as f32).sqrt();
                let a: Vec<f32> = (0..config.rank * inp)
                    .map(|_| rng.random_range(-bound..bound))
                    .collect();
                let a = Tensor::from_vec(a, (config.rank, inp), dev)
                    .and_then(|t| Var::from_tensor(&t))
                    .ctx(|| format!("LoRA A of blk.{li}.{}", tg.name()))?;
                let b = Var::zeros((out, config.rank), DType::F32, dev)
                    .ctx(|| format!("LoRA B of blk.{li}.{}", tg.name()))?;
                pairs.insert((li, tg), Pair { a, b });
            }
        }
        Ok(Lora {
            config,
            base_id: model.base_id().to_string(),
            pairs,
            n_layer: d.n_layer,
        })
    }

    /// The hyper-parameters.
    pub fn config(&self) -> &LoraConfig {
        &self.config
    }

    /// The [`Llama::base_id`] of the model these adapters belong to.
    pub fn base_id(&self) -> &str {
        &self.base_id
    }

    /// The trainable variables with their tensor names (`blk.{i}.{target}.lora_a` /
    /// `.lora_b`), in a fixed order (block, target, A before B).
    pub fn named_vars(&self) -> Vec<(String, Var)> {
        let mut out = Vec::with_capacity(self.pairs.len() * 2);
        for li in 0..self.n_layer {
            for tg in LoraTarget::ALL {
                if let Some(p) = self.pairs.get(&(li, tg)) {
                    out.push((format!("blk.{li}.{}.lora_a", tg.name()), p.a.clone()));
                    out.push((format!("blk.{li}.{}.lora_b", tg.name()), p.b.clone()));
                }
            }
        }
        out
    }

    /// The seed of the dropout mask of projection `tg` of block `li` in a training pass
    /// seeded `dropout_seed`; `None` where dropout is off (inference, or a rate of 0).
    pub(crate) fn dropout_seed(
        &self,
        li: usize,
        tg: LoraTarget,
        dropout_seed: Option<u64>,
    ) -> Option<u64> {
        match dropout_seed {
            Some(s) if self.config.dropout > 0.0 => {
                Some(mix(s ^ mix((li * 16 + tg as usize) as u64)))
            }
            _ => None,
        }
    }

    /// The adapters of block `li` among `targets`, in that order, as one flat tensor
    /// (`A` then `B` of each, flattened; gradients flow back to the variables) and where each
    /// lies in it. `None` when none of them has an adapter.
    pub(crate) fn block_params(
        &self,
        li: usize,
        targets: &[LoraTarget],
    ) -> candle_core::Result<Option<(Tensor, Vec<AdapterSlot>)>> {
        let (mut parts, mut slots, mut at) = (Vec::new(), Vec::new(), 0);
        for &tg in targets {
            let Some(p) = self.pairs.get(&(li, tg)) else {
                continue;
            };
            let (rank, inp) = p.a.as_tensor().dims2()?;
            let (out, _) = p.b.as_tensor().dims2()?;
            slots.push(AdapterSlot {
                target: tg,
                at,
                rank,
                inp,
                out,
            });
            at += rank * (inp + out);
            parts.push(p.a.as_tensor().flatten_all()?);
            parts.push(p.b.as_tensor().flatten_all()?);
        }
        if parts.is_empty() {
            return Ok(None);
        }
        Ok(Some((Tensor::cat(&parts, 0)?, slots)))
    }

    /// `y + scale · B A dropout(x)` for projection `tg` of block `li` (`x` `[n, in]`, `y`
    /// `[n, out]`); `y` unchanged when that projection has no adapter.
    pub(crate) fn apply(
        &self,
        li: usize,
        tg: LoraTarget,
        x: &Tensor,
        y: Tensor,
        dropout_seed: Option<u64>,
    ) -> candle_core::Result<Tensor> {
        let Some(p) = self.pairs.get(&(li, tg)) else {
            return Ok(y);
        };
        let x = match self.dropout_seed(li, tg, dropout_seed) {
            Some(s) => dropout(x, self.config.dropout, s)?,
            None => x.clone(),
        };
        let up = x
            .matmul(&p.a.as_tensor().t()?)?
            .matmul(&p.b.as_tensor().t()?)?;
        y + (up * self.config.scale())?
    }

    /// `scale · B A` (`[out, in]`) of projection `tg` of block `li`, if it has an adapter.
    pub(crate) fn delta(&self, li: usize, tg: LoraTarget) -> candle_core::Result<Option<Tensor>> {
        match self.pairs.get(&(li, tg)) {
            None => Ok(None),
            Some(p) => Ok(Some(
                (p.b.as_tensor().matmul(p.a.as_tensor())? * self.config.scale())?,
            )),
        }
    }

    /// A short hash of the adapter's values and settings (names a merged model).
    pub(crate) fn digest(&self) -> String {
        let mut h = Sha256::new();
        h.update(format!("{:?}", self.config).as_bytes());
        for (name, v) in self.named_vars() {
            h.update(name.as_bytes());
            if let Ok(vals) = v.as_tensor().flatten_all().and_then(|t| t.to_vec1::<f32>()) {
                for x in vals {
                    h.update(x.to_le_bytes());
                }
            }
        }
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The metadata written with the adapter.
    fn metadata(&self) -> HashMap<String, String> {
        let targets: Vec<&str> = self.config.targets.iter().map(|t| t.name()).collect();
        HashMap::from([
            ("format".into(), FORMAT.into()),
            ("format_version".into(), VERSION.into()),
            ("base_model".into(), self.base_id.clone()),
            ("rank".into(), self.config.rank.to_string()),
            ("alpha".into(), self.config.alpha.to_string()),
            ("dropout".into(), self.config.dropout.to_string()),
            ("targets".into(), targets.join(",")),
        ])
    }

    /// Writes the adapters to `path` as safetensors (f32 `A`/`B` per [`Lora::named_vars`]) with
    /// metadata: `format`, `format_version`, `base_model` ([`Llama::base_id`]), `rank`,
    /// `alpha`, `dropout`, `targets`. The file appears whole or not at all (temp file and
    /// rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        let vars = self.named_vars();
        let tensors: Vec<(String, Tensor)> = vars
            .into_iter()
            .map(|(n, v)| (n, v.as_tensor().clone()))
            .collect();
        let bytes = safetensors::serialize(
            tensors.iter().map(|(n, t)| (n.as_str(), t)),
            Some(self.metadata()),
        )
        .map_err(|e| TrainError::Adapter {
            path: path.to_path_buf(),
            reason: format!("serializing: {e}"),
        })?;
        crate::checkpoint::write_file(path, &bytes)
    }

    /// Reads adapters written by [`Lora::save`] for `model`. Refuses (with
    /// [`TrainError::BaseModelMismatch`]) a file whose `base_model` is not `model`'s
    /// [`base_id`](Llama::base_id), and (with [`TrainError::Adapter`]) a file that is not a
    /// pgraphrag LoRA file, has missing, extra, mis-shaped or non-finite tensors, or settings
    /// out of range.
    pub fn load(model: &Llama, path: &Path) -> Result<Self> {
        Self::load_checked(path, model.base_id(), model.dims(), model.device())
    }

    /// Reads adapters written by [`Lora::save`] for the GGUF model `gguf`, without loading
    /// its weights: the model's [`base_id`](Llama::base_id) is computed from its header and
    /// its sha256, and checked as [`Lora::load`] does. The adapters are placed on the CPU;
    /// [`Lora::to_adapter`] turns them into what the native engine applies.
    ///
    /// ```no_run
    /// use pgraphrag_train::Lora;
    /// let gguf = std::path::Path::new("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    /// let lora = Lora::load_for_gguf(gguf, "runs/adapter.safetensors".as_ref())?;
    /// let mut model = pgraphrag_llm::GgufModel::load(gguf, Default::default())?;
    /// model.set_adapter(Some(lora.to_adapter()?))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_for_gguf(gguf: &Path, path: &Path) -> Result<Self> {
        let dims = pgraphrag_llm::read_llama_dims(gguf)?;
        let sha = crate::llama::file_sha256(gguf)?;
        let base = format!("{}:gguf-sha256:{sha}", crate::llama::dims_text(&dims));
        Self::load_checked(path, &base, &dims, &candle_core::Device::Cpu)
    }

    /// The adapters as `pgraphrag-llm` low-rank updates (`scale = alpha / rank`), for
    /// [`pgraphrag_llm::GgufModel::set_adapter`]; the id is `lora-` and a hash of the values
    /// and settings, so generations with different adapters are cached apart.
    ///
    /// ```
    /// # use pgraphrag_llm::{LlamaDims, LlamaF32, LlamaLayerF32};
    /// # let d = LlamaDims { n_embd: 4, n_head: 2, n_kv_head: 1, head_dim: 2, n_ff: 8, n_layer: 1,
    /// #                     rope_dim: 2, rope_base: 10000.0, eps: 1e-5, vocab: 5 };
    /// # let v = |n: usize| (0..n).map(|i| (i as f32 * 0.37).sin() * 0.5).collect::<Vec<f32>>();
    /// # let layer = LlamaLayerF32 { attn_norm: vec![1.0; 4], attn_q: v(16), attn_k: v(8), attn_v: v(8),
    /// #     attn_output: v(16), ffn_norm: vec![1.0; 4], ffn_gate: v(32), ffn_up: v(32), ffn_down: v(32) };
    /// # let w = LlamaF32 { dims: d, token_embd: v(20), layers: vec![layer], output_norm: vec![1.0; 4], output: None };
    /// use pgraphrag_train::{Llama, Lora, LoraConfig, LoraTarget};
    /// let model = Llama::from_f32(w, "doc", &candle_core::Device::Cpu)?;
    /// let config = LoraConfig { rank: 2, ..LoraConfig::kragrec() }; // alpha 16
    /// let ad = Lora::new(&model, config, 1)?.to_adapter()?;
    /// assert_eq!(ad.len(), 2); // q and v of the one block
    /// let q = ad.get(0, LoraTarget::Q).unwrap();
    /// assert_eq!((q.rank(), q.in_dim(), q.out_dim(), q.scale()), (2, 4, 4, 8.0));
    /// assert!(ad.id().starts_with("lora-"));
    /// # Ok::<(), pgraphrag_train::TrainError>(())
    /// ```
    pub fn to_adapter(&self) -> Result<pgraphrag_llm::LoraAdapter> {
        let mut out = pgraphrag_llm::LoraAdapter::new(format!("lora-{}", self.digest()));
        let flat = |v: &Var, what: &str| -> Result<Vec<f32>> {
            v.as_tensor()
                .flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .ctx(|| what.to_string())
        };
        let mut keys: Vec<_> = self.pairs.keys().copied().collect();
        keys.sort();
        for (li, tg) in keys {
            let p = &self.pairs[&(li, tg)];
            let name = format!("blk.{li}.{}", tg.name());
            let update = pgraphrag_llm::LowRank::new(
                flat(&p.a, &name)?,
                flat(&p.b, &name)?,
                self.config.rank,
                self.config.scale() as f32,
            )?;
            out.insert(li, tg, update);
        }
        Ok(out)
    }

    /// [`Lora::load`] against a base model given by its id, dimensions and device.
    fn load_checked(
        path: &Path,
        base_id: &str,
        dims: &pgraphrag_llm::LlamaDims,
        device: &candle_core::Device,
    ) -> Result<Self> {
        let bad = |reason: String| TrainError::Adapter {
            path: path.to_path_buf(),
            reason,
        };
        let (bytes, md) =
            crate::checkpoint::read_for_model(path, &bad, (FORMAT, VERSION), base_id)?;
        let get = |k: &str| crate::checkpoint::meta_value(&md, k, &bad);
        let num = |k: &str| -> Result<f64> {
            get(k)?
                .parse::<f64>()
                .map_err(|_| bad(format!("metadata `{k}` is not a number")))
        };
        let mut targets = Vec::new();
        for s in get("targets")?.split(',') {
            targets.push(
                LoraTarget::from_name(s).ok_or_else(|| bad(format!("unknown target `{s}`")))?,
            );
        }
        let config = LoraConfig {
            rank: num("rank")? as usize,
            alpha: num("alpha")? as f32,
            dropout: num("dropout")? as f32,
            targets,
        };
        config.check().map_err(|e| bad(e.to_string()))?;
        let mut tensors = candle_core::safetensors::load_buffer(&bytes, device)
            .map_err(|e| bad(format!("reading tensors: {e}")))?;
        let d = *dims;
        let mut pairs = HashMap::new();
        for li in 0..d.n_layer {
            for &tg in &config.targets {
                let (out, inp) = tg.shape(&d);
                let mut take = |suffix: &str, shape: (usize, usize)| -> Result<Var> {
                    let name = format!("blk.{li}.{}.{suffix}", tg.name());
                    let t = crate::checkpoint::take_tensor(
                        &mut tensors,
                        &name,
                        &[shape.0, shape.1],
                        &bad,
                    )?;
                    Var::from_tensor(&t).ctx(|| name.clone())
                };
                let a = take("lora_a", (config.rank, inp))?;
                let b = take("lora_b", (out, config.rank))?;
                pairs.insert((li, tg), Pair { a, b });
            }
        }
        if let Some(extra) = tensors.keys().next() {
            return Err(bad(format!("unexpected tensor `{extra}`")));
        }
        Ok(Lora {
            config,
            base_id: base_id.to_string(),
            pairs,
            n_layer: d.n_layer,
        })
    }
}
