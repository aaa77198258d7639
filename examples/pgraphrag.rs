//! PGraphRAG end to end on a few users, in one screen: load a split, build the user-item graph,
//! rank each user's profile with BM25 (user + neighbours), build the paper's prompt, generate with
//! a local GGUF model, extract the answer and score it with ROUGE.
//!
//! ```sh
//! scripts/fetch-llms.sh --smollm-only
//! cargo run --release -p pgraphrag-examples --example pgraphrag -- ../shared/data/pgraphrag/amazon_dev.json 3
//! ```
use anyhow::Context;
use pgraphrag_core::{GenParams, Generator};
use pgraphrag_data::{IdPolicy, load_split};
use pgraphrag_graph::GraphOptions;
use pgraphrag_llm::{DEFAULT_MODEL_FILE, GgufModel, GgufOptions};
use pgraphrag_metrics::rouge::{Rouge, RougeOptions};
use pgraphrag_prompt::extract::{ExtractOptions, extract};
use pgraphrag_prompt::pgraphrag::{Mode, PromptBuilder, Task as PromptTask};
use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, Task};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let split_path = args.next().context("usage: pgraphrag SPLIT.json [USERS]")?;
    let users: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(3);

    let split = load_split(split_path.as_ref())?;
    let graph = split.to_graph(GraphOptions::default(), IdPolicy::Normalize);
    let mut ranker = ProfileRanker::new(CachedBm25::pgraphrag(), ProfileOptions::default());
    // The model: $PGRAPHRAG_MODEL, else where scripts/fetch-llms.sh puts it.
    let model_path = std::env::var_os("PGRAPHRAG_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new("models").join(DEFAULT_MODEL_FILE));
    let model = GgufModel::load(&model_path, GgufOptions::default())?;
    let prompts = PromptBuilder::new(PromptTask::Title);
    let rouge = Rouge::new(RougeOptions::default());
    let params = GenParams {
        max_tokens: 32,
        ..Default::default()
    };

    for user in split.users.iter().take(users) {
        let target = user.target().context("a user without reviews")?;
        let item = IdPolicy::Normalize.apply(&target.pid);
        let query = Task::Title.query(target.title.as_deref(), target.text.as_deref());
        let mut profile = ranker.rank(&graph, &user.id, &item, &query)?;
        profile.target = pgraphrag_core::Entry {
            title: target.title.clone(),
            text: target.text.clone(),
            rating: target.rating,
            ..Default::default()
        };
        let prompt = prompts.chat(&profile, Mode::Both, 2);
        let output = model.generate(&prompt, &params)?;
        let title = extract(&output, PromptTask::Title, &ExtractOptions::default());
        let gold = target.title.as_deref().unwrap_or("").trim();
        let r = rouge.score(&title, gold);
        println!(
            "{}\n  gold: {gold}\n  generated: {title}\n  ROUGE-1 F {:.3}",
            user.id, r.rouge1.fmeasure
        );
    }
    Ok(())
}
