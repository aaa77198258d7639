//! `pgraphrag`: the command-line tool of the pgraphrag workspace.
//!
//! Each subcommand lives in its own module with an `Args` struct and a `run` function.
//! Exit codes: 0 success, 1 the work failed, 2 bad usage or bad input (see `error.rs`).
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod args;
mod baselines_cmd;
mod bench_args;
mod bench_cmd;
mod common;
mod corpus_cmd;
mod embed_cmd;
mod error;
mod lamp_baselines_cmd;
mod lamp_cmd;
mod lamp_grid_cmd;
mod lamp_rescore_cmd;
mod metrics_cmd;
mod multistage_cmd;
mod multistage_export;
mod multistage_run;
mod output;
mod plot_cmd;
mod progress;
mod rank_cmd;
mod recsys_cmd;
mod recsys_compare;
mod serve_cmd;
#[cfg(feature = "postgres")]
mod store_cmd;
mod summarize_cmd;
mod train_cmd;
mod train_kragrec_cmd;
mod wordnet;
#[cfg(feature = "jetstream")]
mod worker_cmd;

/// Personalized retrieval-augmented generation: rank profiles, score outputs, run benchmarks, plot results.
#[derive(Parser)]
#[command(name = "pgraphrag", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rank each user's profile (user and neighbour reviews) and write PGraphRAG ranking files.
    Rank(rank_cmd::Args),
    /// Score prediction/reference pairs with ROUGE, METEOR and BLEU.
    Metrics(metrics_cmd::Args),
    /// Encode texts with a BERT mean-pooling encoder.
    Embed(embed_cmd::Args),
    /// LaMP's retrieval-augmented prompts (BM25 top-k within a token budget), exact to LaMP's code.
    Lamp(lamp_cmd::Args),
    /// Run the PGraphRAG benchmark: modes x k on one split and task, with a local or remote LLM.
    Bench(bench_cmd::Args),
    /// Score answers without an LLM (constants, first words, copies of earlier or neighbour
    /// reviews, mean ratings) on the rows `bench` evaluates, with bench's scorers and table.
    Baselines(baselines_cmd::Args),
    /// Draw a results CSV (from `bench`) as an SVG bar chart: one panel per metric.
    Plot(plot_cmd::Args),
    /// Convert real authored-text corpora and build LaMP-format tasks from them.
    Corpus(corpus_cmd::Args),
    /// The multistage writing paper: build its examples, run its Table 2 grid, export training data.
    Multistage(multistage_cmd::Args),
    /// K-RagRec: build the KG sub-graph index and score the inference-only recommendation
    /// methods on MovieLens (ACC, Recall@k).
    Recsys(recsys_cmd::Args),
    /// Summarise each LaMP user's profile offline (summary-augmented LaMP) into a summary store.
    Summarize(summarize_cmd::Args),
    /// Train: LoRA fine-tuning of the generator (`train lora`).
    Train(train_cmd::Args),
    /// Serve personalized context and chat completions over HTTP (docs/serve.md).
    Serve(serve_cmd::Args),
    /// Run offline job units from a JetStream work queue until it is drained or forever.
    #[cfg(feature = "jetstream")]
    Worker(worker_cmd::WorkerArgs),
    /// Submit offline jobs to a JetStream work queue, read its status, export results.
    #[cfg(feature = "jetstream")]
    Queue(worker_cmd::QueueArgs),
    /// Load splits into the PostgreSQL profile store, list or drop datasets, measure fetches.
    #[cfg(feature = "postgres")]
    Store(store_cmd::Args),
}

fn main() -> ExitCode {
    // clap prints its own usage errors and exits with 2.
    let result = match Cli::parse().command {
        Command::Rank(a) => rank_cmd::run(a),
        Command::Metrics(a) => metrics_cmd::run(a),
        Command::Embed(a) => embed_cmd::run(a),
        Command::Bench(a) => bench_cmd::run(a),
        Command::Baselines(a) => baselines_cmd::run(a),
        Command::Lamp(a) => lamp_cmd::run(a),
        Command::Plot(a) => plot_cmd::run(a),
        Command::Corpus(a) => corpus_cmd::run(a),
        Command::Summarize(a) => summarize_cmd::run(a),
        Command::Multistage(a) => multistage_cmd::run(a),
        Command::Recsys(a) => recsys_cmd::run(a),
        Command::Train(a) => train_cmd::run(a),
        Command::Serve(a) => serve_cmd::run(a),
        #[cfg(feature = "jetstream")]
        Command::Worker(a) => worker_cmd::run_worker(a),
        #[cfg(feature = "jetstream")]
        Command::Queue(a) => worker_cmd::run_queue(a),
        #[cfg(feature = "postgres")]
        Command::Store(a) => store_cmd::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:?}");
            ExitCode::from(error::exit_code(&e))
        }
    }
}
