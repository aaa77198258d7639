//! The options of a [`super::BertEncoder`]: pooling, device, CPU backend and its features,
//! precision.

use candle_core::Device;
use pgraphrag_core::simd::CpuFeatures;

use super::quant::Precision;
use crate::{Error, Result};

/// How the token vectors of the last layer become one vector per text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Pooling {
    /// Masked mean over the non-padding tokens of `last_hidden_state` (Contriever,
    /// sentence-transformers, LaMP, and the PGraphRAG paper text). The default.
    #[default]
    Mean,
    /// BERT's `pooler_output`: `tanh(W · h_CLS + b)` with the checkpoint's `pooler.dense.*`
    /// weights. PGraphRAG's released notebook embeds *documents* this way.
    Pooler,
    /// The raw last-layer vector of the `[CLS]` token.
    Cls,
}

impl Pooling {
    /// A short stable name (`mean`, `pooler`, `cls`), used in cache keys and on the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::Pooler => "pooler",
            Pooling::Cls => "cls",
        }
    }
}

impl std::str::FromStr for Pooling {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "mean" => Ok(Pooling::Mean),
            "pooler" => Ok(Pooling::Pooler),
            "cls" => Ok(Pooling::Cls),
            other => Err(Error::InvalidInput(format!(
                "unknown pooling {other:?}: expected mean, pooler or cls"
            ))),
        }
    }
}

/// Where the model runs: [`pgraphrag_core::DeviceChoice`] (a GPU needs the crate's `cuda`
/// feature; on the CPU the [`EncoderBackend`] picks the implementation).
///
/// ```
/// use pgraphrag_retrieval::dense::DenseDevice;
/// assert_eq!(DenseDevice::default(), DenseDevice::Cpu);
/// ```
pub type DenseDevice = pgraphrag_core::DeviceChoice;

/// The candle device for `d`.
pub(super) fn candle_device(d: DenseDevice) -> Result<Device> {
    match d {
        DenseDevice::Cuda(i) => Device::new_cuda(i).map_err(|e| {
            Error::Compute(format!(
                "cannot open CUDA device {i} (build with the `cuda` feature and a CUDA toolkit): {e}"
            ))
        }),
        DenseDevice::Cpu => Ok(Device::Cpu),
        other => Err(Error::InvalidInput(format!("device {other} is not supported"))),
    }
}

/// Which implementation of the BERT forward pass runs on the CPU.
///
/// Both compute the same function (`transformers`' `BertModel` in eval mode); they differ by
/// float rounding only (about 1e-6). On a GPU ([`DenseDevice::Cuda`]) candle always runs,
/// whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EncoderBackend {
    /// Our own CPU forward pass (the default): padding-free batches (every text at its own
    /// length), weights prepacked at load, a matrix multiply with fused bias and GELU when the
    /// CPU has AVX-512F or AVX2 + FMA (the `gemm` crate otherwise), vectorised GELU/softmax,
    /// buffers reused across layers and batches. See `docs/dense.md`.
    #[default]
    Native,
    /// candle's `BertModel` (padded batches with an attention mask).
    Candle,
}

impl EncoderBackend {
    /// A short stable name (`native`, `candle`).
    pub fn name(self) -> &'static str {
        match self {
            EncoderBackend::Native => "native",
            EncoderBackend::Candle => "candle",
        }
    }
}

impl std::str::FromStr for EncoderBackend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "native" => Ok(EncoderBackend::Native),
            "candle" => Ok(EncoderBackend::Candle),
            other => Err(Error::InvalidInput(format!(
                "unknown encoder backend {other:?}: expected native or candle"
            ))),
        }
    }
}

/// Options of a [`BertEncoder`](super::BertEncoder).
///
/// ```
/// use pgraphrag_retrieval::dense::{EncoderBackend, EncoderOptions, Pooling};
/// let o = EncoderOptions { normalize: true, ..Default::default() };
/// assert_eq!((o.pooling, o.batch_size, o.max_length), (Pooling::Mean, 32, None));
/// assert_eq!(o.backend, EncoderBackend::Native);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct EncoderOptions {
    /// Pooling used by [`pgraphrag_core::Encoder::encode`]. Default [`Pooling::Mean`].
    pub pooling: Pooling,
    /// L2-normalise the vectors returned by [`pgraphrag_core::Encoder::encode`] (what
    /// sentence-transformers does for all-MiniLM-L6-v2; Contriever does not). Default `false`.
    pub normalize: bool,
    /// Texts per forward pass. Texts are sorted by length first, so each batch is padded only
    /// to its own longest text (`BatchLongest`). Default 32.
    pub batch_size: usize,
    /// Truncation length in tokens, special tokens included. `None` (default) = the model's
    /// limit: `min(max_position_embeddings, tokenizer_config.json model_max_length)`, 512
    /// for BERT-base, Contriever and MiniLM. A larger value than the limit is an error.
    pub max_length: Option<usize>,
    /// Where to run. Default the CPU.
    pub device: DenseDevice,
    /// The CPU implementation. Default [`EncoderBackend::Native`]; ignored on a GPU (candle).
    pub backend: EncoderBackend,
    /// The CPU features the native forward pass may use. Default: the CPU's own
    /// ([`CpuFeatures::detect`]); `CpuFeatures::detect().without_avx512()` runs the AVX2 kernels
    /// an AVX2-only CPU gets, [`CpuFeatures::portable`] the portable ones.
    pub cpu: CpuFeatures,
    /// The number format of the native forward pass's linear layers. Default
    /// [`Precision::F32`]; [`Precision::Int8`] quantizes them (native backend on the CPU only:
    /// an error with candle or a GPU). Part of the embedding cache's key when not f32.
    pub precision: Precision,
}

impl Default for EncoderOptions {
    fn default() -> Self {
        EncoderOptions {
            pooling: Pooling::Mean,
            normalize: false,
            batch_size: 32,
            max_length: None,
            device: DenseDevice::Cpu,
            backend: EncoderBackend::Native,
            cpu: CpuFeatures::detect(),
            precision: Precision::F32,
        }
    }
}
