//! candle-transformers' quantized models (`llama`, `gemma3`, `qwen2`, `qwen3`; CPU or CUDA):
//! the engine behind [`crate::Engine::Candle`], compiled with the `candle` feature.

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file::{self, Content};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device, Tensor};
use candle_transformers::models::{
    quantized_gemma3, quantized_llama, quantized_qwen2, quantized_qwen3,
};

use crate::error::{LlmError, Result, invalid};
use crate::gguf::options::{Architecture, DeviceChoice};
use crate::lora::{LoraAdapter, LoraTarget};

/// One of candle's quantized models and the device it runs on, with what rebuilding it takes
/// (a LoRA adapter is merged into the weights, so setting one reloads the file).
pub(crate) struct CandleWeights {
    model: Model,
    device: Device,
    arch: Architecture,
    path: PathBuf,
    q8_0: bool,
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
pub(crate) fn implementation_limit(arch: Architecture) -> usize {
    match arch {
        Architecture::Llama => quantized_llama::MAX_SEQ_LEN,
        Architecture::Gemma3 => quantized_gemma3::MAX_SEQ_LEN,
        Architecture::Qwen2 | Architecture::Qwen3 => usize::MAX,
    }
}

impl CandleWeights {
    /// Loads `path` (whose header the crate's reader has validated) with candle's reader,
    /// with the 4/5-bit legacy tensors re-quantized to `Q8_0` when `q8_0`.
    pub(crate) fn load(
        arch: Architecture,
        r: &mut BufReader<File>,
        path: &Path,
        device: Device,
        q8_0: bool,
    ) -> Result<Self> {
        let model = build(arch, r, path, &device, q8_0, None)?;
        Ok(CandleWeights {
            model,
            device,
            arch,
            path: path.to_path_buf(),
            q8_0,
        })
    }

    /// Rebuilds the model from the file with `adapter` merged into the weights (`None`: the
    /// file's weights): each adapted projection becomes an f32 tensor holding its dequantized
    /// weights plus `scale · B A`, which candle multiplies in f32. Checks first that every
    /// update names a tensor of the file of its shape; on an error the model is unchanged.
    pub(crate) fn set_adapter(&mut self, adapter: Option<&LoraAdapter>) -> Result<()> {
        let io = |source| LlmError::Io {
            path: self.path.clone(),
            source,
        };
        let mut r = BufReader::new(File::open(&self.path).map_err(io)?);
        self.model = build(
            self.arch,
            &mut r,
            &self.path,
            &self.device,
            self.q8_0,
            adapter,
        )?;
        Ok(())
    }

    /// Logits of the last of `ids`, fed at positions `pos..`, as f32 on the CPU.
    pub(crate) fn forward(&mut self, ids: &[u32], pos: usize) -> candle_core::Result<Vec<f32>> {
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

    pub(crate) fn reset(&mut self) {
        // llama and gemma3 also drop their cache when fed position 0.
        match &mut self.model {
            Model::Llama(m) => m.clear_kv_cache(),
            Model::Gemma3(_) => {}
            Model::Qwen2(m) => m.clear_kv_cache(),
            Model::Qwen3(m) => m.clear_kv_cache(),
        }
    }
}

/// Reads the model from `r` (the file at `path`): straight from the file, or, with `q8_0` or
/// an adapter, from an in-memory copy of it rewritten by [`rewrite`].
fn build(
    arch: Architecture,
    r: &mut BufReader<File>,
    path: &Path,
    device: &Device,
    q8_0: bool,
    adapter: Option<&LoraAdapter>,
) -> Result<Model> {
    r.rewind().map_err(|source| LlmError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let ct = Content::read(r).map_err(|e| invalid(path, format!("bad header: {e}")))?;
    if !q8_0 && adapter.is_none() {
        return build_weights(arch, ct, r, device, path);
    }
    let bytes = rewrite(path, &ct, r, q8_0, adapter)?;
    let mut cur = Cursor::new(bytes);
    let ct2 = Content::read(&mut cur)
        .map_err(|e| invalid(path, format!("re-reading the rewritten copy: {e}")))?;
    build_weights(arch, ct2, &mut cur, device, path)
}

/// The GGUF name of the weights an update applies to: `blk.{layer}.{target}.weight`.
fn tensor_name(layer: usize, target: LoraTarget) -> String {
    format!("blk.{layer}.{}.weight", target.name())
}

/// An in-memory GGUF of the file with the 4/5-bit legacy tensors re-quantized to Q8_0 (when
/// `q8_0`) and `adapter`'s updates merged into the weights they apply to (as f32).
fn rewrite(
    path: &Path,
    ct: &Content,
    r: &mut BufReader<File>,
    q8_0: bool,
    adapter: Option<&LoraAdapter>,
) -> Result<Vec<u8>> {
    let mut merges = std::collections::HashMap::new();
    if let Some(ad) = adapter {
        for (layer, target, u) in ad.updates() {
            let name = tensor_name(layer, target);
            let bad = |reason: String| LlmError::Adapter {
                adapter: ad.id().to_string(),
                reason,
            };
            let info = ct
                .tensor_infos
                .get(&name)
                .ok_or_else(|| bad(format!("{} has no tensor `{name}`", path.display())))?;
            let dims = info.shape.dims();
            if dims != [u.out_dim(), u.in_dim()] {
                return Err(bad(format!(
                    "the update of `{name}` is {}x{}, the model's tensor is {dims:?}",
                    u.out_dim(),
                    u.in_dim()
                )));
            }
            merges.insert(name, u);
        }
    }
    let mut tensors: Vec<(String, QTensor)> = Vec::with_capacity(ct.tensor_infos.len());
    let mut names: Vec<&String> = ct.tensor_infos.keys().collect();
    names.sort();
    for name in names {
        let qt = ct
            .tensor(r, name, &Device::Cpu)
            .map_err(|e| invalid(path, format!("reading tensor `{name}`: {e}")))?;
        let legacy = matches!(
            qt.dtype(),
            GgmlDType::Q4_0 | GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1
        );
        let qt = if let Some(u) = merges.get(name) {
            let t = qt
                .dequantize(&Device::Cpu)
                .map_err(model_err(format!("dequantizing `{name}`")))?;
            let shape = t.shape().clone();
            let mut w = t
                .flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .map_err(model_err(format!("reading `{name}`")))?;
            u.add_product_to(&mut w)?;
            let t = Tensor::from_vec(w, shape, &Device::Cpu)
                .map_err(model_err(format!("merging the adapter into `{name}`")))?;
            QTensor::quantize(&t, GgmlDType::F32)
                .map_err(model_err(format!("storing the merged `{name}`")))?
        } else if q8_0 && legacy {
            let t = qt
                .dequantize(&Device::Cpu)
                .map_err(model_err(format!("dequantizing `{name}`")))?;
            QTensor::quantize(&t, GgmlDType::Q8_0)
                .map_err(model_err(format!("quantizing `{name}` to Q8_0")))?
        } else {
            qt
        };
        tensors.push((name.clone(), qt));
    }
    let md: Vec<(&str, &gguf_file::Value)> =
        ct.metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let ts: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut buf = Cursor::new(Vec::new());
    gguf_file::write(&mut buf, &md, &ts).map_err(model_err("writing the rewritten GGUF"))?;
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
