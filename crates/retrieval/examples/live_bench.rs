//! Throughput of the live index under a write stream, against the pattern it replaces
//! (`Mutex<(UserItemGraph, ProfileRanker<CachedBm25>)>`), measured the same way in one run.
//!
//! ```text
//! cargo run --release -p pgraphrag-retrieval --example live_bench -- \
//!     --data ../shared/data/pgraphrag --reviews 100000 --seconds 5 --writes-per-sec 1000
//! ```
//!
//! The index holds `--reviews` reviews whose titles and texts are the real reviews of the
//! PGraphRAG dev splits in `--data` (cycled when more are asked for than the splits hold),
//! laid on a synthetic user-item graph: users and items drawn from Zipf laws (exponents 0.7
//! and 0.9; 2 reviews per user and 10 per item on average), so that profiles have the long
//! tail of the real benchmark. Each request is a random review's user and item, with the
//! review's title as the query (the text-generation task), scope both, k = 4, BM25.
//!
//! For 1, 2 and 4 reader threads, each pattern runs `--seconds` while one writer streams
//! `--writes-per-sec` writes (half new reviews, half in-place edits for the live index; new
//! reviews only for the graph, which cannot edit one), and prints requests/s and p50/p99
//! latency. The patterns alternate for `--rounds` rounds and the medians are reported. Then
//! it prints the resident memory the live index added per million reviews. `--fits-only`
//! instead compares kept BM25 fits with a fit per read (`IndexOptions::fit_min_docs`) on the
//! same requests.
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pgraphrag_core::{DocText, Entry, ItemId, Task, TieOrder};
use pgraphrag_graph::{GraphOptions, Scope, UserItemGraph};
use pgraphrag_retrieval::live::workload::{SplitMix64 as Rng, Workload, percentile};
use pgraphrag_retrieval::live::{ContextRequest, Document, ProfileIndex};
use pgraphrag_retrieval::profile::{CachedBm25, ProfileOptions, ProfileRanker, RandomReview};
use pgraphrag_retrieval::sparse::Bm25Builder;

struct Args {
    data: std::path::PathBuf,
    reviews: usize,
    seconds: f64,
    writes_per_sec: f64,
    rounds: usize,
    threads: Vec<usize>,
    fits_only: bool,
}

fn args() -> anyhow::Result<Args> {
    let mut a = Args {
        data: std::path::PathBuf::from("../shared/data/pgraphrag"),
        reviews: 100_000,
        seconds: 5.0,
        writes_per_sec: 1000.0,
        rounds: 3,
        threads: vec![1, 2, 4],
        fits_only: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| anyhow::anyhow!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--data" => a.data = value()?.into(),
            "--reviews" => a.reviews = value()?.parse()?,
            "--seconds" => a.seconds = value()?.parse()?,
            "--writes-per-sec" => a.writes_per_sec = value()?.parse()?,
            "--rounds" => a.rounds = value()?.parse()?,
            "--fits-only" => a.fits_only = true,
            "--threads" => {
                a.threads = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            other => anyhow::bail!("unknown flag {other}"),
        }
    }
    anyhow::ensure!(a.reviews >= 100, "--reviews must be at least 100");
    anyhow::ensure!(
        a.seconds > 0.0 && a.seconds <= 60.0,
        "--seconds must be in (0, 60]"
    );
    Ok(a)
}

/// (title, text) of every review of the dev splits in `dir`.
fn real_texts(dir: &std::path::Path) -> anyhow::Result<Vec<(Option<String>, String)>> {
    let mut out = Vec::new();
    for split in ["amazon", "b2w", "gap", "hotel"] {
        let path = dir.join(format!("{split}_dev.json"));
        let users: serde_json::Value = serde_json::from_slice(
            &std::fs::read(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        )?;
        for u in users.as_array().into_iter().flatten() {
            for r in u["profile"].as_array().into_iter().flatten() {
                let title = r["title"].as_str().filter(|t| !t.is_empty());
                let text = r["text"].as_str().unwrap_or_default();
                if title.is_some() || !text.trim().is_empty() {
                    out.push((title.map(String::from), text.to_string()));
                }
            }
        }
    }
    anyhow::ensure!(!out.is_empty(), "no reviews under {}", dir.display());
    Ok(out)
}

fn entry(d: &Document, id: usize) -> Entry {
    Entry {
        id,
        author: d.user.clone(),
        item: d.item.clone().unwrap_or_default(),
        title: d.title.clone(),
        text: Some(d.text.clone()),
        ..Default::default()
    }
}

/// Requests/s, p50 and p99 in ms.
#[derive(Debug, Clone, Copy)]
struct Run {
    qps: f64,
    p50: f64,
    p99: f64,
}

/// Runs `readers` threads calling `read(rng)` and one writer calling `write(i)` at `rate`
/// per second, for `seconds`; returns the readers' throughput and latency.
fn drive(
    name: &str,
    readers: usize,
    seconds: f64,
    rate: f64,
    read: &(dyn Fn(&mut Rng) + Sync),
    write: &(dyn Fn(usize) + Sync),
) -> Run {
    let stop = AtomicBool::new(false);
    let writes = AtomicUsize::new(0);
    let lat: Mutex<Vec<f64>> = Mutex::default();
    let t0 = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            let period = Duration::from_secs_f64(1.0 / rate);
            let mut next = Instant::now();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                write(i);
                i += 1;
                next += period;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            writes.store(i, Ordering::Relaxed);
        });
        for t in 0..readers {
            let (stop, lat) = (&stop, &lat);
            s.spawn(move || {
                let mut rng = Rng::new(0x5eed + t as u64);
                let mut mine = Vec::new();
                while !stop.load(Ordering::Relaxed) && mine.len() < 5_000_000 {
                    let q0 = Instant::now();
                    read(&mut rng);
                    mine.push(q0.elapsed().as_secs_f64() * 1e3);
                }
                lat.lock().unwrap().extend(mine);
            });
        }
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
    });
    let elapsed = t0.elapsed().as_secs_f64();
    let mut l = lat.into_inner().unwrap();
    l.sort_by(f64::total_cmp);
    let w = writes.load(Ordering::Relaxed) as f64 / elapsed;
    if w < 0.9 * rate {
        eprintln!("  ({name}, {readers} readers: the writer reached only {w:.0} writes/s)");
    }
    Run {
        qps: l.len() as f64 / elapsed,
        p50: percentile(&l, 0.5),
        p99: percentile(&l, 0.99),
    }
}

fn rss_kib() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One user with 600 documents: BM25 over the whole profile per query, through the live index
/// (tokens kept, fit per query over token ids), through the `Retriever` trait (tokenize and fit
/// per query), and with one `Bm25Okapi` fitted once (the floor: scoring only).
fn profile_600(texts: &[(Option<String>, String)]) -> anyhow::Result<()> {
    use pgraphrag_core::Retriever;
    use pgraphrag_retrieval::Bm25Retriever;
    use pgraphrag_retrieval::sparse::{Bm25Okapi, Bm25Params, PgraphragTokenizer, Tokenizer};
    let n = 600.min(texts.len());
    let index = ProfileIndex::default();
    let docs: Vec<Document> = (0..n)
        .map(|i| Document {
            user: "heavy".into(),
            id: i.to_string(),
            item: Some(format!("p{i}")),
            title: texts[i].0.clone(),
            text: if texts[i].1.trim().is_empty() {
                "-".into()
            } else {
                texts[i].1.clone()
            },
            ..Default::default()
        })
        .collect();
    let strings: Vec<String> = docs
        .iter()
        .map(|d| DocText::Clean.render(d.title.as_deref(), Some(&d.text)))
        .collect();
    let refs: Vec<&str> = strings.iter().map(String::as_str).collect();
    index.upsert_batch(docs)?;
    let tokenized: Vec<Vec<String>> = refs
        .iter()
        .map(|t| PgraphragTokenizer.tokenize(t))
        .collect();
    let fitted = Bm25Okapi::fit(&tokenized, Bm25Params::default())?;
    let queries: Vec<String> = texts
        .iter()
        .skip(n)
        .take(200)
        .map(|t| {
            t.0.clone()
                .unwrap_or_else(|| t.1.chars().take(40).collect())
        })
        .collect();
    let (mut live_ms, mut trait_ms, mut once_ms) = (Vec::new(), Vec::new(), Vec::new());
    let retriever = Bm25Retriever::pgraphrag();
    for q in &queries {
        let req = ContextRequest {
            user: "heavy".into(),
            query: q.clone(),
            scope: Some(Scope::User),
            k: 4,
            ..Default::default()
        };
        let t = Instant::now();
        std::hint::black_box(index.context(&req)?);
        live_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        std::hint::black_box(retriever.rank(q, &refs, Some(4))?);
        trait_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        std::hint::black_box(fitted.get_scores(&PgraphragTokenizer.tokenize(q)));
        once_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "600-document profile, median ms per query over {} queries: live index {:.3}, Retriever trait {:.3}, Bm25Okapi fitted once {:.3}",
        queries.len(),
        median(live_ms),
        median(trait_ms),
        median(once_ms)
    );
    Ok(())
}

/// Kept fits against a fit per read (`IndexOptions::fit_min_docs`), on two indexes of the same
/// documents: the same requests (BM25, both scopes, k = 4), each timed on both in alternation,
/// with one write (half new reviews, half edits) applied to both after every tenth request,
/// so the fits of written lists are made again by the next read, as in service. Prints the
/// latency distribution of each and checks they answer the same.
fn fit_reuse(docs: &[Document], w: &Workload, requests: usize) -> anyhow::Result<()> {
    use pgraphrag_retrieval::live::IndexOptions;
    let build = |fit_min_docs| -> anyhow::Result<ProfileIndex> {
        let index = ProfileIndex::new(IndexOptions {
            fit_min_docs,
            ..Default::default()
        })?;
        for chunk in docs.chunks(1000) {
            index.upsert_batch(chunk.to_vec())?;
        }
        Ok(index)
    };
    let r0 = rss_kib();
    let per_read = build(usize::MAX)?;
    let r1 = rss_kib();
    let kept = build(IndexOptions::default().fit_min_docs)?;
    let r2 = rss_kib();
    println!(
        "resident memory: fit per read {:.0} MiB, fits kept {:.0} MiB",
        r1.saturating_sub(r0) as f64 / 1024.0,
        r2.saturating_sub(r1) as f64 / 1024.0
    );
    let mut rng = Rng::new(99);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut wa, mut wb) = (Vec::new(), Vec::new());
    for i in 0..requests {
        let d = &docs[rng.below(docs.len())];
        let req = ContextRequest {
            user: d.user.clone(),
            item: d.item.clone(),
            query: Task::Text.query(d.title.as_deref(), Some(&d.text)),
            k: 4,
            ..Default::default()
        };
        let (first, second, fa, fb) = if i % 2 == 0 {
            (&kept, &per_read, &mut a, &mut b)
        } else {
            (&per_read, &kept, &mut b, &mut a)
        };
        let t = Instant::now();
        let x = first.context(&req)?;
        fa.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let y = second.context(&req)?;
        fb.push(t.elapsed().as_secs_f64() * 1e3);
        let bits = |c: &pgraphrag_retrieval::live::Context| {
            c.entries()
                .map(|h| (h.doc.id().to_string(), h.score.to_bits()))
                .collect::<Vec<_>>()
        };
        anyhow::ensure!(bits(&x) == bits(&y), "the two indexes disagree on {req:?}");
        if i % 10 == 9 {
            let mut wr = Rng::new(i as u64 ^ 0x77);
            let d = if i % 20 == 9 {
                w.document(docs.len() + i, &mut wr)
            } else {
                let mut d = docs[wr.below(docs.len())].clone();
                d.text.push_str(" (edited)");
                d
            };
            let t = Instant::now();
            kept.upsert(d.clone())?;
            wa.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            per_read.upsert(d)?;
            wb.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let stats = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        format!(
            "mean {mean:.3}, p50 {:.3}, p90 {:.3}, p99 {:.3}, p99.9 {:.3}, max {:.3} ms",
            percentile(&v, 0.5),
            percentile(&v, 0.9),
            percentile(&v, 0.99),
            percentile(&v, 0.999),
            v[v.len() - 1]
        )
    };
    println!("{requests} requests (BM25, both, k = 4; one write per 10), identical answers:");
    println!("  fits kept (fit_min_docs 64): {}", stats(a));
    println!("  fit per read:                {}", stats(b));
    println!(
        "{} writes (the fits of the lists they change made again):",
        wa.len()
    );
    println!("  fits kept (fit_min_docs 64): {}", stats(wa));
    println!("  fit per read:                {}", stats(wb));
    Ok(())
}

/// The cost of one write on the loaded index (2,000 single upserts, half new reviews, half
/// in-place edits), and of tokenizing the same documents alone.
fn write_cost(live: &ProfileIndex, docs: &[Document], w: &Workload) -> anyhow::Result<()> {
    use pgraphrag_retrieval::sparse::{PgraphragTokenizer, Tokenizer};
    let mut rng = Rng::new(7);
    let batch: Vec<Document> = (0..2000)
        .map(|i: usize| {
            if i.is_multiple_of(2) {
                w.document(docs.len() * 3 + i, &mut rng)
            } else {
                let mut d = docs[rng.below(docs.len())].clone();
                d.text.push_str(" (edited)");
                d
            }
        })
        .collect();
    let t = Instant::now();
    for d in &batch {
        std::hint::black_box(
            PgraphragTokenizer.tokenize(&DocText::Clean.render(d.title.as_deref(), Some(&d.text))),
        );
    }
    let tok = t.elapsed().as_secs_f64() * 1e6 / batch.len() as f64;
    let t = Instant::now();
    for d in batch {
        live.upsert(d)?;
    }
    let all = t.elapsed().as_secs_f64() * 1e6 / 2000.0;
    println!("one write: {all:.0} us on average ({tok:.0} us of it tokenizing)");
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let a = args()?;
    let texts = real_texts(&a.data)?;
    let (users, items) = ((a.reviews / 2).max(1), (a.reviews / 10).max(1));
    let w = Workload::new(texts.clone(), a.reviews).expect("real_texts refuses an empty set");
    let mut rng = Rng::new(42);
    let docs: Vec<Document> = (0..a.reviews).map(|i| w.document(i, &mut rng)).collect();
    println!(
        "{} reviews ({} real review texts cycled), {} users, {} items drawn",
        docs.len(),
        texts.len(),
        users,
        items
    );

    if a.fits_only {
        return fit_reuse(&docs, &w, 20_000);
    }
    // The live index.
    let rss0 = rss_kib();
    let t0 = Instant::now();
    let live = ProfileIndex::default();
    for chunk in docs.chunks(1000) {
        live.upsert_batch(chunk.to_vec())?;
    }
    let s = live.snapshot();
    let rss1 = rss_kib();
    println!(
        "live index: built in {:.1} s; {} users, {} items, {} tokens; {:.2} GiB resident per million reviews",
        t0.elapsed().as_secs_f64(),
        s.num_users(),
        s.num_items(),
        s.num_tokens(),
        (rss1.saturating_sub(rss0)) as f64 / (1 << 20) as f64 * 1e6 / docs.len() as f64
    );
    drop(s);

    // Today's pattern: one graph and one ranker behind a mutex.
    let graph = UserItemGraph::from_entries(
        docs.iter().enumerate().map(|(i, d)| entry(d, i)),
        GraphOptions::default(),
    )?;
    let mut bm25 = CachedBm25::pgraphrag()
        .with_doc_text(DocText::Clean)
        .with_tie_order(TieOrder::InputOrder);
    bm25.warm(&graph);
    let opts = ProfileOptions {
        k: 4,
        random: RandomReview::Off,
        ..ProfileOptions::default()
    };
    let locked = Mutex::new((graph, ProfileRanker::new(bm25, opts)));

    let target = |rng: &mut Rng| -> &Document { &docs[rng.below(docs.len())] };
    let request = |d: &Document| ContextRequest {
        user: d.user.clone(),
        item: d.item.clone(),
        query: Task::Text.query(d.title.as_deref(), Some(&d.text)),
        scope: Some(Scope::Both),
        k: 4,
        ..Default::default()
    };
    let live_read = |rng: &mut Rng| {
        let ctx = live.context(&request(target(rng))).expect("a context");
        std::hint::black_box(ctx);
    };
    let next_id = AtomicUsize::new(docs.len());
    let live_write = |i: usize| {
        let mut rng = Rng::new(i as u64 ^ 0xabc);
        let d = if i.is_multiple_of(2) {
            let n = next_id.fetch_add(1, Ordering::Relaxed);
            w.document(n, &mut rng)
        } else {
            let mut d = docs[rng.below(docs.len())].clone();
            d.text = format!("{} (edited)", d.text);
            d
        };
        live.upsert(d).expect("a write");
    };
    let graph_read = |rng: &mut Rng| {
        let d = target(rng);
        let r = request(d);
        let mut g = locked.lock().unwrap();
        let (graph, ranker) = &mut *g;
        let p = ranker.rank(
            graph,
            &r.user,
            &ItemId::from(r.item.clone().unwrap_or_default()),
            &r.query,
        );
        std::hint::black_box(p.expect("a profile"));
    };
    let graph_next = AtomicUsize::new(docs.len() * 2);
    let graph_write = |i: usize| {
        let mut rng = Rng::new(i as u64 ^ 0xdef);
        let n = graph_next.fetch_add(1, Ordering::Relaxed);
        let d = w.document(n, &mut rng);
        locked.lock().unwrap().0.insert(entry(&d, n));
    };

    profile_600(&texts)?;
    write_cost(&live, &docs, &w)?;

    println!(
        "\n{:>7} | {:>10} {:>9} {:>9} | {:>10} {:>9} {:>9} | {:>6}",
        "readers", "live req/s", "p50 ms", "p99 ms", "mutex req/s", "p50 ms", "p99 ms", "ratio"
    );
    for &threads in &a.threads {
        let (mut l, mut m): (Vec<Run>, Vec<Run>) = (Vec::new(), Vec::new());
        for _ in 0..a.rounds {
            l.push(drive(
                "live",
                threads,
                a.seconds,
                a.writes_per_sec,
                &live_read,
                &live_write,
            ));
            m.push(drive(
                "mutex",
                threads,
                a.seconds,
                a.writes_per_sec,
                &graph_read,
                &graph_write,
            ));
        }
        let med = |v: &[Run], f: fn(&Run) -> f64| median(v.iter().map(f).collect());
        let (lq, mq) = (med(&l, |r| r.qps), med(&m, |r| r.qps));
        println!(
            "{:>7} | {:>10.0} {:>9.3} {:>9.3} | {:>10.0} {:>9.3} {:>9.3} | {:>5.2}x",
            threads,
            lq,
            med(&l, |r| r.p50),
            med(&l, |r| r.p99),
            mq,
            med(&m, |r| r.p50),
            med(&m, |r| r.p99),
            lq / mq
        );
    }
    Ok(())
}
