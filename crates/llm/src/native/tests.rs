//! Unit tests of the native engine (kernels against references, split prompts).

#[cfg(feature = "candle")]
use candle_core::Device;
#[cfg(feature = "candle")]
use candle_core::quantized::{GgmlDType, QTensor};
use pgraphrag_core::simd::CpuFeatures;

use super::kernels::softmax;
use super::testing::{attention_reference, pseudo_random};
use super::*;
use crate::gguf::file::GgufFile;
use crate::gguf::options::Activations;
#[cfg(feature = "candle")]
use {
    super::formats::{QData, QK},
    super::testing::{qrows, quantized},
};

#[path = "../../tests/support/model.rs"]
mod model;

#[cfg(feature = "candle")]
#[test]
fn blocks_dequantize_exactly_as_candle() {
    for dtype in [
        GgmlDType::Q4_1,
        GgmlDType::Q8_0,
        GgmlDType::Q4K,
        GgmlDType::F32,
    ] {
        let qt = quantized(7, 256, dtype, 3);
        let q = qrows(&qt);
        let want: Vec<f32> = qt
            .dequantize(&Device::Cpu)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        assert_eq!(q.dense(), want, "{dtype:?}");
    }
}

#[cfg(feature = "candle")]
#[test]
fn every_kernel_matches_the_dequantized_dot_product() {
    let all = kernels::available(CpuFeatures::detect());
    for dtype in [GgmlDType::Q4_1, GgmlDType::Q8_0, GgmlDType::Q6K] {
        let (rows, cols) = (37, 768);
        let qt = quantized(rows, cols, dtype, 11);
        let q = qrows(&qt);
        let dense = q.dense();
        let x = pseudo_random(cols, 5);
        let xsum: Vec<f32> = x.chunks_exact(QK).map(|c| c.iter().sum()).collect();
        for (name, k) in &all {
            let mut out = vec![0f32; rows - 3];
            (k.rows_dot)(&q, 3, &x, &xsum, 1, &mut out);
            for (i, got) in out.iter().enumerate() {
                let row = &dense[(i + 3) * cols..(i + 4) * cols];
                let want: f64 = row.iter().zip(&x).map(|(a, b)| *a as f64 * *b as f64).sum();
                assert!(
                    (*got as f64 - want).abs() < 1e-4 * (1.0 + want.abs()),
                    "{name} {dtype:?} row {i}: {got} vs {want}"
                );
            }
        }
    }
}

/// One query head in the plain order the decoding attention kernels keep: `s_j = dot(q, k_j)
/// · scale` ([`kernels::dot_generic`]), [`softmax`], then `o += p_j · v_j` one position at a
/// time from zero.
fn attention_one_position_at_a_time(
    q: &[f32],
    kc: &[f32],
    vc: &[f32],
    l: usize,
    stride: usize,
    off: usize,
    scale: f32,
) -> Vec<f32> {
    let hd = q.len();
    let mut s: Vec<f32> = (0..l)
        .map(|j| kernels::dot_generic(q, &kc[j * stride + off..j * stride + off + hd]) * scale)
        .collect();
    softmax(&mut s);
    let mut o = vec![0f32; hd];
    for (j, p) in s.iter().enumerate() {
        for (a, x) in o.iter_mut().zip(&vc[j * stride + off..]) {
            *a += p * x;
        }
    }
    o
}

#[test]
fn every_attention_kernel_is_bit_identical_and_correct() {
    // Head sizes with 64-, 16- and 1-wide column blocks; 1 or 3 query heads per KV head.
    for (hd, g) in [(64, 1), (64, 3), (40, 3), (19, 2)] {
        let (kv_heads, l) = (3, 77);
        let stride = hd * kv_heads;
        let (kc, vc) = (pseudo_random(l * stride, 1), pseudo_random(l * stride, 2));
        let q = pseudo_random(g * hd, 3);
        for (name, k) in kernels::available(CpuFeatures::detect()) {
            let (mut s, mut o) = (vec![0f32; g * l], vec![0f32; g * hd]);
            (k.attend)(&q, &kc, &vc, stride, hd, hd, 0.125, &mut s, &mut o);
            for (h, (qh, oh)) in q.chunks(hd).zip(o.chunks(hd)).enumerate() {
                let plain = attention_one_position_at_a_time(qh, &kc, &vc, l, stride, hd, 0.125);
                let want = attention_reference(qh, &kc, &vc, l, stride, hd, 0.125);
                for i in 0..hd {
                    assert!(
                        (oh[i] as f64 - want[i]).abs() < 1e-5,
                        "{name} hd {hd} head {h} {i}: {} vs {}",
                        oh[i],
                        want[i]
                    );
                    assert_eq!(
                        oh[i].to_bits(),
                        plain[i].to_bits(),
                        "{name} hd {hd} head {h} {i}"
                    );
                }
            }
        }
    }
}

#[cfg(feature = "candle")]
#[test]
fn stacking_mixed_formats_falls_back_to_f32_rows() {
    let a = qrows(&quantized(2, 64, GgmlDType::Q4_1, 1));
    let b = qrows(&quantized(3, 64, GgmlDType::Q8_0, 2));
    let (da, db) = (a.dense(), b.dense());
    let s = QRows::stack(vec![a, b]);
    assert_eq!(s.rows, 5);
    assert!(matches!(s.data, QData::F32(_)));
    assert_eq!(s.dense(), [da, db].concat());
}

#[test]
fn softmax_is_a_distribution() {
    let mut s = vec![1.0, 2.0, 3.0, -1e30];
    softmax(&mut s);
    assert!((s.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    assert_eq!(s[3], 0.0);
    assert!(s[2] > s[1] && s[1] > s[0]);
}

/// Under `Prefill::Rowwise`, a prompt processed in two pieces (the first from a cached
/// prefix) leaves exactly the KV cache and logits of processing it at once.
#[test]
fn split_prompts_are_bit_identical() {
    let path = model::model_path();
    assert!(
        path.exists(),
        "SmolLM2 model {} is missing: run scripts/fetch-llms.sh --smollm-only",
        path.display()
    );
    let mut f = std::fs::File::open(&path).unwrap();
    let len = f.metadata().unwrap().len();
    let ct = GgufFile::read(&mut f, len).unwrap();
    let mut m = NativeLlama::load(
        &ct,
        &mut f,
        &path,
        Activations::F32,
        Prefill::Rowwise,
        CpuFeatures::detect(),
        false,
    )
    .unwrap();
    let ids: Vec<u32> = (0..300u32).map(|i| (i * 7919 + 13) % 40000 + 100).collect();
    m.reserve(ids.len() + 1);
    let pool = m.pool();
    pool.install(|| {
        let mut whole = m.new_seq();
        let want = m.step(&mut [&mut whole], &[&ids], true).unwrap();
        for cut in [1, 37, 128, 299] {
            let mut a = m.new_seq();
            m.step(&mut [&mut a], &[&ids[..cut]], true).unwrap();
            let got = m.step(&mut [&mut a], &[&ids[cut..]], true).unwrap();
            assert!(got == want, "logits after a split at {cut}");
            for (x, y) in a.cache.iter().zip(&whole.cache) {
                assert!(x.k == y.k && x.v == y.v, "KV cache after a split at {cut}");
            }
        }
        // Through the prefix cache: a prompt sharing 200 tokens reuses them.
        m.remember(&ids, &whole);
        let mut other = ids[..200].to_vec();
        other.extend([5u32, 6, 7]);
        let mut s = m.cached_prefix(&other);
        assert_eq!(s.len(), 200);
        let got = m.step(&mut [&mut s], &[&other[200..]], true).unwrap();
        let mut fresh = m.new_seq();
        let want = m.step(&mut [&mut fresh], &[&other], true).unwrap();
        assert!(got == want, "logits through the prefix cache");
        // The whole prompt again: all but its last token are reused.
        assert_eq!(m.cached_prefix(&ids).len(), ids.len() - 1);
    });
}

/// `WeightFormat::Q8_0` on the native engine re-quantizes the legacy 4/5-bit blocks itself;
/// the blocks are exactly those of candle's `QTensor::quantize(dequantized, Q8_0)`, which is
/// what the engine loaded before it read GGUF files without candle.
#[cfg(feature = "candle")]
#[test]
fn requantized_q8_0_blocks_are_candles() {
    for dtype in [
        GgmlDType::Q4_0,
        GgmlDType::Q4_1,
        GgmlDType::Q5_0,
        GgmlDType::Q5_1,
    ] {
        let qt = quantized(9, 256, dtype, 7);
        let ours = qrows(&qt).to_q8_0();
        let deq = qt.dequantize(&Device::Cpu).unwrap();
        let theirs = qrows(&QTensor::quantize(&deq, GgmlDType::Q8_0).unwrap());
        let (QData::Q80(a), QData::Q80(b)) = (&ours.data, &theirs.data) else {
            panic!("{dtype:?}: not Q8_0 blocks");
        };
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!(x.d == y.d && x.qs == y.qs, "{dtype:?}");
        }
    }
}

/// The crate's GGUF reader sees exactly what candle's sees in the real model: every metadata
/// key with the same scalar values, every tensor with the same type, shape and offset.
#[cfg(feature = "candle")]
#[test]
fn gguf_reader_agrees_with_candle() {
    use crate::gguf::file::Value;
    use candle_core::quantized::gguf_file::{Content, Value as CV};
    let path = model::model_path();
    let mut f = std::fs::File::open(&path).unwrap();
    let len = f.metadata().unwrap().len();
    let ours = GgufFile::read(&mut f, len).unwrap();
    std::io::Seek::rewind(&mut f).unwrap();
    let theirs = Content::read(&mut f).unwrap();
    assert_eq!(ours.data_offset, theirs.tensor_data_offset);
    assert_eq!(ours.metadata.len(), theirs.metadata.len());
    for (k, v) in &theirs.metadata {
        let o = ours.metadata.get(k).unwrap_or_else(|| panic!("{k}"));
        match (v, o) {
            (CV::U32(a), Value::U32(b)) => assert_eq!(a, b, "{k}"),
            (CV::F32(a), Value::F32(b)) => assert_eq!(a.to_bits(), b.to_bits(), "{k}"),
            (CV::Bool(a), Value::Bool(b)) => assert_eq!(a, b, "{k}"),
            (CV::String(a), Value::String(b)) => assert_eq!(a, b, "{k}"),
            (CV::Array(a), Value::Array(b)) => {
                assert_eq!(a.len(), b.len(), "{k}");
                for (x, y) in a.iter().zip(b) {
                    if let (CV::String(x), Value::String(y)) = (x, y) {
                        assert_eq!(x, y, "{k}");
                    }
                }
            }
            (a, b) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{k}"),
        }
    }
    assert_eq!(ours.tensors.len(), theirs.tensor_infos.len());
    for (name, t) in &theirs.tensor_infos {
        let o = &ours.tensors[name];
        assert_eq!(o.dims, t.shape.dims(), "{name}");
        assert_eq!(o.offset, t.offset, "{name}");
        assert_eq!(
            format!("{:?}", o.dtype),
            format!("{:?}", t.ggml_dtype),
            "{name}"
        );
        assert_eq!(
            o.byte_size(),
            t.shape.elem_count() / t.ggml_dtype.block_size() * t.ggml_dtype.type_size()
        );
    }
}
