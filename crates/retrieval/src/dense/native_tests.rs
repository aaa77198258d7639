//! Tests of the native forward pass: every kernel set against the others on real text.

use super::*;
use pgraphrag_core::simd::CpuFeatures;

const TEXTS: [&str; 4] = [
    "Great battery, lasts all day.",
    "Produto chegou antes do prazo, recomendo!",
    "",
    "The room was clean but the breakfast was cold and the staff seemed tired; \
     still, the view of the harbour made up for most of it.",
];

/// The mean-pooled and the pooler embeddings of [`TEXTS`] (one after the other) with the
/// kernels `k` and, for int8, the int8 kernels `qk`.
fn embed_all(k: Kernels, qk: Option<QKernels>) -> Vec<f32> {
    let dir = std::env::var_os("PGRAPHRAG_MINILM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/all-MiniLM-L6-v2")
        });
    let st = dir.join("model.safetensors");
    assert!(
        st.is_file(),
        "all-MiniLM-L6-v2 not found at {} (set PGRAPHRAG_MINILM or run scripts/fetch-minilm.sh)",
        dir.display()
    );
    let config: Config =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    // SAFETY: read-only map of a file nobody modifies during the test.
    let vb = unsafe {
        VarBuilder::from_mmaped_safetensors(&[&st], DType::F32, &candle_core::Device::Cpu)
    }
    .unwrap();
    let tok = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    let encs: Vec<_> = TEXTS
        .iter()
        .map(|t| tok.encode(*t, true).unwrap())
        .collect();
    let seqs: Vec<(&[u32], &[u32])> = encs
        .iter()
        .map(|e| (e.get_ids(), e.get_type_ids()))
        .collect();
    let m = NativeBert::load_with_kernels(&vb, &config, k, qk)
        .unwrap()
        .with_pooler(&vb, "", config.hidden_size)
        .unwrap();
    let mut out = vec![0f32; TEXTS.len() * config.hidden_size * 2];
    let (a, b) = out.split_at_mut(TEXTS.len() * config.hidden_size);
    m.forward(&seqs, Pooling::Mean, a).unwrap();
    m.forward(&seqs, Pooling::Pooler, b).unwrap();
    out
}

/// Every kernel set this CPU can run (AVX-512 with its own matrix multiply, AVX2 and the
/// portable one with `gemm`) gives the same embeddings as the best one.
#[test]
fn every_kernel_set_gives_the_same_embeddings() {
    let best = embed_all(Kernels::for_cpu(CpuFeatures::detect()), None);
    let mut sets = vec![Kernels::portable()];
    #[cfg(target_arch = "x86_64")]
    sets.extend(super::super::kernels::avx2_kernels());
    for k in sets {
        let other = embed_all(k, None);
        let d = best
            .iter()
            .zip(&other)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            d < 1e-5,
            "{} differs from {} by {d}",
            k.name,
            Kernels::for_cpu(CpuFeatures::detect()).name
        );
    }
}

/// Every int8 kernel set this CPU runs (AVX-512 VNNI, AVX2, portable), each with the f32
/// element-wise kernels of its own instruction set, gives bit-identical embeddings; and they
/// stay close to the f32 ones.
#[test]
fn every_int8_kernel_set_gives_bit_identical_embeddings() {
    let cpu = CpuFeatures::detect();
    let f32s = embed_all(Kernels::for_cpu(cpu), None);
    let mut runs = Vec::new();
    for qk in QKernels::all_for(cpu) {
        // The element-wise kernels of the same instruction set as the int8 tile.
        let k = match qk.name {
            "portable" => Kernels::portable(),
            "avx2" => Kernels::for_cpu(cpu.without_avx512()),
            _ => Kernels::for_cpu(cpu),
        };
        runs.push((qk.name, k.name, embed_all(k, Some(qk))));
    }
    let (name0, _, first) = &runs[0];
    for (name, kname, other) in &runs[1..] {
        let same = first
            .iter()
            .zip(other)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "int8 {name} (with {kname}) differs from int8 {name0}");
    }
    let h = f32s.len() / (2 * TEXTS.len());
    for (i, (a, b)) in first.chunks(h).zip(f32s.chunks(h)).enumerate() {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
        let cos = dot / (na * nb);
        assert!(cos > 0.98, "row {i}: int8 against f32 cosine {cos}");
    }
}
