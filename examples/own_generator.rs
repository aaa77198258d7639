//! Your own `Generator` in PGraphRAG's grid: `pgraphrag_eval::Bench` runs the paper's (mode, k)
//! grid on any `Generator`, so a baseline is one `generate` method. `FirstRetrievedTitle` is
//! an extractive baseline for the review-title task: it answers with the title of the first
//! review the prompt shows (the top-ranked of the user's own reviews, or of the neighbours'
//! when the mode has no user reviews), and with nothing when the prompt shows none (`none`).
//! It needs no model, so the whole grid runs in a second and its scores are a floor an LLM
//! has to beat.
//!
//! ```sh
//! cargo run -p pgraphrag-examples --example own_generator -- [SPLIT.json] [--users 3]
//! ```
//! The split defaults to `$PGRAPHRAG_DATA/pgraphrag/amazon_dev.json` (`PGRAPHRAG_DATA`
//! defaults to `../shared/data`). METEOR needs WordNet (see `pgraphrag_metrics::wordnet`); without
//! it the table shows METEOR as missing.
use std::path::PathBuf;

use anyhow::Context;
use pgraphrag_core::{GenParams, Generator, NoProgress, Prompt, Result, Task};
use pgraphrag_data::{RankingRecord, load_split, pgraphrag_split_path};
use pgraphrag_eval::rank_all;
use pgraphrag_eval::{Bench, Recipe, ResultsTable, TextScorer, gold, pgraphrag_grid};
use pgraphrag_metrics::{Meteor, wordnet};
use pgraphrag_prompt::pgraphrag::Mode;
use pgraphrag_retrieval::profile::ProfileRanker;

/// Answers `Review title: {t}` with the first `Review title: "{t}", Review text:` of the prompt.
struct FirstRetrievedTitle;

impl Generator for FirstRetrievedTitle {
    fn generate(&self, prompt: &Prompt, _: &GenParams) -> Result<String> {
        let text = match prompt {
            Prompt::Raw(s) => s.as_str(),
            Prompt::Chat(m) => m.last().map_or("", |m| m.content.as_str()),
        };
        // Retrieved reviews are quoted with `"`; the target review with `'`.
        let title = text
            .split_once("Review title: \"")
            .and_then(|(_, rest)| rest.split_once("\", Review text: ").map(|(t, _)| t));
        Ok(title.map_or(String::new(), |t| format!("Review title: {t}")))
    }
}

fn main() -> anyhow::Result<()> {
    let data = std::env::var_os("PGRAPHRAG_DATA").map_or("../shared/data".into(), PathBuf::from);
    let mut split_path = pgraphrag_split_path(&data, "amazon", "dev");
    let mut users = 3;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--users" => users = args.next().context("--users needs a value")?.parse()?,
            _ => split_path = a.into(),
        }
    }
    // Rank as the released code does: the whole split's graph, then the first `users` users.
    let recipe = Recipe::ReleasedCode;
    let mut split = load_split(&split_path)?;
    let graph = recipe.graph(&split);
    split.users.truncate(users);
    let mut options = recipe.profile_options();
    options.k = options.k.max(4);
    let ranker = ProfileRanker::new(recipe.bm25(), options);
    let ranked = rank_all(
        &split,
        &graph,
        recipe.id_policy(),
        Task::Title,
        ranker,
        &NoProgress,
    )?;
    // Through the ranking file's values, as `pgraphrag bench` does (`int()` ratings, "None").
    let profiles: Vec<_> = ranked
        .iter()
        .map(|p| RankingRecord::from_profile(p).to_profile())
        .collect();

    let bench = Bench::new(Task::Title, pgraphrag_grid(&Mode::ALL, &[1, 2, 4]));
    let (outputs, stats) = bench.run_uncached(&profiles, &FirstRetrievedTitle, &NoProgress)?;
    let golds: Vec<String> = profiles.iter().map(|p| gold(p, Task::Title)).collect();
    // METEOR when WordNet is found (scripts/fetch-wordnet.sh puts it in models/wordnet).
    let dirs = wordnet::search_paths(|k| std::env::var_os(k), &[std::env::current_dir()?]);
    let meteor = match wordnet::find(&dirs) {
        Ok(dir) => Some(Meteor::load(&dir)?),
        Err(e) => {
            eprintln!("METEOR not computed: {e}");
            None
        }
    };
    let scorer = TextScorer::new(meteor);
    let extract = Recipe::Clean.extract_options();
    let title = format!("{}: first retrieved title", split_path.display());
    let table = ResultsTable::score(title, Task::Title, &outputs, &golds, &extract, &scorer)?;
    println!("{}", table.to_markdown());
    println!(
        "{} distinct prompts for {} (user, config) pairs",
        stats.unique_prompts, stats.jobs
    );
    Ok(())
}
