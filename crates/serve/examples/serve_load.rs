//! Load test of the service over loopback HTTP: `--reviews` real reviews (the PGraphRAG dev
//! splits' titles and texts on a synthetic Zipf user-item graph,
//! `pgraphrag_retrieval::live::workload`) in the embedded store, then for each retriever,
//! `--connections` clients calling `POST /v1/context` (scope both, k = 4, the review's title
//! as the query) as fast as they are answered for `--seconds`, while one writer `PUT`s
//! `--writes-per-sec` new reviews and reads each back at once: throughput, p50/p99 latency,
//! and how many writes were visible on the very next read.
//!
//! ```text
//! scripts/load_serve.sh            # 100k reviews, 64 connections, 100 writes/s, 20 s each
//! cargo run -p pgraphrag-serve --example serve_load -- --data ../shared/data/pgraphrag \
//!     --reviews 100000 --connections 64 --seconds 20 --writes-per-sec 100 \
//!     --retrievers bm25,dense,hybrid --encoder models/all-MiniLM-L6-v2 --rates closed,1000
//! ```
//!
//! With `--rates closed,R` each retriever runs twice; at `R` the clients offer `R` requests/s in all (open loop, each connection its
//! share) and latency counts from when each request was due; without it each connection sends
//! its next request when the last is answered (closed loop: the throughput ceiling, where the
//! latency is the queue, connections / throughput). `--precision int8` loads the encoder with
//! int8 linear layers (`pgraphrag_retrieval::dense::Precision`).
//!
//! Server and clients share the machine (as with wrk or any loopback load test), and the
//! loop is bounded in time (`--seconds`) and in count (1,000,000 requests per client).
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use pgraphrag_retrieval::live::Document;
use pgraphrag_retrieval::live::workload::{SplitMix64, Workload, percentile};
use pgraphrag_serve::{Keys, Service, ServiceOptions, store::Store};
use serde_json::{Value, json};

const KEY: &str = "load-secret-1";

struct Args {
    data: std::path::PathBuf,
    reviews: usize,
    connections: usize,
    seconds: f64,
    writes_per_sec: f64,
    retrievers: Vec<String>,
    encoder: Option<std::path::PathBuf>,
    precision: pgraphrag_retrieval::dense::Precision,
    /// The loads, each run for every retriever: offered requests/s over all connections
    /// (open loop), or `None`: as fast as answered (closed loop).
    rates: Vec<Option<f64>>,
}

fn args() -> anyhow::Result<Args> {
    let mut a = Args {
        data: std::env::var_os("PGRAPHRAG_DATA")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| "../shared/data".into())
            .join("pgraphrag"),
        reviews: 100_000,
        connections: 64,
        seconds: 20.0,
        writes_per_sec: 100.0,
        retrievers: vec!["bm25".into()],
        encoder: None,
        precision: Default::default(),
        rates: vec![None],
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--data" => a.data = value()?.into(),
            "--reviews" => a.reviews = value()?.parse()?,
            "--connections" => a.connections = value()?.parse()?,
            "--seconds" => a.seconds = value()?.parse()?,
            "--writes-per-sec" => a.writes_per_sec = value()?.parse()?,
            "--retrievers" => a.retrievers = value()?.split(',').map(String::from).collect(),
            "--encoder" => a.encoder = Some(value()?.into()),
            "--precision" => a.precision = value()?.parse()?,
            "--rates" => {
                a.rates = value()?
                    .split(',')
                    .map(|r| match r {
                        "closed" => Ok(None),
                        r => r.parse().map(Some),
                    })
                    .collect::<Result<_, _>>()
                    .context("--rates takes `closed` or requests/s, comma-separated")?
            }
            other => bail!("unknown flag {other} (see the example's header)"),
        }
    }
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if a.reviews == 0 || a.connections == 0 || !positive(a.seconds) || !positive(a.writes_per_sec) {
        bail!("--reviews, --connections, --seconds and --writes-per-sec must be positive");
    }
    if a.rates.iter().flatten().any(|r| !positive(*r)) {
        bail!("--rates must be positive");
    }
    if a.retrievers.iter().any(|r| r != "bm25") && a.encoder.is_none() {
        bail!("the dense and hybrid retrievers need --encoder DIR (models/all-MiniLM-L6-v2)");
    }
    Ok(a)
}

/// (title, text) of every review of the PGraphRAG dev splits in `dir`.
fn real_texts(dir: &std::path::Path) -> anyhow::Result<Vec<(Option<String>, String)>> {
    let mut out = Vec::new();
    for split in ["amazon", "b2w", "gap", "hotel"] {
        let path = dir.join(format!("{split}_dev.json"));
        let split = pgraphrag_data::load_split(&path)?;
        for u in split.users {
            for e in u.profile {
                let title = e.title.filter(|t| !t.is_empty());
                let text = e.text.unwrap_or_default();
                if title.is_some() || !text.trim().is_empty() {
                    out.push((title, text));
                }
            }
        }
    }
    anyhow::ensure!(!out.is_empty(), "no reviews under {}", dir.display());
    Ok(out)
}

/// One retriever's figures.
struct Figures {
    retriever: String,
    load: String,
    requests: usize,
    errors: u64,
    qps: f64,
    p50: f64,
    p99: f64,
    writes: usize,
    write_p50: f64,
    next_read: usize,
    visible_p99: f64,
}

async fn post(c: &reqwest::Client, url: &str, body: &Value) -> anyhow::Result<(u16, Value)> {
    let r = c
        .post(url)
        .bearer_auth(KEY)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await?;
    let status = r.status().as_u16();
    Ok((status, serde_json::from_slice(&r.bytes().await?)?))
}

/// Readers and the writer against `base` for `seconds`.
async fn run(
    base: &str,
    a: &Args,
    rate: Option<f64>,
    retriever: &str,
    docs: Arc<Vec<Document>>,
    w: &Workload,
    first_new: usize,
) -> anyhow::Result<Figures> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(a.connections + 2)
        .build()?;
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicU64::new(0));
    let ctx_url = format!("{base}/v1/context");
    let mut readers = Vec::new();
    let t0 = Instant::now();
    for c in 0..a.connections {
        let (client, stop, errors, docs, url) = (
            client.clone(),
            Arc::clone(&stop),
            Arc::clone(&errors),
            Arc::clone(&docs),
            ctx_url.clone(),
        );
        let retriever = retriever.to_string();
        // Open loop: this connection's share of --rate, its first request at a random offset;
        // latency counts from when a request was due, so a server that falls behind is charged
        // for the wait (no coordinated omission).
        let period = rate.map(|r| Duration::from_secs_f64(a.connections as f64 / r));
        readers.push(tokio::spawn(async move {
            let mut rng = SplitMix64::new(0x5eed + c as u64);
            let mut lat = Vec::new();
            let mut due = Instant::now() + period.map_or(Duration::ZERO, |p| p.mul_f64(rng.unit()));
            while !stop.load(Ordering::Relaxed) && lat.len() < 1_000_000 {
                if period.is_some() {
                    tokio::time::sleep_until(due.into()).await;
                }
                let d = &docs[rng.below(docs.len())];
                let query = d.title.clone().unwrap_or_else(|| d.text.clone());
                let body = json!({"user": d.user, "item": d.item, "query": query,
                    "scope": "both", "k": 4, "retriever": retriever});
                let q0 = if period.is_some() {
                    due
                } else {
                    Instant::now()
                };
                match post(&client, &url, &body).await {
                    Ok((200, _)) => lat.push(q0.elapsed().as_secs_f64() * 1e3),
                    _ => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                if let Some(p) = period {
                    due += p;
                }
            }
            lat
        }));
    }
    // The writer: a new review every period, read back at once.
    let writer = {
        let (client, stop, base) = (client.clone(), Arc::clone(&stop), base.to_string());
        let mut rng = SplitMix64::new(0xfeed ^ first_new as u64);
        let docs: Vec<Document> = (0..(a.writes_per_sec * a.seconds * 2.0) as usize + 10)
            .map(|i| w.document(first_new + i, &mut rng))
            .collect();
        let period = Duration::from_secs_f64(1.0 / a.writes_per_sec);
        tokio::spawn(async move {
            let (mut write_lat, mut visible_lat, mut next_read) = (Vec::new(), Vec::new(), 0);
            let mut next = Instant::now();
            for d in docs {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let url = format!("{base}/v1/users/{}/documents/{}", d.user, d.id);
                let body = json!({"text": d.text, "title": d.title, "item": d.item});
                let w0 = Instant::now();
                let r = client
                    .put(&url)
                    .bearer_auth(KEY)
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await?;
                anyhow::ensure!(r.status() == 200, "PUT {url}: {}", r.text().await?);
                let acked = Instant::now();
                write_lat.push((acked - w0).as_secs_f64() * 1e3);
                // Read it back: the first read that returns it (bounded: 2 s).
                let q = json!({"user": d.user, "query": d.text, "scope": "user", "k": 4});
                for attempt in 0.. {
                    let (st, v) = post(&client, &format!("{base}/v1/context"), &q).await?;
                    let seen = st == 200
                        && v["entries"]
                            .as_array()
                            .is_some_and(|e| e.iter().any(|e| e["doc"] == d.id.as_str()));
                    if seen {
                        next_read += usize::from(attempt == 0);
                        visible_lat.push(acked.elapsed().as_secs_f64() * 1e3);
                        break;
                    }
                    anyhow::ensure!(
                        acked.elapsed() < Duration::from_secs(2),
                        "write {} of {} not visible 2 s after its acknowledgement",
                        d.id,
                        d.user
                    );
                }
                next += period;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    tokio::time::sleep(wait).await;
                }
            }
            anyhow::Ok((write_lat, visible_lat, next_read))
        })
    };
    tokio::time::sleep(Duration::from_secs_f64(a.seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut lat = Vec::new();
    for r in readers {
        lat.extend(r.await?);
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let (mut write_lat, mut visible_lat, next_read) = writer.await??;
    for v in [&mut lat, &mut write_lat, &mut visible_lat] {
        v.sort_by(f64::total_cmp);
    }
    Ok(Figures {
        retriever: retriever.to_string(),
        load: rate.map_or("closed".into(), |r| format!("{r:.0}/s")),
        requests: lat.len(),
        errors: errors.load(Ordering::Relaxed),
        qps: lat.len() as f64 / elapsed,
        p50: percentile(&lat, 0.5),
        p99: percentile(&lat, 0.99),
        writes: write_lat.len(),
        write_p50: percentile(&write_lat, 0.5),
        next_read,
        visible_p99: percentile(&visible_lat, 0.99),
    })
}

fn main() -> anyhow::Result<()> {
    let a = args()?;
    let texts = real_texts(&a.data)?;
    let w = Workload::new(texts, a.reviews).context("no texts")?;
    let mut rng = SplitMix64::new(42);
    let docs: Vec<Document> = (0..a.reviews).map(|i| w.document(i, &mut rng)).collect();
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    store.import("load", &docs)?;
    let encoder = match &a.encoder {
        Some(d) if a.retrievers.iter().any(|r| r != "bm25") => {
            let opts = pgraphrag_retrieval::dense::EncoderOptions {
                precision: a.precision,
                ..Default::default()
            };
            let e = pgraphrag_retrieval::dense::BertEncoder::load_with(d, opts)?;
            println!("encoder: {}", e.backend_name());
            Some(Arc::new(e) as Arc<dyn pgraphrag_core::Encoder + Send + Sync>)
        }
        _ => None,
    };
    let t = Instant::now();
    let keys = Keys::parse(&format!("[tenants.load]\nkeys = [\"{KEY}\"]\n"), "keys")?;
    let service = Service::new(
        keys,
        store,
        ServiceOptions {
            encoder,
            rate_per_key: None,
            summaries: None,
            ..Default::default()
        },
    )?;
    eprintln!(
        "{} reviews loaded in {:.1} s; {} connections, {} writes/s, {} s per retriever",
        docs.len(),
        t.elapsed().as_secs_f64(),
        a.connections,
        a.writes_per_sec,
        a.seconds
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let docs = Arc::new(docs);
    let figures = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(pgraphrag_serve::serve(listener, service, async {
            let _ = stop_rx.await;
        }));
        let mut out = Vec::new();
        for (i, r) in a.retrievers.iter().enumerate() {
            for (j, rate) in a.rates.iter().enumerate() {
                let first_new = a.reviews + (i * a.rates.len() + j) * 1_000_000;
                out.push(run(&base, &a, *rate, r, Arc::clone(&docs), &w, first_new).await?);
            }
        }
        let _ = stop_tx.send(());
        server.await??;
        anyhow::Ok(out)
    })?;
    println!(
        "| retriever | load | connections | requests | errors | req/s | p50 ms | p99 ms | writes | \
         write p50 ms | visible on the next read | write-to-visible p99 ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for f in &figures {
        println!(
            "| {} | {} | {} | {} | {} | {:.0} | {:.2} | {:.2} | {} | {:.2} | {}/{} | {:.2} |",
            f.retriever,
            f.load,
            a.connections,
            f.requests,
            f.errors,
            f.qps,
            f.p50,
            f.p99,
            f.writes,
            f.write_p50,
            f.next_read,
            f.writes,
            f.visible_p99
        );
        anyhow::ensure!(
            f.errors == 0,
            "{}: {} requests failed",
            f.retriever,
            f.errors
        );
        anyhow::ensure!(
            f.next_read == f.writes,
            "{}: a write was not visible on the next read",
            f.retriever
        );
    }
    Ok(())
}
