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
//!   encoding, top-K search, re-ranking, ego expansion) in a second, untimed-for-the-headline
//!   pass through the public API; `0` skips it.
//! * `PGRAPHRAG_BENCH_PRECISION`: the encoder's linear layers, `f32` (default) or `int8`.
//!
//! Prints `key=value` lines (prefix `rs_`).
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use pgraphrag_core::{Encoder, NoProgress, TieOrder, top_k};
use pgraphrag_recsys::{
    Aggregation, Counted, ExactIndex, HopVectors, IndexOptions, KgRetriever, Ml100k, MovieKg,
    Popularity, PopularityGate, Retrieval, Row, Subgraph, SubgraphIndex, build_kg, history_prompt,
    leave_one_out, ml100k_titles,
};
use pgraphrag_retrieval::dense::{BertEncoder, EncoderOptions, Precision};
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
        "none" => Ok(PopularityGate::every_item()),
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
    let precision: Precision = env_or("PGRAPHRAG_BENCH_PRECISION", "f32").parse()?;

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
            precision,
            ..EncoderOptions::default()
        },
    )?;
    let model = encoder.fingerprint()?;
    encoder.encode(&["warm up", "the encoder"])?;
    let t_model = t.elapsed().as_secs_f64();
    println!(
        "rs_threads={} rs_backend={} rs_aggregation={} rs_precision={}",
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into()),
        encoder.backend_name(),
        aggregation.name(),
        precision.name()
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
    let t_vectors = t.elapsed().as_secs_f64();
    // The search index over them (finding each hop's distinct vectors) is part of the build.
    let t = Instant::now();
    let index = ExactIndex::new(&vectors);
    let t_build = t_vectors + t.elapsed().as_secs_f64();
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
            (t_vectors - t_enc).max(0.0)
        );
        print!(" rs_index_search_setup_s={:.3}", t_build - t_vectors);
    }
    println!();

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
    if let Some(path) = std::env::var_os("PGRAPHRAG_BENCH_OUT") {
        let doc = json!({"side": "rust", "aggregation": aggregation.name(), "gates": out_gates});
        std::fs::write(&path, serde_json::to_vec(&doc)?)?;
    }
    Ok(())
}

/// The phases of one row timed apart, through the public API (the same steps as
/// `KgRetriever::retrieve`, checked against it).
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
    search: f64,
    rerank: f64,
    ego: f64,
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

            let t = Instant::now();
            let mut hits = Vec::new(); // hop → item → top K
            for hop in self.config.hops.clone() {
                hits.push(self.index.top_k_batch(hop, items_q, self.config.top_k)?);
                ph.searches += items_q.len();
            }
            ph.search += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut first: BTreeMap<Subgraph, u32> = BTreeMap::new();
            for (k, &item) in selected.iter().enumerate() {
                for per_item in &hits {
                    for h in &per_item[k] {
                        first.entry(h.subgraph).or_insert(item);
                    }
                }
            }
            let cands: Vec<Subgraph> = first.keys().copied().collect();
            let scores: Vec<f64> = cands
                .iter()
                .map(|s| {
                    self.vectors
                        .vector(s.hop, s.centre)
                        .map_or(0.0, |v| dot_lanes(&prompt_q, v))
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
            "{key}_phase_gate_ms={:.3} {key}_phase_encode_ms={:.3} {key}_phase_search_ms={:.3} \
             {key}_phase_rerank_ms={:.3} {key}_phase_ego_ms={:.3} {key}_profile_mismatches={mismatches} \
             (means over {active} rows with retrieval; {} searches of {} entities, scanning {:?} distinct vectors per hop)",
            ms(ph.gate),
            ms(ph.encode),
            ms(ph.search),
            ms(ph.rerank),
            ms(ph.ego),
            ph.searches,
            self.vectors.entities(),
            self.index.scanned_rows(),
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

/// `Σ aᵢ bᵢ` in f64, element `i` into lane `i mod 8`, lanes summed in order: the library's
/// order, so the re-ranking here ties exactly as the retriever's.
fn dot_lanes(a: &[f32], b: &[f32]) -> f64 {
    let mut acc = [0f64; 8];
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        acc[i % 8] += f64::from(x) * f64::from(y);
    }
    acc.iter().sum()
}
