//! Loading a llama-architecture GGUF into the native engine's layout.

use std::io::{Read, Seek};
use std::path::Path;

use pgraphrag_core::simd::CpuFeatures;

use super::formats::{QK, QRows};
use super::{KvCache, Layer, Linear, NativeLlama, Seq, kernels, prefill, q8};
use crate::error::{Result, invalid};
use crate::gguf::dims::{LlamaDims, read_dims};
use crate::gguf::file::{GgmlType, GgufFile};
use crate::gguf::options::{Activations, Prefill};

impl NativeLlama {
    /// Loads the weights of a llama-architecture GGUF (`ct` read from `r`). With `q8_0`, the
    /// `Q4_0`/`Q4_1`/`Q5_0`/`Q5_1` matrices are re-quantized to `Q8_0`
    /// ([`crate::WeightFormat::Q8_0`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn load<R: Read + Seek>(
        ct: &GgufFile,
        r: &mut R,
        path: &Path,
        act: Activations,
        pf: Prefill,
        cpu: CpuFeatures,
        q8_0: bool,
    ) -> Result<Self> {
        let dims = read_dims(ct, path)?;
        let LlamaDims {
            n_embd,
            n_kv_head,
            head_dim,
            n_ff,
            n_layer,
            ..
        } = dims;

        let mut get = |name: &str| -> Result<QRows> {
            let (info, raw) = ct
                .tensor_bytes(r, name)
                .map_err(|e| invalid(path, format!("reading tensor `{name}`: {e}")))?;
            let q = QRows::from_raw(info.dtype, &info.dims, &raw, name, path)?;
            let legacy = matches!(
                info.dtype,
                GgmlType::Q4_0 | GgmlType::Q4_1 | GgmlType::Q5_0 | GgmlType::Q5_1
            );
            Ok(if q8_0 && legacy { q.to_q8_0() } else { q })
        };
        let tok_embd = get("token_embd.weight")?;
        if tok_embd.cols != n_embd {
            return Err(invalid(
                path,
                "token_embd.weight does not match embedding_length",
            ));
        }
        let vocab = tok_embd.rows;
        let vec_of = |q: QRows, name: &str, n: usize| -> Result<Vec<f32>> {
            if q.rows * q.cols != n {
                return Err(invalid(path, format!("`{name}` should have {n} values")));
            }
            Ok(q.dense())
        };
        let check = |q: &QRows, name: &str, rows: usize, cols: usize| -> Result<()> {
            if q.rows != rows || q.cols != cols {
                return Err(invalid(
                    path,
                    format!("`{name}` is {}x{}, expected {rows}x{cols}", q.rows, q.cols),
                ));
            }
            if !cols.is_multiple_of(QK) {
                return Err(invalid(
                    path,
                    format!("`{name}`: {cols} columns is not a multiple of 32"),
                ));
            }
            Ok(())
        };
        let kv_dim = n_kv_head * head_dim;
        let mut layers = Vec::with_capacity(n_layer);
        for i in 0..n_layer {
            let p = |s: &str| format!("blk.{i}.{s}.weight");
            let attn_norm = vec_of(get(&p("attn_norm"))?, &p("attn_norm"), n_embd)?;
            let ffn_norm = vec_of(get(&p("ffn_norm"))?, &p("ffn_norm"), n_embd)?;
            let wq = get(&p("attn_q"))?;
            check(&wq, &p("attn_q"), n_embd, n_embd)?;
            let wk = get(&p("attn_k"))?;
            check(&wk, &p("attn_k"), kv_dim, n_embd)?;
            let wv = get(&p("attn_v"))?;
            check(&wv, &p("attn_v"), kv_dim, n_embd)?;
            let wo = get(&p("attn_output"))?;
            check(&wo, &p("attn_output"), n_embd, n_embd)?;
            let wg = get(&p("ffn_gate"))?;
            check(&wg, &p("ffn_gate"), n_ff, n_embd)?;
            let wu = get(&p("ffn_up"))?;
            check(&wu, &p("ffn_up"), n_ff, n_embd)?;
            let wd = get(&p("ffn_down"))?;
            check(&wd, &p("ffn_down"), n_embd, n_ff)?;
            let lin = |q: QRows| {
                let mut dense = q.dense();
                let i8 = match act {
                    Activations::Q8 => q8::I8Rows::from_qrows(&q),
                    Activations::F32 => None,
                };
                let packed = match pf {
                    Prefill::Rowwise => {
                        let p = prefill::Packed::new(&dense, q.rows, q.cols);
                        dense = Vec::new();
                        Some(p)
                    }
                    Prefill::Gemm => None,
                };
                Linear {
                    q,
                    i8,
                    dense,
                    packed,
                }
            };
            layers.push(Layer {
                attn_norm,
                qkv: lin(QRows::stack(vec![wq, wk, wv])),
                wo: lin(wo),
                ffn_norm,
                gate_up: lin(QRows::stack(vec![wg, wu])),
                down: lin(wd),
            });
        }
        let out_norm = vec_of(get("output_norm.weight")?, "output_norm.weight", n_embd)?;
        let output = if ct.tensors.contains_key("output.weight") {
            let o = get("output.weight")?;
            check(&o, "output.weight", vocab, n_embd)?;
            Some(o)
        } else {
            None
        };
        let output_i8 = match act {
            Activations::Q8 => q8::I8Rows::from_qrows(output.as_ref().unwrap_or(&tok_embd)),
            Activations::F32 => None,
        };
        let cfg = LlamaDims { vocab, ..dims };
        let ((k8_name, k8), (k_name, k), (pk_name, pk)) =
            (q8::best(cpu), kernels::best(cpu), prefill::best(cpu));
        Ok(NativeLlama {
            cfg,
            tok_embd,
            layers,
            out_norm,
            output,
            output_i8,
            k8,
            seq: Seq {
                cache: (0..n_layer).map(|_| KvCache::default()).collect(),
                len: 0,
            },
            cos: Vec::new(),
            sin: Vec::new(),
            k,
            prefill: pf,
            pk,
            kernel_names: [k8_name, k_name, pk_name],
            prefixes: Vec::new(),
            pool: std::sync::Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(rayon::current_num_threads())
                    .thread_name(|i| format!("pgraphrag-native-{i}"))
                    .build()
                    .map_err(|e| invalid(path, format!("starting the worker threads: {e}")))?,
            ),
            lora: None,
        })
    }
}
