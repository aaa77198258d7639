//! `pgraphrag metrics` (placeholder until its issue lands).

/// Arguments of `pgraphrag metrics`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `pgraphrag metrics`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("pgraphrag metrics is not built yet")
}
