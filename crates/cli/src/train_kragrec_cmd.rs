//! `pgraphrag train kragrec`: K-RagRec's graph encoder and projector trained on recsys rows
//! (retrieval as the KG-Text method does it, cached per row; the released `train.py` prompt
//! around the graph token; the cross-entropy of the answer letter through the frozen LLM),
//! resumably, written as `ENCODER.safetensors` for `pgraphrag recsys eval --adapter`.
//! See `docs/train.md` and `docs/kragrec.md`.
use std::path::PathBuf;

use anyhow::{Context, bail};
use pgraphrag_recsys::{ExactIndex, KgRetriever, PromptStyle};
use pgraphrag_train::{
    Ablation, GnnConfig, GraphEncoder, GraphFeatures, Kragrec, KragrecExample, KragrecPrompt,
    Llama, Lora, LoraConfig, RetrievalCache, SoftPrompt, SoftTokens,
};

use crate::common::kragrec::{
    DataArgs, Inputs, adapter_features, cache_key, cache_path, check_outputs, load, retrieve_rows,
};
use crate::common::train::{TrainFlags, train};
use crate::error::{OrUsage, usage};
use crate::progress::Bar;

/// Soft tokens of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SoftTokensArg {
    /// One token, the mean over the sub-graphs (the released code).
    Mean,
    /// One token per sub-graph (the paper).
    PerSubgraph,
}

/// Encoder size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GnnArg {
    /// 2 layers, hidden 128, 4 heads, projector 256.
    Small,
    /// The paper's 4 layers, hidden 1024, 4 heads, projector 2048.
    Paper,
}

/// Arguments of `pgraphrag train kragrec`.
#[derive(clap::Args, Debug)]
pub struct KragrecArgs {
    #[command(flatten)]
    data: DataArgs,
    /// The frozen LLM: a llama-architecture GGUF (e.g. models/SmolLM2-135M-Instruct.Q4_1.gguf).
    #[arg(long)]
    model: PathBuf,
    /// Where the trained encoder is written (safetensors, atomically) when the run ends.
    #[arg(long)]
    out: PathBuf,
    /// The retrieval cache (default: --out with `.retrieval.json`).
    #[arg(long)]
    retrieval_cache: Option<PathBuf>,
    /// First row index of the training range (ML-1M: rows 0..9000 are the released training
    /// rows, 9000..10000 the test rows).
    #[arg(long, default_value_t = 0)]
    start: usize,
    /// Rows in the training range.
    #[arg(long, default_value_t = 9000)]
    rows: usize,
    /// Train on at most this many rows (the first of the range that have sub-graphs, unless
    /// --all-rows).
    #[arg(long)]
    max_rows: Option<usize>,
    /// Validation rows: the next this many usable rows after the training rows.
    #[arg(long, default_value_t = 0)]
    val_rows: usize,
    /// Also train on rows the popularity gate gives no sub-graph (no soft token; with a
    /// frozen LLM they give the encoder no gradient).
    #[arg(long)]
    all_rows: bool,
    /// Candidates per row (option letters A..).
    #[arg(long, default_value_t = 20)]
    m: usize,
    /// Candidate sampling seed (the evaluation's).
    #[arg(long, default_value_t = 2025)]
    sample_seed: u64,
    /// Instruction wording: released-train (the released train.py), released-eval or paper.
    #[arg(long, default_value = "released-train")]
    style: String,
    /// One mean soft token (released code) or one per sub-graph (paper).
    #[arg(long, value_enum, default_value = "mean")]
    soft_tokens: SoftTokensArg,
    /// Encoder size.
    #[arg(long, value_enum, default_value = "small")]
    gnn: GnnArg,
    /// Train an ablated variant (the paper's appendix A.6): none (K-RagRec), -indexing,
    /// -popularity, -re-ranking or -encoding (a soft prompt, the triples as text; --out is
    /// then the soft prompt).
    #[arg(long, default_value = "none", allow_hyphen_values = true)]
    ablation: String,
    /// Also train LoRA adapters on the LLM (the paper's "LoRA w/ K-RagRec": rank 8, alpha
    /// 16, dropout 0.1 on q and v) and write them here (for `recsys eval --lora`).
    #[arg(long)]
    lora_out: Option<PathBuf>,
    #[command(flatten)]
    run: TrainFlags,
}

/// Runs `pgraphrag train kragrec` (the caller has limited candle's threads).
pub fn run(a: KragrecArgs) -> anyhow::Result<()> {
    let style = PromptStyle::parse(&a.style).or_usage()?;
    let ablation = Ablation::parse(&a.ablation).or_usage()?;
    let d = &a.data;
    let inputs = Inputs::dataset(&d.ml100k, d.ml1m.as_deref())
        .with("--encoder", Some(&d.encoder))
        .with("--model", Some(&a.model));
    let outputs = [
        ("--out", Some(a.out.as_path())),
        ("--lora-out", a.lora_out.as_deref()),
        ("--retrieval-cache", a.retrieval_cache.as_deref()),
        ("--checkpoint", Some(a.run.checkpoint.as_path())),
    ];
    check_outputs(inputs, &d.index, &outputs, None)?;
    let bar = Bar::new(a.run.quiet);
    let mut l = load(&a.data, &bar)?;
    l.data.slice(a.start, a.rows);
    if l.data.rows.is_empty() {
        bail!(usage(format!(
            "no rows in {}..{} of the {} dataset",
            a.start,
            a.start + a.rows,
            l.data.dataset.name()
        )));
    }
    let retrieval = ablation.retrieval();
    let index = ExactIndex::new(&l.vectors);
    let retriever = KgRetriever::new(&l.kg.graph, &l.vectors, &index, &l.enc, retrieval.clone())?;
    let mut cache = RetrievalCache::open(
        &cache_path(a.retrieval_cache.as_deref(), &a.out),
        &cache_key(&l, &retrieval),
    )
    .or_usage()?;
    // Retrieve in chunks until enough usable rows are found.
    let want = a.max_rows.map(|m| m + a.val_rows);
    let mut usable = Vec::new();
    let mut scanned = 0;
    for chunk in l.data.rows.chunks(200) {
        let got = retrieve_rows(&retriever, &l.data, chunk, &mut cache, &bar)?;
        scanned += chunk.len();
        for ((i, row), k) in chunk.iter().zip(got) {
            if a.all_rows || !k.centres.is_empty() {
                usable.push((*i, row.clone(), k));
            }
        }
        if want.is_some_and(|w| usable.len() >= w) {
            break;
        }
    }
    if let Some(w) = want {
        usable.truncate(w);
    }
    let n_train = usable.len().saturating_sub(a.val_rows);
    if n_train == 0 {
        bail!(usage(format!(
            "{} usable rows in the {scanned} scanned, {} kept for validation: nothing to train on",
            usable.len(),
            a.val_rows
        )));
    }
    eprintln!(
        "{} training and {} validation rows ({} rows scanned; {} cached retrievals)",
        n_train,
        usable.len() - n_train,
        scanned,
        cache.len()
    );

    let device = pgraphrag_llm::candle_device(a.run.device).or_usage()?;
    let model = Llama::from_gguf(&a.model, &device)
        .with_context(|| format!("loading {} for training", a.model.display()))
        .or_usage()?;
    let prompt = KragrecPrompt::new(pgraphrag_llm::LlmTokenizer::from_gguf(&a.model)?, style)?;
    let feats = GraphFeatures::new(&l.kg.graph, &l.vectors, &l.enc, retrieval.ego_hops)?;
    let sampler = l.data.sampler(a.m, a.sample_seed).or_usage()?;
    let dim = feats.dim();
    let mut examples: Vec<KragrecExample> = Vec::with_capacity(usable.len());
    let mut tokens = 0usize;
    for (i, row, k) in &usable {
        let c = l.data.candidates(&sampler, *i, row)?;
        let facts = ablation.prompt_facts(&k.triples);
        let ex = prompt
            .example_with_facts(row, &c, &l.data.titles, feats.subgraphs(&k.centres)?, facts)
            .with_context(|| format!("row {i}"))?;
        tokens += ex.prefix.len() + ex.rest.len();
        examples.push(ex);
    }
    let val = examples.split_off(n_train);
    let graphs = examples.iter().chain(&val).flat_map(|e| &e.graphs);
    let (mut n_graphs, mut nodes, mut edges, mut largest) = (0usize, 0usize, 0usize, 0usize);
    for g in graphs {
        n_graphs += 1;
        nodes += g.nodes.len() / dim;
        edges += g.edges.len();
        largest = largest.max(g.nodes.len() / dim);
    }
    eprintln!(
        "prompts: {:.0} tokens on average; {n_graphs} sub-graphs, {nodes} nodes (largest {largest}), {edges} edges, {:.0} MB of features",
        tokens as f64 / usable.len() as f64,
        ((nodes + edges) * dim * 4) as f64 / 1e6
    );

    let llm_dim = model.dims().n_embd;
    let mut gnn = match a.gnn {
        GnnArg::Small => GnnConfig::small(dim, llm_dim),
        GnnArg::Paper => GnnConfig::paper(dim, llm_dim),
    };
    gnn.tokens = match a.soft_tokens {
        SoftTokensArg::Mean => SoftTokens::Mean,
        SoftTokensArg::PerSubgraph => SoftTokens::PerSubgraph,
    };
    let features = adapter_features(&l, ablation);
    // LoRA's A is drawn from a seed of its own, so the encoder's initial weights are the same
    // with and without it.
    let lora = match &a.lora_out {
        Some(_) => {
            Some(Lora::new(&model, LoraConfig::kragrec(), a.run.seed.wrapping_add(1)).or_usage()?)
        }
        None => None,
    };
    let summary = if ablation == Ablation::NoEncoding {
        let n = match gnn.tokens {
            SoftTokens::Mean => 1,
            SoftTokens::PerSubgraph => retrieval.top_n,
        };
        let soft = SoftPrompt::new(&model, n, a.run.seed).or_usage()?;
        let job = Kragrec::new(&model, &soft, lora.as_ref())?;
        let (_, summary) = train(&a.run, &job, &examples, &val, &bar)?;
        soft.save(&a.out, model.base_id(), &features)
            .with_context(|| format!("writing the soft prompt {}", a.out.display()))?;
        summary
    } else {
        let encoder = GraphEncoder::new(gnn, a.run.seed, &device).or_usage()?;
        let job = Kragrec::new(&model, &encoder, lora.as_ref())?;
        let (_, summary) = train(&a.run, &job, &examples, &val, &bar)?;
        encoder
            .save(&a.out, model.base_id(), &features)
            .with_context(|| format!("writing the encoder {}", a.out.display()))?;
        summary
    };
    if let (Some(l), Some(path)) = (&lora, &a.lora_out) {
        l.save(path)
            .with_context(|| format!("writing the LoRA adapters {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    eprintln!("wrote {} {summary}", a.out.display());
    Ok(())
}
