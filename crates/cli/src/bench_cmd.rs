//! `pgraphrag bench`: PGraphRAG's generation grid (`master_generation.py`) and evaluation
//! (`master_eval.py`) on one split and task, with a local GGUF model (SmolLM2 by default) or
//! an OpenAI-compatible server.
//!
//! The run is `pgraphrag_runs::pgraphrag::BenchSpec` (rank, generate through the cache, write
//! the OUTPUT files, score, tables); this module resolves the model file, WordNet and the API
//! key, maps the flags and prints the table. See `docs/bench.md`.

use pgraphrag_runs::pgraphrag::{Backend, BenchSpec, ItemSummaries, Profiles};

pub use crate::bench_args::Args;
use crate::bench_args::{check_outputs, gguf_options, grid, model_path, names};
use crate::error::usage;
use crate::progress::Bar;

/// The backend the flags name: the OpenAI-compatible server, or the local GGUF file.
fn backend(args: &Args) -> anyhow::Result<Backend> {
    if let Some(url) = &args.openai_url {
        if args.item_summaries.is_some() {
            return Err(usage(
                "--item-summaries are written by the local GGUF model: drop --openai-url",
            ));
        }
        let Some(model) = args.openai_model.clone() else {
            return Err(usage("--openai-url needs --openai-model NAME"));
        };
        let api_key = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.is_empty());
        return Ok(Backend::OpenAi {
            url: url.clone(),
            model,
            api_key,
        });
    }
    let o = gguf_options(args);
    // Checked by the run once the split has loaded: a bad split is reported first.
    Ok(Backend::Gguf {
        model: model_path(args),
        weights: o.weights,
        engine: o.engine,
        activations: o.activations,
        prefill: o.prefill,
        adapter: args.adapter.clone(),
    })
}

/// Runs `pgraphrag bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    check_outputs(&args)?;
    let bench = grid(&args)?;
    let (dataset, split_name) = names(&args.split);
    let wordnet = match args.task {
        pgraphrag_prompt::pgraphrag::Task::Rating => None,
        _ if args.export_prompts.is_some() => None,
        _ => {
            let found = crate::wordnet::locate().ok();
            if found.is_none() {
                eprintln!("{}", crate::wordnet::missing_note());
            }
            found
        }
    };
    let spec = BenchSpec {
        split: args.split.clone(),
        profiles: args.store.as_ref().map(|url| Profiles {
            url: url.clone(),
            dataset: format!("{dataset}_{split_name}"),
        }),
        bench,
        limit: args.limit,
        skip: args.skip,
        backend: match &args.export_prompts {
            // The prompts need no model: the one named is recorded, never loaded.
            Some(_) => Backend::gguf(model_path(&args)),
            None => backend(&args)?,
        },
        model_name: args.model_name.clone(),
        cache: args.cache.clone(),
        journal: args.journal.clone(),
        out: args.out.clone(),
        reference_extraction: args.reference_extraction,
        item_summaries: args.item_summaries.as_ref().map(|store| ItemSummaries {
            store: store.clone(),
            tokens: args.item_summary_tokens,
            context: args.item_summary_context,
        }),
        wordnet,
    };
    let bar = Bar::new(args.quiet);
    if let Some(path) = &args.export_prompts {
        spec.export_prompts(path, &bar)?;
        return Ok(());
    }
    let report = spec.run(&bar)?;
    let stats = &report.stats;
    println!("{}", report.markdown);
    println!("stats {}", serde_json::to_string(stats)?);
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
