//! Thin examples composing the pgraphrag crates; each file is one screen of wiring:
//!
//! | example | shows |
//! |---|---|
//! | `pgraphrag` | PGraphRAG end to end: split, graph, BM25 profile ranking, prompt, a local GGUF model, extraction, ROUGE |
//! | `compose_your_own` | your own `Retriever` (BM25 fused with a length prior) in profile ranking |
//! | `dense_retrieval` | a user's profile reviews ranked with all-MiniLM-L6-v2 (`DenseRetriever`) |
//! | `metrics` | ROUGE, METEOR and BLEU on a few prediction/reference pairs |
//! | `openai_client` | generation through an OpenAI-compatible server (`OpenAiClient`) |
//! | `paper_runs` | the paper pipelines as library values: `pgraphrag-runs` specs chained (corpus conversion, multistage examples, multistage baselines) |
//! | `own_generator` | your own `Generator` (an extractive baseline) in PGraphRAG's grid (`pgraphrag_eval::Bench`) |
//!
//! Run one with `cargo run -p pgraphrag-examples --example NAME -- ARGS` (each file's doc
//! comment gives its arguments). `tests/examples_run.rs` in this package runs every example of
//! the workspace (these and the crates' own `examples/`) on small inputs and checks its output,
//! as part of `cargo test --workspace`.
