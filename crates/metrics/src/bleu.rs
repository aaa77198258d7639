//! BLEU exactly as sacreBLEU 2.x computes it with its defaults: the `13a` tokenizer (mteval-v13a),
//! case-sensitive, max order 4, `exp` smoothing (NIST, mteval-v13a), and the closest reference
//! length (the shorter one on ties).
//!
//! * [`sentence_bleu`] = `sacrebleu.sentence_bleu(hyp, refs)` (effective order on).
//! * [`corpus_bleu`] = `sacrebleu.corpus_bleu(hyps, [refs])` (what HF `evaluate`'s `sacrebleu`
//!   reports; effective order off).
//!
//! Scores are on sacreBLEU's 0–100 scale.
//!
//! ```
//! use pgraphrag_metrics::bleu::{sentence_bleu, tokenize_13a};
//! assert_eq!(tokenize_13a("Hello, world! It's 3.14."), "Hello , world ! It's 3.14 .");
//! let s = sentence_bleu("the cat sat on the mat", &["the cat sat on the mat"]);
//! assert!((s.score - 100.0).abs() < 1e-9);
//! ```
use crate::error::{Error, Result};
use crate::fxhash::FxMap;
use crate::py_isspace;

/// sacreBLEU's `MAX_NGRAM_ORDER`.
pub const MAX_ORDER: usize = 4;

/// Characters rule 1 of `TokenizerRegexp` surrounds with spaces:
/// `[\{-\~\[-\` -\&\(-\+\:-\@\/]`.
fn is_sym(c: char) -> bool {
    matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/')
}

/// Applies a two-character rule `(a)(b) -> f(a, b)` left to right without overlaps, as
/// `re.sub` does for a pattern that always matches exactly two characters.
fn sub2(
    s: &str,
    matches: impl Fn(char, char) -> bool,
    emit: impl Fn(&mut String, char, char),
) -> String {
    let cs: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 16);
    let mut i = 0;
    while i < cs.len() {
        if i + 1 < cs.len() && matches(cs[i], cs[i + 1]) {
            emit(&mut out, cs[i], cs[i + 1]);
            i += 2;
        } else {
            out.push(cs[i]);
            i += 1;
        }
    }
    out
}

/// sacreBLEU's `Tokenizer13a` (tokens joined by single spaces).
pub fn tokenize_13a(line: &str) -> String {
    let mut line = line
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    // rule 1: ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "
    let mut s = String::with_capacity(line.len() * 2 + 2);
    s.push(' ');
    for c in line.chars() {
        if is_sym(c) {
            s.push(' ');
            s.push(c);
            s.push(' ');
        } else {
            s.push(c);
        }
    }
    s.push(' ');
    // (The spaces of f" {line} " are rule-1 symbols too; how many spaces stand between tokens
    // cannot change rules 2-4 or the final split.)
    let period = |c: char| c == '.' || c == ',';
    let digit = |c: char| c.is_ascii_digit();
    let s = if s.contains(['.', ',']) {
        // rule 2: ([^0-9])([\.,]) -> "\1 \2 "
        let s = sub2(
            &s,
            |a, b| !digit(a) && period(b),
            |o, a, b| {
                o.push(a);
                o.push(' ');
                o.push(b);
                o.push(' ');
            },
        );
        // rule 3: ([\.,])([^0-9]) -> " \1 \2"
        sub2(
            &s,
            |a, b| period(a) && !digit(b),
            |o, a, b| {
                o.push(' ');
                o.push(a);
                o.push(' ');
                o.push(b);
            },
        )
    } else {
        s
    };
    // rule 4: ([0-9])(-) -> "\1 \2 "
    let s = if s.contains('-') {
        sub2(
            &s,
            |a, b| digit(a) && b == '-',
            |o, a, b| {
                o.push(a);
                o.push(' ');
                o.push(b);
                o.push(' ');
            },
        )
    } else {
        s
    };
    let mut out = String::with_capacity(s.len());
    for t in s.split(py_isspace).filter(|t| !t.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    }
    out
}

/// sacreBLEU's `_preprocess_segment`: `rstrip()` then `13a`.
fn preprocess(s: &str) -> String {
    tokenize_13a(s.trim_end_matches(py_isspace))
}

/// Sufficient statistics of BLEU for one or more segments (sacreBLEU's stats vector).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BleuStats {
    /// Hypothesis length in tokens.
    pub sys_len: u64,
    /// Closest reference length.
    pub ref_len: u64,
    /// Clipped n-gram matches, n = 1..4.
    pub correct: [u64; MAX_ORDER],
    /// Hypothesis n-grams, n = 1..4.
    pub total: [u64; MAX_ORDER],
}

impl std::ops::AddAssign for BleuStats {
    fn add_assign(&mut self, o: Self) {
        self.sys_len += o.sys_len;
        self.ref_len += o.ref_len;
        for n in 0..MAX_ORDER {
            self.correct[n] += o.correct[n];
            self.total[n] += o.total[n];
        }
    }
}

/// Statistics of one hypothesis against its references (sacreBLEU's
/// `_compute_segment_statistics`); both sides are tokenized here.
pub fn segment_stats<S: AsRef<str>>(hypothesis: &str, references: &[S]) -> BleuStats {
    let hyp = preprocess(hypothesis);
    let refs: Vec<String> = references.iter().map(|r| preprocess(r.as_ref())).collect();
    stats_from_tokenized(&hyp, &refs)
}

fn count_ngrams(tokens: &[u32]) -> FxMap<&[u32], u32> {
    let mut m: FxMap<&[u32], u32> = FxMap::default();
    for n in 1..=MAX_ORDER {
        if tokens.len() >= n {
            for w in tokens.windows(n) {
                *m.entry(w).or_insert(0) += 1;
            }
        }
    }
    m
}

fn stats_from_tokenized(hyp: &str, refs: &[String]) -> BleuStats {
    let hyp_toks: Vec<&str> = hyp.split(' ').filter(|t| !t.is_empty()).collect();
    let ref_toks: Vec<Vec<&str>> = refs
        .iter()
        .map(|r| r.split(' ').filter(|t| !t.is_empty()).collect())
        .collect();
    let mut table: FxMap<&str, u32> = FxMap::default();
    let mut h: Vec<u32> = Vec::with_capacity(hyp_toks.len());
    for &t in &hyp_toks {
        let n = table.len() as u32;
        h.push(*table.entry(t).or_insert(n));
    }
    let mut rs: Vec<Vec<u32>> = Vec::with_capacity(ref_toks.len());
    for r in &ref_toks {
        let mut ids = Vec::with_capacity(r.len());
        for &t in r {
            let n = table.len() as u32;
            ids.push(*table.entry(t).or_insert(n));
        }
        rs.push(ids);
    }
    // Reference n-grams: max count over references.
    let mut ref_ngrams: FxMap<&[u32], u32> = FxMap::default();
    for r in &rs {
        for (g, c) in count_ngrams(r) {
            let e = ref_ngrams.entry(g).or_insert(0);
            *e = (*e).max(c);
        }
    }
    let hyp_len = h.len() as u64;
    // Closest reference length, the shorter one on ties.
    let mut closest: Option<(u64, u64)> = None;
    for r in &rs {
        let rl = r.len() as u64;
        let diff = hyp_len.abs_diff(rl);
        closest = match closest {
            None => Some((diff, rl)),
            Some((d, l)) if diff < d || (diff == d && rl < l) => Some((diff, rl)),
            keep => keep,
        };
    }
    let mut st = BleuStats {
        sys_len: hyp_len,
        ref_len: closest.map_or(0, |(_, l)| l),
        ..Default::default()
    };
    for (g, c) in count_ngrams(&h) {
        let n = g.len() - 1;
        st.total[n] += c as u64;
        if let Some(&rc) = ref_ngrams.get(g) {
            st.correct[n] += c.min(rc) as u64;
        }
    }
    st
}

/// A BLEU result (sacreBLEU's `BLEUScore`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BleuScore {
    /// BLEU on the 0–100 scale.
    pub score: f64,
    /// n-gram precisions (0–100), smoothed.
    pub precisions: [f64; MAX_ORDER],
    /// Brevity penalty.
    pub bp: f64,
    /// The statistics the score was computed from.
    pub stats: BleuStats,
}

fn my_log(x: f64) -> f64 {
    if x == 0.0 { -9999999999.0 } else { x.ln() }
}

/// sacreBLEU's `BLEU.compute_bleu` with `exp` smoothing.
pub fn compute_bleu(stats: BleuStats, effective_order: bool) -> BleuScore {
    let BleuStats {
        sys_len,
        ref_len,
        correct,
        total,
    } = stats;
    let mut bp = 1.0;
    if sys_len < ref_len {
        bp = if sys_len > 0 {
            (1.0 - ref_len as f64 / sys_len as f64).exp()
        } else {
            0.0
        };
    }
    let mut precisions = [0.0; MAX_ORDER];
    if correct.iter().all(|&c| c == 0) {
        return BleuScore {
            score: 0.0,
            precisions,
            bp,
            stats,
        };
    }
    let mut smooth_mteval = 1.0;
    let mut eff_order = MAX_ORDER;
    for n in 1..=MAX_ORDER {
        if total[n - 1] == 0 {
            break;
        }
        if effective_order {
            eff_order = n;
        }
        if correct[n - 1] == 0 {
            smooth_mteval *= 2.0;
            precisions[n - 1] = 100.0 / (smooth_mteval * total[n - 1] as f64);
        } else {
            precisions[n - 1] = 100.0 * correct[n - 1] as f64 / total[n - 1] as f64;
        }
    }
    let mut sum = 0.0;
    for p in &precisions[..eff_order] {
        sum += my_log(*p);
    }
    let score = bp * (sum / eff_order as f64).exp();
    BleuScore {
        score,
        precisions,
        bp,
        stats,
    }
}

/// `sacrebleu.sentence_bleu(hypothesis, references)`: exp smoothing, effective order.
pub fn sentence_bleu<S: AsRef<str>>(hypothesis: &str, references: &[S]) -> BleuScore {
    compute_bleu(segment_stats(hypothesis, references), true)
}

/// `sacrebleu.corpus_bleu(hypotheses, [references])` with one reference per hypothesis.
pub fn corpus_bleu<S: AsRef<str>>(hypotheses: &[S], references: &[S]) -> Result<BleuScore> {
    if hypotheses.len() != references.len() {
        return Err(Error::LengthMismatch {
            what: "corpus_bleu hypotheses and references",
            left: hypotheses.len(),
            right: references.len(),
        });
    }
    let mut total = BleuStats::default();
    for (h, r) in hypotheses.iter().zip(references) {
        total += segment_stats(h.as_ref(), std::slice::from_ref(r));
    }
    Ok(compute_bleu(total, false))
}

/// Sentence BLEU as a [`pgraphrag_core::Metric`] (`[("bleu", score)]`, 0–100).
#[derive(Debug, Clone, Copy, Default)]
pub struct SentenceBleu;

impl pgraphrag_core::Metric for SentenceBleu {
    fn score(&self, prediction: &str, reference: &str) -> Vec<(&'static str, f64)> {
        vec![("bleu", sentence_bleu(prediction, &[reference]).score)]
    }
}
