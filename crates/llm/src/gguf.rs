//! Local GGUF models on candle.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use candle_core::quantized::gguf_file::{self, Content};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use candle_transformers::models::{
    quantized_gemma3, quantized_llama, quantized_qwen2, quantized_qwen3,
};
use pgraphrag_core::{GenParams, Generator, Prompt};

use crate::error::{LlmError, Result};
use crate::native::NativeLlama;
use crate::template::ChatTemplate;
use crate::tokenizer::{LlmTokenizer, md_str, md_u32, sibling_tokenizer_name};

/// Where the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DeviceChoice {
    /// The CPU (the default). Threads: candle uses `RAYON_NUM_THREADS` or all cores.
    #[default]
    Cpu,
    /// CUDA device with this ordinal; needs the crate's `cuda` feature.
    Cuda(usize),
}

/// What to do when the prompt plus `max_tokens` does not fit the context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextOverflow {
    /// Fail with [`LlmError::PromptTooLong`] (the default): nothing is silently dropped.
    #[default]
    Error,
    /// Drop the oldest prompt tokens (keeping a leading BOS) so that
    /// `prompt_tokens + max_tokens <= context`. Errors only when `max_tokens` alone does
    /// not fit.
    TruncateLeft,
}

/// How the weight matrices are held in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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

/// Options of [`GgufModel::load`].
#[derive(Debug, Clone, Default)]
pub struct GgufOptions {
    /// Where to run.
    pub device: DeviceChoice,
    /// A `tokenizer.json` to use instead of the GGUF metadata. When `None`, a file named
    /// `{model stem}.tokenizer.json` next to the model is used if it exists (that is where
    /// `scripts/fetch-llms.sh` puts Gemma's), else the tokenizer is rebuilt from the GGUF.
    pub tokenizer_json: Option<PathBuf>,
    /// Override the detected chat template.
    pub template: Option<ChatTemplate>,
    /// Policy for prompts that do not fit the context.
    pub overflow: ContextOverflow,
    /// Cap the context window below the model's (e.g. to bound memory). `None`: the model's.
    pub max_context: Option<usize>,
    /// In-memory weight format.
    pub weights: WeightFormat,
    /// Which implementation runs the network.
    pub engine: Engine,
    /// The native engine's decoding arithmetic (ignored by candle, which always quantizes the
    /// activations on the CPU).
    pub activations: Activations,
    /// The native engine's prompt processing (ignored by candle).
    pub prefill: Prefill,
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// The model emitted an end-of-turn / end-of-sequence token.
    EndOfTurn,
    /// A stop string from [`GenParams::stop`] appeared (the text is cut before it).
    StopString,
    /// `max_tokens` new tokens were generated, or the context window is full.
    Length,
}

/// One generation with its token counts and timings.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The completion (special tokens removed, cut before any stop string).
    pub text: String,
    /// Ids of the generated tokens (without the final end-of-turn token).
    pub tokens: Vec<u32>,
    /// Tokens in the prompt as fed to the model (after any truncation).
    pub prompt_tokens: usize,
    /// Why it stopped.
    pub finish: FinishReason,
    /// Time spent processing the prompt (up to and including the first sampled token).
    pub prompt_time: Duration,
    /// Time spent generating the remaining tokens.
    pub decode_time: Duration,
}

impl Generation {
    /// Prompt-processing speed in tokens per second.
    pub fn prompt_tok_per_s(&self) -> f64 {
        self.prompt_tokens as f64 / self.prompt_time.as_secs_f64().max(1e-9)
    }
    /// Decode speed in tokens per second (tokens after the first, over the decode time).
    pub fn decode_tok_per_s(&self) -> f64 {
        let n = self.tokens.len().saturating_sub(1);
        n as f64 / self.decode_time.as_secs_f64().max(1e-9)
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
    fn parse(s: &str) -> Option<Self> {
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
    /// The longest sequence candle's implementation supports (its RoPE tables).
    fn implementation_limit(&self) -> usize {
        match self {
            Architecture::Llama => quantized_llama::MAX_SEQ_LEN,
            Architecture::Gemma3 => quantized_gemma3::MAX_SEQ_LEN,
            Architecture::Qwen2 | Architecture::Qwen3 => usize::MAX,
        }
    }
}

enum Weights {
    Native(Box<NativeLlama>),
    Llama(quantized_llama::ModelWeights),
    Gemma3(quantized_gemma3::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
    Qwen3(quantized_qwen3::ModelWeights),
}

impl Weights {
    /// Logits of the last of `ids`, fed at positions `pos..`.
    fn forward(&mut self, ids: &[u32], pos: usize, device: &Device) -> candle_core::Result<Tensor> {
        if let Weights::Native(m) = self {
            let logits = m.forward(ids).map_err(candle_core::Error::Msg)?;
            let n = logits.len();
            return Tensor::from_vec(logits, n, &Device::Cpu);
        }
        let x = Tensor::new(ids, device)?.unsqueeze(0)?;
        let x = &x;
        match self {
            Weights::Native(_) => unreachable!("handled above"),
            Weights::Llama(m) => m.forward(x, pos),
            Weights::Gemma3(m) => m.forward(x, pos),
            Weights::Qwen2(m) => m.forward(x, pos),
            Weights::Qwen3(m) => m.forward(x, pos),
        }
    }
    fn reset(&mut self) {
        // llama and gemma3 also drop their cache when fed position 0.
        match self {
            Weights::Native(m) => m.reset(),
            Weights::Llama(m) => m.clear_kv_cache(),
            Weights::Gemma3(_) => {}
            Weights::Qwen2(m) => m.clear_kv_cache(),
            Weights::Qwen3(m) => m.clear_kv_cache(),
        }
    }
}

/// A GGUF model loaded with candle, usable as a [`Generator`].
///
/// The model and its KV cache sit behind a mutex: one generation runs at a time per
/// `GgufModel` (clone-free sharing across threads is safe; calls serialize). The KV cache is
/// reset at the start of every prompt, so calls are independent.
///
/// ```no_run
/// use pgraphrag_core::{GenParams, Generator, Prompt};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let m = pgraphrag_llm::GgufModel::load(&pgraphrag_llm::default_model_path(), Default::default())?;
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
    device: Device,
    overflow: ContextOverflow,
    path: PathBuf,
    engine: Engine,
    activations: Activations,
    prefill: Prefill,
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

fn invalid(path: &Path, reason: impl Into<String>) -> LlmError {
    LlmError::InvalidGguf {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn model_err(context: impl Into<String>) -> impl FnOnce(candle_core::Error) -> LlmError {
    let context = context.into();
    move |source| LlmError::Model { context, source }
}

/// Reads and validates a GGUF header: magic, metadata, and that every tensor lies inside the file.
fn read_content(path: &Path) -> Result<(Content, BufReader<File>)> {
    if !path.exists() {
        return Err(LlmError::ModelNotFound {
            path: path.to_path_buf(),
        });
    }
    let io = |source| LlmError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let mut r = BufReader::new(file);
    let mut magic = [0u8; 4];
    if let Err(e) = r.read_exact(&mut magic) {
        return Err(invalid(
            path,
            format!("cannot read the 4-byte magic ({e}); the file has {file_len} bytes"),
        ));
    }
    if &magic != b"GGUF" {
        return Err(invalid(
            path,
            format!("wrong magic {magic:02x?} (expected the bytes of \"GGUF\")"),
        ));
    }
    r.rewind().map_err(io)?;
    let ct = Content::read(&mut r).map_err(|e| invalid(path, format!("bad header: {e}")))?;
    for (name, info) in &ct.tensor_infos {
        let elems = info.shape.elem_count();
        let bs = info.ggml_dtype.block_size();
        let size = (elems / bs * info.ggml_dtype.type_size()) as u64;
        let end = ct
            .tensor_data_offset
            .saturating_add(info.offset)
            .saturating_add(size);
        if end > file_len {
            return Err(invalid(
                path,
                format!(
                    "truncated: tensor `{name}` ends at byte {end} but the file has {file_len} bytes"
                ),
            ));
        }
    }
    Ok((ct, r))
}

/// Re-quantizes the 4/5-bit legacy tensors to Q8_0 and returns an in-memory GGUF.
fn requantize_q8(path: &Path, ct: &Content, r: &mut BufReader<File>) -> Result<Vec<u8>> {
    let mut tensors: Vec<(String, QTensor)> = Vec::with_capacity(ct.tensor_infos.len());
    let mut names: Vec<&String> = ct.tensor_infos.keys().collect();
    names.sort();
    for name in names {
        let qt = ct
            .tensor(r, name, &Device::Cpu)
            .map_err(|e| invalid(path, format!("reading tensor `{name}`: {e}")))?;
        let qt = match qt.dtype() {
            GgmlDType::Q4_0 | GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1 => {
                let t = qt
                    .dequantize(&Device::Cpu)
                    .map_err(model_err(format!("dequantizing `{name}`")))?;
                QTensor::quantize(&t, GgmlDType::Q8_0)
                    .map_err(model_err(format!("quantizing `{name}` to Q8_0")))?
            }
            _ => qt,
        };
        tensors.push((name.clone(), qt));
    }
    let md: Vec<(&str, &gguf_file::Value)> =
        ct.metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let ts: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut buf = Cursor::new(Vec::new());
    gguf_file::write(&mut buf, &md, &ts).map_err(model_err("writing the Q8_0 GGUF"))?;
    Ok(buf.into_inner())
}

fn build_weights<R: Read + Seek>(
    arch: Architecture,
    ct: Content,
    r: &mut R,
    device: &Device,
    path: &Path,
) -> Result<Weights> {
    let ctx =
        |e: candle_core::Error| invalid(path, format!("loading {} weights: {e}", arch.as_str()));
    Ok(match arch {
        Architecture::Llama => {
            Weights::Llama(quantized_llama::ModelWeights::from_gguf(ct, r, device).map_err(ctx)?)
        }
        Architecture::Gemma3 => {
            Weights::Gemma3(quantized_gemma3::ModelWeights::from_gguf(ct, r, device).map_err(ctx)?)
        }
        Architecture::Qwen2 => {
            Weights::Qwen2(quantized_qwen2::ModelWeights::from_gguf(ct, r, device).map_err(ctx)?)
        }
        Architecture::Qwen3 => {
            Weights::Qwen3(quantized_qwen3::ModelWeights::from_gguf(ct, r, device).map_err(ctx)?)
        }
    })
}

impl GgufModel {
    /// Loads a GGUF model: checks the file (typed errors for a missing file, wrong magic, a
    /// truncated file, an unsupported `general.architecture`), builds the tokenizer, picks
    /// the chat template, and loads the weights onto the chosen device.
    pub fn load(path: &Path, opts: GgufOptions) -> Result<Self> {
        let (ct, mut reader) = read_content(path)?;
        let arch_name = md_str(&ct, "general.architecture")
            .ok_or_else(|| invalid(path, "no `general.architecture` in the metadata"))?
            .to_string();
        let arch =
            Architecture::parse(&arch_name).ok_or_else(|| LlmError::UnsupportedArchitecture {
                path: path.to_path_buf(),
                architecture: arch_name.clone(),
            })?;
        let device = match opts.device {
            DeviceChoice::Cpu => Device::Cpu,
            DeviceChoice::Cuda(i) => Device::new_cuda(i).map_err(model_err(format!(
                "opening CUDA device {i} (is the `cuda` feature on?)"
            )))?,
        };
        let sibling = path.with_file_name(sibling_tokenizer_name(path));
        let tokenizer = match (&opts.tokenizer_json, sibling.exists()) {
            (Some(j), _) => LlmTokenizer::from_json(j, &ct)?,
            (None, true) => LlmTokenizer::from_json(&sibling, &ct)?,
            (None, false) => LlmTokenizer::from_gguf(&ct, path)?,
        };
        let template = opts
            .template
            .clone()
            .or_else(|| ChatTemplate::detect(md_str(&ct, "tokenizer.chat_template"), &arch_name));
        let declared = md_u32(&ct, &format!("{arch_name}.context_length"))
            .map(|c| c as usize)
            .unwrap_or(usize::MAX);
        let native = match (opts.engine, arch, &device) {
            (Engine::Candle, ..) => false,
            (Engine::Auto, Architecture::Llama, Device::Cpu) => true,
            (Engine::Auto, ..) => false,
            (Engine::Native, Architecture::Llama, Device::Cpu) => true,
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
        let limit = if native {
            usize::MAX
        } else {
            arch.implementation_limit()
        };
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
        let weights = match opts.weights {
            WeightFormat::AsStored if native => Weights::Native(Box::new(NativeLlama::load(
                &ct,
                &mut reader,
                path,
                opts.activations,
                opts.prefill,
            )?)),
            WeightFormat::AsStored => build_weights(arch, ct, &mut reader, &device, path)?,
            WeightFormat::Q8_0 => {
                let bytes = requantize_q8(path, &ct, &mut reader)?;
                let mut cur = Cursor::new(bytes);
                let ct2 = Content::read(&mut cur)
                    .map_err(|e| invalid(path, format!("re-reading the Q8_0 copy: {e}")))?;
                if native {
                    Weights::Native(Box::new(NativeLlama::load(
                        &ct2,
                        &mut cur,
                        path,
                        opts.activations,
                        opts.prefill,
                    )?))
                } else {
                    build_weights(arch, ct2, &mut cur, &device, path)?
                }
            }
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
        Ok(GgufModel {
            weights: Mutex::new(weights),
            tokenizer,
            template,
            arch,
            context,
            stop_ids,
            device,
            overflow: opts.overflow,
            path: path.to_path_buf(),
            engine: if native {
                Engine::Native
            } else {
                Engine::Candle
            },
            activations: opts.activations,
            prefill: opts.prefill,
        })
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
            && let Weights::Native(m) = &mut *w
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

    /// The next-token logits (one per vocabulary entry, f32) after the prompt `ids`, computed
    /// from an empty KV cache. Useful for scoring and for comparing engines.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let m = pgraphrag_llm::GgufModel::load(&pgraphrag_llm::default_model_path(), Default::default())?;
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
        weights.reset();
        weights
            .forward(ids, 0, &self.device)
            .and_then(|l| l.flatten_all())
            .and_then(|l| l.to_dtype(DType::F32))
            .and_then(|l| l.to_vec1::<f32>())
            .map_err(model_err(format!(
                "processing the {}-token prompt",
                ids.len()
            )))
    }

    /// Generates like [`Generator::generate`], returning token counts and timings too.
    pub fn generate_full(&self, prompt: &Prompt, params: &GenParams) -> Result<Generation> {
        self.generate_tokens(self.prompt_tokens(prompt)?, params)
    }

    /// Generates from prompt token ids (as [`Self::prompt_tokens`] returns them), applying the
    /// context-overflow policy, stop tokens, stop strings and `max_tokens`.
    pub fn generate_tokens(&self, ids: Vec<u32>, params: &GenParams) -> Result<Generation> {
        if matches!(self.engine, Engine::Native) {
            return self
                .generate_batch_tokens(vec![ids], params)
                .pop()
                .unwrap_or_else(|| Err(LlmError::InvalidParams("no prompt".into())));
        }
        validate_params(params)?;
        let ids = self.fit_context(ids, params.max_tokens)?;
        let mut weights = self.lock()?;
        weights.reset();
        let mut st = SeqGen::new(ids.len(), params);
        if params.max_tokens == 0 {
            return Ok(st.out);
        }
        let mut logits = weights
            .forward(&ids, 0, &self.device)
            .map_err(model_err(format!(
                "processing the {}-token prompt",
                ids.len()
            )))?;
        while let Some(next) = st.push(self, &logits)? {
            logits = weights
                .forward(&[next], st.pos, &self.device)
                .map_err(model_err(format!("decoding at position {}", st.pos)))?;
            st.pos += 1;
        }
        Ok(st.out)
    }

    /// Generates a completion for each prompt, as [`Self::generate_full`] would one at a time
    /// (the same tokens for the same seed), but faster on the native engine: up to 8 sequences
    /// decode together, each step reading the weights once for all of them, and when one
    /// finishes the next prompt is processed and takes its place (continuous batching). The result for each prompt is independent (one bad prompt does not fail
    /// the others). On the candle engine this is a loop over [`Self::generate_full`].
    ///
    /// ```no_run
    /// use pgraphrag_core::{GenParams, Prompt};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let m = pgraphrag_llm::GgufModel::load(&pgraphrag_llm::default_model_path(), Default::default())?;
    /// let prompts = [Prompt::user("Name a colour."), Prompt::user("Name a fruit.")];
    /// for g in m.generate_batch_full(&prompts, &GenParams { max_tokens: 8, ..Default::default() }) {
    ///     println!("{}", g?.text);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn generate_batch_full(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
    ) -> Vec<Result<Generation>> {
        let ids: Vec<Result<Vec<u32>>> = prompts.iter().map(|p| self.prompt_tokens(p)).collect();
        if !matches!(self.engine, Engine::Native) {
            return ids
                .into_iter()
                .map(|i| i.and_then(|i| self.generate_tokens(i, params)))
                .collect();
        }
        let mut results: Vec<Option<Result<Generation>>> = Vec::with_capacity(ids.len());
        let mut ok = Vec::new();
        for i in ids {
            match i {
                Ok(v) => {
                    ok.push((results.len(), v));
                    results.push(None);
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        let (slots, lists): (Vec<usize>, Vec<Vec<u32>>) = ok.into_iter().unzip();
        for (slot, r) in slots
            .into_iter()
            .zip(self.generate_batch_tokens(lists, params))
        {
            results[slot] = Some(r);
        }
        collect_results(results)
    }

    /// The native engine's batched generation from token ids.
    fn generate_batch_tokens(
        &self,
        lists: Vec<Vec<u32>>,
        params: &GenParams,
    ) -> Vec<Result<Generation>> {
        let n = lists.len();
        if let Err(e) = validate_params(params) {
            let msg = e.to_string();
            return (0..n)
                .map(|_| Err(LlmError::InvalidParams(msg.clone())))
                .collect();
        }
        let mut weights = match self.lock() {
            Ok(w) => w,
            Err(e) => {
                let msg = e.to_string();
                return (0..n)
                    .map(|_| Err(LlmError::InvalidParams(msg.clone())))
                    .collect();
            }
        };
        let Weights::Native(model) = &mut *weights else {
            return (0..n)
                .map(|_| Err(LlmError::InvalidParams("not the native engine".into())))
                .collect();
        };
        let pool = model.pool();
        pool.install(move || {
            let mut results: Vec<Option<Result<Generation>>> = (0..n).map(|_| None).collect();
            // Continuous batching: up to DECODE_BATCH sequences decode together; whenever one
            // finishes, the next prompt is processed and joins. Every sequence's tokens are
            // independent of its companions, so this only changes the speed.
            let mut queue = lists.into_iter().enumerate();
            let mut live: Vec<(usize, crate::native::Seq, SeqGen, u32)> = Vec::new();
            loop {
                while live.len() < DECODE_BATCH {
                    let Some((i, ids)) = queue.next() else { break };
                    let ids = match self.fit_context(ids, params.max_tokens) {
                        Ok(v) => v,
                        Err(e) => {
                            results[i] = Some(Err(e));
                            continue;
                        }
                    };
                    let mut st = SeqGen::new(ids.len(), params);
                    if params.max_tokens == 0 {
                        results[i] = Some(Ok(st.out));
                        continue;
                    }
                    model.reserve(ids.len() + params.max_tokens + 1);
                    // Under Prefill::Rowwise the KV cache of a prefix shared with a recent
                    // prompt is reused (bit-identical to computing it); otherwise this is empty.
                    let mut seq = model.cached_prefix(&ids);
                    let kept = seq.len();
                    let step = model
                        .step(&mut [&mut seq], &[&ids[kept..]], true)
                        .map_err(|e| LlmError::Model {
                            context: format!("processing the {}-token prompt", ids.len()),
                            source: candle_core::Error::Msg(e),
                        })
                        .and_then(|mut l| logits_tensor(l.pop().unwrap_or_default()));
                    if step.is_ok() {
                        model.remember(&ids, &seq);
                    }
                    match step.and_then(|l| st.push(self, &l)) {
                        Ok(Some(next)) => live.push((i, seq, st, next)),
                        Ok(None) => results[i] = Some(Ok(st.out)),
                        Err(e) => results[i] = Some(Err(e)),
                    }
                }
                if live.is_empty() {
                    break;
                }
                let toks: Vec<[u32; 1]> = live.iter().map(|l| [l.3]).collect();
                let tok_refs: Vec<&[u32]> = toks.iter().map(|t| t.as_slice()).collect();
                let mut seqs: Vec<&mut crate::native::Seq> =
                    live.iter_mut().map(|l| &mut l.1).collect();
                let step = model.step(&mut seqs, &tok_refs, false);
                drop(seqs);
                let logits = match step {
                    Ok(l) => l,
                    Err(e) => {
                        for (i, _, st, _) in live.drain(..) {
                            results[i] = Some(Err(LlmError::Model {
                                context: format!("decoding at position {}", st.pos),
                                source: candle_core::Error::Msg(e.clone()),
                            }));
                        }
                        continue;
                    }
                };
                let mut next_live = Vec::with_capacity(live.len());
                for ((i, seq, mut st, _), l) in live.drain(..).zip(logits) {
                    st.pos += 1;
                    match logits_tensor(l).and_then(|l| st.push(self, &l)) {
                        Ok(Some(next)) => next_live.push((i, seq, st, next)),
                        Ok(None) => results[i] = Some(Ok(st.out)),
                        Err(e) => results[i] = Some(Err(e)),
                    }
                }
                live = next_live;
            }
            collect_results(results)
        })
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Weights>> {
        self.weights.lock().map_err(|_| {
            LlmError::InvalidParams(
                "the model mutex is poisoned (an earlier generation panicked)".into(),
            )
        })
    }

    /// Applies the context-overflow policy to a prompt.
    fn fit_context(&self, mut ids: Vec<u32>, max_tokens: usize) -> Result<Vec<u32>> {
        if ids.is_empty() {
            return Err(LlmError::InvalidParams(
                "the prompt encodes to no tokens".into(),
            ));
        }
        if ids.len() + max_tokens > self.context {
            match self.overflow {
                ContextOverflow::Error => {
                    return Err(LlmError::PromptTooLong {
                        prompt_tokens: ids.len(),
                        max_tokens,
                        context: self.context,
                    });
                }
                ContextOverflow::TruncateLeft => {
                    let keep_bos = self.tokenizer.bos().is_some()
                        && ids.first() == self.tokenizer.bos().as_ref()
                        && self.tokenizer.add_bos();
                    let room = self.context.saturating_sub(max_tokens);
                    if room <= usize::from(keep_bos) {
                        return Err(LlmError::PromptTooLong {
                            prompt_tokens: ids.len(),
                            max_tokens,
                            context: self.context,
                        });
                    }
                    let cut = ids.len() - room;
                    if keep_bos {
                        ids.drain(1..=cut);
                    } else {
                        ids.drain(..cut);
                    }
                }
            }
        }
        Ok(ids)
    }
}

/// Sequences the native engine decodes together in [`GgufModel::generate_batch_full`] (its
/// row kernels share one pass over the weights among up to 8 vectors).
const DECODE_BATCH: usize = 8;

/// Per-prompt results of a batch; a slot never filled is an error, not a panic.
fn collect_results(results: Vec<Option<Result<Generation>>>) -> Vec<Result<Generation>> {
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(LlmError::InvalidParams("no result".into()))))
        .collect()
}

fn validate_params(params: &GenParams) -> Result<()> {
    if !(params.temperature >= 0.0 && params.temperature.is_finite()) {
        return Err(LlmError::InvalidParams(format!(
            "temperature must be finite and >= 0, got {}",
            params.temperature
        )));
    }
    if let Some(p) = params.top_p
        && !(p > 0.0 && p <= 1.0)
    {
        return Err(LlmError::InvalidParams(format!(
            "top_p must be in (0, 1], got {p}"
        )));
    }
    Ok(())
}

fn logits_tensor(l: Vec<f32>) -> Result<Tensor> {
    let n = l.len();
    Tensor::from_vec(l, n, &Device::Cpu).map_err(model_err("reading logits"))
}

/// The sampling and stopping state of one sequence being generated.
struct SeqGen {
    sampler: LogitsProcessor,
    out: Generation,
    t0: Instant,
    t_decode: Instant,
    /// Tokens in the KV cache.
    pos: usize,
    max_tokens: usize,
    stop: Vec<String>,
}

impl SeqGen {
    fn new(prompt_tokens: usize, params: &GenParams) -> Self {
        let sampling = if params.temperature == 0.0 {
            Sampling::ArgMax
        } else {
            match params.top_p {
                Some(p) if p < 1.0 => Sampling::TopP {
                    p,
                    temperature: params.temperature,
                },
                _ => Sampling::All {
                    temperature: params.temperature,
                },
            }
        };
        SeqGen {
            sampler: LogitsProcessor::from_sampling(params.seed, sampling),
            out: Generation {
                text: String::new(),
                tokens: Vec::new(),
                prompt_tokens,
                finish: FinishReason::Length,
                prompt_time: Duration::ZERO,
                decode_time: Duration::ZERO,
            },
            t0: Instant::now(),
            t_decode: Instant::now(),
            pos: prompt_tokens,
            max_tokens: params.max_tokens,
            stop: params
                .stop
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect(),
        }
    }

    /// Samples from `logits`; returns the token to feed next, or `None` when the sequence is
    /// finished (then `self.out` is complete).
    fn push(&mut self, m: &GgufModel, logits: &Tensor) -> Result<Option<u32>> {
        let l = logits
            .flatten_all()
            .and_then(|l| l.to_dtype(DType::F32))
            .map_err(model_err("reading logits"))?;
        let next = self.sampler.sample(&l).map_err(model_err("sampling"))?;
        if self.out.tokens.is_empty() {
            self.out.prompt_time = self.t0.elapsed();
            self.t_decode = Instant::now();
        }
        if m.stop_ids.contains(&next) {
            self.out.finish = FinishReason::EndOfTurn;
            return self.finish(m).map(|_| None);
        }
        self.out.tokens.push(next);
        if !self.stop.is_empty() {
            let text = m.tokenizer.decode(&self.out.tokens)?;
            if let Some(i) = find_stop(&text, &self.stop) {
                self.out.text = text[..i].to_string();
                self.out.finish = FinishReason::StopString;
                self.out.decode_time = self.t_decode.elapsed();
                return Ok(None);
            }
        }
        if self.out.tokens.len() >= self.max_tokens || self.pos >= m.context {
            self.out.finish = FinishReason::Length;
            return self.finish(m).map(|_| None);
        }
        Ok(Some(next))
    }

    fn finish(&mut self, m: &GgufModel) -> Result<()> {
        self.out.decode_time = self.t_decode.elapsed();
        self.out.text = m.tokenizer.decode(&self.out.tokens)?;
        Ok(())
    }
}

/// Byte offset of the earliest stop string in `text`.
fn find_stop(text: &str, stop: &[String]) -> Option<usize> {
    stop.iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min()
}

impl Generator for GgufModel {
    fn generate(&self, prompt: &Prompt, params: &GenParams) -> pgraphrag_core::Result<String> {
        Ok(self.generate_full(prompt, params)?.text)
    }
    fn generate_batch(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
    ) -> Vec<pgraphrag_core::Result<String>> {
        self.generate_batch_full(prompts, params)
            .into_iter()
            .map(|r| r.map(|g| g.text).map_err(Into::into))
            .collect()
    }
}
