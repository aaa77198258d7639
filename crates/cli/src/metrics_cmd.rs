//! `pgraphrag metrics`: score prediction/reference pairs with ROUGE, METEOR and BLEU.
//!
//! Input: JSON Lines `{"id": .., "prediction": "..", "reference": ".."}`. Output: one line per
//! pair, `{"id","rouge1","rouge2","rougeL","rougeLsum","meteor","bleu"}` (ROUGE F-measures as
//! rouge-score computes them, METEOR as HF `evaluate`/nltk, sentence BLEU as sacreBLEU), then a
//! summary table on stderr: the mean and a 95% bootstrap interval of each metric.
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use pgraphrag_metrics::bleu::sentence_bleu;
use pgraphrag_metrics::meteor::Meteor;
use pgraphrag_metrics::rouge::{Rouge, RougeOptions, RougeTokenizer};
use pgraphrag_metrics::stats::{bootstrap_ci, mean};
use serde_json::{Value, json};

/// Arguments of `pgraphrag metrics`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// JSON Lines file of `{"id", "prediction", "reference"}` objects.
    #[arg(long)]
    pub pairs: PathBuf,
    /// Where to write one JSON line of scores per pair.
    #[arg(long)]
    pub out: PathBuf,
    /// Porter-stem ROUGE tokens longer than 3 characters (rouge-score's `use_stemmer=True`).
    #[arg(long)]
    pub stemmer: bool,
    /// ROUGE tokenizer: `ascii` (rouge-score, the reference) or `unicode` (keeps accented
    /// letters; not comparable with published numbers).
    #[arg(long, default_value = "ascii")]
    pub tokenizer: String,
    /// Seed of the bootstrap intervals in the summary.
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

struct Pair {
    id: Value,
    prediction: String,
    reference: String,
}

const NAMES: [&str; 6] = ["rouge1", "rouge2", "rougeL", "rougeLsum", "meteor", "bleu"];

fn read_pairs(path: &PathBuf) -> anyhow::Result<Vec<Pair>> {
    let f = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let n = i + 1;
        let line = line.with_context(|| format!("{}: line {n}: cannot read", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line)
            .with_context(|| format!("{}: line {n}: not a JSON object", path.display()))?;
        let field = |k: &str| -> anyhow::Result<String> {
            match v.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => bail!(
                    "{}: line {n}: \"{k}\" must be a string, found {other}",
                    path.display()
                ),
                None => bail!("{}: line {n}: missing \"{k}\"", path.display()),
            }
        };
        let Some(id) = v.get("id").cloned() else {
            bail!("{}: line {n}: missing \"id\"", path.display());
        };
        out.push(Pair {
            id,
            prediction: field("prediction")?,
            reference: field("reference")?,
        });
    }
    Ok(out)
}

/// Runs `pgraphrag metrics`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let tokenizer = match args.tokenizer.as_str() {
        "ascii" => RougeTokenizer::Ascii,
        "unicode" => RougeTokenizer::Unicode,
        t => bail!("--tokenizer must be `ascii` or `unicode`, not {t:?}"),
    };
    let pairs = read_pairs(&args.pairs)?;
    let rouge = Rouge::new(RougeOptions {
        stemmer: args.stemmer,
        tokenizer,
    });
    let meteor = Meteor::new()?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, pairs.len().max(1));
    let chunk = pairs.len().div_ceil(threads).max(1);
    let score = |p: &Pair| -> [f64; 6] {
        let r = rouge.score(&p.prediction, &p.reference);
        [
            r.rouge1.fmeasure,
            r.rouge2.fmeasure,
            r.rouge_l.fmeasure,
            r.rouge_lsum.fmeasure,
            meteor.score_str(&p.prediction, &p.reference),
            sentence_bleu(&p.prediction, &[p.reference.as_str()]).score,
        ]
    };
    let scores: Vec<[f64; 6]> = std::thread::scope(|s| {
        let handles: Vec<_> = pairs
            .chunks(chunk)
            .map(|c| s.spawn(move || c.iter().map(score).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("scoring thread panicked"))
            .collect()
    });
    let out = std::fs::File::create(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let mut w = BufWriter::new(out);
    for (p, s) in pairs.iter().zip(&scores) {
        let mut obj = serde_json::Map::new();
        obj.insert("id".into(), p.id.clone());
        for (k, v) in NAMES.iter().zip(s) {
            obj.insert((*k).into(), json!(v));
        }
        serde_json::to_writer(&mut w, &Value::Object(obj))?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    eprintln!("{} pairs scored -> {}", pairs.len(), args.out.display());
    if pairs.is_empty() {
        return Ok(());
    }
    eprintln!(
        "{:<10} {:>8} {:>8} {:>8}   (95% bootstrap, 1000 resamples, seed {})",
        "metric", "mean", "low", "high", args.seed
    );
    for (j, name) in NAMES.iter().enumerate() {
        let col: Vec<f64> = scores.iter().map(|s| s[j]).collect();
        let ci = bootstrap_ci(&col, 1000, 0.95, args.seed)?;
        eprintln!(
            "{name:<10} {:>8.4} {:>8.4} {:>8.4}",
            mean(&col),
            ci.low,
            ci.high
        );
    }
    Ok(())
}
