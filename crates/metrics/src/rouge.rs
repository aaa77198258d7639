//! ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum exactly as Google's `rouge-score` 0.1.2 computes them
//! (what Hugging Face `evaluate.load("rouge")` calls, with `use_stemmer=False` by default).
//!
//! * Tokenizer ([`RougeTokenizer::Ascii`], the reference): Python `str.lower()`, every run of
//!   characters outside `[a-z0-9]` becomes a separator. Non-ASCII letters are **deleted**, so the
//!   Portuguese "memória" becomes `mem`, `ria`. With the stemmer on, tokens longer than three
//!   characters go through NLTK's Porter stemmer ([`pgraphrag_text::porter`]).
//! * [`RougeTokenizer::Unicode`] is a clearly separate variant (NFC, Unicode lowercase, split on
//!   anything that is not alphanumeric) for languages other than English. Its numbers are **not
//!   comparable** with published rouge-score numbers.
//! * ROUGE-N: clipped n-gram overlap; P = overlap / max(#pred n-grams, 1), R likewise.
//! * ROUGE-L: LCS over the whole token sequences.
//! * ROUGE-Lsum: the text is split on `"\n"` into sentences (empty strings dropped), and the
//!   summary-level union-LCS of Lin (2004) §3.2 is computed with rouge-score's guard against
//!   double counting and its backtracking tie-break.
//!
//! Argument order: `score(prediction, reference)` (the [`pgraphrag_core::Metric`] order);
//! rouge-score's own `score(target, prediction)` takes them the other way round.
//!
//! ```
//! use pgraphrag_metrics::rouge::{Rouge, RougeOptions};
//! let r = Rouge::new(RougeOptions { stemmer: true, ..Default::default() });
//! let s = r.score("the cats are running", "a cat runs");
//! assert_eq!(s.rouge1.precision, 0.5); // "cat" and "run" match after stemming
//! ```
use crate::fxhash::FxMap;
use unicode_normalization::UnicodeNormalization;

/// Precision, recall and F-measure of one ROUGE type (rouge-score's `Score`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Score {
    /// Matches / prediction size.
    pub precision: f64,
    /// Matches / reference size.
    pub recall: f64,
    /// Harmonic mean, 0 when both are 0 (rouge-score's `fmeasure`).
    pub fmeasure: f64,
}

impl Score {
    /// Builds a score from precision and recall, with rouge-score's F-measure.
    pub fn from_pr(precision: f64, recall: f64) -> Self {
        Score {
            precision,
            recall,
            fmeasure: fmeasure(precision, recall),
        }
    }
}

/// rouge-score's `scoring.fmeasure`.
pub fn fmeasure(precision: f64, recall: f64) -> f64 {
    if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    }
}

/// The four scores HF `evaluate`'s `rouge` reports by default.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RougeScores {
    /// ROUGE-1.
    pub rouge1: Score,
    /// ROUGE-2.
    pub rouge2: Score,
    /// ROUGE-L (LCS over the whole text).
    pub rouge_l: Score,
    /// ROUGE-Lsum (summary-level LCS over newline-separated sentences).
    pub rouge_lsum: Score,
}

impl RougeScores {
    /// `(name, score)` in rouge-score's order and spelling: `rouge1, rouge2, rougeL, rougeLsum`.
    pub fn named(&self) -> [(&'static str, Score); 4] {
        [
            ("rouge1", self.rouge1),
            ("rouge2", self.rouge2),
            ("rougeL", self.rouge_l),
            ("rougeLsum", self.rouge_lsum),
        ]
    }
}

/// Which tokenizer ROUGE uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RougeTokenizer {
    /// rouge-score's tokenizer (`[a-z0-9]+` after lowercasing): the reference, the default.
    #[default]
    Ascii,
    /// Unicode-aware variant (NFC, lowercase, alphanumeric runs). Keeps accented letters;
    /// **not comparable** with published rouge-score numbers.
    Unicode,
}

/// Options of [`Rouge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RougeOptions {
    /// Porter-stem tokens longer than 3 characters (rouge-score's `use_stemmer`). Default off,
    /// as in HF `evaluate`.
    pub stemmer: bool,
    /// The tokenizer.
    pub tokenizer: RougeTokenizer,
}

/// A ROUGE scorer (rouge-score's `RougeScorer(["rouge1","rouge2","rougeL","rougeLsum"])`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Rouge {
    /// The options.
    pub options: RougeOptions,
}

impl Rouge {
    /// A scorer with the given options.
    pub fn new(options: RougeOptions) -> Self {
        Rouge { options }
    }

    /// Tokenizes `text` as this scorer does.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        tokenize(text, self.options)
    }

    /// Scores `prediction` against `reference` for all four ROUGE types.
    pub fn score(&self, prediction: &str, reference: &str) -> RougeScores {
        let mut interner = Interner::default();
        let t = interner.ids(&self.tokenize(reference));
        let p = interner.ids(&self.tokenize(prediction));
        let rouge1 = score_ngrams(&t, &p, 1);
        let rouge2 = score_ngrams(&t, &p, 2);
        let rouge_l = score_lcs(&t, &p);
        let ts: Vec<Vec<u32>> = sentences(reference)
            .map(|s| interner.ids(&self.tokenize(s)))
            .collect();
        let ps: Vec<Vec<u32>> = sentences(prediction)
            .map(|s| interner.ids(&self.tokenize(s)))
            .collect();
        let rouge_lsum = summary_level_lcs(&ts, &ps);
        RougeScores {
            rouge1,
            rouge2,
            rouge_l,
            rouge_lsum,
        }
    }

    /// rouge-score's `score_multi(targets, prediction)`: for each ROUGE type, the score against the
    /// reference with the highest F-measure (the first one on ties, like `np.argmax`). This is the
    /// path HF `evaluate` takes when references are lists (LaMP-4..7 wrap each gold as `[gold]`).
    /// No references gives zeros (rouge-score raises).
    pub fn score_multi<S: AsRef<str>>(&self, prediction: &str, references: &[S]) -> RougeScores {
        let all: Vec<RougeScores> = references
            .iter()
            .map(|r| self.score(prediction, r.as_ref()))
            .collect();
        let best = |f: fn(&RougeScores) -> Score| -> Score {
            let mut out: Option<Score> = None;
            for s in &all {
                let s = f(s);
                if out.is_none_or(|o| s.fmeasure > o.fmeasure) {
                    out = Some(s);
                }
            }
            out.unwrap_or_default()
        };
        RougeScores {
            rouge1: best(|s| s.rouge1),
            rouge2: best(|s| s.rouge2),
            rouge_l: best(|s| s.rouge_l),
            rouge_lsum: best(|s| s.rouge_lsum),
        }
    }

    /// ROUGE-N for any `n >= 1` (rouge-score's `rougeN`); `n = 0` gives zeros.
    pub fn rouge_n(&self, prediction: &str, reference: &str, n: usize) -> Score {
        let mut interner = Interner::default();
        let t = interner.ids(&self.tokenize(reference));
        let p = interner.ids(&self.tokenize(prediction));
        if n == 0 {
            return Score::default();
        }
        score_ngrams(&t, &p, n)
    }
}

impl pgraphrag_core::Metric for Rouge {
    /// F-measures named `rouge1`, `rouge2`, `rougeL`, `rougeLsum`.
    fn score(&self, prediction: &str, reference: &str) -> Vec<(&'static str, f64)> {
        Rouge::score(self, prediction, reference)
            .named()
            .iter()
            .map(|(n, s)| (*n, s.fmeasure))
            .collect()
    }
}

/// rougeLsum's sentence split: `text.split("\n")` without empty strings.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').filter(|s| !s.is_empty())
}

/// Tokenizes like rouge-score's `tokenize.tokenize(text, stemmer)` (or the Unicode variant).
pub fn tokenize(text: &str, options: RougeOptions) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, tokens: &mut Vec<String>| {
        if !cur.is_empty() {
            tokens.push(std::mem::take(cur));
        }
    };
    match options.tokenizer {
        RougeTokenizer::Ascii => {
            for c in text.chars() {
                if c.is_ascii() {
                    let l = c.to_ascii_lowercase();
                    if l.is_ascii_alphanumeric() {
                        cur.push(l);
                    } else {
                        flush(&mut cur, &mut tokens);
                    }
                } else {
                    // Python lowercases first: a few non-ASCII letters become ASCII (U+0130 → "i̇",
                    // U+212A KELVIN SIGN → "k").
                    for l in c.to_lowercase() {
                        if l.is_ascii_alphanumeric() {
                            cur.push(l);
                        } else {
                            flush(&mut cur, &mut tokens);
                        }
                    }
                }
            }
        }
        RougeTokenizer::Unicode => {
            let nfc: String = text.nfc().collect();
            for c in nfc.to_lowercase().chars() {
                if c.is_alphanumeric() {
                    cur.push(c);
                } else {
                    flush(&mut cur, &mut tokens);
                }
            }
        }
    }
    flush(&mut cur, &mut tokens);
    if options.stemmer {
        for t in tokens.iter_mut() {
            if t.chars().count() > 3 {
                *t = crate::stem_cache::stem(t);
            }
        }
        if options.tokenizer == RougeTokenizer::Ascii {
            // rouge-score's final VALID_TOKEN_RE check.
            tokens.retain(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric()));
        } else {
            tokens.retain(|t| !t.is_empty());
        }
    }
    tokens
}

/// Maps tokens to dense ids so that n-grams and LCS compare integers.
#[derive(Default)]
struct Interner {
    map: FxMap<String, u32>,
}

impl Interner {
    fn ids(&mut self, tokens: &[String]) -> Vec<u32> {
        tokens
            .iter()
            .map(|t| match self.map.get(t.as_str()) {
                Some(&i) => i,
                None => {
                    let n = self.map.len() as u32;
                    self.map.insert(t.clone(), n);
                    n
                }
            })
            .collect()
    }
}

fn ngram_counts(tokens: &[u32], n: usize) -> FxMap<&[u32], u32> {
    let mut m = FxMap::default();
    if tokens.len() >= n {
        for w in tokens.windows(n) {
            *m.entry(w).or_insert(0) += 1;
        }
    }
    m
}

/// rouge-score's `_score_ngrams(_create_ngrams(target, n), _create_ngrams(prediction, n))`.
fn score_ngrams(target: &[u32], prediction: &[u32], n: usize) -> Score {
    let t = ngram_counts(target, n);
    let p = ngram_counts(prediction, n);
    let inter: u64 = t
        .iter()
        .map(|(g, &c)| c.min(p.get(g).copied().unwrap_or(0)) as u64)
        .sum();
    let tc: u64 = t.values().map(|&c| c as u64).sum();
    let pc: u64 = p.values().map(|&c| c as u64).sum();
    let precision = inter as f64 / pc.max(1) as f64;
    let recall = inter as f64 / tc.max(1) as f64;
    Score::from_pr(precision, recall)
}

fn lcs_len(a: &[u32], b: &[u32]) -> usize {
    let mut prev = vec![0u32; b.len() + 1];
    let mut cur = vec![0u32; b.len() + 1];
    for &x in a {
        for (j, &y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                prev[j + 1].max(cur[j])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()] as usize
}

/// rouge-score's `_score_lcs`.
fn score_lcs(target: &[u32], prediction: &[u32]) -> Score {
    if target.is_empty() || prediction.is_empty() {
        return Score::default();
    }
    let l = lcs_len(target, prediction) as f64;
    Score::from_pr(l / prediction.len() as f64, l / target.len() as f64)
}

/// rouge-score's `lcs_ind`: indices into `r` of one LCS, with its backtracking tie-break.
fn lcs_indices(r: &[u32], c: &[u32]) -> Vec<usize> {
    let cols = c.len() + 1;
    let mut t = vec![0u32; (r.len() + 1) * cols];
    for i in 1..=r.len() {
        for j in 1..=c.len() {
            t[i * cols + j] = if r[i - 1] == c[j - 1] {
                t[(i - 1) * cols + j - 1] + 1
            } else {
                t[(i - 1) * cols + j].max(t[i * cols + j - 1])
            };
        }
    }
    let (mut i, mut j) = (r.len(), c.len());
    let mut out = Vec::new();
    while i > 0 && j > 0 {
        if r[i - 1] == c[j - 1] {
            out.push(i - 1);
            i -= 1;
            j -= 1;
        } else if t[i * cols + j - 1] > t[(i - 1) * cols + j] {
            j -= 1;
        } else {
            i -= 1;
        }
    }
    out.reverse();
    out
}

/// rouge-score's `_summary_level_lcs(ref_sent, can_sent)`.
fn summary_level_lcs(ref_sent: &[Vec<u32>], can_sent: &[Vec<u32>]) -> Score {
    if ref_sent.is_empty() || can_sent.is_empty() {
        return Score::default();
    }
    let m: usize = ref_sent.iter().map(Vec::len).sum();
    let n: usize = can_sent.iter().map(Vec::len).sum();
    if m == 0 || n == 0 {
        return Score::default();
    }
    let mut cnt_r: FxMap<u32, i64> = FxMap::default();
    let mut cnt_c: FxMap<u32, i64> = FxMap::default();
    for s in ref_sent {
        for &t in s {
            *cnt_r.entry(t).or_insert(0) += 1;
        }
    }
    for s in can_sent {
        for &t in s {
            *cnt_c.entry(t).or_insert(0) += 1;
        }
    }
    let mut hits = 0usize;
    for r in ref_sent {
        let mut union: Vec<usize> = can_sent.iter().flat_map(|c| lcs_indices(r, c)).collect();
        union.sort_unstable();
        union.dedup();
        for i in union {
            let t = r[i];
            let (Some(cc), Some(cr)) = (cnt_c.get(&t).copied(), cnt_r.get(&t).copied()) else {
                continue;
            };
            if cc > 0 && cr > 0 {
                hits += 1;
                cnt_c.insert(t, cc - 1);
                cnt_r.insert(t, cr - 1);
            }
        }
    }
    Score::from_pr(hits as f64 / n as f64, hits as f64 / m as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_tokenizer_deletes_non_ascii_letters() {
        assert_eq!(
            tokenize("Memória RÁPIDA!", RougeOptions::default()),
            ["mem", "ria", "r", "pida"]
        );
        let u = RougeOptions {
            tokenizer: RougeTokenizer::Unicode,
            ..Default::default()
        };
        assert_eq!(tokenize("Memória RÁPIDA!", u), ["memória", "rápida"]);
    }

    #[test]
    fn multi_reference_takes_the_best() {
        let r = Rouge::default();
        let m = r.score_multi("a b c", &["x y", "a b d", "a b c"]);
        assert_eq!(m.rouge1.fmeasure, 1.0);
        assert_eq!(r.score_multi("a b", &[] as &[&str]), RougeScores::default());
    }

    #[test]
    fn identical_texts_score_one() {
        let s = Rouge::default().score("a b c\nd e", "a b c\nd e");
        for (_, x) in s.named() {
            assert_eq!(x.fmeasure, 1.0);
        }
    }
}
