//! Local GGUF models ([`GgufModel`]): the model type that dispatches to an engine (the native
//! CPU engine for llama-architecture models, candle's quantized models for the rest), with its
//! tokenizer, chat template and stop tokens. Generation and batching ([`batch`]) and sampling
//! ([`sampler`]) sit above it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pgraphrag_core::Prompt;

use crate::error::{LlmError, Result, invalid};
use crate::gguf::content::read_content;
use crate::gguf::dims::architecture_name;
use crate::gguf::options::{
    Activations, Architecture, ContextOverflow, DeviceChoice, Engine, Prefill, WeightFormat,
};
use crate::lora::LoraAdapter;
use crate::native::NativeLlama;
use crate::template::ChatTemplate;
use crate::tokenizer::{LlmTokenizer, sibling_tokenizer_name};

mod batch;
pub(crate) mod options;
mod sampler;
mod weights;

use options::GgufOptions;
use weights::Weights;

/// A GGUF model loaded on the native engine or candle, usable as a
/// [`Generator`](pgraphrag_core::Generator).
///
/// The model and its KV cache sit behind a mutex: one generation runs at a time per
/// `GgufModel` (clone-free sharing across threads is safe; calls serialize). The KV cache is
/// reset at the start of every prompt, so calls are independent.
///
/// ```no_run
/// use pgraphrag_core::{GenParams, Generator, Prompt};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let m = pgraphrag_llm::GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), Default::default())?;
/// let out = m.generate(&Prompt::user("Name a colour."), &GenParams { max_tokens: 8, ..Default::default() })?;
/// println!("{out}");
/// # Ok(()) }
/// ```
pub struct GgufModel {
    weights: Mutex<Weights>,
    tokenizer: LlmTokenizer,
    template: Option<ChatTemplate>,
    arch: Architecture,
    context: usize,
    stop_ids: BTreeSet<u32>,
    overflow: ContextOverflow,
    path: PathBuf,
    engine: Engine,
    activations: Activations,
    prefill: Prefill,
    /// The in-memory weight format asked for at load (part of [`Self::cache_id`]).
    weights_format: WeightFormat,
    /// The file's size in bytes at load (part of [`Self::cache_id`]).
    file_size: u64,
    /// The native engine's kernel sets ([`Self::kernels_used`]).
    kernel_names: Option<String>,
    /// The id of the LoRA adapter applied ([`Self::set_adapter`]; part of [`Self::cache_id`]).
    adapter_id: Option<String>,
}

impl std::fmt::Debug for GgufModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GgufModel")
            .field("path", &self.path)
            .field("arch", &self.arch)
            .field("context", &self.context)
            .field("template", &self.template)
            .field("stop_ids", &self.stop_ids)
            .finish()
    }
}

impl GgufModel {
    /// Loads a GGUF model: checks the file (typed errors for a missing file, wrong magic, a
    /// truncated file, an unsupported `general.architecture`), builds the tokenizer, picks
    /// the chat template, and loads the weights onto the chosen device.
    pub fn load(path: &Path, opts: GgufOptions) -> Result<Self> {
        let (ct, mut reader, file_size) = read_content(path)?;
        let arch_name = architecture_name(&ct, path)?.to_string();
        let arch =
            Architecture::parse(&arch_name).ok_or_else(|| LlmError::UnsupportedArchitecture {
                path: path.to_path_buf(),
                architecture: arch_name.clone(),
            })?;
        #[cfg(feature = "candle")]
        let device = crate::candle::candle_device(opts.device)?;
        #[cfg(not(feature = "candle"))]
        if let DeviceChoice::Cuda(i) = opts.device {
            return Err(LlmError::FeatureDisabled {
                feature: "cuda",
                what: format!("running on CUDA device {i}"),
            });
        }
        let sibling = path.with_file_name(sibling_tokenizer_name(path));
        let tokenizer = match (&opts.tokenizer_json, sibling.exists()) {
            (Some(j), _) => LlmTokenizer::from_json_with(j, &ct)?,
            (None, true) => LlmTokenizer::from_json_with(&sibling, &ct)?,
            (None, false) => LlmTokenizer::from_metadata(&ct, path)?,
        };
        let template = opts
            .template
            .clone()
            .or_else(|| ChatTemplate::detect(ct.md_str("tokenizer.chat_template"), &arch_name));
        let declared = ct
            .md_u32(&format!("{arch_name}.context_length"))
            .map(|c| c as usize)
            .unwrap_or(usize::MAX);
        let native = match (opts.engine, arch, opts.device) {
            (Engine::Candle, ..) => false,
            (Engine::Auto, Architecture::Llama, DeviceChoice::Cpu) => true,
            (Engine::Auto, ..) => false,
            (Engine::Native, Architecture::Llama, DeviceChoice::Cpu) => true,
            (Engine::Native, ..) => {
                return Err(invalid(
                    path,
                    format!(
                        "the native engine runs llama-architecture models on the CPU only (this is {} on {:?}); use Engine::Candle",
                        arch.as_str(),
                        opts.device
                    ),
                ));
            }
        };
        #[cfg(feature = "candle")]
        let limit = if native {
            usize::MAX
        } else {
            crate::candle::implementation_limit(arch)
        };
        #[cfg(not(feature = "candle"))]
        let limit = usize::MAX;
        let mut context = declared.min(limit);
        if let Some(c) = opts.max_context {
            context = context.min(c);
        }
        if context == usize::MAX || context == 0 {
            return Err(invalid(
                path,
                format!("no usable `{arch_name}.context_length`"),
            ));
        }
        let mut stop_ids = BTreeSet::new();
        stop_ids.extend(tokenizer.eos());
        if let Some(t) = &template {
            stop_ids.extend(tokenizer.token_id(t.end_of_turn()));
        }
        for s in [
            "<|endoftext|>",
            "<|end_of_text|>",
            "<|eot_id|>",
            "<|im_end|>",
            "<eos>",
            "<end_of_turn>",
        ] {
            stop_ids.extend(tokenizer.token_id(s));
        }
        let q8_0 = opts.weights == WeightFormat::Q8_0;
        let weights = if native {
            Weights::Native(Box::new(NativeLlama::load(
                &ct,
                &mut reader,
                path,
                opts.activations,
                opts.prefill,
                opts.kernels.features(),
                q8_0,
            )?))
        } else {
            #[cfg(feature = "candle")]
            {
                Weights::Candle(Box::new(crate::candle::CandleWeights::load(
                    arch,
                    &mut reader,
                    path,
                    device,
                    q8_0,
                )?))
            }
            #[cfg(not(feature = "candle"))]
            return Err(LlmError::FeatureDisabled {
                feature: "candle",
                what: format!(
                    "running {} with {:?} (the native engine runs llama-architecture models on the CPU)",
                    arch.as_str(),
                    opts.engine
                ),
            });
        };
        if let Weights::Native(m) = &weights
            && m.vocab() < tokenizer.vocab_size()
        {
            return Err(invalid(
                path,
                format!(
                    "the embedding matrix has {} rows but the tokenizer has {} tokens",
                    m.vocab(),
                    tokenizer.vocab_size()
                ),
            ));
        }
        let kernel_names = match &weights {
            Weights::Native(m) => Some(m.kernel_names()),
            #[cfg(feature = "candle")]
            Weights::Candle(_) => None,
        };
        Ok(GgufModel {
            kernel_names,
            weights: Mutex::new(weights),
            tokenizer,
            template,
            arch,
            context,
            stop_ids,
            overflow: opts.overflow,
            path: path.to_path_buf(),
            engine: if native {
                Engine::Native
            } else {
                Engine::Candle
            },
            activations: opts.activations,
            prefill: opts.prefill,
            weights_format: opts.weights,
            file_size,
            adapter_id: None,
        })
    }

    /// The id of this model's generations in a generation cache: it changes whenever the
    /// outputs can, i.e. with the file (name and size), the in-memory weight format, the
    /// engine and the native engine's arithmetic:
    /// `gguf:{file name}:{size in bytes}:{AsStored|Q8}:{Native|Candle}` followed by
    /// `:q8-activations` under [`Activations::Q8`] and `:rowwise-prefill` under
    /// [`Prefill::Rowwise`] (native engine only; the f32 and `gemm` paths keep the ids they
    /// had before the other paths existed, so older caches are still found), and by
    /// `:adapter:{id}` while a LoRA adapter is applied ([`Self::set_adapter`]).
    ///
    /// ```no_run
    /// use pgraphrag_llm::{GgufModel, GgufOptions};
    /// let model = GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), GgufOptions::default())?;
    /// let id = model.cache_id();
    /// assert!(id.starts_with("gguf:SmolLM2-135M-Instruct.Q4_1.gguf:"));
    /// assert!(id.ends_with(":AsStored:Native:q8-activations:rowwise-prefill"));
    /// # Ok::<(), pgraphrag_llm::LlmError>(())
    /// ```
    pub fn cache_id(&self) -> String {
        let file = self
            .path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = cache_id(
            &file,
            self.file_size,
            self.weights_format,
            self.engine,
            self.activations(),
            self.prefill(),
        );
        match &self.adapter_id {
            Some(a) => format!("{id}:adapter:{a}"),
            None => id,
        }
    }

    /// Generates (and scores) with `adapter`'s low-rank updates added to the projections
    /// from now on, `y = W x + scale · B (A x)`; `None` removes it. The native engine adds
    /// them on the fly (the stored weights are unchanged); the candle engine rebuilds the
    /// model from the file with each adapted projection as f32 weights `W + scale · B A`
    /// (merged; the other weights stay as stored), so on CUDA too. The adapter's id becomes
    /// part of [`Self::cache_id`]. Errors: [`LlmError::Adapter`] when it does not fit the
    /// model (blocks, shapes, tensor names); the model is then unchanged.
    ///
    /// ```no_run
    /// use pgraphrag_llm::{GgufModel, LoraAdapter, LoraTarget, LowRank};
    /// let mut m = GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), Default::default())?;
    /// let mut ad = LoraAdapter::new("zero");
    /// ad.insert(0, LoraTarget::V, LowRank::new(vec![0.01; 8 * 576], vec![0.0; 192 * 8], 8, 2.0)?);
    /// m.set_adapter(Some(ad))?;
    /// assert!(m.cache_id().ends_with(":adapter:zero"));
    /// # Ok::<(), pgraphrag_llm::LlmError>(())
    /// ```
    pub fn set_adapter(&mut self, adapter: Option<LoraAdapter>) -> Result<()> {
        let id = adapter.as_ref().map(|a| a.id().to_string());
        if id.is_none() && self.adapter_id.is_none() {
            // Nothing to remove: candle would reload the file, the native engine drop its caches.
            return Ok(());
        }
        let mut weights = self.lock()?;
        match &mut *weights {
            Weights::Native(native) => native.set_adapter(adapter)?,
            #[cfg(feature = "candle")]
            Weights::Candle(candle) => candle.set_adapter(adapter.as_ref())?,
        }
        drop(weights);
        self.adapter_id = id;
        Ok(())
    }

    /// The id of the LoRA adapter applied ([`Self::set_adapter`]), if any.
    pub fn adapter_id(&self) -> Option<&str> {
        self.adapter_id.as_deref()
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &LlmTokenizer {
        &self.tokenizer
    }
    /// The chat template in use (`None` if the model declares none: chat prompts then fail).
    pub fn template(&self) -> Option<&ChatTemplate> {
        self.template.as_ref()
    }
    /// The model family.
    pub fn architecture(&self) -> Architecture {
        self.arch
    }
    /// The engine that runs the network: [`Engine::Native`] or [`Engine::Candle`] (never
    /// `Auto`, which is resolved at load).
    pub fn engine(&self) -> Engine {
        self.engine
    }
    /// The kernel sets the native engine picked at load for this CPU and
    /// [`GgufOptions::kernels`](crate::GgufOptions), as `decode <8-bit>/<f32>, prompt
    /// <row-wise>`, e.g. `decode avx512vnni/avx512, prompt avx512` or `decode
    /// neon-dotprod/plain, prompt neon` (`None` on the candle engine). Every set computes the
    /// same bits, so this is not part of [`Self::cache_id`]; it says how fast, not what.
    ///
    /// ```no_run
    /// use pgraphrag_llm::{GgufModel, GgufOptions, Kernels};
    /// let opts = GgufOptions { kernels: Kernels::Portable, ..Default::default() };
    /// let model = GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), opts)?;
    /// assert_eq!(model.kernels_used(), Some("decode plain/plain, prompt plain"));
    /// # Ok::<(), pgraphrag_llm::LlmError>(())
    /// ```
    pub fn kernels_used(&self) -> Option<&str> {
        self.kernel_names.as_deref()
    }
    /// The native engine's decoding arithmetic (`None` on the candle engine).
    ///
    /// ```no_run
    /// use pgraphrag_llm::{Activations, GgufModel, GgufOptions};
    /// let opts = GgufOptions { activations: Activations::F32, ..Default::default() };
    /// let model = GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), opts)?;
    /// assert_eq!(model.activations(), Some(Activations::F32));
    /// # Ok::<(), pgraphrag_llm::LlmError>(())
    /// ```
    pub fn activations(&self) -> Option<Activations> {
        matches!(self.engine, Engine::Native).then_some(self.activations)
    }
    /// Forgets the KV caches of recent prompts that [`Prefill::Rowwise`] keeps for reuse (about
    /// 512 MiB at most). Outputs never depend on them; this frees the memory, and lets a
    /// benchmark time prompt processing from scratch.
    pub fn clear_prefix_cache(&self) {
        if let Ok(mut w) = self.lock()
            && let Some(m) = w.native_mut()
        {
            m.clear_prefixes();
        }
    }

    /// The native engine's prompt processing (`None` on the candle engine).
    ///
    /// ```no_run
    /// use pgraphrag_llm::{GgufModel, GgufOptions, Prefill};
    /// let opts = GgufOptions { prefill: Prefill::Gemm, ..Default::default() };
    /// let model = GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), opts)?;
    /// assert_eq!(model.prefill(), Some(Prefill::Gemm));
    /// # Ok::<(), pgraphrag_llm::LlmError>(())
    /// ```
    pub fn prefill(&self) -> Option<Prefill> {
        matches!(self.engine, Engine::Native).then_some(self.prefill)
    }
    /// The context window in tokens (the model's, capped by `max_context` and, on the candle
    /// engine, by candle's RoPE table).
    pub fn context_length(&self) -> usize {
        self.context
    }
    /// Token ids that end generation.
    pub fn stop_ids(&self) -> &BTreeSet<u32> {
        &self.stop_ids
    }
    /// The file the model came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The exact string the model is fed for `prompt` (chat template applied; raw prompts verbatim).
    pub fn format_prompt(&self, prompt: &Prompt) -> Result<String> {
        match prompt {
            Prompt::Raw(s) => Ok(s.clone()),
            Prompt::Chat(m) => {
                let t = self.template.as_ref().ok_or_else(|| {
                    LlmError::InvalidParams(format!(
                        "{} declares no chat template: pass Prompt::Raw or set GgufOptions::template",
                        self.path.display()
                    ))
                })?;
                Ok(t.format(m))
            }
        }
    }

    /// The token ids the model is fed for `prompt` (BOS prepended to raw prompts when the
    /// model asks for it), before any context truncation.
    pub fn prompt_tokens(&self, prompt: &Prompt) -> Result<Vec<u32>> {
        let text = self.format_prompt(prompt)?;
        let mut ids = self.tokenizer.encode(&text)?;
        if matches!(prompt, Prompt::Raw(_))
            && self.tokenizer.add_bos()
            && let Some(b) = self.tokenizer.bos()
            && ids.first() != Some(&b)
        {
            ids.insert(0, b);
        }
        Ok(ids)
    }

    /// The next-token logits (one per vocabulary entry, f32) after the prompt `ids`, as computed
    /// from an empty KV cache. Useful for scoring and for comparing engines.
    ///
    /// On the native engine with [`Prefill::Rowwise`] the KV cache of the longest prefix shared
    /// with a recent prompt (scored or generated) is reused, and `ids` is remembered for the
    /// next call: the logits are bit-identical to computing the whole prompt (a token's
    /// activations do not depend on how the prompt is split), only faster when prompts share
    /// a beginning. [`GgufModel::clear_prefix_cache`] forgets them.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let m = pgraphrag_llm::GgufModel::load("models/SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), Default::default())?;
    /// let ids = m.prompt_tokens(&pgraphrag_core::Prompt::Raw("The capital of France is".into()))?;
    /// let logits = m.next_token_logits(&ids)?;
    /// assert_eq!(logits.len(), m.tokenizer().vocab_size());
    /// # Ok(()) }
    /// ```
    pub fn next_token_logits(&self, ids: &[u32]) -> Result<Vec<f32>> {
        if ids.is_empty() {
            return Err(LlmError::InvalidParams("no tokens to score".into()));
        }
        if ids.len() > self.context {
            return Err(LlmError::PromptTooLong {
                prompt_tokens: ids.len(),
                max_tokens: 0,
                context: self.context,
            });
        }
        let mut weights = self.lock()?;
        let err = |e| LlmError::model(format!("processing the {}-token prompt", ids.len()), e);
        if let Some(model) = weights.native_mut() {
            model.reserve(ids.len() + 1);
            let pool = model.pool();
            return pool.install(|| {
                let mut seq = model.cached_prefix(ids);
                let kept = seq.len();
                let mut logits = model
                    .step(&mut [&mut seq], &[&ids[kept..]], true)
                    .map_err(|e| err(e.into()))?;
                model.remember(ids, &seq);
                Ok(logits.pop().unwrap_or_default())
            });
        }
        weights.reset();
        weights.forward(ids, 0).map_err(err)
    }
}

/// The generation-cache id of [`GgufModel::cache_id`] from its parts (`activations` and
/// `prefill` are `None` on the candle engine).
fn cache_id(
    file: &str,
    size: u64,
    weights: WeightFormat,
    engine: Engine,
    activations: Option<Activations>,
    prefill: Option<Prefill>,
) -> String {
    // The weight names are those the CLI's `--weights` values had when these ids were made.
    let weights = match weights {
        WeightFormat::AsStored => "AsStored",
        WeightFormat::Q8_0 => "Q8",
    };
    let engine = match engine {
        Engine::Native => "Native",
        Engine::Candle => "Candle",
        Engine::Auto => "Auto",
    };
    let act = match activations {
        Some(Activations::Q8) => ":q8-activations",
        _ => "",
    };
    let pf = match prefill {
        Some(Prefill::Rowwise) => ":rowwise-prefill",
        _ => "",
    };
    format!("gguf:{file}:{size}:{weights}:{engine}{act}{pf}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
    const N: u64 = 98_000_000;

    fn native(w: WeightFormat, a: Activations, p: Prefill) -> String {
        cache_id(F, N, w, Engine::Native, Some(a), Some(p))
    }

    #[test]
    fn cache_id_as_stored_native_q8_rowwise() {
        assert_eq!(
            native(WeightFormat::AsStored, Activations::Q8, Prefill::Rowwise),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:AsStored:Native:q8-activations:rowwise-prefill"
        );
    }
    #[test]
    fn cache_id_as_stored_native_q8_gemm() {
        assert_eq!(
            native(WeightFormat::AsStored, Activations::Q8, Prefill::Gemm),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:AsStored:Native:q8-activations"
        );
    }
    #[test]
    fn cache_id_as_stored_native_f32_rowwise() {
        assert_eq!(
            native(WeightFormat::AsStored, Activations::F32, Prefill::Rowwise),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:AsStored:Native:rowwise-prefill"
        );
    }
    #[test]
    fn cache_id_as_stored_native_f32_gemm() {
        assert_eq!(
            native(WeightFormat::AsStored, Activations::F32, Prefill::Gemm),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:AsStored:Native"
        );
    }
    #[test]
    fn cache_id_q8_native_q8_rowwise() {
        assert_eq!(
            native(WeightFormat::Q8_0, Activations::Q8, Prefill::Rowwise),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:Q8:Native:q8-activations:rowwise-prefill"
        );
    }
    #[test]
    fn cache_id_q8_native_q8_gemm() {
        assert_eq!(
            native(WeightFormat::Q8_0, Activations::Q8, Prefill::Gemm),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:Q8:Native:q8-activations"
        );
    }
    #[test]
    fn cache_id_q8_native_f32_rowwise() {
        assert_eq!(
            native(WeightFormat::Q8_0, Activations::F32, Prefill::Rowwise),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:Q8:Native:rowwise-prefill"
        );
    }
    #[test]
    fn cache_id_q8_native_f32_gemm() {
        assert_eq!(
            native(WeightFormat::Q8_0, Activations::F32, Prefill::Gemm),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:Q8:Native"
        );
    }
    #[test]
    fn cache_id_as_stored_candle() {
        assert_eq!(
            cache_id(F, N, WeightFormat::AsStored, Engine::Candle, None, None),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:AsStored:Candle"
        );
    }
    #[test]
    fn cache_id_q8_candle() {
        assert_eq!(
            cache_id(F, N, WeightFormat::Q8_0, Engine::Candle, None, None),
            "gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98000000:Q8:Candle"
        );
    }
}
