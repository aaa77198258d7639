//! K-RagRec's inference-only comparison in a screen of wiring: a frozen LLM picks the next
//! movie out of M lettered candidates, with no knowledge, with K-RagRec's retrieved KG
//! sub-graphs as text (KG-Text), with KAPING-style triples, or not at all (random).
//!
//! 1. MovieLens-100K with its Freebase KG (RecBole's atomic files) and leave-one-out rows;
//! 2. the hop-field sub-graph index (MiniLM, mean message passing), built in memory;
//! 3. per row and method: knowledge, the paper's prompt, the letters scored by SmolLM2;
//! 4. ACC and Recall@k with bootstrap intervals (`pgraphrag-metrics`).
//!
//! ```sh
//! cargo run -p pgraphrag-examples --example kragrec -- [ML100K_DIR] [--rows 3] [--m 20] [--model M.gguf]
//! ```
//! ML-100K defaults to `models/corpora/ml-100k` (`scripts/fetch-corpora.sh`), the encoder is
//! `models/all-MiniLM-L6-v2` (`scripts/fetch-minilm.sh`), the model `$PGRAPHRAG_MODEL` or
//! `models/SmolLM2-135M-Instruct.Q4_1.gguf`. `pgraphrag recsys eval` is the resumable,
//! full-size version (rows file, SQLite score cache, progress bar).
use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Context;
use pgraphrag_core::NoProgress;
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_recsys::{
    CachedScorer, EvalConfig, EvalData, ExactIndex, GgufLetterScorer, HopVectors, IndexOptions,
    Kaping, KgRetriever, Method, Ml100k, Recommender, Retrieval, ScoreCache, Wrap, build_kg,
    evaluate, summarize,
};
use pgraphrag_retrieval::dense::{BertEncoder, EncoderOptions};

fn main() -> anyhow::Result<()> {
    let mut ml100k: PathBuf = "models/corpora/ml-100k".into();
    let mut model_path = std::env::var_os("PGRAPHRAG_MODEL").map_or(
        "models/SmolLM2-135M-Instruct.Q4_1.gguf".into(),
        PathBuf::from,
    );
    let (mut rows, mut m) = (3, 20);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rows" => rows = args.next().context("--rows needs a value")?.parse()?,
            "--m" => m = args.next().context("--m needs a value")?.parse()?,
            "--model" => model_path = args.next().context("--model needs a value")?.into(),
            _ => ml100k = a.into(),
        }
    }
    // 1. Data, KG and rows.
    let ml = Ml100k::load(&ml100k).context("scripts/fetch-corpora.sh fetches ML-100K")?;
    let kg = build_kg(&ml)?;
    let mut data = EvalData::ml100k(&ml, &kg)?;
    data.slice(0, rows);
    let sampler = data.sampler(m, 2025)?;

    // 2. The sub-graph index.
    let encoder = BertEncoder::load_with(
        "models/all-MiniLM-L6-v2".as_ref(),
        EncoderOptions {
            normalize: true,
            ..EncoderOptions::default()
        },
    )
    .context("scripts/fetch-minilm.sh fetches the encoder")?;
    let enc_id = encoder.fingerprint()?;
    let vectors = HopVectors::build(
        &kg.graph,
        &encoder,
        &enc_id,
        &IndexOptions::default(),
        &NoProgress,
    )?;
    let index = ExactIndex::new(&vectors);
    let retriever = KgRetriever::new(&kg.graph, &vectors, &index, &encoder, Retrieval::paper())?;
    let kaping = Kaping::new(&kg.graph, &encoder, 10)?;
    println!(
        "{} row(s), M = {m}; KG {} entities, {} triples",
        data.rows.len(),
        kg.graph.entity_count(),
        kg.graph.edge_count()
    );

    // 3. Every method on every row, letters scored by the LLM (cached in memory).
    let model = GgufModel::load(&model_path, GgufOptions::default())
        .with_context(|| format!("{} (scripts/fetch-llms.sh)", model_path.display()))?;
    let cache = ScoreCache::in_memory()?;
    let scorer = CachedScorer::new(GgufLetterScorer::new(model, Wrap::Chat), &cache);
    let rec = Recommender::over(&data, &retriever, &kaping, EvalConfig::default());
    let mut scored = Vec::new();
    evaluate(
        &rec,
        &data,
        &scorer,
        &Method::ALL,
        &[sampler],
        &HashSet::new(),
        &NoProgress,
        &mut |r| {
            scored.push(r);
            Ok(())
        },
    )?;
    if let Some(r) = scored.iter().find(|r| !r.retrieved.is_empty()) {
        println!("row {} ({}): {:?}", r.row, r.method, &r.retrieved[0]);
    }

    // 4. Metrics.
    println!("| method | M | rows | ACC | R@3 | R@5 |\n|---|---:|---:|---|---|---|");
    for s in summarize(&scored, &[3, 5], 1000, 0.95, 0)? {
        let cell = |v: f64, i: [f64; 2]| format!("{v:.3} [{:.3}, {:.3}]", i[0], i[1]);
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            s.method,
            s.m,
            s.rows,
            cell(s.acc, s.intervals[0]),
            cell(s.recall[0].1, s.intervals[1]),
            cell(s.recall[1].1, s.intervals[2])
        );
    }
    Ok(())
}
