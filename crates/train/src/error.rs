use std::path::PathBuf;

/// Everything that can go wrong in this crate. Every variant names what was involved (the file,
/// the tensor, the step) and, where there is one, what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrainError {
    /// Loading the base model failed (missing file, bad GGUF, not a llama model).
    #[error(transparent)]
    Llm(#[from] pgraphrag_llm::LlmError),
    /// A tensor operation failed, with what was being done.
    #[error("{context}: {source}")]
    Tensor {
        /// What was being done.
        context: String,
        /// candle's error.
        #[source]
        source: candle_core::Error,
    },
    /// Reading or writing a file failed.
    #[error("cannot access {path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A checkpoint file is unreadable, truncated or inconsistent with the run.
    #[error(
        "checkpoint {path}: {reason}; delete it to start over, or pass the run's own checkpoint"
    )]
    Checkpoint {
        /// The checkpoint file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// An adapter file is unreadable or malformed.
    #[error("LoRA adapter {path}: {reason}")]
    Adapter {
        /// The adapter file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// A K-RagRec encoder file is unreadable, malformed, or made over other features.
    #[error("K-RagRec encoder {path}: {reason}")]
    EncoderFile {
        /// The encoder file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// An adapter (or checkpoint) was made for another base model than the one given.
    #[error(
        "{path} was trained on base model `{found}`, not on `{expected}`; load the model it was trained on"
    )]
    BaseModelMismatch {
        /// The adapter or checkpoint file.
        path: PathBuf,
        /// The base model passed in.
        expected: String,
        /// The base model the file names.
        found: String,
    },
    /// The loss (or a gradient) is NaN or infinite.
    #[error(
        "non-finite loss {loss} at optimizer step {step} (epoch {epoch}); lower the learning rate or check the inputs; the last checkpoint is kept"
    )]
    NonFinite {
        /// The optimizer step being computed (1-based).
        step: u64,
        /// The epoch (0-based).
        epoch: u64,
        /// The value seen.
        loss: f32,
    },
    /// A configuration value is out of range.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A LoRA rank larger than a projection it adapts: `B A` would be no low-rank update, and
    /// the adapters' memory grows with the rank (a rank of 10⁹ asks for terabytes).
    #[error(
        "LoRA rank {rank} is larger than the {target} projection ({out} × {inp}) of this model: \
         the rank must be from 1 to {max}, the smaller side of every adapted projection"
    )]
    RankTooLarge {
        /// The rank asked for.
        rank: usize,
        /// The narrowest projection it adapts (`attn_v`, `ffn_down`, ...).
        target: &'static str,
        /// Its output size.
        out: usize,
        /// Its input size.
        inp: usize,
        /// The largest rank that fits every adapted projection.
        max: usize,
    },
    /// An input (token ids, embeddings, an example) is not what the model takes.
    #[error("invalid input: {0}")]
    Input(String),
    /// A line of a training-data file is unusable (bad JSON, no `prompt` or `target`, an
    /// empty target, text the tokenizer refuses).
    #[error("{path}:{line}: {reason}")]
    DataLine {
        /// The data file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What was wrong.
        reason: String,
    },
    /// A training-data file holds no usable example.
    #[error("{path}: {reason}")]
    NoData {
        /// The data file.
        path: PathBuf,
        /// Why nothing is usable (empty file, every example too long).
        reason: String,
    },
}

/// `Result` with [`TrainError`].
pub type Result<T, E = TrainError> = std::result::Result<T, E>;

/// Adds what was being done to candle's errors.
pub(crate) trait Ctx<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Ctx<T> for candle_core::Result<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| TrainError::Tensor {
            context: what(),
            source,
        })
    }
}
