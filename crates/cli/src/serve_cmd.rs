//! `pgraphrag serve`: the personalization service (`pgraphrag-serve`) on one machine.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;
use pgraphrag_serve::{Backend, Keys, Service, ServiceOptions, store::Store};

use crate::error::{OrUsage, usage};

/// Serve personalized context and chat completions over HTTP (see docs/serve.md).
#[derive(Debug, Parser)]
pub struct Args {
    /// Folder of the service's data (its SQLite document store: the embedded mode, one
    /// process); created if missing. Exclusive with --store.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Keep the documents in PostgreSQL instead (postgres://USER@HOST:PORT/DATABASE: one server,
    /// or a coordinator with shard servers). Several `serve` processes on the same database and
    /// --store-schema serve the same documents, each following the others' writes. Exclusive
    /// with --data.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// The PostgreSQL schema of --store's tables (created if missing).
    #[arg(long, default_value = "pgserve")]
    pub store_schema: String,
    /// The key file: one `[tenants.NAME]` table with `keys = ["..."]` per tenant.
    #[arg(long)]
    pub keys: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// A GGUF model answering chat completions on this machine's CPU (the native engine).
    #[arg(long, conflicts_with = "openai_url")]
    pub model: Option<PathBuf>,
    /// An OpenAI-compatible server answering chat completions instead (its base URL, with /v1).
    #[arg(long)]
    pub openai_url: Option<String>,
    /// The model name sent to --openai-url.
    #[arg(long, default_value = "default")]
    pub openai_model: String,
    /// A BERT encoder folder (config.json, model.safetensors, tokenizer.json) for the dense and
    /// hybrid retrievers.
    #[arg(long)]
    pub encoder: Option<PathBuf>,
    /// The encoder's linear layers: f32, or int8 (quantized at load; about twice as fast on a
    /// CPU with AVX-512 VNNI, mean cosine 0.999 to f32; docs/dense.md).
    #[arg(long, default_value = "f32", requires = "encoder")]
    pub encoder_precision: pgraphrag_retrieval::dense::Precision,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_body: usize,
    /// Requests per second allowed to one key (0: no limit).
    #[arg(long, default_value_t = 1000.0)]
    pub rate: f64,
    /// The LaMP task whose summary prompt (the paper's Table 2) the background user summaries
    /// use; made only with --model or --openai-url.
    #[arg(long, default_value = "LaMP-3")]
    pub summary_task: pgraphrag_core::LampTask,
    /// Make no background summaries.
    #[arg(long)]
    pub no_summaries: bool,
    /// Make the background summaries on a JetStream work queue shared by every `serve` process
    /// of --store (NATS servers, comma-separated, as `pgraphrag worker --nats`): the process
    /// that took a write submits a unit, and any process with --model or --openai-url makes and
    /// stores the summary. Needs --store postgres://...
    #[arg(long, value_name = "NATS_URLS")]
    pub queue: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // One structured line per request on stderr (RUST_LOG=warn quiets it).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let keys = Keys::load(&args.keys).map_err(usage)?;
    #[cfg(feature = "jetstream")]
    let summary_queue = summary_queue(&args)?;
    #[cfg(not(feature = "jetstream"))]
    summary_queue(&args)?;
    let store = open_store(&args)?;
    let encoder = match &args.encoder {
        Some(dir) => {
            let opts = pgraphrag_retrieval::dense::EncoderOptions {
                precision: args.encoder_precision,
                ..Default::default()
            };
            let e = pgraphrag_retrieval::dense::BertEncoder::load_with(dir, opts)?;
            Some(Arc::new(e) as Arc<dyn pgraphrag_core::Encoder + Send + Sync>)
        }
        None => None,
    };
    let backend = match (&args.model, &args.openai_url) {
        (Some(path), _) => {
            let m = pgraphrag_llm::GgufModel::load(path, Default::default())?;
            let name = path
                .file_name()
                .map_or("local".into(), |n| n.to_string_lossy().into_owned());
            let tokenizer = m.tokenizer().clone();
            Some(Backend::local_counted(m, tokenizer, &name))
        }
        (None, Some(url)) => Some(Backend::openai(pgraphrag_llm::AsyncOpenAiClient::new(
            url.as_str(),
            args.openai_model.as_str(),
            Default::default(),
        )?)),
        (None, None) => None,
    };
    let opts = ServiceOptions {
        encoder,
        backend,
        max_body: args.max_body,
        rate_per_key: (args.rate > 0.0).then_some(args.rate),
        summaries: (!args.no_summaries).then(|| pgraphrag_serve::SummaryOptions {
            task: args.summary_task,
            ..Default::default()
        }),
        #[cfg(feature = "jetstream")]
        summary_queue,
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let service = match store {
        Documents::Sqlite(store) => Service::new(keys, store, opts)?,
        #[cfg(feature = "postgres")]
        Documents::Postgres(store) => Service::new(keys, *store, opts)?,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listening on {}", args.listen))?;
        let docs: usize = service
            .tenant_names()
            .iter()
            .filter_map(|t| service.tenant(t))
            .map(|t| t.index.snapshot().num_documents())
            .sum();
        eprintln!(
            "pgraphrag serve: {docs} documents loaded in {:.1} s; listening on http://{}",
            started.elapsed().as_secs_f64(),
            listener.local_addr()?
        );
        pgraphrag_serve::serve(listener, service, shutdown()).await?;
        eprintln!("pgraphrag serve: stopped");
        anyhow::Ok(())
    })
}

/// `--queue`: the summaries' work queue, refused (exit 2) without `--store postgres://...` (an
/// embedded SQLite store cannot be shared), with `--no-summaries`, or with a server list that
/// is not one.
#[cfg(feature = "jetstream")]
fn summary_queue(args: &Args) -> anyhow::Result<Option<pgraphrag_serve::SummaryQueue>> {
    let Some(urls) = &args.queue else {
        return Ok(None);
    };
    check_queue_flags(args)?;
    pgraphrag_store::queue::parse_servers(urls).map_err(|e| usage(format!("--queue: {e}")))?;
    Ok(Some(pgraphrag_serve::SummaryQueue::new(urls)))
}

/// Without the feature `jetstream`, `--queue` is refused (exit 2).
#[cfg(not(feature = "jetstream"))]
fn summary_queue(args: &Args) -> anyhow::Result<()> {
    if args.queue.is_some() {
        check_queue_flags(args)?;
        return Err(usage(
            "--queue needs the JetStream work queues: build pgraphrag-cli with --features jetstream",
        ));
    }
    Ok(())
}

fn check_queue_flags(args: &Args) -> anyhow::Result<()> {
    let shared = args
        .store
        .as_deref()
        .is_some_and(pgraphrag_store::is_postgres_url);
    if !shared {
        return Err(usage(
            "--queue needs --store postgres://USER@HOST:PORT/DATABASE: the summaries' work queue \
             is shared by the serve processes of one PostgreSQL store, and an embedded SQLite \
             store (--data) cannot be shared",
        ));
    }
    if args.no_summaries {
        return Err(usage(
            "--queue and --no-summaries are exclusive: the queue carries the summaries' work",
        ));
    }
    Ok(())
}

/// Where the documents are kept.
enum Documents {
    Sqlite(Store),
    #[cfg(feature = "postgres")]
    Postgres(Box<pgraphrag_serve::postgres::PgDocuments>),
}

/// `--data DIR` or `--store postgres://...`: exactly one (a usage error, exit 2, otherwise).
fn open_store(args: &Args) -> anyhow::Result<Documents> {
    match (&args.data, &args.store) {
        (Some(_), Some(_)) => Err(usage(
            "--data and --store are exclusive: --data DIR keeps the documents in SQLite on this \
             machine, --store postgres://... in PostgreSQL shared by several processes; pass one",
        )),
        (None, None) => Err(usage(
            "pass --data DIR (the documents in SQLite on this machine) or --store \
             postgres://USER@HOST:PORT/DATABASE (in PostgreSQL, shared by several processes)",
        )),
        (Some(dir), None) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating --data {}", dir.display()))?;
            Ok(Documents::Sqlite(Store::open(dir).or_usage()?))
        }
        (None, Some(url)) if !pgraphrag_store::is_postgres_url(url) => Err(usage(format!(
            "--store {url:?}: expected a PostgreSQL URL, postgres://USER@HOST:PORT/DATABASE \
             (for documents in a folder, use --data DIR)"
        ))),
        #[cfg(feature = "postgres")]
        (None, Some(url)) => {
            use pgraphrag_serve::postgres::{PgDocuments, PgError, PgOptions};
            use pgraphrag_store::postgres::Error as StoreError;
            let opts = PgOptions {
                schema: args.store_schema.clone(),
                ..Default::default()
            };
            match PgDocuments::open(url, opts) {
                Ok(store) => Ok(Documents::Postgres(Box::new(store))),
                Err(
                    e @ (PgError::SchemaName { .. }
                    | PgError::Open(StoreError::Url { .. } | StoreError::SchemaVersion { .. })),
                ) => Err(usage(e)),
                Err(e) => Err(anyhow::Error::new(e).context(format!(
                    "opening --store {}",
                    pgraphrag_store::postgres::redact(url)
                ))),
            }
        }
        #[cfg(not(feature = "postgres"))]
        (None, Some(_)) => Err(usage(
            "--store postgres://... needs the PostgreSQL backend: build pgraphrag-cli with \
             --features postgres",
        )),
    }
}

/// Ctrl-C or SIGTERM.
async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
