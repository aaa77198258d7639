//! The weight formats the native engine keeps: the file's `Q4_1` and `Q8_0` blocks as
//! stored, anything else dequantized to f32 rows.

use std::path::Path;

use rayon::prelude::*;

use crate::error::{Result, invalid};
use crate::gguf::file::GgmlType;

/// One `Q4_1` block as stored (20 bytes): 32 weights `d·q + m`, `q` in 0..16 (low nibbles hold
/// weights 0..16, high nibbles weights 16..32), `d` and `m` as f16 bits.
#[derive(Clone, Copy)]
#[repr(C)]
pub(super) struct BlockQ41 {
    pub(super) d: u16,
    pub(super) m: u16,
    pub(super) qs: [u8; 16],
}

/// One `Q8_0` block as stored (34 bytes): 32 weights `d·q`, `d` as f16 bits.
#[derive(Clone, Copy)]
#[repr(C)]
pub(super) struct BlockQ80 {
    pub(super) d: u16,
    pub(super) qs: [i8; 32],
}

pub(super) fn f16_bits(b: u16) -> f32 {
    half::f16::from_bits(b).to_f32()
}

impl BlockQ41 {
    #[inline(always)]
    pub(super) fn d(&self) -> f32 {
        f16_bits(self.d)
    }
    #[inline(always)]
    pub(super) fn m(&self) -> f32 {
        f16_bits(self.m)
    }
}

impl BlockQ80 {
    #[inline(always)]
    pub(super) fn d(&self) -> f32 {
        f16_bits(self.d)
    }
}

pub(super) enum QData {
    Q41(Vec<BlockQ41>),
    Q80(Vec<BlockQ80>),
    F32(Vec<f32>),
}

/// Whether f16 `bits` is a finite number (its exponent is not all ones).
fn f16_finite(bits: u16) -> bool {
    bits & 0x7c00 != 0x7c00
}

impl QData {
    /// Every scale, offset and value is finite: an infinity or NaN in a weight file is damage
    /// (a flipped byte) that would turn every answer into NaN, so it is refused at load.
    fn check_finite(&self) -> std::result::Result<(), String> {
        let bad = |i: usize, what: &str| {
            Err(format!(
                "{what} {i} is not a finite number (the file is damaged)"
            ))
        };
        match self {
            QData::Q41(v) => match v.iter().position(|b| !f16_finite(b.d) || !f16_finite(b.m)) {
                Some(i) => bad(i, "the scale or offset of block"),
                None => Ok(()),
            },
            QData::Q80(v) => match v.iter().position(|b| !f16_finite(b.d)) {
                Some(i) => bad(i, "the scale of block"),
                None => Ok(()),
            },
            QData::F32(v) => match v.iter().position(|x| !x.is_finite()) {
                Some(i) => bad(i, "value"),
                None => Ok(()),
            },
        }
    }
}

/// A row-major `rows × cols` weight matrix in its storage format.
pub(super) struct QRows {
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) data: QData,
}

/// Weights per quantization block.
pub(super) const QK: usize = 32;

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

impl QRows {
    /// The matrix stored as `raw` (the tensor's bytes in the file) with type `dtype` and
    /// row-major dimensions `dims` (one or two). `Q4_1` and `Q8_0` keep their blocks; `F32`,
    /// `F16` and `BF16` become f32 rows; any other type is dequantized to f32 rows by candle
    /// (with the `candle` feature; an error without it).
    pub(super) fn from_raw(
        dtype: GgmlType,
        dims: &[usize],
        raw: &[u8],
        name: &str,
        path: &Path,
    ) -> Result<Self> {
        let (rows, cols) = match dims {
            [r, c] => (*r, *c),
            [c] => (1, *c),
            _ => return Err(invalid(path, format!("tensor `{name}` has shape {dims:?}"))),
        };
        let bad = |what: &str| invalid(path, format!("tensor `{name}`: {what}"));
        let n = rows * cols;
        let data = match dtype {
            GgmlType::Q4_1 | GgmlType::Q8_0 if cols.is_multiple_of(QK) => {
                let nblocks = n / QK;
                if dtype == GgmlType::Q4_1 {
                    if raw.len() != nblocks * 20 {
                        return Err(bad("Q4_1 data has the wrong size"));
                    }
                    QData::Q41(
                        raw.chunks_exact(20)
                            .map(|c| {
                                let mut qs = [0u8; 16];
                                qs.copy_from_slice(&c[4..20]);
                                BlockQ41 {
                                    d: u16_at(c, 0),
                                    m: u16_at(c, 2),
                                    qs,
                                }
                            })
                            .collect(),
                    )
                } else {
                    if raw.len() != nblocks * 34 {
                        return Err(bad("Q8_0 data has the wrong size"));
                    }
                    QData::Q80(
                        raw.chunks_exact(34)
                            .map(|c| {
                                let mut qs = [0i8; 32];
                                for (q, &b) in qs.iter_mut().zip(&c[2..34]) {
                                    *q = b as i8;
                                }
                                BlockQ80 {
                                    d: u16_at(c, 0),
                                    qs,
                                }
                            })
                            .collect(),
                    )
                }
            }
            GgmlType::F32 | GgmlType::F16 | GgmlType::BF16 => {
                let width = dtype.type_size();
                if raw.len() != n * width {
                    return Err(bad(&format!("{dtype:?} data has the wrong size")));
                }
                QData::F32(match dtype {
                    GgmlType::F32 => raw
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                    GgmlType::F16 => raw
                        .chunks_exact(2)
                        .map(|c| f16_bits(u16_at(c, 0)))
                        .collect(),
                    _ => raw
                        .chunks_exact(2)
                        .map(|c| half::bf16::from_bits(u16_at(c, 0)).to_f32())
                        .collect(),
                })
            }
            _ => QData::F32(dequantize_other(dtype, dims, raw, n).map_err(|e| bad(&e))?),
        };
        data.check_finite().map_err(|e| bad(&e))?;
        Ok(QRows { rows, cols, data })
    }

    /// `Q8_0` blocks quantized from this matrix's values (as candle's `QTensor::quantize` to
    /// `Q8_0` does: per block `d = max|x| / 127`, `q = round(x / d)`, `d` stored as f16).
    pub(super) fn to_q8_0(&self) -> QRows {
        let mut row = vec![0f32; self.cols];
        let mut blocks = Vec::with_capacity(self.rows * self.cols / QK);
        for r in 0..self.rows {
            self.dequant_row(r, &mut row);
            for xs in row.chunks_exact(QK) {
                let amax = xs.iter().fold(0f32, |a, &x| a.max(x.abs()));
                let d = amax / 127.0;
                let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                let mut qs = [0i8; 32];
                for (q, &x) in qs.iter_mut().zip(xs) {
                    *q = (x * id).round() as i8;
                }
                blocks.push(BlockQ80 {
                    d: half::f16::from_f32(d).to_bits(),
                    qs,
                });
            }
        }
        QRows {
            rows: self.rows,
            cols: self.cols,
            data: QData::Q80(blocks),
        }
    }

    /// Stacks matrices with the same column count (rows of `parts[0]` first). Mixed storage
    /// formats fall back to f32 rows.
    pub(super) fn stack(parts: Vec<QRows>) -> QRows {
        let cols = parts[0].cols;
        let rows = parts.iter().map(|p| p.rows).sum();
        let data = if parts.iter().all(|p| matches!(p.data, QData::Q41(_))) {
            QData::Q41(
                parts
                    .into_iter()
                    .flat_map(|p| match p.data {
                        QData::Q41(v) => v,
                        _ => Vec::new(),
                    })
                    .collect(),
            )
        } else if parts.iter().all(|p| matches!(p.data, QData::Q80(_))) {
            QData::Q80(
                parts
                    .into_iter()
                    .flat_map(|p| match p.data {
                        QData::Q80(v) => v,
                        _ => Vec::new(),
                    })
                    .collect(),
            )
        } else {
            QData::F32(parts.iter().flat_map(|p| p.dense()).collect())
        };
        QRows { rows, cols, data }
    }

    /// Row `r` dequantized into `out` (length `cols`).
    pub(super) fn dequant_row(&self, r: usize, out: &mut [f32]) {
        let nb = self.cols / QK;
        match &self.data {
            QData::Q41(v) => {
                for (b, o) in v[r * nb..(r + 1) * nb].iter().zip(out.chunks_exact_mut(QK)) {
                    for j in 0..16 {
                        o[j] = (b.qs[j] & 0x0F) as f32 * b.d() + b.m();
                        o[j + 16] = (b.qs[j] >> 4) as f32 * b.d() + b.m();
                    }
                }
            }
            QData::Q80(v) => {
                for (b, o) in v[r * nb..(r + 1) * nb].iter().zip(out.chunks_exact_mut(QK)) {
                    for j in 0..QK {
                        o[j] = b.qs[j] as f32 * b.d();
                    }
                }
            }
            QData::F32(v) => out.copy_from_slice(&v[r * self.cols..(r + 1) * self.cols]),
        }
    }

    /// The whole matrix as row-major f32.
    pub(super) fn dense(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.rows * self.cols];
        out.par_chunks_mut(self.cols)
            .enumerate()
            .for_each(|(r, o)| self.dequant_row(r, o));
        out
    }
}

/// Dequantizes a tensor type the native engine does not keep (K-quants, `Q4_0`, `Q5_x`, ...)
/// with candle.
#[cfg(feature = "candle")]
fn dequantize_other(
    dtype: GgmlType,
    dims: &[usize],
    raw: &[u8],
    n: usize,
) -> std::result::Result<Vec<f32>, String> {
    use candle_core::quantized::GgmlDType as D;
    let d = match dtype {
        GgmlType::F32 => D::F32,
        GgmlType::F16 => D::F16,
        GgmlType::BF16 => D::BF16,
        GgmlType::Q4_0 => D::Q4_0,
        GgmlType::Q4_1 => D::Q4_1,
        GgmlType::Q5_0 => D::Q5_0,
        GgmlType::Q5_1 => D::Q5_1,
        GgmlType::Q8_0 => D::Q8_0,
        GgmlType::Q8_1 => D::Q8_1,
        GgmlType::Q2K => D::Q2K,
        GgmlType::Q3K => D::Q3K,
        GgmlType::Q4K => D::Q4K,
        GgmlType::Q5K => D::Q5K,
        GgmlType::Q6K => D::Q6K,
        GgmlType::Q8K => D::Q8K,
    };
    let dev = candle_core::Device::Cpu;
    let t = candle_core::quantized::ggml_file::qtensor_from_ggml(d, raw, dims.to_vec(), &dev)
        .and_then(|q| q.dequantize(&dev))
        .and_then(|t| t.flatten_all())
        .and_then(|t| t.to_vec1::<f32>())
        .map_err(|e| format!("dequantizing: {e}"))?;
    if t.len() != n {
        return Err("dequantized size does not match the shape".into());
    }
    Ok(t)
}

/// Without candle the native engine reads `F32`, `F16`, `BF16`, `Q4_1` and `Q8_0` tensors only.
#[cfg(not(feature = "candle"))]
fn dequantize_other(
    dtype: GgmlType,
    _dims: &[usize],
    _raw: &[u8],
    _n: usize,
) -> std::result::Result<Vec<f32>, String> {
    Err(format!(
        "{dtype:?} tensors need pgraphrag-llm's `candle` feature (without it the native engine reads F32, F16, BF16, Q4_1 and Q8_0)"
    ))
}
