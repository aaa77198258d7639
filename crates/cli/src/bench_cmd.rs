//! `pgraphrag bench`: PGraphRAG's generation grid (`master_generation.py`) and evaluation
//! (`master_eval.py`) on one split and task, with a local GGUF model (SmolLM2 by default) or
//! an OpenAI-compatible server.
//!
//! Pipeline: load the split → build the user-item graph of the whole split → rank the first
//! `--limit` users' profiles with BM25 (the released notebook's semantics, as `pgraphrag
//! rank`) → for each user and each (mode, k) build the prompt → generate each distinct
//! prompt once through the SQLite cache `DIR/cache.sqlite` (a rerun reuses every finished
//! generation) → write `OUTPUT-*.json`, extract answers, score → `results.md`, `results.svg`,
//! `results.csv`, and the table on stdout. See `docs/bench.md`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pgraphrag_core::Generator;
use pgraphrag_core::{RankedProfile, SummaryScope};
use pgraphrag_data::{RankingRecord, write_rankings};
use pgraphrag_eval::{
    Bench, CachedGenerator, ConfigOutputs, RatingScorer, Recipe, ResultsTable, RunConfig, RunName,
    Scorer, TextScorer, Wrapper, cold_start, gold, paired_p_values, pgraphrag_grid, rank_all,
    ranking_file_name, write_atomic, write_output_file,
};
use pgraphrag_graph::UserItemGraph;
use pgraphrag_llm::{
    Activations, ContextOverflow, Engine, GgufModel, GgufOptions, OpenAiClient, OpenAiOptions,
    Prefill, WeightFormat,
};
use pgraphrag_metrics::Meteor;
use pgraphrag_prompt::extract::ExtractOptions;
use pgraphrag_prompt::pgraphrag::{Language, Mode, Task};
use pgraphrag_retrieval::profile::ProfileRanker;
use pgraphrag_stages::{EntryFormat, LlmSummarizer, SummarizeJob, SummaryPrompt};

use crate::error::usage;
use crate::progress::Bar;
use crate::summarize_cmd::{job_error, open_journal, summary_budget};

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
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pub ks: Vec<usize>,
    /// Most new tokens per generation (default: 256 text, 32 title, 8 rating).
    #[arg(long)]
    pub max_tokens: Option<usize>,
    /// Sampler seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Sampling temperature (0 = greedy; 0.4 is the released GPT setting).
    #[arg(long, default_value_t = 0.4)]
    pub temperature: f64,
    /// Nucleus sampling mass.
    #[arg(long)]
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
    #[arg(long, default_value_t = 32)]
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
    #[arg(long, default_value_t = 64)]
    pub item_summary_tokens: usize,
    /// The item summarizer's context in tokens (prompt and summary; reviews beyond it are
    /// dropped, the graph's first kept).
    #[arg(long, default_value_t = 2048)]
    pub item_summary_context: usize,
    /// Append one line per newly generated answer to this file, right after the answer is
    /// committed to the cache (`stored <cache key>`): a journal to follow a long run with
    /// `tail -f`, or to count what a killed run had finished.
    #[arg(long)]
    pub journal: Option<PathBuf>,
}

/// The dataset and split names from a split file name like `amazon_dev.json`.
pub(crate) fn names(path: &Path) -> (String, String) {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    match stem.split_once('_') {
        Some((d, s)) if !d.is_empty() && !s.is_empty() => (d.to_string(), s.replace('_', "-")),
        _ => (stem, "split".into()),
    }
}

/// A generator chosen at run time: the grid takes any `Generator`.
type Backend = Box<dyn Generator>;

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

/// Loads the model; returns it with its cache id and its label for file names.
fn backend(args: &Args) -> anyhow::Result<(Backend, String, String)> {
    if args.openai_url.is_none() {
        let (model, label) = load_gguf(args)?;
        let id = model.cache_id();
        return Ok((Box::new(model) as Backend, id, label));
    }
    if let Some(url) = &args.openai_url {
        let Some(name) = args.openai_model.clone() else {
            bail!("--openai-url needs --openai-model NAME");
        };
        let key = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.is_empty());
        let client = OpenAiClient::new(
            url.clone(),
            name.clone(),
            OpenAiOptions::default().with_api_key(key),
        )
        .with_context(|| format!("--openai-url {url}"))?;
        let id = client.cache_id();
        return Ok((Box::new(client) as Backend, id, name));
    }
    unreachable!("backend() loads a GGUF model unless --openai-url is given")
}

/// The local GGUF model file (`--model`, else [`default_model_path`]), which must exist.
pub(crate) fn model_file(args: &Args) -> anyhow::Result<PathBuf> {
    let path = args.model.clone().unwrap_or_else(default_model_path);
    if !path.is_file() {
        bail!(
            "model file {} not found: run scripts/fetch-llms.sh --smollm-only (or pass --model FILE.gguf, \
             set $PGRAPHRAG_MODEL, or use --openai-url)",
            path.display()
        );
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

/// Loads the local GGUF model; returns it with its label for file names.
fn load_gguf(args: &Args) -> anyhow::Result<(GgufModel, String)> {
    let path = model_file(args)?;
    let model = GgufModel::load(&path, gguf_options(args))
        .with_context(|| format!("loading the GGUF model {}", path.display()))?;
    // Which engine and kernels this CPU got (the kernels change speed, never results).
    eprintln!(
        "model {}: {:?} engine{}",
        path.display(),
        model.engine(),
        model
            .kernels_used()
            .map(|k| format!(", kernels {k}"))
            .unwrap_or_default()
    );
    let file = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let label = file.split('.').next().unwrap_or("model").to_string();
    Ok((model, label))
}

/// `--item-summaries`: every profile's target-item summary (without the user's own review),
/// computed where the store lacks it, and exported to `OUT/item_summaries.jsonl`.
fn item_summaries(
    args: &Args,
    store_path: &Path,
    model: &GgufModel,
    profiles: &[RankedProfile],
    graph: &UserItemGraph,
    bar: &Bar,
) -> anyhow::Result<HashMap<String, String>> {
    let questions = cold_start::item_questions(profiles, graph);
    let budget = summary_budget(model, args.item_summary_context, args.item_summary_tokens)?;
    let summarizer = LlmSummarizer::new(
        model,
        SummaryPrompt::item_reviews(),
        model.tokenizer(),
        budget,
    );
    let (model_id, version) = (model.cache_id(), summarizer.version());
    let store = crate::artifacts::summary_store(store_path, "--item-summaries")?;
    let report = SummarizeJob::for_format(EntryFormat::PRODUCT_REVIEW, &model_id, &version)
        .scope(SummaryScope::Question)
        .run(&questions, &summarizer, &store, bar)
        .map_err(job_error)?;
    eprintln!(
        "item summaries: {} users, {} done before, {} computed in {:.1}s, {} items without other reviews, {} failed; store {}",
        report.users,
        report.done_before,
        report.computed,
        report.seconds,
        report.skipped_empty,
        report.failed,
        store_path.display()
    );
    if !report.failures.is_empty() {
        for f in &report.failures {
            eprintln!("failed: {f}");
        }
        bail!(
            "{} of {} item summaries failed; a rerun retries only those",
            report.failed,
            report.users
        );
    }
    store.export_jsonl(&args.out.join("item_summaries.jsonl"), &model_id, &version)?;
    Ok(store.summaries(&model_id, &version)?.into_iter().collect())
}

/// The Markdown table of [`paired_p_values`] against `baseline`.
fn p_value_table(table: &ResultsTable, p: &[Vec<f64>], baseline: RunConfig) -> String {
    let mut out = format!(
        "\nTwo-sided paired t-tests over users against `{baseline}`:\n\n| mode_k |{}\n|---|{}\n",
        table
            .columns
            .iter()
            .map(|c| format!(" p ({c}) |"))
            .collect::<String>(),
        "---:|".repeat(table.columns.len())
    );
    for (row, ps) in table.rows.iter().zip(p) {
        out.push_str(&format!("| {} |", row.config));
        for v in ps {
            if v.is_nan() {
                out.push_str(" – |");
            } else if *v < 0.001 {
                out.push_str(" <0.001 |");
            } else {
                out.push_str(&format!(" {v:.3} |"));
            }
        }
        out.push('\n');
    }
    out
}

fn scorer(task: Task) -> anyhow::Result<Box<dyn Scorer>> {
    Ok(match task {
        Task::Rating => Box::new(RatingScorer::default()),
        Task::Text | Task::Title => {
            let meteor =
                crate::wordnet::load()?.map(|wn| Meteor::with_wordnet(wn, Default::default()));
            if meteor.is_none() {
                eprintln!("{}", crate::wordnet::missing_note());
            }
            Box::new(TextScorer::new(meteor))
        }
    })
}

/// Runs `pgraphrag bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let task: Task = args.task;
    let mut bench = grid(&args)?;
    let (dataset, split_name) = names(&args.split);

    // Rank: the released code's graph and BM25 semantics, as `pgraphrag rank` does by default.
    let split = crate::args::load_split(&args.split)?;
    let recipe = Recipe::ReleasedCode;
    let policy = recipe.id_policy();
    let graph = recipe.graph(&split);
    let mut split = split;
    if let Some(n) = args.limit {
        split.users.truncate(n);
    }
    if split.users.is_empty() {
        return Err(usage("no users to run (--limit 0 or an empty split)"));
    }
    let mut popts = recipe.profile_options();
    popts.k = popts.k.max(args.ks.iter().copied().max().unwrap_or(1));
    let ranker = ProfileRanker::new(recipe.bm25(), popts);
    let bar = Bar::new(args.quiet);
    let ranked = match &args.store {
        Some(url) => {
            let dataset = format!("{dataset}_{split_name}");
            crate::rank_cmd::rank_from_store(url, &dataset, recipe, &split, task, ranker, &bar)?
        }
        None => rank_all(&split, &graph, policy, task, ranker, &bar)?,
    };
    let records: Vec<RankingRecord> = ranked.iter().map(RankingRecord::from_profile).collect();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating the output folder {}", args.out.display()))?;
    let ranker_name = "bm25";
    let ranking_file = args.out.join(ranking_file_name(
        &format!("{dataset}_{split_name}"),
        task.reference_name(),
        ranker_name,
    ));
    write_rankings(&ranking_file, &records)
        .with_context(|| format!("writing {}", ranking_file.display()))?;
    // The prompts read the ranking file's values (`int()` ratings, `"None"` strings).
    let profiles: Vec<_> = records.iter().map(RankingRecord::to_profile).collect();

    // Generate (after the item summaries, when asked for).
    let mut summaries = HashMap::new();
    let (model, model_id, label) = match &args.item_summaries {
        Some(store) => {
            let (gguf, label) = load_gguf(&args)?;
            summaries = item_summaries(&args, store, &gguf, &profiles, &graph, &bar)?;
            let id = gguf.cache_id();
            (Box::new(gguf) as Backend, id, label)
        }
        None => backend(&args)?,
    };
    let label = args.model_name.clone().unwrap_or(label);
    let cache_path = args
        .cache
        .clone()
        .unwrap_or_else(|| args.out.join("cache.sqlite"));
    let cache = crate::artifacts::generation_cache(&cache_path, "--cache")?;
    let mut generator = CachedGenerator::new(model, model_id, cache);
    if let Some(path) = &args.journal {
        let file = std::sync::Mutex::new(open_journal(path)?);
        generator = generator.with_on_stored(move |key| {
            use std::io::Write as _;
            // One write per line (O_APPEND): a line is either whole or absent after a crash.
            let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
            let _ = f.write_all(format!("stored {key}\n").as_bytes());
        });
    }
    bench.item_summaries = summaries;
    eprintln!(
        "bench: {} users of {dataset}_{split_name}, task {}, {} configs, model {label}, cache {}",
        profiles.len(),
        task.reference_name(),
        bench.configs.len(),
        crate::artifacts::describe(&cache_path)
    );
    let (outputs, stats) = bench.run_with_progress(&profiles, &generator, &bar)?;

    // Write and score.
    let name = RunName {
        dataset: dataset.clone(),
        split: split_name.clone(),
        task: task.reference_name().to_string(),
        model: label.clone(),
        ranker: ranker_name.to_string(),
    };
    for c in &outputs {
        write_output_file(&args.out.join(name.output_file(c.config)), &c.outputs)?;
    }
    let golds: Vec<String> = profiles.iter().map(|p| gold(p, task)).collect();
    // The released ranking, but the fixed extraction unless asked for the released one.
    let extract = if args.reference_extraction {
        Recipe::ReleasedCode.extract_options()
    } else {
        Recipe::Clean.extract_options()
    };
    let scorer = scorer(task)?;
    let table = score(&name, task, &outputs, &golds, &extract, scorer.as_ref())?;
    let mut markdown = table.to_markdown();
    if args.item_summaries.is_some() {
        let k = args.ks.iter().copied().max().unwrap_or(1);
        let baseline = RunConfig::new(Mode::Both, k);
        if configs_have(&outputs, baseline) {
            let p = paired_p_values(task, &outputs, &golds, &extract, scorer.as_ref(), baseline)?;
            markdown.push_str(&p_value_table(&table, &p, baseline));
        }
    }
    write_atomic(&args.out.join("results.md"), markdown.as_bytes())?;
    write_atomic(&args.out.join("results.csv"), table.to_csv().as_bytes())?;
    write_atomic(&args.out.join("results.svg"), table.to_svg().as_bytes())?;
    println!("{markdown}");
    println!("stats {}", serde_json::to_string(&stats)?);
    eprintln!(
        "{} prompts for {} (user, config) pairs: {} from the cache, {} generated in {:.1}s; wrote {}",
        stats.unique_prompts,
        stats.jobs,
        stats.cache_hits,
        stats.generated,
        stats.seconds,
        args.out.display()
    );
    Ok(())
}

fn configs_have(outputs: &[ConfigOutputs], config: RunConfig) -> bool {
    outputs.iter().any(|c| c.config == config)
}

fn score(
    name: &RunName,
    task: Task,
    outputs: &[ConfigOutputs],
    golds: &[String],
    extract: &ExtractOptions,
    scorer: &dyn Scorer,
) -> anyhow::Result<ResultsTable> {
    let title = format!(
        "{}_{}_{}_{}_{}",
        name.dataset, name.split, name.task, name.model, name.ranker
    );
    Ok(ResultsTable::score(
        title, task, outputs, golds, extract, scorer,
    )?)
}
