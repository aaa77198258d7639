//! K-RagRec retrieval speed: the hop-field index build (encoding + message passing) and the
//! per-row retrieval + re-ranking + ego expansion latency, with the paper's popularity gate and
//! without it (every history item retrieved for). Run by `scripts/bench_kragrec.sh`, which runs
//! the Python reference (`scripts/kragrec_reference.py`) on the same rows with the same threads
//! and prints the ratios and the agreement of the retrieved sub-graphs; or alone:
//!
//! ```sh
//! PGRAPHRAG_BENCH_ML100K=models/corpora/ml-100k PGRAPHRAG_BENCH_ROWS=200 RAYON_NUM_THREADS=2 \
//!   cargo bench -p pgraphrag-recsys --bench kragrec_retrieval
//! ```
//!
//! Environment:
//! * `PGRAPHRAG_BENCH_ML100K` (required; without it the bench prints this and exits 0): the
//!   folder with `ml-100k.{inter,item,kg,link}`.
//! * `PGRAPHRAG_BENCH_MODEL`: the BERT folder (default `models/all-MiniLM-L6-v2` of the
//!   workspace).
//! * `PGRAPHRAG_BENCH_ROWS`: the first leave-one-out rows timed (default 200).
//! * `PGRAPHRAG_BENCH_OUT`: where to write the retrieved sub-graphs per row as JSON (the
//!   Python side writes the same shape; `kragrec_reference.py compare` compares them).
//! * `PGRAPHRAG_BENCH_AGGREGATION`: `mean` (default) or `released` (the untrained GCN).
//! * `PGRAPHRAG_BENCH_GATES`: `paper,none` (default) or either.
//! * `PGRAPHRAG_BENCH_PROFILE`: `1` (default) also times the phases of a row (gate, query
//!   encoding, cosine scan, top-K sort, re-ranking, ego expansion) in a second, untimed-for-
//!   the-headline pass through the public API, and two alternatives measured on the same
//!   scores (a linear top-K selection; one f32 pass over a hop's matrix for all of a row's
//!   queries); `0` skips it.
//!
//! Prints `key=value` lines (prefix `rs_`).
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use pgraphrag_core::{Encoder, NoProgress, TieOrder, top_k};
use pgraphrag_graph::kg::EntityId;
use pgraphrag_recsys::{
    Aggregation, Counted, ExactIndex, HopVectors, IndexOptions, KgRetriever, Ml100k, MovieKg,
    Popularity, PopularityGate, Retrieval, Row, Subgraph, build_kg, history_prompt, leave_one_out,
    ml100k_titles,
};
use pgraphrag_retrieval::dense::{BertEncoder, EncoderOptions};
use serde_json::{Value, json};

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

/// A path as given, or, when relative and not found from the current folder (cargo runs
/// benches in the package's folder), relative to the workspace root.
fn resolve(p: PathBuf) -> PathBuf {
    if p.is_relative() && !p.exists() {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(&p)
    } else {
        p
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// numpy's default (linear) percentile, `q` in [0, 100].
fn pctl(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let pos = (s.len() - 1) as f64 * q / 100.0;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(s.len() - 1);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

fn gate_of(name: &str) -> BoxResult<PopularityGate> {
    match name {
        "paper" => Ok(PopularityGate::paper()),
        // Every history item: every percentile is below 1.
        "none" => Ok(PopularityGate::BelowPercentile { p: 1.0 }),
        other => Err(format!("unknown gate {other:?} (paper or none)").into()),
    }
}

fn main() -> BoxResult<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(()); // `cargo bench -- --list` / `cargo test --benches` probing
    }
    let Some(data) = std::env::var_os("PGRAPHRAG_BENCH_ML100K").map(|p| resolve(p.into())) else {
        eprintln!(
            "set PGRAPHRAG_BENCH_ML100K to the ML-100K folder (scripts/bench_kragrec.sh does)"
        );
        return Ok(());
    };
    let model_dir = resolve(
        std::env::var_os("PGRAPHRAG_BENCH_MODEL")
            .map_or_else(|| "models/all-MiniLM-L6-v2".into(), PathBuf::from),
    );
    let n_rows: usize = env_or("PGRAPHRAG_BENCH_ROWS", "200").parse()?;
    let aggregation = match env_or("PGRAPHRAG_BENCH_AGGREGATION", "mean").as_str() {
        "mean" => Aggregation::Mean,
        "released" => Aggregation::ReleasedGcn { seed: 0 },
        other => return Err(format!("unknown aggregation {other:?} (mean or released)").into()),
    };
    let gates: Vec<String> = env_or("PGRAPHRAG_BENCH_GATES", "paper,none")
        .split(',')
        .map(str::to_string)
        .collect();
    let profile = env_or("PGRAPHRAG_BENCH_PROFILE", "1") != "0";

    let t = Instant::now();
    let ml = Ml100k::load(&data)?;
    let kg = build_kg(&ml)?;
    let pop = ml.popularity(Counted::All)?;
    let titles = ml100k_titles(&ml);
    let rows: Vec<Row> = leave_one_out(&ml.interactions, 10)
        .rows
        .into_iter()
        .take(n_rows)
        .collect();
    let t_data = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let encoder = BertEncoder::load_with(
        &model_dir,
        EncoderOptions {
            normalize: true,
            ..EncoderOptions::default()
        },
    )?;
    let model = encoder.fingerprint()?;
    encoder.encode(&["warm up", "the encoder"])?;
    let t_model = t.elapsed().as_secs_f64();
    println!(
        "rs_threads={} rs_backend={} rs_aggregation={}",
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into()),
        encoder.backend_name(),
        aggregation.name()
    );
    println!(
        "rs_entities={} rs_edges={} rs_relations={} rs_rows={} rs_data_load_s={t_data:.3} rs_model_load_s={t_model:.3}",
        kg.graph.entity_count(),
        kg.graph.edge_count(),
        kg.graph.relations().len(),
        rows.len()
    );

    // The index: encoding every distinct text + message passing, one call.
    let opts = IndexOptions {
        aggregation,
        ..IndexOptions::default()
    };
    let t = Instant::now();
    let vectors = HopVectors::build(&kg.graph, &encoder, &model, &opts, &NoProgress)?;
    let t_build = t.elapsed().as_secs_f64();
    print!("rs_index_build_s={t_build:.3}");
    if profile {
        // The encoding part alone, the same texts in the same batches.
        let mut texts: Vec<&str> = kg
            .graph
            .entity_ids()
            .map(|e| kg.graph.entity(e).text())
            .chain(kg.graph.relations().iter().map(|r| r.text.as_str()))
            .collect();
        texts.sort_unstable();
        texts.dedup();
        let t = Instant::now();
        for chunk in texts.chunks(opts.batch) {
            encoder.encode(chunk)?;
        }
        let t_enc = t.elapsed().as_secs_f64();
        print!(
            " rs_index_texts={} rs_index_encode_s={t_enc:.3} rs_index_propagate_s={:.3}",
            texts.len(),
            (t_build - t_enc).max(0.0)
        );
    }
    println!();
    let index = ExactIndex::new(&vectors);

    let mut out_gates = serde_json::Map::new();
    let mut means = BTreeMap::new();
    for gate_name in &gates {
        let config = Retrieval {
            gate: gate_of(gate_name)?,
            ..Retrieval::paper()
        };
        let retriever = KgRetriever::new(&kg.graph, &vectors, &index, &encoder, config)?;
        if let Some(r) = rows.first() {
            retriever.retrieve(&r.history, &pop, &titles)?; // warm-up
        }
        let (mut times, mut active, mut recs, mut items) = (Vec::new(), Vec::new(), Vec::new(), 0);
        for row in &rows {
            let t = Instant::now();
            let k = retriever.retrieve(&row.history, &pop, &titles)?;
            let triples = k.triples(&kg.graph);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            times.push(ms);
            if !k.selected.is_empty() {
                active.push(ms);
            }
            items += k.selected.len();
            let kept: Vec<Value> = k
                .subgraphs
                .iter()
                .map(|s| {
                    json!([
                        s.subgraph.hop,
                        kg.graph.entity(s.subgraph.centre).key,
                        s.item,
                        s.score
                    ])
                })
                .collect();
            recs.push(json!({
                "user": row.user,
                "selected": k.selected,
                "retrieved": k.retrieved,
                "kept": kept,
                "triples": triples.len(),
            }));
        }
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        means.insert(gate_name.clone(), mean);
        let k = format!("rs_{gate_name}");
        println!(
            "{k}_rows={} {k}_rows_with_retrieval={} {k}_items={items} {k}_total_s={:.3} {k}_mean_ms={mean:.3} \
             {k}_p50_ms={:.3} {k}_p99_ms={:.3} {k}_active_p50_ms={:.3} {k}_active_p99_ms={:.3}",
            times.len(),
            active.len(),
            times.iter().sum::<f64>() / 1e3,
            pctl(&times, 50.0),
            pctl(&times, 99.0),
            pctl(&active, 50.0),
            pctl(&active, 99.0),
        );
        out_gates.insert(gate_name.clone(), Value::Array(recs));
        if profile {
            let p = Profiler {
                kg: &kg,
                vectors: &vectors,
                index: &index,
                encoder: &encoder,
                config: retriever.config(),
                pop: &pop,
                titles: &titles,
            };
            p.run(&k, &rows)?;
        }
    }
    if let (Some(on), Some(off)) = (means.get("paper"), means.get("none")) {
        println!(
            "rs_gate_speedup={:.2} rs_gate_saving={:.3}",
            off / on,
            1.0 - on / off
        );
    }
    if profile {
        distinct_vectors(&vectors);
    }
    if let Some(path) = std::env::var_os("PGRAPHRAG_BENCH_OUT") {
        let doc = json!({"side": "rust", "aggregation": aggregation.name(), "gates": out_gates});
        std::fs::write(&path, serde_json::to_vec(&doc)?)?;
    }
    Ok(())
}

/// The phases of one row timed apart, through the public API (the same steps as
/// `KgRetriever::retrieve`, checked against it), plus two alternatives on the same data.
struct Profiler<'a> {
    kg: &'a MovieKg,
    vectors: &'a HopVectors,
    index: &'a ExactIndex<'a>,
    encoder: &'a BertEncoder,
    config: &'a Retrieval,
    pop: &'a Popularity,
    titles: &'a BTreeMap<u32, String>,
}

#[derive(Default)]
struct Phases {
    gate: f64,
    encode: f64,
    scan: f64,
    sort: f64,
    rerank: f64,
    ego: f64,
    // Alternatives, not part of the sum.
    select_linear: f64,
    scan_f64_lanes: f64,
    scan_f64_batched: f64,
    scan_f32_batched: f64,
    linear_same: usize,
    f64_lanes_same: usize,
    f64_batched_same: usize,
    f32_same: usize,
    searches: usize,
}

impl Profiler<'_> {
    fn run(&self, key: &str, rows: &[Row]) -> BoxResult<()> {
        let retriever = KgRetriever::new(
            &self.kg.graph,
            self.vectors,
            self.index,
            self.encoder,
            self.config.clone(),
        )?;
        let mut ph = Phases::default();
        let (mut active, mut mismatches) = (0usize, 0usize);
        let d = self.vectors.dim();
        for row in rows {
            let t = Instant::now();
            let selected = self.config.gate.select(self.pop, &row.history)?;
            let prompt = history_prompt(row.history.iter().map(|i| self.titles[i].as_str()));
            ph.gate += t.elapsed().as_secs_f64();
            if selected.is_empty() {
                continue;
            }
            active += 1;
            let t = Instant::now();
            let mut texts: Vec<&str> = selected.iter().map(|i| self.titles[i].as_str()).collect();
            texts.push(&prompt);
            let e = self.encoder.encode(&texts)?;
            ph.encode += t.elapsed().as_secs_f64();
            let qs: Vec<&[f32]> = e.as_slice().chunks_exact(d).collect();
            let (items_q, prompt_q) = qs.split_at(selected.len());
            let prompt_q = unit(prompt_q[0]);

            let mut hits: Vec<Vec<Vec<(usize, f64)>>> = Vec::new(); // hop → item → top K
            for hop in self.config.hops.clone() {
                let mut per_item = Vec::new();
                for q in items_q {
                    let t = Instant::now();
                    let scores = self.index.scores(hop, q)?;
                    ph.scan += t.elapsed().as_secs_f64();
                    let t = Instant::now();
                    let top: Vec<(usize, f64)> =
                        top_k(&scores, Some(self.config.top_k), TieOrder::InputOrder)
                            .into_iter()
                            .map(|s| (s.item, s.score))
                            .collect();
                    ph.sort += t.elapsed().as_secs_f64();
                    let t = Instant::now();
                    let lin = linear_top_k(&scores, self.config.top_k);
                    ph.select_linear += t.elapsed().as_secs_f64();
                    ph.linear_same += usize::from(lin == top);
                    // The same f64 scan with eight independent accumulators.
                    let t = Instant::now();
                    let qn = unit(q);
                    let lanes: Vec<f64> = self
                        .vectors
                        .hop_matrix(hop)
                        .unwrap_or_default()
                        .chunks_exact(d)
                        .map(|r| dot64_lanes(&qn, r))
                        .collect();
                    let lanes_top = linear_top_k(&lanes, self.config.top_k);
                    ph.scan_f64_lanes += t.elapsed().as_secs_f64();
                    ph.f64_lanes_same += usize::from(
                        lanes_top.iter().map(|x| x.0).collect::<Vec<_>>()
                            == top.iter().map(|x| x.0).collect::<Vec<_>>(),
                    );
                    ph.searches += 1;
                    per_item.push(top);
                }
                // The alternative scans: one pass over the hop's matrix for all the row's
                // queries, f64 with eight accumulators, then f32.
                let same = |a: &[Vec<(usize, f64)>], b: &[Vec<(usize, f64)>]| {
                    a.iter()
                        .zip(b)
                        .filter(|(x, y)| x.iter().map(|p| p.0).eq(y.iter().map(|p| p.0)))
                        .count()
                };
                let m = self.vectors.hop_matrix(hop).unwrap_or_default();
                let t = Instant::now();
                let f64_top = batched_top_k(m, d, items_q, self.config.top_k, dot64_lanes);
                ph.scan_f64_batched += t.elapsed().as_secs_f64();
                ph.f64_batched_same += same(&f64_top, &per_item);
                let t = Instant::now();
                let f32_top = batched_top_k(m, d, items_q, self.config.top_k, |a, b| {
                    f64::from(dot32(a, b))
                });
                ph.scan_f32_batched += t.elapsed().as_secs_f64();
                ph.f32_same += same(&f32_top, &per_item);
                hits.push(per_item);
            }
            let t = Instant::now();
            let mut first: BTreeMap<Subgraph, u32> = BTreeMap::new();
            for (k, &item) in selected.iter().enumerate() {
                for (hop, per_item) in self.config.hops.clone().zip(&hits) {
                    for &(c, _) in &per_item[k] {
                        first
                            .entry(Subgraph {
                                hop,
                                centre: EntityId(c as u32),
                            })
                            .or_insert(item);
                    }
                }
            }
            let cands: Vec<Subgraph> = first.keys().copied().collect();
            let scores: Vec<f64> = cands
                .iter()
                .map(|s| {
                    self.vectors
                        .vector(s.hop, s.centre)
                        .map_or(0.0, |v| dot64(&prompt_q, v))
                })
                .collect();
            let keep: Vec<Subgraph> = top_k(&scores, Some(self.config.top_n), TieOrder::InputOrder)
                .into_iter()
                .map(|s| cands[s.item])
                .collect();
            ph.rerank += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut seen = HashSet::new();
            let mut triples = 0usize;
            for s in &keep {
                let ego = self.kg.graph.ego(s.centre, self.config.ego_hops);
                for e in &ego.edges {
                    if seen.insert(e.id) {
                        std::hint::black_box(self.kg.graph.triple_text(e));
                        triples += 1;
                    }
                }
            }
            ph.ego += t.elapsed().as_secs_f64();
            // The profile's steps must be the retriever's.
            let k = retriever.retrieve(&row.history, self.pop, self.titles)?;
            let theirs: Vec<Subgraph> = k.subgraphs.iter().map(|s| s.subgraph).collect();
            if theirs != keep || k.triples(&self.kg.graph).len() != triples {
                mismatches += 1;
            }
        }
        let n = active.max(1) as f64;
        let ms = |x: f64| x * 1e3 / n;
        println!(
            "{key}_phase_gate_ms={:.3} {key}_phase_encode_ms={:.3} {key}_phase_scan_ms={:.3} {key}_phase_sort_ms={:.3} \
             {key}_phase_rerank_ms={:.3} {key}_phase_ego_ms={:.3} (means over {active} rows with retrieval; {} cosine scans of {} entities)",
            ms(ph.gate),
            ms(ph.encode),
            ms(ph.scan),
            ms(ph.sort),
            ms(ph.rerank),
            ms(ph.ego),
            ph.searches,
            self.vectors.entities(),
        );
        println!(
            "{key}_alt_linear_select_ms={:.3} {key}_alt_linear_select_same={}/{} \
             {key}_alt_f64_lanes_scan_select_ms={:.3} {key}_alt_f64_lanes_same_top_k={}/{} \
             {key}_alt_f64_batched_scan_select_ms={:.3} {key}_alt_f64_batched_same_top_k={}/{} \
             {key}_alt_f32_batched_scan_select_ms={:.3} {key}_alt_f32_same_top_k={}/{} {key}_profile_mismatches={mismatches}",
            ms(ph.select_linear),
            ph.linear_same,
            ph.searches,
            ms(ph.scan_f64_lanes),
            ph.f64_lanes_same,
            ph.searches,
            ms(ph.scan_f64_batched),
            ph.f64_batched_same,
            ph.searches,
            ms(ph.scan_f32_batched),
            ph.f32_same,
            ph.searches,
        );
        Ok(())
    }
}

fn unit(v: &[f32]) -> Vec<f32> {
    let n = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    v.iter()
        .map(|&x| {
            if n > 0.0 {
                (f64::from(x) / n) as f32
            } else {
                x
            }
        })
        .collect()
}

fn dot64(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum()
}

/// Whether `(a, i)` ranks before `(b, j)` in `top_k`'s `TieOrder::InputOrder`: higher score
/// first, NaN last, then the lower index.
fn better(a: f64, i: usize, b: f64, j: usize) -> bool {
    match b
        .partial_cmp(&a)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
    {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => i < j,
    }
}

/// The best `k` by one pass keeping a sorted buffer of `k` (what `top_k`'s full sort gives,
/// ties to the lower index).
fn linear_top_k(scores: &[f64], k: usize) -> Vec<(usize, f64)> {
    let mut best: Vec<(usize, f64)> = Vec::with_capacity(k + 1);
    for (i, &s) in scores.iter().enumerate() {
        if best.len() == k && !better(s, i, best[k - 1].1, best[k - 1].0) {
            continue;
        }
        let pos = best
            .iter()
            .position(|&(j, b)| better(s, i, b, j))
            .unwrap_or(best.len());
        best.insert(pos, (i, s));
        best.truncate(k);
    }
    best
}

/// One pass over `matrix` (`n × d`, rows unit length) for every query (the matrix streamed
/// from memory once, not once per query), `dot` per (row, query), queries normalised first, a
/// linear top-`k` per query.
fn batched_top_k(
    matrix: &[f32],
    d: usize,
    queries: &[&[f32]],
    k: usize,
    dot: impl Fn(&[f32], &[f32]) -> f64,
) -> Vec<Vec<(usize, f64)>> {
    let qs: Vec<Vec<f32>> = queries.iter().map(|q| unit(q)).collect();
    let mut best: Vec<Vec<(usize, f64)>> = vec![Vec::with_capacity(k + 1); qs.len()];
    for (i, row) in matrix.chunks_exact(d).enumerate() {
        for (q, b) in qs.iter().zip(best.iter_mut()) {
            let s = dot(q, row);
            if b.len() == k && !better(s, i, b[k - 1].1, b[k - 1].0) {
                continue;
            }
            let pos = b
                .iter()
                .position(|&(j, x)| better(s, i, x, j))
                .unwrap_or(b.len());
            b.insert(pos, (i, s));
            b.truncate(k);
        }
    }
    best
}

/// `Σ aᵢ bᵢ` in f64 with eight independent accumulators (the library's `dot` is one chain).
fn dot64_lanes(a: &[f32], b: &[f32]) -> f64 {
    let mut acc = [0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for ((s, &p), &q) in acc.iter_mut().zip(x).zip(y) {
            *s += f64::from(p) * f64::from(q);
        }
    }
    let tail: f64 = ra
        .iter()
        .zip(rb)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    acc.iter().sum::<f64>() + tail
}

fn dot32(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for ((s, &p), &q) in acc.iter_mut().zip(x).zip(y) {
            *s += p * q;
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// How many distinct vectors each hop holds (entities sharing a text, or a neighbourhood that
/// reads the same, have bit-identical vectors): an upper bound on what deduplicating the scan
/// would save.
fn distinct_vectors(v: &HopVectors) {
    let d = v.dim();
    let counts: Vec<String> = (0..=v.max_hop())
        .map(|hop| {
            let m = v.hop_matrix(hop).unwrap_or_default();
            let set: HashSet<Vec<u32>> = m
                .chunks_exact(d)
                .map(|r| r.iter().map(|x| x.to_bits()).collect())
                .collect();
            format!("rs_hop{hop}_distinct_vectors={}", set.len())
        })
        .collect();
    println!("{} (of {} entities)", counts.join(" "), v.entities());
}
