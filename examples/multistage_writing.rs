//! The multistage writing paper (Li et al. 2023) in a screen of wiring: examples → ranked
//! past documents and keywords → two cells of its Table 2, zero-shot with a local model.
//!
//! 1. a real corpus slice: one PGraphRAG split's reviews as authored documents, the paper's
//!    examples built from them (`pgraphrag-corpora`: a target over 300 characters with two
//!    earlier reviews, its first 150 characters the immediate context);
//! 2. the non-generation stages (`pgraphrag-stages` through `pgraphrag_eval::multistage::Preparer`):
//!    BM25 over the author's past reviews, cut at 2,500 characters, and the context-independent
//!    keywords over an IDF table of the training split;
//! 3. the cells `ImmedCtx` and `RankDocBM25`: the paper's generation input answered by
//!    SmolLM2 through the generation cache, scored with corpus BLEU and ROUGE
//!    (`pgraphrag-eval`).
//!
//! ```sh
//! cargo run -p pgraphrag-examples --example multistage_writing -- [SPLIT.json] [--examples 2] [--model M.gguf]
//! ```
//! The split defaults to `$PGRAPHRAG_DATA/pgraphrag/gap_dev.json` (`PGRAPHRAG_DATA` defaults to
//! `../shared/data`), the model to `$PGRAPHRAG_MODEL` or `models/SmolLM2-135M-Instruct.Q4_1.gguf`.
use std::path::PathBuf;

use anyhow::Context;
use pgraphrag_core::NoProgress;
use pgraphrag_corpora::lamp::BuildOptions;
use pgraphrag_corpora::multistage::build_examples;
use pgraphrag_data::pgraphrag_split_path;
use pgraphrag_eval::multistage::{
    Cell, CellKind, LlmStages, MultistageGrid, Preparer, RankerName, train_idf,
};
use pgraphrag_eval::{CachedGenerator, GenerationCache};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_stages::multistage::{ContextRanker, Keywords, RankDocBM25, WordFilter};

fn main() -> anyhow::Result<()> {
    let data = std::env::var_os("PGRAPHRAG_DATA").map_or("../shared/data".into(), PathBuf::from);
    let mut split_path = pgraphrag_split_path(&data, "gap", "dev");
    let mut model_path = std::env::var_os("PGRAPHRAG_MODEL").map_or(
        "models/SmolLM2-135M-Instruct.Q4_1.gguf".into(),
        PathBuf::from,
    );
    let mut n = 2;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--examples" => n = args.next().context("--examples needs a value")?.parse()?,
            "--model" => model_path = args.next().context("--model needs a value")?.into(),
            _ => split_path = a.into(),
        }
    }
    // 1. The paper's examples from real reviews (too few users for a split: all train).
    let docs = pgraphrag_corpora::convert_pgraphrag_split_file(&split_path)?.docs;
    let all = build_examples(&docs, &BuildOptions::multistage())?.examples;
    let examples: Vec<_> = all.iter().take(n).cloned().collect();
    println!(
        "{} examples from {} reviews; running {}",
        all.len(),
        docs.len(),
        examples.len()
    );

    // 2. Ranked past reviews and keywords (IDF over the training split's distinct documents).
    let idf = train_idf(&all)?;
    let bm25 = RankDocBM25::bm25();
    let preparer = Preparer::new(vec![(RankerName::RankDocBM25, &bm25 as &dyn ContextRanker)])
        .with_keywords(Keywords::new(WordFilter::paper(&idf)));
    let (prepared, times) = preparer.prepare_all(&examples, &NoProgress)?;
    let first = &prepared[0];
    let ranked = first.ranked(RankerName::RankDocBM25).context("ranked")?;
    println!(
        "example {}: {} past reviews, {} ranked entries kept ({} characters), keywords: {}",
        first.id,
        first.past.len(),
        ranked.entries.len(),
        ranked.text.chars().count(),
        first.keywords.as_deref().unwrap_or_default().join(", ")
    );
    println!("prepared in {:.2} s", times.total());

    // 3. Two cells of Table 2, zero-shot, 32 new tokens each.
    let model = GgufModel::load(&model_path, GgufOptions::default()).with_context(|| {
        format!(
            "{} (scripts/fetch-llms.sh --smollm-only)",
            model_path.display()
        )
    })?;
    let mut grid = MultistageGrid::new(vec![
        Cell::paper(CellKind::ImmedCtx),
        Cell::paper(CellKind::RankDocBM25),
    ]);
    grid.params.max_tokens = 32;
    let generator = CachedGenerator::new(&model, model.cache_id(), GenerationCache::in_memory()?);
    let run = grid.run(
        &examples,
        &prepared,
        &generator,
        &LlmStages::default(),
        &NoProgress,
    )?;
    println!("generated: {}", run.cells[1].outputs[0].replace('\n', " "));
    let table = grid.results(
        "PGraphRAG gap_dev reviews, SmolLM2 zero-shot",
        &examples,
        &run,
    )?;
    println!("{}", table.to_markdown());
    Ok(())
}
