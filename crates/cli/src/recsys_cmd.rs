//! `pgraphrag recsys`: K-RagRec (knowledge-graph RAG for LLM recommendation). `index` builds
//! the hop-field sub-graph index of the ML-100K Freebase KG; `eval` scores the inference-only
//! methods on ML-100K or the ML-1M slice, resumably, and prints ACC and Recall@k.
//!
//! The runs are `pgraphrag_runs::kragrec`'s specs; this module maps flags to them, checks the
//! outputs before anything loads, and renders progress and tables.
use std::path::PathBuf;

use anyhow::bail;
use pgraphrag_recsys::{Method, PromptStyle, Wrap};
use pgraphrag_runs::kragrec::{AdapterSpec, EvalSpec, IndexSpec, RetrievalPreset};

use crate::common::kragrec::{AggregationArg, DataArgs, DatasetArg, Inputs, check_outputs, show};
use crate::error::{OrUsage, usage};
use crate::progress::Bar;

/// Arguments of `pgraphrag recsys`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Build the hop-field sub-graph index of the ML-100K KG and save it.
    Index(IndexArgs),
    /// Score the inference-only methods (none, kg-text, kaping, each optionally +cyclic) and
    /// the no-LLM baselines (random, popularity, history) and print ACC and Recall@k with
    /// bootstrap intervals.
    Eval(Box<EvalArgs>),
    /// Recompute the tables of rows files (no model): every method's ACC and Recall@k, and
    /// methods compared per row (--pair A:B).
    Compare(crate::recsys_compare::CompareArgs),
}

#[derive(clap::Args)]
struct IndexArgs {
    /// The ML-100K folder (ml-100k.inter, .item, .kg, .link; scripts/fetch-corpora.sh).
    #[arg(long)]
    ml100k: PathBuf,
    /// BERT encoder folder (e.g. models/all-MiniLM-L6-v2).
    #[arg(long)]
    encoder: PathBuf,
    /// The encoder's linear layers: f32, or int8 (quantized at load, about twice as fast
    /// with AVX-512 VNNI; its vectors and index are keyed apart from f32's).
    #[arg(long, default_value = "f32")]
    encoder_precision: pgraphrag_retrieval::dense::Precision,
    /// Index file to write.
    #[arg(long)]
    out: PathBuf,
    /// Message passing.
    #[arg(long, value_enum, default_value = "mean")]
    aggregation: AggregationArg,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args)]
struct EvalArgs {
    /// Which rows: ML-100K leave-one-out or the ML-1M slice.
    #[arg(long, value_enum)]
    dataset: DatasetArg,
    /// The ML-100K folder (its KG serves both datasets).
    #[arg(long)]
    ml100k: PathBuf,
    /// The ML-1M slice folder (movies.dat, test_filtered.csv, movies_id_name.txt); needed
    /// with --dataset ml1m.
    #[arg(long)]
    ml1m: Option<PathBuf>,
    /// BERT encoder folder (retrieval queries, KAPING triples).
    #[arg(long)]
    encoder: PathBuf,
    /// The encoder's linear layers: f32, or int8 (quantized at load, about twice as fast
    /// with AVX-512 VNNI; its vectors and index are keyed apart from f32's).
    #[arg(long, default_value = "f32")]
    encoder_precision: pgraphrag_retrieval::dense::Precision,
    /// The index file: loaded when it exists, else built and saved there.
    #[arg(long)]
    index: PathBuf,
    /// Message passing when the index is built.
    #[arg(long, value_enum, default_value = "mean")]
    aggregation: AggregationArg,
    /// GGUF model that scores the option letters.
    #[arg(long)]
    model: PathBuf,
    /// Rows file (JSON lines, one per row, method and M); appended to, and what it already
    /// holds is not scored again.
    #[arg(long)]
    out: PathBuf,
    /// Score cache (SQLite); default: the rows file with `.scores.sqlite` appended.
    #[arg(long)]
    cache: Option<PathBuf>,
    /// First row index (the released evaluation uses ML-1M rows 9000..10000).
    #[arg(long, default_value_t = 0)]
    start: usize,
    /// Number of rows.
    #[arg(long)]
    rows: usize,
    /// Candidate-set sizes.
    #[arg(long, value_delimiter = ',', default_value = "20,10")]
    m: Vec<usize>,
    /// Methods.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "none,kg-text,kaping,random"
    )]
    methods: Vec<String>,
    /// Instruction wording: paper, released-eval or released-train (default: paper; with
    /// --adapter, released-train, what `train kragrec` trains with).
    #[arg(long)]
    style: Option<String>,
    /// A trained K-RagRec encoder (`pgraphrag train kragrec --out`): score its rows (method
    /// k-ragrec, its soft token after `<s>[INST]`, --model being its base model) instead of
    /// the inference-only methods. --methods and --wrap are not used.
    #[arg(long)]
    adapter: Option<PathBuf>,
    /// The retrieval cache of --adapter (default: the rows file with `.retrieval.json`).
    #[arg(long)]
    retrieval_cache: Option<PathBuf>,
    /// With --adapter: the ablated variant it was trained as (`train kragrec --ablation`):
    /// none, -indexing, -popularity, -re-ranking or -encoding.
    #[arg(long, default_value = "none", allow_hyphen_values = true)]
    ablation: String,
    /// With --adapter: LoRA adapters trained with it (`train kragrec --lora-out`), applied to
    /// every row (method `lora w/ k-ragrec`).
    #[arg(long)]
    lora: Option<PathBuf>,
    /// How the instruction reaches the model: chat or llama2-inst.
    #[arg(long, default_value = "chat")]
    wrap: String,
    /// Retrieval settings: paper or released.
    #[arg(long, default_value = "paper")]
    retrieval: String,
    /// Candidate sampling seed.
    #[arg(long, default_value_t = 2025)]
    seed: u64,
    /// Triples in a KG-Text prompt, and KAPING's k.
    #[arg(long, default_value_t = 10)]
    max_triples: usize,
    /// Write results.md and results.json (the table below) into this folder.
    #[arg(long)]
    results: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Runs `pgraphrag recsys`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Sub::Index(a) => index(a),
        Sub::Eval(a) => eval(*a),
        Sub::Compare(a) => crate::recsys_compare::run(a),
    }
}

fn index(a: IndexArgs) -> anyhow::Result<()> {
    let inputs = Inputs::dataset(&a.ml100k, None).with("--encoder", Some(&a.encoder));
    crate::output::file("--out", &a.out, &inputs.list())?;
    let spec = IndexSpec {
        ml100k: a.ml100k,
        encoder: a.encoder,
        encoder_precision: a.encoder_precision,
        out: a.out,
        aggregation: a.aggregation.into(),
    };
    let v = spec.run(&Bar::new(a.quiet))?;
    println!(
        "index {}: {} entities, hops 0..={}, {} dims, {} message passing; built in {:.2} s",
        spec.out.display(),
        v.entities,
        v.max_hop,
        v.dim,
        v.aggregation,
        v.seconds
    );
    Ok(())
}

fn eval(a: EvalArgs) -> anyhow::Result<()> {
    if a.adapter.is_none() && (a.ablation != "none" || a.lora.is_some()) {
        bail!(usage(
            "--ablation and --lora need --adapter (a trained K-RagRec encoder)"
        ));
    }
    let inputs = Inputs::dataset(&a.ml100k, a.ml1m.as_deref())
        .with("--encoder", Some(&a.encoder))
        .with("--model", Some(&a.model))
        .with("--adapter", a.adapter.as_deref())
        .with("--lora", a.lora.as_deref())
        .with("--cache", a.cache.as_deref());
    let outputs = [
        ("--out", Some(a.out.as_path())),
        ("--retrieval-cache", a.retrieval_cache.as_deref()),
    ];
    check_outputs(inputs, &a.index, &outputs, a.results.as_deref())?;
    let data = DataArgs {
        dataset: a.dataset,
        ml100k: a.ml100k.clone(),
        ml1m: a.ml1m.clone(),
        encoder: a.encoder.clone(),
        encoder_precision: a.encoder_precision,
        index: a.index.clone(),
        aggregation: a.aggregation,
    }
    .spec()?;
    let bar = Bar::new(a.quiet);
    let report = if let Some(adapter) = &a.adapter {
        // The candle forward pass: see `common::train::prepare_candle_process`.
        crate::common::train::prepare_candle_process();
        if a.retrieval != "paper" {
            bail!(usage(
                "--adapter uses --retrieval paper (what train kragrec trains with)"
            ));
        }
        let spec = AdapterSpec {
            retrieval_cache: a.retrieval_cache.clone(),
            m: a.m.clone(),
            style: PromptStyle::parse(a.style.as_deref().unwrap_or("released-train")).or_usage()?,
            ablation: pgraphrag_train::Ablation::parse(&a.ablation).or_usage()?,
            lora: a.lora.clone(),
            seed: a.seed,
            ..AdapterSpec::new(data, adapter, &a.model, &a.out, a.start, a.rows)
        };
        spec.run(&bar)?
    } else {
        let spec = EvalSpec {
            cache: a.cache.clone(),
            m: a.m.clone(),
            methods: a
                .methods
                .iter()
                .map(|m| Method::parse(m))
                .collect::<Result<Vec<_>, _>>()
                .or_usage()?,
            style: PromptStyle::parse(a.style.as_deref().unwrap_or("paper")).or_usage()?,
            wrap: Wrap::parse(&a.wrap).or_usage()?,
            retrieval: match a.retrieval.as_str() {
                "paper" => RetrievalPreset::Paper,
                "released" => RetrievalPreset::Released,
                other => return Err(usage(format!("--retrieval {other:?}: paper or released"))),
            },
            seed: a.seed,
            max_triples: a.max_triples,
            ..EvalSpec::paper(data, &a.model, &a.out, a.start, a.rows)
        };
        spec.run(&bar)?
    };
    show(&report, &a.out, a.results.as_deref())
}
