#![cfg_attr(docsrs, feature(doc_cfg))]
//! # pgraphrag-train
//!
//! Training in Rust (candle autograd), for the trainable parts of the papers (K-RagRec's
//! graph soft prompt and LoRA):
//!
//! - [`Llama`]: a differentiable llama-family forward pass over a GGUF model's weights
//!   dequantized to f32 ([`pgraphrag_llm::load_llama_f32`]), whose logits equal the native
//!   engine's f32 path (see `docs/train.md` for the measured tolerance). Weights are frozen;
//!   input embeddings go in through [`Llama::hidden`] (soft tokens after BOS with
//!   [`Llama::embed_with_soft_tokens`]) and receive gradients.
//! - [`Lora`]: LoRA adapters ([`LoraConfig::kragrec`]: rank 8, alpha 16, dropout 0.1 on q and
//!   v), saved and loaded as safetensors naming their base model, merged with
//!   [`Llama::merge`].
//! - [`Trainer`]: one trainer for every job ([`Objective`]): seeded order, gradient
//!   accumulation, [`AdamW`] with saveable state, validation and early stopping, atomic
//!   checkpoints a killed run resumes from bit for bit, progress through a callback
//!   ([`TrainEvent`]).
//! - [`LoraLm`]: LoRA fine-tuning on answer tokens ([`AnswerExample`], [`answer_loss`]),
//!   with examples read from `{"prompt", "target"}` JSON lines ([`load_answer_examples`])
//!   through the model's own prompt formatting ([`ExampleEncoder`]).
//! - K-RagRec's trainable parts: [`GraphEncoder`] (a Graph Transformer over retrieved
//!   knowledge sub-graphs, mean pooling, the `Linear – Sigmoid – Linear` projector; one mean
//!   soft token or one per sub-graph, [`GnnConfig`]) and [`Kragrec`], the cross-entropy of the
//!   answer letter with the soft tokens after BOS ([`KragrecExample`], [`kragrec_loss`]).
//!   Rows come from `pgraphrag-recsys`: retrieval cached per row ([`RetrievalCache`],
//!   [`retrieve_row`]), sub-graph features ([`GraphFeatures`]), the released prompt around
//!   the graph token ([`KragrecPrompt`]); a trained encoder scores the option letters
//!   ([`kragrec_letter_scores`]) into the rows the recsys metrics read
//!   ([`kragrec_scored_row`]), and is saved with [`GraphEncoder::save`].
//!
//! Binaries that train should call [`retain_freed_memory`] first (an allocator setting worth
//! 1.5× on a training step with glibc).
//!
//! Everything runs on the CPU by default; the `cuda` feature adds candle's CUDA backend (pass
//! a CUDA [`candle_core::Device`]). The library reads no environment variables and takes
//! every path from its caller.
//!
//! ```
//! use candle_core::{Device, Var};
//! use pgraphrag_llm::{LlamaDims, LlamaF32, LlamaLayerF32};
//! use pgraphrag_train::Llama;
//! # let d = LlamaDims { n_embd: 4, n_head: 2, n_kv_head: 1, head_dim: 2, n_ff: 8, n_layer: 1,
//! #                     rope_dim: 2, rope_base: 10000.0, eps: 1e-5, vocab: 5 };
//! # let v = |n: usize| (0..n).map(|i| (i as f32 * 0.37).sin() * 0.5).collect::<Vec<f32>>();
//! # let layer = LlamaLayerF32 { attn_norm: vec![1.0; 4], attn_q: v(16), attn_k: v(8), attn_v: v(8),
//! #     attn_output: v(16), ffn_norm: vec![1.0; 4], ffn_gate: v(32), ffn_up: v(32), ffn_down: v(32) };
//! # let w = LlamaF32 { dims: d, token_embd: v(20), layers: vec![layer], output_norm: vec![1.0; 4], output: None };
//! let model = Llama::from_f32(w, "doc", &Device::Cpu)?;
//! // A trainable soft token after BOS (id 1); gradients reach it through the frozen model.
//! let soft = Var::new(&[[0.1f32, -0.2, 0.3, 0.0]], &Device::Cpu).unwrap();
//! let x = model.embed_with_soft_tokens(&[1], soft.as_tensor(), &[2, 3])?;
//! let h = model.hidden(&x, None, None)?;
//! let loss = model.logits(&h)?.sum_all().unwrap();
//! let grads = loss.backward().unwrap();
//! assert!(grads.get(soft.as_tensor()).is_some());
//! # Ok::<(), pgraphrag_train::TrainError>(())
//! ```
#![deny(missing_docs)]

mod ablation;
mod alloc;
mod attention;
mod block;
mod checkpoint;
mod data;
mod error;
mod fused;
mod gnn;
mod kernels;
mod kragrec;
mod kragrec_data;
mod kragrec_eval;
mod llama;
mod lm;
mod lora;
mod ops;
mod optim;
mod soft_prompt;
mod trainer;

pub use ablation::Ablation;
pub use alloc::retain_freed_memory;
pub use data::{
    AnswerData, ExampleEncoder, check_answer_file, load_answer_examples, parse_answer_examples,
};
pub use error::{Result, TrainError};
pub use gnn::{GnnConfig, GraphEncoder, SoftTokens, Subgraph};
pub use kragrec::{Kragrec, KragrecExample, kragrec_loss};
pub use kragrec_data::{
    CachedRetrieval, GraphFeatures, KragrecPrompt, RetrievalCache, retrieve_row,
};
pub use kragrec_eval::{
    KRAGREC_METHOD, kragrec_letter_scores, kragrec_scored_row, letter_log_probs,
};
pub use llama::Llama;
pub use lm::{AnswerExample, LoraLm, answer_loss};
pub use lora::{Lora, LoraConfig, LoraTarget};
pub use optim::{AdamW, ParamsAdamW};
pub use soft_prompt::{GraphTokens, SoftPrompt};
pub use trainer::{Flow, Objective, TrainConfig, TrainEvent, TrainReport, Trainer};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
