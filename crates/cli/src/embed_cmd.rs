//! `pgraphrag embed` (placeholder until its issue lands).

/// Arguments of `pgraphrag embed`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `pgraphrag embed`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("pgraphrag embed is not built yet")
}
