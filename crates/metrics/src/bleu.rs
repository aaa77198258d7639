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
use pgraphrag_text::py;

/// sacreBLEU's `MAX_NGRAM_ORDER`.
pub const MAX_ORDER: usize = 4;

/// Characters rule 1 of `TokenizerRegexp` surrounds with spaces:
/// `[\{-\~\[-\` -\&\(-\+\:-\@\/]`.
fn is_sym(c: char) -> bool {
    matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/')
}

/// Applies a two-character rule `(a)(b) -> f(a, b)` left to right without overlaps, as
/// `re.sub` does for a pattern that always matches exactly two characters.
///
/// Works on bytes: every rule needs at least one ASCII character (a digit, `.`, `,` or `-`) on
/// one side and treats any other character as "not a digit", so a multi-byte character behaves
/// like a run of bytes none of which matches, and spaces are only inserted at character
/// boundaries.
fn sub2(
    s: &[u8],
    matches: impl Fn(u8, u8) -> bool,
    emit: impl Fn(&mut Vec<u8>, u8, u8),
) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 16);
    let mut i = 0;
    while i < s.len() {
        if i + 1 < s.len() && matches(s[i], s[i + 1]) {
            emit(&mut out, s[i], s[i + 1]);
            i += 2;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// sacreBLEU's `Tokenizer13a` (tokens joined by single spaces).
pub fn tokenize_13a(line: &str) -> String {
    let t = Tokens13a::new(line);
    let mut out = String::with_capacity(t.text.len());
    for tok in t.iter() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(tok);
    }
    out
}

/// The result of the 13a rules on one line: the rewritten text and the byte spans of its
/// tokens (what `str.split()` would return).
struct Tokens13a {
    text: String,
    spans: Vec<(u32, u32)>,
}

impl Tokens13a {
    fn new(line: &str) -> Tokens13a {
        let mut owned;
        let mut line = line;
        if line.bytes().any(|b| b == b'<' || b == b'\n' || b == b'&') {
            owned = line
                .replace("<skipped>", "")
                .replace("-\n", "")
                .replace('\n', " ");
            if owned.contains('&') {
                owned = owned
                    .replace("&quot;", "\"")
                    .replace("&amp;", "&")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">");
            }
            line = &owned;
        }
        // rule 1: ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "
        let mut s: Vec<u8> = Vec::with_capacity(line.len() + line.len() / 2 + 2);
        s.push(b' ');
        let (mut period_seen, mut dash_seen) = (false, false);
        for &c in line.as_bytes() {
            if c.is_ascii() && is_sym(c as char) {
                s.extend_from_slice(&[b' ', c, b' ']);
            } else {
                period_seen |= c == b'.' || c == b',';
                dash_seen |= c == b'-';
                s.push(c);
            }
        }
        s.push(b' ');
        // (The spaces of f" {line} " are rule-1 symbols too; how many spaces stand between
        // tokens cannot change rules 2-4 or the final split.)
        let period = |c: u8| c == b'.' || c == b',';
        let digit = |c: u8| c.is_ascii_digit();
        if period_seen {
            // rule 2: ([^0-9])([\.,]) -> "\1 \2 "
            s = sub2(
                &s,
                |a, b| !digit(a) && period(b),
                |o, a, b| o.extend_from_slice(&[a, b' ', b, b' ']),
            );
            // rule 3: ([\.,])([^0-9]) -> " \1 \2"
            s = sub2(
                &s,
                |a, b| period(a) && !digit(b),
                |o, a, b| o.extend_from_slice(&[b' ', a, b' ', b]),
            );
        }
        // rule 4: ([0-9])(-) -> "\1 \2 "
        if dash_seen {
            s = sub2(
                &s,
                |a, b| digit(a) && b == b'-',
                |o, a, b| o.extend_from_slice(&[a, b' ', b, b' ']),
            );
        }
        // Only ASCII spaces were inserted, at character boundaries: still UTF-8.
        let text =
            String::from_utf8(s).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into());
        // Python's `str.split()`: runs of `str.isspace()` characters separate tokens.
        let mut spans = Vec::with_capacity(text.len() / 4);
        let bytes = text.as_bytes();
        let mut start: Option<usize> = None;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let (space, width) = if b.is_ascii() {
                (py::is_space(b as char), 1)
            } else {
                let c = text[i..].chars().next().unwrap_or(' ');
                (py::is_space(c), c.len_utf8())
            };
            match (space, start) {
                (true, Some(st)) => {
                    spans.push((st as u32, i as u32));
                    start = None;
                }
                (false, None) => start = Some(i),
                _ => {}
            }
            i += width;
        }
        if let Some(st) = start {
            spans.push((st as u32, bytes.len() as u32));
        }
        Tokens13a { text, spans }
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        self.spans
            .iter()
            .map(|&(s, e)| &self.text[s as usize..e as usize])
    }
}

/// sacreBLEU's `_preprocess_segment`: `rstrip()` then `13a`.
fn preprocess(s: &str) -> Tokens13a {
    Tokens13a::new(py::rstrip(s))
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
    let refs: Vec<Tokens13a> = references.iter().map(|r| preprocess(r.as_ref())).collect();
    let tokens = hyp.spans.len() + refs.iter().map(|r| r.spans.len()).sum::<usize>();
    let mut table: FxMap<&str, u32> = FxMap::with_capacity_and_hasher(tokens, Default::default());
    let h = intern(&hyp, &mut table);
    let rs: Vec<Vec<u32>> = refs.iter().map(|r| intern(r, &mut table)).collect();
    if table.len() < 1 << 15 {
        // n and four 15-bit ids fit one u64.
        stats_from_ids(&h, &rs, |g| {
            g.iter().fold(g.len() as u64, |k, &t| k << 15 | t as u64)
        })
    } else {
        stats_from_ids(&h, &rs, |g| {
            g.iter().fold(g.len() as u128, |k, &t| k << 31 | t as u128)
        })
    }
}

/// Token ids of `t` in `table` (new tokens get the next id).
fn intern<'a>(t: &'a Tokens13a, table: &mut FxMap<&'a str, u32>) -> Vec<u32> {
    t.iter()
        .map(|tok| {
            let n = table.len() as u32;
            *table.entry(tok).or_insert(n)
        })
        .collect()
}

/// BLEU statistics from token ids; `key` packs an n-gram (n = 1..=4) into a distinct key.
fn stats_from_ids<K: std::hash::Hash + Eq + Copy>(
    h: &[u32],
    rs: &[Vec<u32>],
    key: impl Fn(&[u32]) -> K,
) -> BleuStats {
    let hyp_len = h.len() as u64;
    // Closest reference length, the shorter one on ties.
    let mut closest: Option<(u64, u64)> = None;
    for r in rs {
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
    // Reference n-grams, each with its largest count over the references.
    let count = |r: &[u32]| {
        let mut m: FxMap<K, u32> = FxMap::default();
        m.reserve(r.len() * MAX_ORDER);
        for n in 1..=MAX_ORDER.min(r.len()) {
            for g in r.windows(n) {
                *m.entry(key(g)).or_insert(0) += 1;
            }
        }
        m
    };
    let mut avail = match rs {
        [] => FxMap::default(),
        [one] => count(one),
        [first, rest @ ..] => {
            let mut m = count(first);
            for r in rest {
                for (g, c) in count(r) {
                    let e = m.entry(g).or_insert(0);
                    *e = (*e).max(c);
                }
            }
            m
        }
    };
    // Clipped matches: each hypothesis n-gram uses up one of the reference's occurrences, which
    // sums min(hypothesis count, reference count) over n-grams.
    for n in 1..=MAX_ORDER.min(h.len()) {
        for g in h.windows(n) {
            st.total[n - 1] += 1;
            if let Some(c) = avail.get_mut(&key(g))
                && *c > 0
            {
                *c -= 1;
                st.correct[n - 1] += 1;
            }
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
