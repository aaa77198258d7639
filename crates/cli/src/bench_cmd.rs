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
use std::path::Path;

use anyhow::{Context, bail};
use pgraphrag_core::Generator;
use pgraphrag_core::{RankedProfile, SummaryScope};
use pgraphrag_data::{RankingRecord, write_rankings};
use pgraphrag_eval::{
    Bench, CachedGenerator, ConfigOutputs, Journal, RatingScorer, Recipe, ResultsTable, RunConfig,
    RunDir, RunName, Scorer, TextScorer, cold_start, gold, paired_p_values, rank_all,
    ranking_file_name, vs_best_constant, write_output_file,
};
use pgraphrag_graph::UserItemGraph;
use pgraphrag_llm::{GgufModel, OpenAiClient, OpenAiOptions};
use pgraphrag_metrics::Meteor;
use pgraphrag_prompt::extract::ExtractOptions;
use pgraphrag_prompt::pgraphrag::{Mode, Task};
use pgraphrag_retrieval::profile::ProfileRanker;
use pgraphrag_stages::{EntryFormat, LlmSummarizer, SummarizeJob, SummaryPrompt};
use pgraphrag_train::Lora;

pub use crate::bench_args::Args;
use crate::bench_args::{check_outputs, gguf_options, grid, model_file, names};
use crate::error::{OrUsage, job_error, usage};
use crate::progress::Bar;
use pgraphrag_runs::summary_budget;

/// A generator chosen at run time: the grid takes any `Generator`.
type Backend = Box<dyn Generator>;

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

/// Loads the local GGUF model; returns it with its label for file names.
fn load_gguf(args: &Args) -> anyhow::Result<(GgufModel, String)> {
    let path = model_file(args)?;
    let mut model = GgufModel::load(&path, gguf_options(args))
        .with_context(|| format!("loading the GGUF model {}", path.display()))?;
    if let Some(adapter) = &args.adapter {
        apply_adapter(&mut model, &path, adapter)?;
    }
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
    check_outputs(&args)?;
    let task: Task = args.task;
    let mut bench = grid(&args)?;
    let (dataset, split_name) = names(&args.split);

    let split = crate::args::load_split(&args.split)?;
    // What would otherwise fail only after ranking or generating, checked before ranking: the
    // model file is there, and WordNet (for METEOR) is intact.
    let scorer = match &args.export_prompts {
        Some(_) => None,
        None => {
            if args.openai_url.is_none() {
                model_file(&args)?;
            }
            Some(scorer(task)?)
        }
    };
    // Rank: the released code's graph and BM25 semantics, as `pgraphrag rank` does by default.
    let recipe = Recipe::ReleasedCode;
    let policy = recipe.id_policy();
    let graph = recipe.graph(&split);
    let mut popts = recipe.profile_options();
    popts.k = popts.k.max(args.ks.iter().copied().max().unwrap_or(1));
    let mut ranker = ProfileRanker::new(recipe.bm25(), popts);
    let skip = args.skip.min(split.users.len());
    // The skipped users' random-review draws, so every user gets the random review a run over
    // the whole split gives it (the store's users and positions are the graph's).
    pgraphrag_eval::skip_users(&split, &graph, policy, &mut ranker, 0..skip)?;
    let mut split = split;
    split.users.drain(..skip);
    if let Some(n) = args.limit {
        split.users.truncate(n);
    }
    if split.users.is_empty() {
        return Err(usage(
            "no users to run (--limit 0, --skip past the end, or an empty split)",
        ));
    }
    let bar = Bar::new(args.quiet);
    let ranked = match &args.store {
        Some(url) => {
            let dataset = format!("{dataset}_{split_name}");
            crate::common::profile_store::rank_from_store(
                url, &dataset, recipe, &split, task, ranker, &bar,
            )?
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
    if let Some(path) = &args.export_prompts {
        return export_prompts(&bench, &profiles, path);
    }

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
        generator = generator.with_on_stored(Journal::open(path)?.into_hook());
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
    let Some(scorer) = scorer else {
        unreachable!("the scorer is made first unless --export-prompts returned above")
    };
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
    if task == Task::Rating {
        markdown.push_str(&vs_best_constant(&outputs, &golds, &extract, 0)?.to_markdown());
    }
    RunDir::new(&args.out).write_results(&markdown, &table)?;
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

/// `pgraphrag bench --adapter FILE`: applies the LoRA adapter (checked against the GGUF
/// file it must have been trained on) to the model, on either engine.
fn apply_adapter(model: &mut GgufModel, gguf: &Path, adapter: &Path) -> anyhow::Result<()> {
    let lora = Lora::load_for_gguf(gguf, adapter)
        .with_context(|| format!("--adapter {}", adapter.display()))
        .or_usage()?;
    let ad = lora.to_adapter()?;
    eprintln!(
        "adapter {}: {} ({} updates, rank {}, alpha {})",
        adapter.display(),
        ad.id(),
        ad.len(),
        lora.config().rank,
        lora.config().alpha
    );
    model
        .set_adapter(Some(ad))
        .with_context(|| format!("--adapter {}", adapter.display()))
        .or_usage()
}

/// `pgraphrag bench --export-prompts FILE`: the grid's distinct prompts with their gold
/// answers as JSON lines, the input of `pgraphrag train lora`.
fn export_prompts(bench: &Bench, profiles: &[RankedProfile], path: &Path) -> anyhow::Result<()> {
    let records = bench.prompt_records(profiles)?;
    pgraphrag_eval::write_prompt_records(path, &records)
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!(
        "wrote {} prompts ({} users, {} cells) to {}",
        records.len(),
        profiles.len(),
        bench.configs.len(),
        path.display()
    );
    Ok(())
}
