//! `pgraphrag rank` (placeholder until its issue lands).

/// Arguments of `pgraphrag rank`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `pgraphrag rank`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("pgraphrag rank is not built yet")
}
