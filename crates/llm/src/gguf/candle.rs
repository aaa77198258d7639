//! candle-transformers' quantized models (`llama`, `gemma3`, `qwen2`, `qwen3`; CPU or CUDA):
//! the engine behind [`crate::Engine::Candle`], compiled with the `candle` feature.

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::Path;

use candle_core::quantized::gguf_file::{self, Content};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device, Tensor};
use candle_transformers::models::{
    quantized_gemma3, quantized_llama, quantized_qwen2, quantized_qwen3,
};

use super::weights::invalid;
use super::{Architecture, DeviceChoice};
use crate::error::{LlmError, Result};

/// One of candle's quantized models and the device it runs on.
pub(super) struct CandleWeights {
    model: Model,
    device: Device,
}

enum Model {
    Llama(quantized_llama::ModelWeights),
    Gemma3(quantized_gemma3::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
    Qwen3(quantized_qwen3::ModelWeights),
}

fn model_err(context: impl Into<String>) -> impl FnOnce(candle_core::Error) -> LlmError {
    let context = context.into();
    move |source| LlmError::model(context, source)
}

/// Opens the candle device for `choice`: the CPU, or the CUDA device with that ordinal (an
/// error without the `cuda` feature or without a usable GPU).
///
/// ```
/// use pgraphrag_llm::{DeviceChoice, candle_device};
/// assert!(candle_device(DeviceChoice::Cpu)?.is_cpu());
/// # Ok::<(), pgraphrag_llm::LlmError>(())
/// ```
pub fn candle_device(choice: DeviceChoice) -> Result<Device> {
    Ok(match choice {
        DeviceChoice::Cuda(i) => Device::new_cuda(i).map_err(model_err(format!(
            "opening CUDA device {i} (is the `cuda` feature on, and a GPU with its driver present?)"
        )))?,
        DeviceChoice::Cpu => Device::Cpu,
        other => {
            return Err(LlmError::InvalidParams(format!(
                "device {other} is not supported"
            )));
        }
    })
}

/// The longest sequence candle's implementation supports (its RoPE tables).
pub(super) fn implementation_limit(arch: Architecture) -> usize {
    match arch {
        Architecture::Llama => quantized_llama::MAX_SEQ_LEN,
        Architecture::Gemma3 => quantized_gemma3::MAX_SEQ_LEN,
        Architecture::Qwen2 | Architecture::Qwen3 => usize::MAX,
    }
}

impl CandleWeights {
    /// Loads `path` (whose header the crate's reader has validated) with candle's reader,
    /// with the 4/5-bit legacy tensors re-quantized to `Q8_0` when `q8_0`.
    pub(super) fn load(
        arch: Architecture,
        r: &mut BufReader<File>,
        path: &Path,
        device: Device,
        q8_0: bool,
    ) -> Result<Self> {
        r.rewind().map_err(|source| LlmError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let ct = Content::read(r).map_err(|e| invalid(path, format!("bad header: {e}")))?;
        let model = if q8_0 {
            let bytes = requantize_q8(path, &ct, r)?;
            let mut cur = Cursor::new(bytes);
            let ct2 = Content::read(&mut cur)
                .map_err(|e| invalid(path, format!("re-reading the Q8_0 copy: {e}")))?;
            build_weights(arch, ct2, &mut cur, &device, path)?
        } else {
            build_weights(arch, ct, r, &device, path)?
        };
        Ok(CandleWeights { model, device })
    }

    /// Logits of the last of `ids`, fed at positions `pos..`, as f32 on the CPU.
    pub(super) fn forward(&mut self, ids: &[u32], pos: usize) -> candle_core::Result<Vec<f32>> {
        let x = Tensor::new(ids, &self.device)?.unsqueeze(0)?;
        let x = &x;
        let l = match &mut self.model {
            Model::Llama(m) => m.forward(x, pos),
            Model::Gemma3(m) => m.forward(x, pos),
            Model::Qwen2(m) => m.forward(x, pos),
            Model::Qwen3(m) => m.forward(x, pos),
        }?;
        l.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()
    }

    pub(super) fn reset(&mut self) {
        // llama and gemma3 also drop their cache when fed position 0.
        match &mut self.model {
            Model::Llama(m) => m.clear_kv_cache(),
            Model::Gemma3(_) => {}
            Model::Qwen2(m) => m.clear_kv_cache(),
            Model::Qwen3(m) => m.clear_kv_cache(),
        }
    }
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
) -> Result<Model> {
    let ctx =
        |e: candle_core::Error| invalid(path, format!("loading {} weights: {e}", arch.as_str()));
    Ok(match arch {
        Architecture::Llama => {
            Model::Llama(quantized_llama::ModelWeights::from_gguf(ct, r, device).map_err(ctx)?)
        }
        Architecture::Gemma3 => {
            Model::Gemma3(quantized_gemma3::ModelWeights::from_gguf(ct, r, device).map_err(ctx)?)
        }
        Architecture::Qwen2 => {
            Model::Qwen2(quantized_qwen2::ModelWeights::from_gguf(ct, r, device).map_err(ctx)?)
        }
        Architecture::Qwen3 => {
            Model::Qwen3(quantized_qwen3::ModelWeights::from_gguf(ct, r, device).map_err(ctx)?)
        }
    })
}
