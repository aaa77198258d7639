//! `pgraphrag`: the command-line tool of the pgraphrag workspace.
use clap::{Parser, Subcommand};

/// Personalized retrieval-augmented generation: rank profiles, score outputs, run benchmarks.
#[derive(Parser)]
#[command(name = "pgraphrag", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {}
}
