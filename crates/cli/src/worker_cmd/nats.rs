//! The queue plumbing that `worker` and every `queue` subcommand share: where the queue is
//! (`NatsArgs`), the async runtime, and the submission of a planned job.
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use pgraphrag_runs::jobs::{self, JobSpec, JobStore, ResultSink};
use pgraphrag_store::queue::{self, QueueConfig, Unit, WorkQueue};

use crate::error::{OrUsage, usage};

/// Where the queue is and how it behaves (shared by `worker` and `queue`).
#[derive(clap::Args, Debug, Clone)]
pub struct NatsArgs {
    /// NATS servers, comma-separated (default: $PGRAPHRAG_NATS_URL, which
    /// scripts/cluster_nats.sh writes to runs/cluster/env.sh).
    #[arg(long)]
    pub nats: Option<String>,
    /// The work-queue stream.
    #[arg(long, default_value = "PGRAPHRAG_JOBS")]
    pub stream: String,
    /// Replicas of the streams when they are created (default: the number of servers given,
    /// at most 3).
    #[arg(long)]
    pub replicas: Option<usize>,
    /// Seconds the server waits for a unit's ack before redelivering it.
    #[arg(long, default_value_t = 30.0, value_parser = crate::args::positive)]
    pub ack_wait: f64,
    /// Deliveries of a unit before it is given up (dead letter).
    #[arg(long, default_value_t = 5)]
    pub max_deliver: i64,
}

impl NatsArgs {
    fn urls(&self) -> anyhow::Result<String> {
        match self
            .nats
            .clone()
            .or_else(|| std::env::var("PGRAPHRAG_NATS_URL").ok())
        {
            Some(u) if !u.trim().is_empty() => Ok(u),
            _ => Err(usage(
                "no NATS servers: pass --nats nats://127.0.0.1:PORT[,...] or set PGRAPHRAG_NATS_URL \
                 (`scripts/cluster_nats.sh start` then `. runs/cluster/env.sh`)",
            )),
        }
    }

    fn config(&self, urls: &str) -> anyhow::Result<QueueConfig> {
        let servers = urls.split(',').filter(|s| !s.trim().is_empty()).count();
        let config = QueueConfig {
            stream: self.stream.clone(),
            replicas: self.replicas.unwrap_or(servers.clamp(1, 3)),
            ack_wait: Duration::from_secs_f64(self.ack_wait),
            max_deliver: self.max_deliver,
            ..Default::default()
        };
        config.validate().or_usage()?;
        Ok(config)
    }

    pub(super) async fn connect(&self, name: &str) -> anyhow::Result<WorkQueue> {
        let urls = self.urls()?;
        let config = self.config(&urls)?;
        let q = match WorkQueue::connect(&urls, config, name).await {
            Err(e @ queue::Error::BadUrl { .. }) => return Err(e).or_usage(),
            r => r?,
        };
        q.ensure().await?;
        Ok(q)
    }
}

/// The async runtime of the queue's client.
pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// `p` made absolute (workers on other machines read the paths a job names).
pub(super) fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("resolving {}", p.display()))
}

/// Plans `spec`, registers it in `store` and publishes its units.
pub(super) fn submit(
    nats: &NatsArgs,
    spec: &JobSpec,
    store: &Path,
    chunk: usize,
) -> anyhow::Result<()> {
    let store_path = absolute(store)?;
    let store_str = store_path
        .to_str()
        .ok_or_else(|| usage("--store must be a UTF-8 path"))?
        .to_string();
    let plan = jobs::plan(spec, &store_str, chunk).or_usage()?;
    let store = JobStore::open(&store_path).or_usage()?;
    store.register(&plan.job)?;
    let units: Vec<Unit> = plan
        .units
        .iter()
        .map(|u| Unit {
            kind: u.kind.to_string(),
            id: u.id.clone(),
            payload: u.payload.clone(),
        })
        .collect();
    let report = runtime()?.block_on(async {
        let q = nats.connect("pgraphrag-submit").await?;
        anyhow::Ok(q.submit(&units).await?)
    })?;
    println!(
        "{}",
        serde_json::json!({
            "job": plan.job.id, "kind": plan.job.kind, "units": plan.job.units,
            "items": plan.job.items, "published": report.published,
            "duplicates": report.duplicates, "store": store_str,
        })
    );
    Ok(())
}
