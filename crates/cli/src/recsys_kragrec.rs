//! Trained K-RagRec in the CLI: the data, index and retrieval setup `pgraphrag train kragrec`
//! and `pgraphrag recsys eval --adapter` share, the cached per-row retrieval, and the
//! evaluation of a trained encoder into the recsys rows file and tables.
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use pgraphrag_core::Progress;
use pgraphrag_recsys::{
    EvalData, HopVectors, IndexOptions, KgRetriever, Ml1m, Ml100k, MovieKg, Retrieval, Row,
    ScoredRow, build_kg,
};
use pgraphrag_retrieval::dense::BertEncoder;
use pgraphrag_train::{
    Ablation, CachedRetrieval, GraphEncoder, GraphFeatures, GraphTokens, KragrecPrompt, Llama,
    RetrievalCache, SoftPrompt, kragrec_letter_scores, kragrec_scored_row, letter_log_probs,
    retrieve_row,
};

use crate::error::{OrUsage, usage};
use crate::progress::Bar;
use crate::recsys_cmd::{AggregationArg, DatasetArg, RunConfig, encoder, resume};

/// Triples recorded per row (as the KG-Text method's prompt gets).
pub(crate) const MAX_TRIPLES: usize = 10;

/// Where the K-RagRec rows come from: the flags `train kragrec` and `recsys eval` share.
#[derive(clap::Args, Debug)]
pub(crate) struct DataArgs {
    /// Which rows: ML-100K leave-one-out or the ML-1M slice.
    #[arg(long, value_enum, default_value = "ml1m")]
    pub dataset: DatasetArg,
    /// The ML-100K folder (its KG serves both datasets).
    #[arg(long)]
    pub ml100k: PathBuf,
    /// The ML-1M slice folder (movies.dat, test_filtered.csv, movies_id_name.txt).
    #[arg(long)]
    pub ml1m: Option<PathBuf>,
    /// BERT encoder folder (retrieval queries, node and relation features).
    #[arg(long)]
    pub encoder: PathBuf,
    /// The encoder's linear layers: f32, or int8 (quantized at load, about twice as fast
    /// with AVX-512 VNNI; its vectors and index are keyed apart from f32's).
    #[arg(long, default_value = "f32")]
    pub encoder_precision: pgraphrag_retrieval::dense::Precision,
    /// The index file: loaded when it exists, else built and saved there.
    #[arg(long)]
    pub index: PathBuf,
    /// Message passing when the index is built.
    #[arg(long, value_enum, default_value = "mean")]
    pub aggregation: AggregationArg,
}

/// The files a K-RagRec command reads or keeps, with their flags, for the output checks
/// ([`crate::output`]) made before anything is loaded.
#[derive(Clone, Default)]
pub(crate) struct Inputs(Vec<(&'static str, PathBuf)>);

impl Inputs {
    /// The ML-100K files in `ml100k` and the ML-1M slice's files in `ml1m`.
    pub(crate) fn dataset(ml100k: &Path, ml1m: Option<&Path>) -> Inputs {
        let mut v: Vec<(&'static str, PathBuf)> = pgraphrag_recsys::ML100K_FILES
            .iter()
            .map(|f| ("--ml100k", ml100k.join(f)))
            .collect();
        if let Some(d) = ml1m {
            for f in ["movies.dat", "test_filtered.csv", "movies_id_name.txt"] {
                v.push(("--ml1m", d.join(f)));
            }
        }
        Inputs(v)
    }

    /// These inputs and `path` of `flag`, when given.
    pub(crate) fn with(mut self, flag: &'static str, path: Option<&Path>) -> Inputs {
        if let Some(p) = path {
            self.0.push((flag, p.to_path_buf()));
        }
        self
    }

    /// As [`crate::output::file`] takes them.
    pub(crate) fn list(&self) -> Vec<crate::output::Input<'_>> {
        self.0.iter().map(|(f, p)| (*f, p.as_path())).collect()
    }
}

/// Checks, before anything is loaded, the outputs of `recsys eval` and `train kragrec`:
/// `--index` (written when it is not a file yet) against the inputs, each of `outputs` (flag, path)
/// against the inputs, the index and the other outputs, and the `--results` folder's files.
pub(crate) fn check_outputs(
    inputs: Inputs,
    index: &Path,
    outputs: &[(&'static str, Option<&Path>)],
    results: Option<&Path>,
) -> anyhow::Result<()> {
    if !index.is_file() {
        // Built and saved there; an existing index (through a link too) is only read.
        crate::output::file("--index", index, &inputs.list())?;
    }
    let mut all = inputs.with("--index", Some(index));
    for &(flag, path) in outputs {
        all = all.with(flag, path);
    }
    if let Some(dir) = results {
        let files = ["results.md", "results.json"];
        crate::output::folder("--results", dir, &files, &all.list())?;
    }
    for &(flag, path) in outputs {
        let Some(path) = path else { continue };
        let others: Vec<_> = all.list().into_iter().filter(|(f, _)| *f != flag).collect();
        crate::output::file(flag, path, &others)?;
    }
    Ok(())
}

/// Everything loaded for K-RagRec rows.
pub(crate) struct Loaded {
    pub kg: MovieKg,
    pub data: EvalData,
    pub enc: BertEncoder,
    pub enc_id: String,
    pub vectors: HopVectors,
}

/// Loads the dataset, the KG, the sentence encoder and the index (built and saved when
/// missing).
pub(crate) fn load(a: &DataArgs, bar: &Bar) -> anyhow::Result<Loaded> {
    let ml = Ml100k::load(&a.ml100k).or_usage()?;
    let kg = build_kg(&ml)?;
    let data = match a.dataset {
        DatasetArg::Ml100k => EvalData::ml100k(&ml, &kg)?,
        DatasetArg::Ml1m => {
            let dir = a
                .ml1m
                .as_ref()
                .ok_or_else(|| usage("--dataset ml1m needs --ml1m DIR (the MovieLens-1M slice)"))?;
            EvalData::ml1m(&Ml1m::load(dir).or_usage()?, &ml, &kg)?
        }
    };
    let (enc, enc_id) = encoder(&a.encoder, a.encoder_precision)?;
    let vectors = open_index(&a.index, a.aggregation, &enc, &enc_id, &kg, bar)?;
    Ok(Loaded {
        kg,
        data,
        enc,
        enc_id,
        vectors,
    })
}

/// The index at `path`, or built (with `aggregation`) and saved there.
pub(crate) fn open_index(
    path: &Path,
    aggregation: AggregationArg,
    enc: &BertEncoder,
    enc_id: &str,
    kg: &MovieKg,
    bar: &Bar,
) -> anyhow::Result<HopVectors> {
    if path.exists() {
        return HopVectors::load(path, enc_id, &kg.graph, Some(enc.dim())).or_usage();
    }
    let opts = IndexOptions {
        aggregation: aggregation.into(),
        ..IndexOptions::default()
    };
    let v = HopVectors::build(&kg.graph, enc, enc_id, &opts, bar)?;
    v.save(path)?;
    eprintln!("built and saved the index {}", path.display());
    Ok(v)
}

/// What the features and retrieval were made with: the encoder file's `features` and part of
/// the retrieval cache's key.
pub(crate) fn features_id(l: &Loaded) -> String {
    format!("{}|{}|hop0", l.enc_id, l.vectors.aggregation().name())
}

/// What a trained encoder (or soft prompt) records as its features: [`features_id`], and the
/// ablated variant unless it is K-RagRec itself, so evaluating it with another variant's
/// retrieval is refused.
pub(crate) fn adapter_features(l: &Loaded, ablation: Ablation) -> String {
    match ablation {
        Ablation::Full => features_id(l),
        a => format!("{}|ablation{}", features_id(l), a.name()),
    }
}

/// The retrieval cache's key: settings, index and KG identity.
pub(crate) fn cache_key(l: &Loaded, retrieval: &Retrieval) -> String {
    format!(
        "{}|{}|kg{:016x}|{:?}|triples{MAX_TRIPLES}",
        features_id(l),
        l.data.dataset.name(),
        l.vectors.kg_fingerprint(),
        retrieval
    )
}

/// Each of `rows`' retrieval, from `cache` or retrieved (and saved every 100 rows and at the
/// end, so an interrupted run keeps what it retrieved).
pub(crate) fn retrieve_rows(
    retriever: &KgRetriever<'_>,
    data: &EvalData,
    rows: &[(usize, Row)],
    cache: &mut RetrievalCache,
    bar: &Bar,
) -> anyhow::Result<Vec<CachedRetrieval>> {
    bar.start(rows.len() as u64, "rows retrieved");
    let mut out = Vec::with_capacity(rows.len());
    for (n, (i, row)) in rows.iter().enumerate() {
        let r = match cache.get(*i) {
            Some(r) => r.clone(),
            None => {
                let r = retrieve_row(
                    retriever,
                    &data.popularity,
                    &data.titles,
                    &row.history,
                    MAX_TRIPLES,
                )
                .with_context(|| format!("row {i}"))?;
                cache.insert(*i, r.clone());
                r
            }
        };
        out.push(r);
        if n % 100 == 99 {
            cache.save()?;
        }
        bar.advance(1);
    }
    cache.save()?;
    bar.finish();
    Ok(out)
}

/// The retrieval cache next to `out` (`OUT.retrieval.json`) unless given.
pub(crate) fn cache_path(given: Option<&Path>, out: &Path) -> PathBuf {
    given.map(Path::to_path_buf).unwrap_or_else(|| {
        let mut p = out.as_os_str().to_owned();
        p.push(".retrieval.json");
        p.into()
    })
}

/// What `recsys eval --adapter` needs beyond the data.
pub(crate) struct AdapterEval<'a> {
    pub data: &'a DataArgs,
    pub adapter: &'a Path,
    pub model: &'a Path,
    pub out: &'a Path,
    pub cache: Option<&'a Path>,
    pub start: usize,
    pub rows: usize,
    pub m: &'a [usize],
    pub style: pgraphrag_recsys::PromptStyle,
    pub ablation: Ablation,
    pub lora: Option<&'a Path>,
    pub seed: u64,
    pub results: Option<&'a Path>,
    pub quiet: bool,
}

/// `pgraphrag recsys eval --adapter ENCODER`: the trained K-RagRec on the rows, appended to
/// the rows file (resumably), summarised by the recsys metrics.
pub(crate) fn eval_adapter(a: AdapterEval<'_>) -> anyhow::Result<()> {
    let bar = Bar::new(a.quiet);
    let mut l = load(a.data, &bar)?;
    l.data.slice(a.start, a.rows);
    if l.data.rows.is_empty() {
        bail!(usage(format!(
            "no rows in {}..{} of the {} dataset",
            a.start,
            a.start + a.rows,
            l.data.dataset.name()
        )));
    }
    let samplers =
        a.m.iter()
            .map(|&m| l.data.sampler(m, a.seed))
            .collect::<Result<Vec<_>, _>>()
            .or_usage()?;
    let device = candle_core::Device::Cpu;
    let model = Llama::from_gguf(a.model, &device)
        .with_context(|| format!("loading {}", a.model.display()))
        .or_usage()?;
    let mut native = pgraphrag_llm::GgufModel::load(
        a.model,
        pgraphrag_llm::GgufOptions {
            activations: pgraphrag_llm::Activations::F32,
            ..Default::default()
        },
    )
    .with_context(|| format!("loading {}", a.model.display()))
    .or_usage()?;
    // LoRA w/ K-RagRec: the adapters on both paths (candle's forward pass and the native
    // engine's, for rows without soft tokens).
    // The file is read once, checked against the model already loaded.
    let lora = match a.lora {
        Some(p) => {
            let lora = pgraphrag_train::Lora::load(&model, p)
                .with_context(|| format!("--lora {}", p.display()))
                .or_usage()?;
            native
                .set_adapter(Some(lora.to_adapter()?))
                .with_context(|| format!("--lora {}", p.display()))
                .or_usage()?;
            Some(lora)
        }
        None => None,
    };
    let features = adapter_features(&l, a.ablation);
    let loaded: pgraphrag_train::Result<Box<dyn GraphTokens>> =
        if a.ablation == Ablation::NoEncoding {
            SoftPrompt::load(a.adapter, model.base_id(), &features, &device)
                .map(|p| Box::new(p) as Box<dyn GraphTokens>)
        } else {
            GraphEncoder::load(a.adapter, model.base_id(), &features, &device)
                .map(|e| Box::new(e) as Box<dyn GraphTokens>)
        };
    let enc = loaded
        .with_context(|| format!("--adapter {}", a.adapter.display()))
        .or_usage()?;
    let prompt = KragrecPrompt::new(pgraphrag_llm::LlmTokenizer::from_gguf(a.model)?, a.style)?;
    let config = RunConfig {
        dataset: a.data.dataset,
        model: match a.lora {
            Some(p) => format!(
                "k-ragrec:{}+lora:{}:{}",
                a.adapter.display(),
                p.display(),
                model.base_id()
            ),
            None => format!("k-ragrec:{}:{}", a.adapter.display(), model.base_id()),
        },
        encoder: l.enc_id.clone(),
        aggregation: a.data.aggregation,
        style: a.style.name().into(),
        wrap: if a.ablation.facts_as_text() {
            "llama2-inst+soft-prompt+facts".into()
        } else {
            "llama2-inst+graph".into()
        },
        retrieval: match a.ablation {
            Ablation::Full => "paper".into(),
            ab => format!("paper {}", ab.name()),
        },
        seed: a.seed,
        max_triples: MAX_TRIPLES,
    };
    let pgraphrag_eval::Resumed {
        file: mut out,
        rows: earlier,
        ..
    } = resume(a.out, &config)?;
    let done: HashSet<(usize, usize)> = earlier
        .iter()
        .map(|r| (r.row, r.candidates.len()))
        .collect();
    let retrieval = a.ablation.retrieval();
    let index = pgraphrag_recsys::ExactIndex::new(&l.vectors);
    let retriever = KgRetriever::new(&l.kg.graph, &l.vectors, &index, &l.enc, retrieval.clone())?;
    let mut cache =
        RetrievalCache::open(&cache_path(a.cache, a.out), &cache_key(&l, &retrieval)).or_usage()?;
    let knowledge = retrieve_rows(&retriever, &l.data, &l.data.rows, &mut cache, &bar)?;
    let feats = GraphFeatures::new(&l.kg.graph, &l.vectors, &l.enc, retrieval.ego_hops)?;
    let t = Instant::now();
    let mut all = earlier;
    let mut scored = 0usize;
    bar.start(l.data.rows.len() as u64, "rows");
    for ((i, row), k) in l.data.rows.iter().zip(&knowledge) {
        let mut graphs = None;
        for s in &samplers {
            if done.contains(&(*i, s.m())) {
                continue;
            }
            let c = l.data.candidates(s, *i, row)?;
            if graphs.is_none() {
                graphs = Some(feats.subgraphs(&k.centres)?);
            }
            let g = graphs.clone().unwrap_or_default();
            let facts = a.ablation.prompt_facts(&k.triples);
            let ex = prompt.example_with_facts(row, &c, &l.data.titles, g, facts)?;
            let letters = prompt.letter_ids(s.m())?;
            let scores = if ex.graphs.is_empty() {
                // No soft token: the plain prompt, on the native engine's f32 path (its logits
                // equal the candle forward pass's to ~1e-4, docs/train.md; several times faster).
                let ids: Vec<u32> = ex.prefix.iter().chain(&ex.rest).copied().collect();
                letter_log_probs(&native.next_token_logits(&ids)?, letters)
            } else {
                kragrec_letter_scores(&model, enc.as_ref(), lora.as_ref(), &ex, letters)
            }
            .with_context(|| format!("scoring row {i}"))?;
            let mut r = kragrec_scored_row(*i, row, &c, scores, k.triples.clone());
            r.method = match lora {
                Some(_) => format!("lora w/ {}", a.ablation.method()),
                None => a.ablation.method(),
            };
            out.append(&r)?;
            all.push(r);
            scored += 1;
        }
        bar.advance(1);
    }
    bar.finish();
    eprintln!(
        "scored {scored} (row, M) units in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let wanted: HashSet<usize> = l.data.rows.iter().map(|(i, _)| *i).collect();
    all.retain(|r: &ScoredRow| wanted.contains(&r.row) && a.m.contains(&r.candidates.len()));
    crate::recsys_cmd::report(&all, l.data.dataset, &config, "trained encoder", a.results)
}
