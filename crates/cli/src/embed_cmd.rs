//! `pgraphrag embed`: encodes texts with a BERT encoder (masked mean pooling by default).
//!
//! Input: JSON lines `{"id": ..., "text": "..."}` (`id` is any JSON value and is copied through).
//! Output: JSON lines `{"id": ..., "embedding": [floats]}`, one per input line, in order.
//! The run is `pgraphrag_runs::embed::EmbedSpec`.
use std::path::PathBuf;

use pgraphrag_runs::embed::EmbedSpec;

use crate::args::{BackendArg, PoolingArg};
use crate::progress::Bar;

/// Arguments of `pgraphrag embed`.
#[derive(clap::Args)]
pub struct Args {
    /// Model folder (config.json, model.safetensors or pytorch_model.bin, tokenizer.json),
    /// e.g. models/all-MiniLM-L6-v2 from scripts/fetch-minilm.sh.
    #[arg(long)]
    model: PathBuf,
    /// Input JSON lines, each {"id": ..., "text": "..."}.
    #[arg(long)]
    texts: PathBuf,
    /// Output JSON lines, each {"id": ..., "embedding": [...]}.
    #[arg(long)]
    out: PathBuf,
    /// L2-normalise the embeddings (off by default: raw pooled vectors).
    #[arg(long)]
    normalize: bool,
    /// Texts per forward pass.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Pooling.
    #[arg(long, value_enum, default_value = "mean")]
    pooling: PoolingArg,
    /// Forward pass.
    #[arg(long, value_enum, default_value = "native")]
    backend: BackendArg,
    /// Truncation length in tokens (default: the model's limit, 512 for BERT).
    #[arg(long)]
    max_length: Option<usize>,
    /// The native pass's linear layers: f32, or int8 (quantized at load; about twice as fast
    /// with AVX-512 VNNI; mean cosine 0.999 to f32; cached apart from f32 vectors).
    #[arg(long, default_value = "f32")]
    precision: pgraphrag_retrieval::dense::Precision,
    /// Embedding cache, a SQLite file or a PostgreSQL database (postgres://...,
    /// `--features postgres`): texts already in it are not encoded again, and an interrupted
    /// run resumes where it stopped.
    #[arg(long)]
    cache: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Runs `pgraphrag embed`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut inputs = vec![("--texts", args.texts.as_path()), ("--model", &args.model)];
    if let Some(c) = &args.cache {
        inputs.push(("--cache", c));
    }
    crate::output::file("--out", &args.out, &inputs)?;
    let spec = EmbedSpec {
        model: args.model.clone(),
        texts: args.texts.clone(),
        out: args.out.clone(),
        normalize: args.normalize,
        batch: args.batch,
        pooling: args.pooling.into(),
        backend: args.backend.into(),
        max_length: args.max_length,
        precision: args.precision,
        cache: args.cache.clone(),
    };
    let r = spec.run(&Bar::new(args.quiet))?;
    if !args.quiet {
        eprintln!(
            "{} embeddings of dimension {} -> {}",
            r.rows,
            r.dim,
            args.out.display()
        );
    }
    Ok(())
}
