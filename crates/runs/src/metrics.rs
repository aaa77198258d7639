//! Scores prediction/reference pairs with ROUGE, METEOR and BLEU (`pgraphrag metrics`).
//!
//! Input: JSON Lines `{"id": .., "prediction": "..", "reference": ".."}`. Output: one line per
//! pair, `{"id","rouge1","rouge2","rougeL","rougeLsum","meteor","bleu"}` in input order (ROUGE
//! F-measures as rouge-score computes them, METEOR as HF `evaluate`/nltk, sentence BLEU as
//! sacreBLEU), and a summary table: the mean and a 95% bootstrap interval of each metric.
//!
//! Work plan (the output does not depend on it): WordNet is loaded on a helper thread while the
//! input is read; the pairs are cut into blocks that the worker threads take in turn, first for
//! ROUGE, BLEU and METEOR's tokenization, then for METEOR's alignment (which needs WordNet).
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use pgraphrag_core::Progress;
use pgraphrag_data::jsonl::{Pair, read_pairs};
use pgraphrag_data::output::{WriteOptions, write_atomic_with};
use pgraphrag_metrics::bleu::sentence_bleu;
use pgraphrag_metrics::meteor::Meteor;
use pgraphrag_metrics::rouge::{Rouge, RougeOptions, RougeTokenizer};
use pgraphrag_metrics::stats::{BootstrapDraws, bootstrap_ci_columns, mean};
use pgraphrag_metrics::wordnet::WordNet;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Scores a pairs file into a scores file.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use pgraphrag_runs::metrics::MetricsSpec;
/// let pairs = dir.path().join("pairs.jsonl");
/// std::fs::write(&pairs, "{\"id\": 1, \"prediction\": \"a red fox\", \"reference\": \"a red fox\"}\n").unwrap();
/// let spec = MetricsSpec::new(&pairs, dir.path().join("scores.jsonl"));
/// let report = spec.run(&())?; // no WordNet given: METEOR is missing
/// assert_eq!(report.pairs, 1);
/// let line = std::fs::read_to_string(dir.path().join("scores.jsonl")).unwrap();
/// assert!(line.starts_with("{\"id\":1,\"rouge1\":1.0,"), "{line}");
/// assert!(report.summary.lines().any(|l| l.starts_with("meteor") && l.ends_with("missing")));
/// # Ok::<(), pgraphrag_runs::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsSpec {
    /// JSON Lines file of `{"id", "prediction", "reference"}` objects.
    pub pairs: PathBuf,
    /// Where one JSON line of scores per pair is written (atomically).
    pub out: PathBuf,
    /// Porter-stem ROUGE tokens longer than 3 characters (rouge-score's `use_stemmer=True`).
    pub stemmer: bool,
    /// The ROUGE tokenizer.
    #[serde(with = "crate::names")]
    pub tokenizer: RougeTokenizer,
    /// Seed of the bootstrap intervals in the summary.
    pub seed: u32,
    /// Scoring threads (`None`: all cores).
    pub threads: Option<usize>,
    /// The WordNet 3.0 folder of METEOR (`None`: METEOR is not computed, written as null).
    pub wordnet: Option<PathBuf>,
}

/// What a [`MetricsSpec`] run scored.
#[derive(Debug, Clone)]
pub struct MetricsReport {
    /// Pairs scored.
    pub pairs: usize,
    /// The summary table: mean and 95% bootstrap interval per metric.
    pub summary: String,
}

impl MetricsSpec {
    /// rouge-score's defaults (no stemmer, ASCII tokens), seed 0, every core, no WordNet.
    pub fn new(pairs: impl Into<PathBuf>, out: impl Into<PathBuf>) -> MetricsSpec {
        MetricsSpec {
            pairs: pairs.into(),
            out: out.into(),
            stemmer: false,
            tokenizer: RougeTokenizer::Ascii,
            seed: 0,
            threads: None,
            wordnet: None,
        }
    }

    /// Scores every pair, writes the scores and returns the summary.
    pub fn run(&self, progress: &dyn Progress) -> Result<MetricsReport> {
        let rouge = Rouge::new(RougeOptions {
            stemmer: self.stemmer,
            tokenizer: self.tokenizer,
        });
        // Start loading WordNet now: it overlaps with reading the input and the first pass.
        let dir = self.wordnet.clone();
        let loader = std::thread::spawn(move || load_wordnet(dir.as_deref()));
        let pairs = read_pairs(&self.pairs).map_err(Error::invalid)?;
        if pairs.is_empty() {
            return Err(Error::Setting(format!(
                "{}: no pairs (the file is empty or holds only blank lines); nothing to score",
                self.pairs.display()
            )));
        }
        let threads = self
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, pairs.len().div_ceil(BLOCK).max(1));
        // The summary's bootstrap indices depend only on the number of pairs and the seed: draw
        // them now, alongside the scoring, unless that would take too much memory.
        let n = pairs.len();
        let seed = self.seed;
        let draws = (n > 0 && n * N_SAMPLES <= PREDRAW_LIMIT)
            .then(|| std::thread::spawn(move || BootstrapDraws::new(n, N_SAMPLES, seed)));
        let scores = score_all(&pairs, &rouge, threads, progress, || {
            loader
                .join()
                .unwrap_or_else(|_| Err(panicked("the WordNet loading thread")))
        })?;
        let draws = match draws {
            Some(h) => Some(h.join().map_err(|_| panicked("the bootstrap thread"))??),
            None => None,
        };
        std::thread::scope(|s| -> Result<MetricsReport> {
            let summary = s.spawn(|| summary(&scores, seed, draws.as_ref()));
            write_scores(&self.out, &pairs, &scores)?;
            let summary = summary
                .join()
                .map_err(|_| panicked("the summary thread"))??;
            Ok(MetricsReport {
                pairs: pairs.len(),
                summary,
            })
        })
    }
}

/// A thread of the run that panicked.
fn panicked(what: &str) -> Error {
    Error::work(format!("{what} panicked"))(std::io::Error::other("internal error"))
}

/// WordNet from `dir`; `None` without one. Files cut short or malformed are the caller's
/// input at fault, so no METEOR is ever computed over part of WordNet.
pub(crate) fn load_wordnet(dir: Option<&Path>) -> Result<Option<&'static WordNet>> {
    let Some(dir) = dir else { return Ok(None) };
    match WordNet::global_in(dir) {
        Ok(wn) => Ok(Some(wn)),
        Err(e @ pgraphrag_metrics::Error::WordNetFormat { .. }) => Err(Error::invalid(e)),
        Err(e) => Err(e.into()),
    }
}

/// Writes the scores atomically: a killed run leaves the old file (or none), never part of one.
fn write_scores(path: &Path, pairs: &[Pair], scores: &[[f64; 6]]) -> Result<()> {
    write_atomic_with(path, WriteOptions::default().create_dirs(), |w| {
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
    })?;
    Ok(())
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
/// `wordnet` loads WordNet (on a thread of its own, while the first pass runs).
fn score_all(
    pairs: &[Pair],
    rouge: &Rouge,
    threads: usize,
    progress: &dyn Progress,
    wordnet: impl FnOnce() -> Result<Option<&'static WordNet>> + Send,
) -> Result<Vec<[f64; 6]>> {
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
            .unwrap_or_else(|_| Err(panicked("the WordNet loading thread")));
        for w in workers {
            if w.join().is_err() {
                return Err(panicked("a scoring thread"));
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
            return Err(panicked(
                "a block of pairs was not scored: a scoring thread",
            ));
        };
        for (f, m) in f.into_iter().zip(m) {
            let [r1, r2, rl, rls, bleu] = f.rouge_bleu;
            out.push([r1, r2, rl, rls, m, bleu]);
        }
    }
    Ok(out)
}

/// The summary table (mean and 95% bootstrap interval per metric); empty without pairs.
/// `draws`, when given, are the bootstrap draws for `scores.len()` pairs and `seed`.
fn summary(scores: &[[f64; 6]], seed: u32, draws: Option<&BootstrapDraws>) -> Result<String> {
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
    let _ = writeln!(
        out,
        "{:<10} {:>8} {:>8} {:>8}   (95% bootstrap, 1000 resamples, seed {seed})",
        "metric", "mean", "low", "high"
    );
    for (((name, col), ci), &missing) in NAMES.iter().zip(&cols).zip(&cis).zip(&missing) {
        if missing {
            let _ = writeln!(out, "{name:<10} {:>8}", "missing");
            continue;
        }
        let _ = writeln!(
            out,
            "{name:<10} {:>8.4} {:>8.4} {:>8.4}",
            mean(col),
            ci.low,
            ci.high
        );
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
        // The checkout's WordNet (scripts/fetch-wordnet.sh), as the tests of pgraphrag-metrics.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/wordnet");
        let wn = WordNet::global_in(&dir)
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
            Err(Error::Setting("no WordNet here".into()))
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
