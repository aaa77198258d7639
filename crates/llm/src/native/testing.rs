//! Helpers of the native engine's unit tests (here, in `prefill` and in `q8`): seeded inputs,
//! an f64 attention reference and candle-quantized matrices as the engine reads them.

#[cfg(feature = "candle")]
use std::path::Path;

#[cfg(feature = "candle")]
use candle_core::quantized::{GgmlDType, QTensor};
#[cfg(feature = "candle")]
use candle_core::{Device, Tensor};

#[cfg(feature = "candle")]
use super::formats::QRows;
#[cfg(feature = "candle")]
use crate::gguf::file::GgmlType;

pub(crate) fn pseudo_random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Causal attention of one query over `n` positions in f64: `softmax(scale·q·k_j)·v_j`,
/// with `k_j = kc[j·stride + off..][..q.len()]` (and `v_j` likewise).
pub(crate) fn attention_reference(
    q: &[f32],
    kc: &[f32],
    vc: &[f32],
    n: usize,
    stride: usize,
    off: usize,
    scale: f64,
) -> Vec<f64> {
    let hd = q.len();
    let sc: Vec<f64> = (0..n)
        .map(|j| {
            (0..hd)
                .map(|i| q[i] as f64 * kc[j * stride + off + i] as f64)
                .sum::<f64>()
                * scale
        })
        .collect();
    let m = sc.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = sc.iter().map(|x| (x - m).exp()).sum();
    (0..hd)
        .map(|i| {
            (0..n)
                .map(|j| (sc[j] - m).exp() / z * vc[j * stride + off + i] as f64)
                .sum()
        })
        .collect()
}

#[cfg(feature = "candle")]
pub(crate) fn quantized(rows: usize, cols: usize, dtype: GgmlDType, seed: u64) -> QTensor {
    let v = pseudo_random(rows * cols, seed);
    let t = Tensor::from_vec(v, (rows, cols), &Device::Cpu).unwrap();
    QTensor::quantize(&t, dtype).unwrap()
}

/// The native engine's matrix of a candle `QTensor`, read from its raw bytes as a file's.
#[cfg(feature = "candle")]
pub(crate) fn qrows(qt: &QTensor) -> QRows {
    let dtype = match qt.dtype() {
        GgmlDType::F32 => GgmlType::F32,
        GgmlDType::F16 => GgmlType::F16,
        GgmlDType::BF16 => GgmlType::BF16,
        GgmlDType::Q4_0 => GgmlType::Q4_0,
        GgmlDType::Q4_1 => GgmlType::Q4_1,
        GgmlDType::Q5_0 => GgmlType::Q5_0,
        GgmlDType::Q5_1 => GgmlType::Q5_1,
        GgmlDType::Q8_0 => GgmlType::Q8_0,
        GgmlDType::Q8_1 => GgmlType::Q8_1,
        GgmlDType::Q2K => GgmlType::Q2K,
        GgmlDType::Q3K => GgmlType::Q3K,
        GgmlDType::Q4K => GgmlType::Q4K,
        GgmlDType::Q5K => GgmlType::Q5K,
        GgmlDType::Q6K => GgmlType::Q6K,
        GgmlDType::Q8K => GgmlType::Q8K,
    };
    let raw = qt.data().unwrap();
    QRows::from_raw(dtype, qt.shape().dims(), &raw, "t", Path::new("x")).unwrap()
}
