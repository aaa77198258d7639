//! Times each metric of `pgraphrag metrics` on a pairs file, on one thread, in one process:
//! WordNet load, ROUGE-1/2/L/Lsum, METEOR (`word_tokenize` of both sides, then the alignment
//! with cold caches: the first pass over the pairs pays every stem and synonym lookup), and
//! sentence BLEU. The last line is the same figures as JSON (what `scripts/bench_metrics.py`
//! reads for its per-metric ratios).
//!
//! ```sh
//! cargo run --release -p pgraphrag-metrics --example profile_parts -- pairs.jsonl
//! ```
use std::io::BufRead;
use std::time::Instant;

use pgraphrag_metrics::wordnet::WordNet;
use pgraphrag_metrics::{Meteor, Rouge, sentence_bleu};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let inp = std::env::args()
        .nth(1)
        .ok_or("usage: profile_parts PAIRS.jsonl")?;
    let mut pairs = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(inp)?).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line)?;
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        pairs.push((s("prediction"), s("reference")));
    }
    let mut acc = 0.0;
    let t = Instant::now();
    let r = Rouge::default();
    for (p, rf) in &pairs {
        let s = r.score(p, rf);
        acc += s.rouge1.fmeasure + s.rouge_lsum.fmeasure;
    }
    let rouge = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let wn = WordNet::global_in(&pgraphrag_metrics::wordnet::find(
        &pgraphrag_metrics::wordnet::search_paths(
            |k| std::env::var_os(k),
            &[std::env::current_dir()?],
        ),
    )?)?;
    let load = t.elapsed().as_secs_f64();
    let m = Meteor::with_wordnet(wn, Default::default());
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
    let tokenize = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for (h, rf) in &toks {
        acc += m.score_tokens(h, rf);
    }
    let align = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for (p, rf) in &pairs {
        acc += sentence_bleu(p, &[rf.as_str()]).score;
    }
    let bleu = t.elapsed().as_secs_f64();
    println!("pairs            {:8}", pairs.len());
    println!("rouge            {rouge:8.4} s");
    println!("wordnet load     {load:8.4} s");
    println!("word_tokenize    {tokenize:8.4} s");
    println!("meteor alignment {align:8.4} s   (cold caches)");
    println!("bleu             {bleu:8.4} s   (checksum {acc})");
    println!(
        "{}",
        serde_json::json!({
            "pairs": pairs.len(), "rouge": rouge, "wordnet_load": load,
            "word_tokenize": tokenize, "meteor_alignment": align,
            "meteor": load + tokenize + align, "bleu": bleu,
        })
    );
    Ok(())
}
