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
    Llama(quantized_llama::ModelWeights),
    Gemma3(quantized_gemma3::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
    Qwen3(quantized_qwen3::ModelWeights),
}

impl Weights {
    fn forward(&mut self, x: &Tensor, pos: usize) -> candle_core::Result<Tensor> {
        match self {
            Weights::Llama(m) => m.forward(x, pos),
            Weights::Gemma3(m) => m.forward(x, pos),
            Weights::Qwen2(m) => m.forward(x, pos),
            Weights::Qwen3(m) => m.forward(x, pos),
        }
    }
    fn reset(&mut self) {
        // llama and gemma3 also drop their cache when fed position 0.
        match self {
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
        let mut context = declared.min(arch.implementation_limit());
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
            WeightFormat::AsStored => build_weights(arch, ct, &mut reader, &device, path)?,
            WeightFormat::Q8_0 => {
                let bytes = requantize_q8(path, &ct, &mut reader)?;
                let mut cur = Cursor::new(bytes);
                let ct2 = Content::read(&mut cur)
                    .map_err(|e| invalid(path, format!("re-reading the Q8_0 copy: {e}")))?;
                build_weights(arch, ct2, &mut cur, &device, path)?
            }
        };
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
    /// The context window in tokens (the model's, capped by candle's limit and `max_context`).
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

    /// Generates like [`Generator::generate`], returning token counts and timings too.
    pub fn generate_full(&self, prompt: &Prompt, params: &GenParams) -> Result<Generation> {
        self.generate_tokens(self.prompt_tokens(prompt)?, params)
    }

    /// Generates from prompt token ids (as [`Self::prompt_tokens`] returns them), applying the
    /// context-overflow policy, stop tokens, stop strings and `max_tokens`.
    pub fn generate_tokens(&self, mut ids: Vec<u32>, params: &GenParams) -> Result<Generation> {
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
        if ids.is_empty() {
            return Err(LlmError::InvalidParams(
                "the prompt encodes to no tokens".into(),
            ));
        }
        let max_tokens = params.max_tokens;
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
        let mut sampler = LogitsProcessor::from_sampling(params.seed, sampling);
        let mut weights = self.weights.lock().map_err(|_| {
            LlmError::InvalidParams(
                "the model mutex is poisoned (an earlier generation panicked)".into(),
            )
        })?;
        weights.reset();
        let t0 = Instant::now();
        let mut out = Generation {
            text: String::new(),
            tokens: Vec::new(),
            prompt_tokens: ids.len(),
            finish: FinishReason::Length,
            prompt_time: Duration::ZERO,
            decode_time: Duration::ZERO,
        };
        if max_tokens == 0 {
            return Ok(out);
        }
        let input = Tensor::new(ids.as_slice(), &self.device)
            .and_then(|t| t.unsqueeze(0))
            .map_err(model_err("building the prompt tensor"))?;
        let mut logits = weights.forward(&input, 0).map_err(model_err(format!(
            "processing the {}-token prompt",
            ids.len()
        )))?;
        let mut pos = ids.len();
        let mut t_decode = Instant::now();
        let has_stop = params.stop.iter().any(|s| !s.is_empty());
        loop {
            let l = logits
                .flatten_all()
                .and_then(|l| l.to_dtype(DType::F32))
                .map_err(model_err("reading logits"))?;
            let next = sampler.sample(&l).map_err(model_err("sampling"))?;
            if out.tokens.is_empty() {
                out.prompt_time = t0.elapsed();
                t_decode = Instant::now();
            }
            if self.stop_ids.contains(&next) {
                out.finish = FinishReason::EndOfTurn;
                break;
            }
            out.tokens.push(next);
            if has_stop {
                let text = self.tokenizer.decode(&out.tokens)?;
                if let Some(i) = find_stop(&text, &params.stop) {
                    out.text = text[..i].to_string();
                    out.finish = FinishReason::StopString;
                    out.decode_time = t_decode.elapsed();
                    return Ok(out);
                }
            }
            if out.tokens.len() >= max_tokens || pos >= self.context {
                out.finish = FinishReason::Length;
                break;
            }
            let input = Tensor::new(&[next], &self.device)
                .and_then(|t| t.unsqueeze(0))
                .map_err(model_err("building the token tensor"))?;
            logits = weights
                .forward(&input, pos)
                .map_err(model_err(format!("decoding at position {pos}")))?;
            pos += 1;
        }
        out.decode_time = t_decode.elapsed();
        out.text = self.tokenizer.decode(&out.tokens)?;
        Ok(out)
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
}
