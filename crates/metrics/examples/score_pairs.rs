//! Scores a JSON Lines file of `{"id", "prediction", "reference"}` pairs with ROUGE, METEOR and
//! sentence BLEU on all cores: the library path behind `pgraphrag metrics`, without the CLI.
//!
//! ```sh
//! cargo run --release -p pgraphrag-metrics --example score_pairs -- pairs.jsonl scores.jsonl
//! ```
use std::io::{BufRead, Write};

use pgraphrag_metrics::{Meteor, Rouge, sentence_bleu, wordnet};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(inp), Some(out)) = (args.get(1), args.get(2)) else {
        return Err("usage: score_pairs PAIRS.jsonl OUT.jsonl".into());
    };
    let mut pairs: Vec<(Value, String, String)> = Vec::new();
    for (i, line) in std::io::BufReader::new(std::fs::File::open(inp)?)
        .lines()
        .enumerate()
    {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| format!("line {}: {e}", i + 1))?;
        let s = |k: &str| {
            v[k].as_str()
                .map(str::to_string)
                .ok_or(format!("line {}: missing string {k:?}", i + 1))
        };
        pairs.push((v["id"].clone(), s("prediction")?, s("reference")?));
    }
    let rouge = Rouge::default();
    let cwd = std::env::current_dir()?;
    let meteor = Meteor::load(&wordnet::find(&wordnet::search_paths(
        |k| std::env::var_os(k),
        &[cwd],
    ))?)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = pairs.len().div_ceil(threads).max(1);
    let score = |(_, p, r): &(Value, String, String)| {
        let s = rouge.score(p, r);
        [
            s.rouge1.fmeasure,
            s.rouge2.fmeasure,
            s.rouge_l.fmeasure,
            s.rouge_lsum.fmeasure,
            meteor.score_str(p, r),
            sentence_bleu(p, &[r.as_str()]).score,
        ]
    };
    let scores: Vec<[f64; 6]> = std::thread::scope(|sc| {
        let hs: Vec<_> = pairs
            .chunks(chunk)
            .map(|c| sc.spawn(move || c.iter().map(score).collect::<Vec<_>>()))
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("worker panicked"))
            .collect()
    });
    let mut w = std::io::BufWriter::new(std::fs::File::create(out)?);
    for ((id, _, _), s) in pairs.iter().zip(&scores) {
        let v = json!({"id": id, "rouge1": s[0], "rouge2": s[1], "rougeL": s[2],
                       "rougeLsum": s[3], "meteor": s[4], "bleu": s[5]});
        writeln!(w, "{v}")?;
    }
    Ok(())
}
