//! Tokenize a JSON array of strings; used by `scripts/bench_tokenize.py` for timing and for
//! parity checks on whole data sets.
//!
//! ```sh
//! cargo run --release -p pgraphrag-text --example tokenize_json -- MODE IN.json OUT.json
//! ```
//! MODE is `word`, `word_lower`, `sent_en` or `sent_pt`. Prints the tokenization time (seconds,
//! excluding JSON I/O) on stdout.
use anyhow::{Context, bail};
use pgraphrag_text::{Language, sent_tokenize, word_tokenize, word_tokenize_lower};
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        bail!("usage: tokenize_json MODE IN.json OUT.json");
    }
    let texts: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(&args[2]).with_context(|| format!("reading {}", args[2]))?,
    )
    .with_context(|| format!("{} is not a JSON array of strings", args[2]))?;
    let f: fn(&str) -> Vec<String> = match args[1].as_str() {
        "word" => word_tokenize,
        "word_lower" => word_tokenize_lower,
        "sent_en" => |t| sent_tokenize(t, Language::English),
        "sent_pt" => |t| sent_tokenize(t, Language::Portuguese),
        m => bail!("unknown mode {m}"),
    };
    // Warm up (loads the Punkt parameters), as the Python side does before timing.
    f("warm up. Mr. Smith.");
    let start = Instant::now();
    let out: Vec<Vec<String>> = texts.iter().map(|t| f(t)).collect();
    let secs = start.elapsed().as_secs_f64();
    std::fs::write(&args[3], serde_json::to_string(&out)?)
        .with_context(|| format!("writing {}", args[3]))?;
    println!("{secs}");
    Ok(())
}
