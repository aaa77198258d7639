//! `pgraphrag metrics`: score prediction/reference pairs with ROUGE, METEOR and BLEU.
//!
//! Input: JSON Lines `{"id": .., "prediction": "..", "reference": ".."}`. Output: one line per
//! pair, `{"id","rouge1","rouge2","rougeL","rougeLsum","meteor","bleu"}` in input order (ROUGE
//! F-measures as rouge-score computes them, METEOR as HF `evaluate`/nltk, sentence BLEU as
//! sacreBLEU), then a summary table on stderr: the mean and a 95% bootstrap interval of each
//! metric.
//!
//! Work plan (the output does not depend on it): WordNet is loaded on a helper thread while the
//! input is read; the pairs are cut into blocks that the worker threads take in turn, first for
//! ROUGE, BLEU and METEOR's tokenization, then for METEOR's alignment (which needs WordNet).
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::bail;
use pgraphrag_core::Progress;
use pgraphrag_data::jsonl::{Pair, read_pairs};
use pgraphrag_metrics::bleu::sentence_bleu;
use pgraphrag_metrics::meteor::Meteor;
use pgraphrag_metrics::rouge::{Rouge, RougeOptions, RougeTokenizer};
use pgraphrag_metrics::stats::{BootstrapDraws, bootstrap_ci_columns, mean};
use pgraphrag_metrics::wordnet::WordNet;

use crate::error::OrUsage;
use crate::progress::Bar;

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
    /// ROUGE tokenizer.
    #[arg(long, value_enum, default_value = "ascii")]
    pub tokenizer: TokenizerArg,
    /// Seed of the bootstrap intervals in the summary.
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Scoring threads (default: all cores). WordNet is loaded on one more, short-lived thread.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// The ROUGE tokenizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TokenizerArg {
    /// rouge-score's: lowercase ASCII letters and digits (the reference).
    Ascii,
    /// Keeps accented letters (not comparable with published numbers).
    Unicode,
}

const NAMES: [&str; 6] = ["rouge1", "rouge2", "rougeL", "rougeLsum", "meteor", "bleu"];
/// Bootstrap resamples of the summary.
const N_SAMPLES: usize = 1000;
/// Up to this many drawn indices (4 bytes each) the summary's bootstrap draws are made while the
/// pairs are scored; beyond it they are drawn at the end, as they are consumed.
const PREDRAW_LIMIT: usize = 1 << 24;
/// Pairs per unit of work.
const BLOCK: usize = 32;

/// What the first pass computes for one pair: ROUGE F-measures and BLEU, and METEOR's tokens.
struct FirstPass {
    rouge_bleu: [f64; 5],
    hyp_tokens: Vec<String>,
    ref_tokens: Vec<String>,
}

fn first_pass(rouge: &Rouge, p: &Pair) -> FirstPass {
    let r = rouge.score(&p.prediction, &p.reference);
    FirstPass {
        rouge_bleu: [
            r.rouge1.fmeasure,
            r.rouge2.fmeasure,
            r.rouge_l.fmeasure,
            r.rouge_lsum.fmeasure,
            sentence_bleu(&p.prediction, &[p.reference.as_str()]).score,
        ],
        hyp_tokens: pgraphrag_text::word_tokenize(&p.prediction),
        ref_tokens: pgraphrag_text::word_tokenize(&p.reference),
    }
}

/// Scores every pair: `[rouge1, rouge2, rougeL, rougeLsum, meteor, bleu]` per pair, in order.
/// `loader` is the WordNet load started by the caller (joined here).
fn score_all(
    pairs: &[Pair],
    rouge: &Rouge,
    threads: usize,
    progress: &dyn Progress,
    wordnet: impl FnOnce() -> anyhow::Result<Option<&'static WordNet>> + Send,
) -> anyhow::Result<Vec<[f64; 6]>> {
    progress.start(pairs.len() as u64, "pairs");
    let blocks: Vec<&[Pair]> = pairs.chunks(BLOCK).collect();
    let first: Vec<OnceLock<Vec<FirstPass>>> = blocks.iter().map(|_| OnceLock::new()).collect();
    let meteor: Vec<OnceLock<Vec<f64>>> = blocks.iter().map(|_| OnceLock::new()).collect();
    let next_first = AtomicUsize::new(0);
    let next_meteor = AtomicUsize::new(0);
    let wordnet_ready: OnceLock<Option<&'static WordNet>> = OnceLock::new();
    let do_first = |b: usize| -> &Vec<FirstPass> {
        first[b].get_or_init(|| blocks[b].iter().map(|p| first_pass(rouge, p)).collect())
    };
    let work = || {
        loop {
            let b = next_first.fetch_add(1, Ordering::Relaxed);
            if b >= blocks.len() {
                break;
            }
            do_first(b);
        }
        // Blocks until the loader has finished (or failed).
        let Some(wn) = *wordnet_ready.wait() else {
            return;
        };
        let m = Meteor::with_wordnet(wn, Default::default());
        loop {
            let b = next_meteor.fetch_add(1, Ordering::Relaxed);
            if b >= blocks.len() {
                break;
            }
            let fp = do_first(b);
            let scores = fp
                .iter()
                .map(|f| m.score_tokens(&f.hyp_tokens, &f.ref_tokens))
                .collect();
            let _ = meteor[b].set(scores);
            progress.advance(blocks[b].len() as u64);
        }
    };
    let loaded = std::thread::scope(|s| {
        let workers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let loader = s.spawn(|| {
            let r = wordnet();
            let _ = wordnet_ready.set(r.as_ref().ok().copied().flatten());
            r
        });
        work();
        let loaded = loader
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the WordNet loading thread panicked")));
        for w in workers {
            if w.join().is_err() {
                return Err(anyhow::anyhow!("a scoring thread panicked"));
            }
        }
        loaded
    });
    progress.finish();
    // Without WordNet, METEOR is NaN (written as null, summarised as missing).
    let missing = loaded?.is_none();
    let mut out = Vec::with_capacity(pairs.len());
    for ((f, m), block) in first.into_iter().zip(meteor).zip(&blocks) {
        let m = match m.into_inner() {
            None if missing => Some(vec![f64::NAN; block.len()]),
            m => m,
        };
        let (Some(f), Some(m)) = (f.into_inner(), m) else {
            bail!("internal error: a block of pairs was not scored");
        };
        for (f, m) in f.into_iter().zip(m) {
            let [r1, r2, rl, rls, bleu] = f.rouge_bleu;
            out.push([r1, r2, rl, rls, m, bleu]);
        }
    }
    Ok(out)
}

/// Writes the scores atomically: a killed run leaves the old file (or none), never part of one.
fn write_scores(path: &Path, pairs: &[Pair], scores: &[[f64; 6]]) -> anyhow::Result<()> {
    crate::output::write_with(path, |w| {
        for (p, s) in pairs.iter().zip(scores) {
            w.write_all(b"{\"id\":")?;
            serde_json::to_writer(&mut *w, &p.id)?;
            for (k, v) in NAMES.iter().zip(s) {
                write!(w, ",\"{k}\":")?;
                serde_json::to_writer(&mut *w, v)?;
            }
            w.write_all(b"}\n")?;
        }
        Ok(())
    })
}

/// Runs `pgraphrag metrics`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let tokenizer = match args.tokenizer {
        TokenizerArg::Ascii => RougeTokenizer::Ascii,
        TokenizerArg::Unicode => RougeTokenizer::Unicode,
    };
    let rouge = Rouge::new(RougeOptions {
        stemmer: args.stemmer,
        tokenizer,
    });
    crate::output::file("--out", &args.out, &[("--pairs", &args.pairs)])?;
    // Start loading WordNet now: it overlaps with reading the input and the first pass.
    let loader = std::thread::spawn(crate::wordnet::load);
    let pairs = read_pairs(&args.pairs).or_usage()?;
    if pairs.is_empty() {
        return Err(crate::error::usage(format!(
            "--pairs {}: no pairs (the file is empty or holds only blank lines); nothing to score",
            args.pairs.display()
        )));
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, pairs.len().div_ceil(BLOCK).max(1));
    // The summary's bootstrap indices depend only on the number of pairs and the seed: draw
    // them now, alongside the scoring, unless that would take too much memory.
    let n = pairs.len();
    let draws = (n > 0 && n * N_SAMPLES <= PREDRAW_LIMIT)
        .then(|| std::thread::spawn(move || BootstrapDraws::new(n, N_SAMPLES, args.seed)));
    let bar = Bar::new(args.quiet);
    let scores = score_all(&pairs, &rouge, threads, &bar, || {
        let wn = loader
            .join()
            .map_err(|_| anyhow::anyhow!("the WordNet loading thread panicked"))??;
        if wn.is_none() {
            eprintln!("{}", crate::wordnet::missing_note());
        }
        Ok(wn)
    })?;
    let draws = match draws {
        Some(h) => Some(
            h.join()
                .map_err(|_| anyhow::anyhow!("the bootstrap thread panicked"))??,
        ),
        None => None,
    };
    std::thread::scope(|s| -> anyhow::Result<()> {
        let summary = s.spawn(|| summary(&scores, args.seed, draws.as_ref()));
        write_scores(&args.out, &pairs, &scores)?;
        eprintln!("{} pairs scored -> {}", pairs.len(), args.out.display());
        let summary = summary
            .join()
            .map_err(|_| anyhow::anyhow!("the summary thread panicked"))??;
        eprint!("{summary}");
        Ok(())
    })
}

/// The summary table (mean and 95% bootstrap interval per metric); empty without pairs.
/// `draws`, when given, are the bootstrap draws for `scores.len()` pairs and `seed`.
fn summary(
    scores: &[[f64; 6]],
    seed: u32,
    draws: Option<&BootstrapDraws>,
) -> anyhow::Result<String> {
    use std::fmt::Write as _;
    let mut out = String::new();
    if scores.is_empty() {
        return Ok(out);
    }
    let cols: Vec<Vec<f64>> = (0..NAMES.len())
        .map(|j| scores.iter().map(|s| s[j]).collect())
        .collect();
    // A column that was not computed (METEOR without WordNet) is all NaN: resample zeros in
    // its place (each column's interval depends only on its own values and the shared draws).
    let missing: Vec<bool> = cols.iter().map(|c| c.iter().all(|v| v.is_nan())).collect();
    let zeros = vec![0.0; scores.len()];
    let refs: Vec<&[f64]> = cols
        .iter()
        .zip(&missing)
        .map(|(c, &m)| if m { zeros.as_slice() } else { c.as_slice() })
        .collect();
    // One seed for every column, as separate `bootstrap_ci(col, 1000, 0.95, seed)` calls would.
    let cis = match draws {
        Some(d) => d.intervals(&refs, 0.95)?,
        None => bootstrap_ci_columns(&refs, N_SAMPLES, 0.95, seed)?,
    };
    writeln!(
        out,
        "{:<10} {:>8} {:>8} {:>8}   (95% bootstrap, 1000 resamples, seed {seed})",
        "metric", "mean", "low", "high"
    )?;
    for (((name, col), ci), &missing) in NAMES.iter().zip(&cols).zip(&cis).zip(&missing) {
        if missing {
            writeln!(out, "{name:<10} {:>8}", "missing")?;
            continue;
        }
        writeln!(
            out,
            "{name:<10} {:>8.4} {:>8.4} {:>8.4}",
            mean(col),
            ci.low,
            ci.high
        )?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgraphrag_metrics::stats::bootstrap_ci;
    use serde_json::Value;

    fn pairs(n: usize) -> Vec<Pair> {
        let texts = [
            "The quick brown fox jumps over the lazy dog.",
            "A fast brown fox leaped over dogs; it was happy.",
            "Great hotel, friendly staff and a clean room!",
            "The room was clean but the staff were not friendly.",
            "",
            "Produto ótimo, chegou rápido.",
        ];
        (0..n)
            .map(|i| Pair {
                id: Value::from(i),
                prediction: texts[i % texts.len()].to_string(),
                reference: texts[(i * 7 + 1) % texts.len()].to_string(),
            })
            .collect()
    }

    #[test]
    fn threads_do_not_change_the_scores() {
        let wn = crate::wordnet::load()
            .unwrap()
            .expect("WordNet 3.0 is missing: run scripts/fetch-wordnet.sh (see docs/metrics.md)");
        let ps = pairs(3 * BLOCK + 5);
        let rouge = Rouge::default();
        let one = score_all(&ps, &rouge, 1, &(), || Ok(Some(wn))).unwrap();
        let four = score_all(&ps, &rouge, 4, &(), || Ok(Some(wn))).unwrap();
        assert_eq!(one, four);
        let m = Meteor::with_wordnet(wn, Default::default());
        for (p, s) in ps.iter().zip(&one) {
            let r = rouge.score(&p.prediction, &p.reference);
            let want = [
                r.rouge1.fmeasure,
                r.rouge2.fmeasure,
                r.rouge_l.fmeasure,
                r.rouge_lsum.fmeasure,
                m.score_str(&p.prediction, &p.reference),
                sentence_bleu(&p.prediction, &[p.reference.as_str()]).score,
            ];
            assert_eq!(*s, want);
        }
    }

    #[test]
    fn a_failed_wordnet_load_is_an_error() {
        let ps = pairs(3);
        let e = score_all(&ps, &Rouge::default(), 2, &(), || {
            anyhow::bail!("no WordNet here")
        });
        assert!(e.unwrap_err().to_string().contains("no WordNet here"));
    }

    #[test]
    fn without_wordnet_meteor_is_missing_and_the_rest_is_scored() {
        let ps = pairs(BLOCK + 3);
        let rouge = Rouge::default();
        let s = score_all(&ps, &rouge, 2, &(), || Ok(None)).unwrap();
        assert_eq!(s.len(), ps.len());
        for (p, row) in ps.iter().zip(&s) {
            assert!(row[4].is_nan());
            assert_eq!(
                row[0],
                rouge.score(&p.prediction, &p.reference).rouge1.fmeasure
            );
        }
        let table = summary(&s, 0, None).unwrap();
        let meteor = table.lines().find(|l| l.starts_with("meteor")).unwrap();
        assert!(meteor.ends_with("missing"), "{meteor}");
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("rouge1") && !l.contains("NaN"))
        );
    }

    #[test]
    fn summary_matches_per_column_bootstrap() {
        let scores: Vec<[f64; 6]> = (0..50)
            .map(|i| {
                let x = i as f64;
                [x / 50.0, (x * 0.3).sin().abs(), 0.5, x % 7.0 / 7.0, 0.1, x]
            })
            .collect();
        let s = summary(&scores, 3, None).unwrap();
        let draws = BootstrapDraws::new(scores.len(), N_SAMPLES, 3).unwrap();
        assert_eq!(s, summary(&scores, 3, Some(&draws)).unwrap());
        for (j, line) in s.lines().skip(1).enumerate() {
            let col: Vec<f64> = scores.iter().map(|r| r[j]).collect();
            let ci = bootstrap_ci(&col, 1000, 0.95, 3).unwrap();
            let want = format!(
                "{:<10} {:>8.4} {:>8.4} {:>8.4}",
                NAMES[j],
                mean(&col),
                ci.low,
                ci.high
            );
            assert_eq!(line, want);
        }
    }

    #[test]
    fn bad_lines_are_named() {
        let dir =
            std::env::temp_dir().join(format!("pgraphrag_metrics_cmd_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.jsonl");
        for (text, want) in [
            (
                "{\"id\":1,\"prediction\":\"a\",\"reference\":\"b\"}\n[1]\n",
                "line 2: not a JSON object",
            ),
            (
                "{\"id\":1,\"prediction\":2,\"reference\":\"b\"}\n",
                "\"prediction\" must be a string",
            ),
            (
                "\n{\"prediction\":\"a\",\"reference\":\"b\"}\n",
                "line 2: missing \"id\"",
            ),
            ("{\"id\":1,\"prediction\":\"a\"}\n", "missing \"reference\""),
        ] {
            std::fs::write(&path, text).unwrap();
            let Err(e) = read_pairs(&path) else {
                panic!("{text:?} was accepted")
            };
            let e = e.to_string();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
