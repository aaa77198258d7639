//! Times each part of `score_pairs` on a pairs file (single thread): WordNet load, ROUGE,
//! word_tokenize, METEOR on tokens, BLEU.
//!
//! ```sh
//! cargo run --release -p pgraphrag-metrics --example profile_parts -- pairs.jsonl
//! ```
use std::io::BufRead;
use std::time::Instant;

use pgraphrag_metrics::wordnet::WordNet;
use pgraphrag_metrics::{Rouge, meteor_tokens, sentence_bleu};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let inp = std::env::args()
        .nth(1)
        .ok_or("usage: profile_parts PAIRS.jsonl")?;
    let mut pairs = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(inp)?).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        pairs.push((s("prediction"), s("reference")));
    }
    let t = Instant::now();
    let wn = WordNet::global()?;
    println!("wordnet load     {:8.3} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let r = Rouge::default();
    let mut acc = 0.0;
    for (p, rf) in &pairs {
        acc += r.score(p, rf).rouge1.fmeasure;
    }
    println!("rouge            {:8.3} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let toks: Vec<_> = pairs
        .iter()
        .map(|(p, rf)| {
            (
                pgraphrag_text::word_tokenize(p),
                pgraphrag_text::word_tokenize(rf),
            )
        })
        .collect();
    println!("word_tokenize    {:8.3} s", t.elapsed().as_secs_f64());
    for round in 0..2 {
        let t = Instant::now();
        for (h, rf) in &toks {
            acc += meteor_tokens(h, rf, wn);
        }
        println!("meteor (round {round}) {:8.3} s", t.elapsed().as_secs_f64());
    }
    let t = Instant::now();
    for (p, rf) in &pairs {
        acc += sentence_bleu(p, &[rf.as_str()]).score;
    }
    println!(
        "bleu             {:8.3} s   (checksum {acc})",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
