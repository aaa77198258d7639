//! # pgraphrag-llm
//!
//! Generator backends: GGUF models on candle (llama, gemma3, qwen) with chat templates and seeded sampling, and an OpenAI-compatible HTTP backend.
#![deny(missing_docs)]
