//! Summary-augmented LaMP in a screen of wiring: x̄ = φp(x, R(φq(x), P_u, k), s_u).
//!
//! 1. LaMP-3 (product rating) questions from a real PGraphRAG split (`pgraphrag-corpora`);
//! 2. each user's profile summarised offline with the paper's Table 2 prompt by SmolLM2 into a
//!    resumable store (`pgraphrag-stages`);
//! 3. the paper's Table 3 cells (`base_k0/1/4`, `sum_k0/1`): LaMP's BM25 top-k prompt with and
//!    without the summary, answered by the same model through the generation cache and scored
//!    as LaMP scores LaMP-3 (`pgraphrag-eval`).
//!
//! ```sh
//! cargo run -p pgraphrag-examples --example lamp_summary -- [SPLIT.json] [--users 3] [--model M.gguf]
//! ```
//! The split defaults to `$PGRAPHRAG_DATA/pgraphrag/gap_dev.json` (`PGRAPHRAG_DATA` defaults to
//! `../shared/data`), the model to `$PGRAPHRAG_MODEL` or `models/SmolLM2-135M-Instruct.Q4_1.gguf`.
use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Context;
use pgraphrag_core::{LampTask, NoProgress, Prompt};
use pgraphrag_corpora::lamp::{BuildOptions, lamp3_from_split};
use pgraphrag_data::{load_split, pgraphrag_split_path};
use pgraphrag_eval::lamp_grid::{AnswerReading, LampGrid, table3_configs};
use pgraphrag_eval::{CachedGenerator, GenerationCache};
use pgraphrag_llm::{GgufModel, GgufOptions};
use pgraphrag_prompt::lamp::HfTokenizer;
use pgraphrag_stages::{Budget, LlmSummarizer, SummarizeJob, SummaryPrompt, SummaryStore};

fn main() -> anyhow::Result<()> {
    let data = std::env::var_os("PGRAPHRAG_DATA").map_or("../shared/data".into(), PathBuf::from);
    let mut split_path = pgraphrag_split_path(&data, "gap", "dev");
    let mut model_path = std::env::var_os("PGRAPHRAG_MODEL").map_or(
        "models/SmolLM2-135M-Instruct.Q4_1.gguf".into(),
        PathBuf::from,
    );
    let mut users = 3;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--users" => users = args.next().context("--users needs a value")?.parse()?,
            "--model" => model_path = args.next().context("--model needs a value")?.into(),
            _ => split_path = a.into(),
        }
    }
    // 1. LaMP-3 questions: a user's other reviews are the profile, the target's rating the gold.
    let build = lamp3_from_split(
        &load_split(&split_path)?,
        &BuildOptions::for_task(LampTask::Lamp3),
    )?;
    let mut set = build.train;
    set.questions.truncate(users);
    set.golds.truncate(users);

    // 2. Offline summaries (Table 2's LaMP-3 prompt), one committed row per user.
    let model = GgufModel::load(&model_path, GgufOptions::default()).with_context(|| {
        format!(
            "{} (scripts/fetch-llms.sh --smollm-only)",
            model_path.display()
        )
    })?;
    let reserve = model.prompt_tokens(&Prompt::user(""))?.len();
    let budget = Budget {
        max_new_tokens: 48,
        reserve,
        ..Budget::paper()
    };
    let prompt = SummaryPrompt::table2(LampTask::Lamp3).context("LaMP-3 has a Table 2 prompt")?;
    let summarizer = LlmSummarizer::new(&model, prompt, model.tokenizer(), budget);
    let store = SummaryStore::in_memory()?; // `SummaryStore::open(path)` keeps them
    let (model_id, version) = (model.cache_id(), summarizer.version());
    let report = SummarizeJob::new(LampTask::Lamp3, model_id.as_str(), version.as_str()).run(
        &set.questions,
        &summarizer,
        &store,
        &NoProgress,
    )?;
    println!(
        "summaries: {} computed, {} skipped (empty profile)",
        report.computed, report.skipped_empty
    );
    let summaries: HashMap<String, String> =
        store.summaries(&model_id, &version)?.into_iter().collect();
    if let Some((user, s)) = summaries.iter().next() {
        println!("summary of user {user}: {}", s.replace('\n', " "));
    }

    // 3. The Table 3 grid with the same model downstream, budgets in the model's own tokens.
    let tok = HfTokenizer::from_tokenizer(model.tokenizer().inner().clone())
        .with_clean_up_tokenization_spaces(false);
    let mut grid = LampGrid::new(LampTask::Lamp3, table3_configs());
    grid.reading = AnswerReading::FirstLabel;
    let plan = grid.plan(&set.questions, &tok, Some(&summaries))?;
    let generator = CachedGenerator::new(&model, model_id.clone(), GenerationCache::in_memory()?);
    let runs = grid.run(&plan, &generator, &[0], &NoProgress)?;
    let table = grid.results(
        "LaMP-3 from PGraphRAG reviews, SmolLM2 zero-shot",
        &plan,
        &runs,
        &set.golds,
    )?;
    println!("{}", table.to_markdown());
    Ok(())
}
