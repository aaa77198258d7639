//! `pgraphrag bench` (placeholder until its issue lands).

/// Arguments of `pgraphrag bench`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `pgraphrag bench`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("pgraphrag bench is not built yet")
}
