//! `pgraphrag recsys eval --adapter`: the evaluation of a trained K-RagRec encoder (or soft
//! prompt, with LoRA adapters or not) into the recsys rows file and tables. The setup it
//! shares with `train kragrec` is `crate::common::kragrec`.
use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, bail};
use pgraphrag_core::Progress;
use pgraphrag_recsys::{KgRetriever, ScoredRow};
use pgraphrag_train::{
    Ablation, GraphEncoder, GraphFeatures, GraphTokens, KragrecPrompt, Llama, RetrievalCache,
    SoftPrompt, kragrec_letter_scores, kragrec_scored_row, letter_log_probs,
};

use crate::common::kragrec::{
    DataArgs, MAX_TRIPLES, RunConfig, adapter_features, cache_key, cache_path, load, report,
    resume, retrieve_rows,
};
use crate::error::{OrUsage, usage};
use crate::progress::Bar;

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
    report(&all, l.data.dataset, &config, "trained encoder", a.results)
}
