//! What [`GgufModel::load`](super::GgufModel::load) takes ([`GgufOptions`], the option enums of
//! the format layer plus a chat template) and what a generation reports ([`Generation`]).

use std::path::PathBuf;
use std::time::Duration;

use crate::gguf::options::{
    Activations, ContextOverflow, DeviceChoice, Engine, Kernels, Prefill, WeightFormat,
};
use crate::template::ChatTemplate;

/// Options of [`GgufModel::load`](crate::GgufModel::load).
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
    /// Which compiled kernels the native engine may use (ignored by candle).
    pub kernels: Kernels,
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// The model emitted an end-of-turn / end-of-sequence token.
    EndOfTurn,
    /// A stop string from [`GenParams::stop`](pgraphrag_core::GenParams::stop) appeared (the text is cut before it).
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
