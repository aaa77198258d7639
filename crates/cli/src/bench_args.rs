//! The options of `pgraphrag bench` (also those of `pgraphrag queue submit bench`) and what they
//! decide before anything runs: the grid, the model file and its load options.
use std::path::{Path, PathBuf};

use pgraphrag_eval::{Bench, RunConfig, Wrapper, pgraphrag_grid};
use pgraphrag_llm::{Activations, ContextOverflow, Engine, GgufOptions, Prefill, WeightFormat};
use pgraphrag_prompt::pgraphrag::{Language, Mode, Task};

use crate::error::usage;

/// A retrieval mode of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// No retrieval (k = 1 only).
    None,
    /// The user's own reviews.
    User,
    /// Other users' reviews of the target item.
    #[value(alias = "neighbour")]
    Neighbor,
    /// User and neighbour reviews.
    Both,
    /// One random review of another user (k = 1 only).
    Random,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::None => Mode::None,
            ModeArg::User => Mode::User,
            ModeArg::Neighbor => Mode::Neighbor,
            ModeArg::Both => Mode::Both,
            ModeArg::Random => Mode::Random,
        }
    }
}

/// The prompt language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LanguageArg {
    /// English (Amazon, Hotel, GAP).
    #[value(alias = "english")]
    En,
    /// Portuguese (B2W).
    #[value(alias = "portuguese")]
    Pt,
}

impl From<LanguageArg> for Language {
    fn from(l: LanguageArg) -> Self {
        match l {
            LanguageArg::En => Language::English,
            LanguageArg::Pt => Language::Portuguese,
        }
    }
}

/// The retriever of `pgraphrag bench`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchRetriever {
    /// BM25Okapi over nltk.word_tokenize(text.lower()), fitted per candidate list (the
    /// released notebook).
    Bm25,
}

/// How a local model holds its weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WeightsArg {
    /// Exactly as stored in the GGUF.
    AsStored,
    /// 4/5-bit tensors re-quantized to Q8_0 at load (SIMD kernels; faster on CPU).
    Q8,
}

/// How the native engine multiplies activations with quantized weights when decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ActivationsArg {
    /// 8-bit activation blocks and exact integer dot products (as candle and llama.cpp).
    Q8,
    /// f32 activations (most precise; how docs/results was generated).
    F32,
}

/// How the native engine processes prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PrefillArg {
    /// Packed kernels whose per-token results do not depend on the batch: a prefix shared
    /// with a recent prompt is reused (bit-identically).
    Rowwise,
    /// The `gemm` crate, no reuse (how the title tables of docs/results were generated).
    Gemm,
}

/// Which implementation runs a local model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// Native CPU engine for llama-architecture models, candle otherwise.
    Auto,
    /// The native CPU engine (llama architecture).
    Native,
    /// candle-transformers' quantized models.
    Candle,
}

/// How the PGraphRAG prompt is handed to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WrapperArg {
    /// The GPT system message + the prompt as user message, in the model's chat template.
    GptChat,
    /// The prompt alone as one user message.
    User,
    /// The released hand-written Llama-3.1 string, sent raw.
    Llama3Raw,
}

/// Arguments of `pgraphrag bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PGraphRAG split (e.g. $PGRAPHRAG_DATA/pgraphrag/amazon_dev.json). Its file name
    /// `{dataset}_{split}.json` names the outputs; `b2w` selects Portuguese directions.
    #[arg(long)]
    pub split: PathBuf,
    /// Rank from this PostgreSQL profile store (postgres://USER@HOST:PORT/DATABASE, holding the
    /// dataset `{dataset}_{split}` from `pgraphrag store load`) instead of the split's in-memory
    /// graph: the same ranking file and prompts. Needs a build with `--features postgres`.
    #[arg(long)]
    pub store: Option<String>,
    /// The generation cache: a SQLite file, or a PostgreSQL database (postgres://...: one cache
    /// shared by runs on any number of machines; needs `--features postgres`). Default:
    /// OUT/cache.sqlite.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// The task (reviewText, reviewTitle, reviewRating also accepted).
    #[arg(long, value_parser = crate::args::task())]
    pub task: Task,
    /// Run on the first N users of the split (neighbours still come from the whole split).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Output folder: cache.sqlite, OUTPUT-*.json, RANKING-*.json, results.md, results.csv,
    /// results.svg (a bar chart of the table).
    #[arg(long)]
    pub out: PathBuf,
    /// A GGUF model (default: models/SmolLM2-135M-Instruct.Q4_1.gguf, see
    /// scripts/fetch-llms.sh; or $PGRAPHRAG_MODEL).
    #[arg(long, conflicts_with = "openai_url")]
    pub model: Option<PathBuf>,
    /// Base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8080/v1); the API key
    /// comes from $OPENAI_API_KEY.
    #[arg(long, requires = "openai_model")]
    pub openai_url: Option<String>,
    /// Model name on the OpenAI-compatible server.
    #[arg(long)]
    pub openai_model: Option<String>,
    /// Label of the model in OUTPUT file names (default: the GGUF file name up to its first
    /// `.`, or the server's model name).
    #[arg(long)]
    pub model_name: Option<String>,
    /// The ranker.
    #[arg(long, value_enum, default_value = "bm25")]
    pub retriever: BenchRetriever,
    /// Modes to run (comma-separated).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "none,user,neighbor,both,random"
    )]
    pub modes: Vec<ModeArg>,
    /// Values of k (comma-separated); none and random run at k = 1 only.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4", value_parser = crate::args::at_least_one)]
    pub ks: Vec<usize>,
    /// Most new tokens per generation (default: 256 text, 32 title, 8 rating).
    #[arg(long, value_parser = crate::args::at_least_one)]
    pub max_tokens: Option<usize>,
    /// Sampler seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Sampling temperature (0 = greedy; 0.4 is the released GPT setting).
    #[arg(long, default_value_t = 0.4, value_parser = crate::args::non_negative)]
    pub temperature: f64,
    /// Nucleus sampling mass.
    #[arg(long, value_parser = crate::args::mass)]
    pub top_p: Option<f64>,
    /// Prompt language (default: pt for b2w splits, en otherwise).
    #[arg(long, value_enum)]
    pub language: Option<LanguageArg>,
    /// How the prompt is wrapped for the model.
    #[arg(long, value_enum, default_value = "gpt-chat")]
    pub wrapper: WrapperArg,
    /// Local model weights in memory.
    #[arg(long, value_enum, default_value = "as-stored")]
    pub weights: WeightsArg,
    /// Which implementation runs a local model.
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineArg,
    /// The native engine's decoding arithmetic (part of the cache key).
    #[arg(long, value_enum, default_value = "q8")]
    pub activations: ActivationsArg,
    /// The native engine's prompt processing (part of the cache key).
    #[arg(long, value_enum, default_value = "rowwise")]
    pub prefill: PrefillArg,
    /// Prompts handed to the model per call: the native engine decodes up to 8 of them at a
    /// time and starts the next as one finishes (answers are identical to one at a time).
    /// Each call's answers are cached before the next call starts.
    #[arg(long, default_value_t = 32, value_parser = crate::args::at_least_one)]
    pub batch: usize,
    /// Keep master_eval.py's never-matching `**Review title:** ""` check in extraction.
    #[arg(long)]
    pub reference_extraction: bool,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
    /// Beyond the paper, for cold-start users: summarise each user's target item from the
    /// other users' reviews of it with the local model (offline, resumable, into this SQLite
    /// summary store) and add an `isum_` twin of every neighbor and both cell, whose prompt
    /// carries that summary; results.md then also has paired t-tests against `both_k{max k}`.
    /// Local GGUF models only. See docs/cold_start.md.
    #[arg(long, conflicts_with = "openai_url")]
    pub item_summaries: Option<PathBuf>,
    /// Most tokens per item summary.
    #[arg(long, default_value_t = 64, value_parser = crate::args::at_least_one)]
    pub item_summary_tokens: usize,
    /// The item summarizer's context in tokens (prompt and summary; reviews beyond it are
    /// dropped, the graph's first kept).
    #[arg(long, default_value_t = 2048, value_parser = crate::args::at_least_one)]
    pub item_summary_context: usize,
    /// Append one line per newly generated answer to this file, right after the answer is
    /// committed to the cache (`stored <cache key>`): a journal to follow a long run with
    /// `tail -f`, or to count what a killed run had finished.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// Skip the first N users of the split (then `--limit` counts from there): e.g. `--skip
    /// 200` leaves out the users a default `--limit 200` run evaluates. The users run get the
    /// rankings and random reviews a run over the whole split gives them.
    #[arg(long, default_value_t = 0)]
    pub skip: usize,
    /// Write the grid's distinct prompts with each user's gold answer to this JSON Lines
    /// file (`{"id","config","system","prompt","target"}`, the input of `pgraphrag train
    /// lora`) and stop after ranking (`--out` gets the RANKING file): no model is loaded,
    /// nothing is generated.
    #[arg(long)]
    pub export_prompts: Option<PathBuf>,
    /// Generate with this LoRA adapter (from `pgraphrag train lora`): added on the fly by the
    /// native engine, merged into f32 copies of the adapted weights by candle (`--engine
    /// candle`, CUDA). It must have been trained on `--model`. Part of the cache key.
    #[arg(long, conflicts_with = "openai_url")]
    pub adapter: Option<PathBuf>,
}

/// Refuses, before anything is read or loaded, outputs that would destroy an input or be
/// written through a link or into a special file: `--journal`, `--export-prompts`, and the
/// ranking file, `results.*` and `item_summaries.jsonl` of the `--out` folder.
pub(crate) fn check_outputs(args: &Args) -> anyhow::Result<()> {
    let mut inputs = vec![("--split", args.split.as_path())];
    for (flag, p) in [
        ("--model", &args.model),
        ("--adapter", &args.adapter),
        ("--cache", &args.cache),
        ("--item-summaries", &args.item_summaries),
    ] {
        if let Some(p) = p {
            inputs.push((flag, p.as_path()));
        }
    }
    let (dataset, split) = names(&args.split);
    let ranking = pgraphrag_eval::ranking_file_name(
        &format!("{dataset}_{split}"),
        args.task.reference_name(),
        "bm25",
    );
    let mut files = vec![ranking.as_str(), "results.md", "results.csv", "results.svg"];
    if args.item_summaries.is_some() {
        files.push("item_summaries.jsonl");
    }
    crate::output::folder("--out", &args.out, &files, &inputs)?;
    crate::output::optional("--journal", args.journal.as_deref(), &inputs)?;
    crate::output::optional("--export-prompts", args.export_prompts.as_deref(), &inputs)
}

/// `(dataset, split)` of the split file's name: `pgraphrag_runs::pgraphrag::split_names`.
pub(crate) use pgraphrag_runs::pgraphrag::split_names as names;

/// The model `pgraphrag bench` loads without `--model`: `$PGRAPHRAG_MODEL` when set;
/// otherwise `models/SmolLM2-135M-Instruct.Q4_1.gguf` in the first of the current directory
/// and its ancestors that has it; otherwise that path under this workspace's root (where
/// `scripts/fetch-llms.sh` puts it), which may not exist yet.
fn default_model_path() -> PathBuf {
    if let Some(p) = std::env::var_os("PGRAPHRAG_MODEL").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let rel = Path::new("models").join(pgraphrag_llm::DEFAULT_MODEL_FILE);
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            let p = dir.join(&rel);
            if p.exists() {
                return p;
            }
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// The local GGUF model file: `--model`, else [`default_model_path`].
pub(crate) fn model_path(args: &Args) -> PathBuf {
    args.model.clone().unwrap_or_else(default_model_path)
}

/// [`model_path`], which must exist (a missing one is bad usage, exit code 2).
#[cfg(feature = "jetstream")]
pub(crate) fn model_file(args: &Args) -> anyhow::Result<PathBuf> {
    let path = model_path(args);
    if !path.is_file() {
        return Err(usage(format!(
            "model file {} not found: run scripts/fetch-llms.sh --smollm-only (or pass --model FILE.gguf, \
             set $PGRAPHRAG_MODEL, or use --openai-url)",
            path.display()
        )));
    }
    Ok(path)
}

/// The options the local model is loaded with (prompts too long for the context lose their
/// beginning).
pub(crate) fn gguf_options(args: &Args) -> GgufOptions {
    GgufOptions {
        overflow: ContextOverflow::TruncateLeft,
        weights: match args.weights {
            WeightsArg::AsStored => WeightFormat::AsStored,
            WeightsArg::Q8 => WeightFormat::Q8_0,
        },
        engine: match args.engine {
            EngineArg::Auto => Engine::Auto,
            EngineArg::Native => Engine::Native,
            EngineArg::Candle => Engine::Candle,
        },
        activations: match args.activations {
            ActivationsArg::Q8 => Activations::Q8,
            ActivationsArg::F32 => Activations::F32,
        },
        prefill: match args.prefill {
            PrefillArg::Rowwise => Prefill::Rowwise,
            PrefillArg::Gemm => Prefill::Gemm,
        },
        ..Default::default()
    }
}

/// The grid `pgraphrag bench` runs for `args`: its cells (with the `isum_` twins under
/// `--item-summaries`), language, wrapper, batch and generation parameters; the item
/// summaries themselves are added by [`run`]. `pgraphrag queue submit bench` submits the same.
pub(crate) fn grid(args: &Args) -> anyhow::Result<Bench> {
    let modes: Vec<Mode> = args.modes.iter().map(|&m| m.into()).collect();
    if args.ks.is_empty() || args.ks.contains(&0) {
        return Err(usage("--ks must list k values of at least 1 (e.g. 1,2,4)"));
    }
    let mut configs = pgraphrag_grid(&modes, &args.ks);
    if args.item_summaries.is_some() {
        let twins: Vec<RunConfig> = configs
            .iter()
            .filter(|c| matches!(c.mode, Mode::Neighbor | Mode::Both))
            .map(|c| c.with_item_summary())
            .collect();
        if twins.is_empty() {
            return Err(usage(
                "--item-summaries adds the summary to neighbor and both cells: add one of them to --modes",
            ));
        }
        configs.extend(twins);
    }
    if configs.is_empty() {
        return Err(usage(
            "the grid is empty: none and random run at k = 1 only, so add 1 to --ks or another mode",
        ));
    }
    let mut bench = Bench::new(args.task, configs);
    bench.language = match args.language {
        Some(l) => l.into(),
        None => Language::for_dataset(&names(&args.split).0),
    };
    bench.wrapper = match args.wrapper {
        WrapperArg::GptChat => Wrapper::GptChat,
        WrapperArg::User => Wrapper::UserOnly,
        WrapperArg::Llama3Raw => Wrapper::Llama3Raw,
    };
    bench.batch = args.batch.max(1);
    bench.params.seed = args.seed;
    bench.params.temperature = args.temperature;
    bench.params.top_p = args.top_p;
    if let Some(m) = args.max_tokens {
        bench.params.max_tokens = m;
    }
    Ok(bench)
}
