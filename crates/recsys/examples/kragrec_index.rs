//! Builds the hop-field sub-graph index of the full ML-100K KG with a BERT encoder, times it,
//! saves and reloads it, and retrieves knowledge for the first rows with a cold history item.
//!
//! ```sh
//! cargo run --release -p pgraphrag-recsys --example kragrec_index -- \
//!     models/corpora/ml-100k models/all-MiniLM-L6-v2 runs/kragrec/ml100k-minilm.bin [mean|released] [ROWS]
//!
//! ROWS: how many leave-one-out rows to retrieve for (default 100).
//! ```
use std::path::PathBuf;
use std::time::Instant;

use pgraphrag_core::NoProgress;
use pgraphrag_recsys::{
    Aggregation, Counted, ExactIndex, HopVectors, IndexOptions, KgRetriever, Ml100k, Retrieval,
    build_kg, leave_one_out, ml100k_titles,
};
use pgraphrag_retrieval::dense::{BertEncoder, EncoderOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        return Err(
            "usage: kragrec_index ML100K_DIR MODEL_DIR INDEX_FILE [mean|released] [ROWS]".into(),
        );
    }
    let (data, model_dir, out) = (
        PathBuf::from(&args[0]),
        PathBuf::from(&args[1]),
        PathBuf::from(&args[2]),
    );
    let aggregation = match args.get(3).map(String::as_str) {
        None | Some("mean") => Aggregation::Mean,
        Some("released") => Aggregation::ReleasedGcn { seed: 0 },
        Some(other) => {
            return Err(format!("unknown aggregation {other:?} (mean or released)").into());
        }
    };
    let max_rows: usize = match args.get(4) {
        None => 100,
        Some(n) => n
            .parse()
            .map_err(|_| format!("ROWS must be a number, not {n:?}"))?,
    };
    let ml = Ml100k::load(&data)?;
    let kg = build_kg(&ml)?;
    let encoder = BertEncoder::load_with(
        &model_dir,
        EncoderOptions {
            normalize: true,
            ..EncoderOptions::default()
        },
    )?;
    let model = encoder.fingerprint()?;
    println!(
        "KG: {} entities, {} edges; model {}",
        kg.graph.entity_count(),
        kg.graph.edge_count(),
        encoder.dir().display()
    );

    let t = Instant::now();
    let opts = IndexOptions {
        aggregation,
        ..IndexOptions::default()
    };
    let vectors = HopVectors::build(&kg.graph, &encoder, &model, &opts, &NoProgress)?;
    println!(
        "build ({}): {:.2} s",
        aggregation.name(),
        t.elapsed().as_secs_f64()
    );
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let t = Instant::now();
    vectors.save(&out)?;
    println!(
        "save: {:.2} s, {} bytes",
        t.elapsed().as_secs_f64(),
        std::fs::metadata(&out)?.len()
    );
    let t = Instant::now();
    let vectors = HopVectors::load(&out, &model, &kg.graph, Some(encoder.dim()))?;
    println!("load: {:.2} s", t.elapsed().as_secs_f64());

    let index = ExactIndex::new(&vectors);
    let retriever = KgRetriever::new(&kg.graph, &vectors, &index, &encoder, Retrieval::paper())?;
    let pop = ml.popularity(Counted::All)?;
    let titles = ml100k_titles(&ml);
    let loo = leave_one_out(&ml.interactions, 10);
    let t = Instant::now();
    let (mut rows, mut printed) = (0, 0);
    for row in loo.rows.iter().take(max_rows) {
        let k = retriever.retrieve(&row.history, &pop, &titles)?;
        if printed < 2 && !k.subgraphs.is_empty() {
            printed += 1;
            println!("user {}: selected {:?}", row.user, k.selected);
            for s in &k.subgraphs {
                println!(
                    "  hop {} {:?} ({:.3}), {} triples",
                    s.subgraph.hop,
                    kg.graph.entity(s.subgraph.centre).text(),
                    s.score,
                    s.ego.edges.len()
                );
            }
        }
        rows += 1;
    }
    println!(
        "retrieval: {rows} rows in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
