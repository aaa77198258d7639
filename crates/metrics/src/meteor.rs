//! METEOR exactly as Hugging Face `evaluate.load("meteor")` computes it over nltk 3.9.1:
//! `single_meteor_score(word_tokenize(reference), word_tokenize(prediction), alpha=0.9, beta=3,
//! gamma=0.5)` with `preprocess=str.lower`.
//!
//! Alignment is nltk's, quirks included:
//! 1. exact matches, then Porter-stem matches (NLTK mode), then WordNet-synonym matches;
//! 2. each stage is greedy: for every hypothesis word **from the last to the first**, the
//!    **last** still-unmatched reference word that matches is taken (the "fewest crossings"
//!    of the docstring is not implemented by nltk);
//! 3. the synonym stage receives the words as the stem stage left them, i.e. **stemmed**
//!    (`wordnet.synsets("happi")`), and a reference word matches when it equals the hypothesis
//!    word or one of its synsets' lemma names without `_`.
//!
//! Then `P = m/|hyp|`, `R = m/|ref|`, `fmean = P·R / (α·P + (1−α)·R)`,
//! `penalty = γ·(chunks/m)^β` and the score is `(1 − penalty)·fmean` (0 when `m = 0` or a side is
//! empty).
//!
//! ```
//! use pgraphrag_metrics::meteor::Meteor;
//! let m = Meteor::new()?; // loads WordNet 3.0 once (apt-get install wordnet-base)
//! let s = m.score_str(
//!     "It is a guide to action which ensures that the military always obeys the commands of the party",
//!     "It is a guide to action that ensures that the military will forever heed Party commands",
//! );
//! assert!((s - 0.6944444444444445).abs() < 1e-12);
//! # Ok::<(), pgraphrag_metrics::Error>(())
//! ```
use crate::error::Result;
use crate::wordnet::WordNet;

/// METEOR's parameters (nltk's and HF `evaluate`'s defaults: 0.9, 3, 0.5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeteorParams {
    /// Relative weight of precision and recall.
    pub alpha: f64,
    /// Shape of the fragmentation penalty.
    pub beta: f64,
    /// Weight of the fragmentation penalty.
    pub gamma: f64,
}

impl Default for MeteorParams {
    fn default() -> Self {
        MeteorParams {
            alpha: 0.9,
            beta: 3.0,
            gamma: 0.5,
        }
    }
}

/// A METEOR scorer bound to a WordNet.
#[derive(Debug, Clone, Copy)]
pub struct Meteor {
    wordnet: &'static WordNet,
    /// The parameters.
    pub params: MeteorParams,
}

impl Meteor {
    /// METEOR with the default parameters and the process-wide WordNet ([`WordNet::global`]).
    pub fn new() -> Result<Self> {
        Ok(Meteor {
            wordnet: WordNet::global()?,
            params: MeteorParams::default(),
        })
    }

    /// METEOR with a given WordNet (leaked once to get a `'static` reference: load it once).
    pub fn with_wordnet(wordnet: &'static WordNet, params: MeteorParams) -> Self {
        Meteor { wordnet, params }
    }

    /// Scores token lists (nltk's `single_meteor_score(reference, hypothesis)` with the arguments
    /// in this crate's order: hypothesis first).
    pub fn score_tokens<S: AsRef<str>>(&self, hypothesis: &[S], reference: &[S]) -> f64 {
        meteor_tokens_with(hypothesis, reference, self.wordnet, self.params)
    }

    /// Scores strings: both sides are tokenized with NLTK's `word_tokenize`
    /// ([`pgraphrag_text::word_tokenize`]) first, as HF `evaluate` does.
    pub fn score_str(&self, prediction: &str, reference: &str) -> f64 {
        let h = pgraphrag_text::word_tokenize(prediction);
        let r = pgraphrag_text::word_tokenize(reference);
        self.score_tokens(&h, &r)
    }
}

impl pgraphrag_core::Metric for Meteor {
    /// `[("meteor", score)]`.
    fn score(&self, prediction: &str, reference: &str) -> Vec<(&'static str, f64)> {
        vec![("meteor", self.score_str(prediction, reference))]
    }
}

/// METEOR of pre-tokenized `hypothesis` against `reference`, default parameters.
pub fn meteor_tokens<S: AsRef<str>>(hypothesis: &[S], reference: &[S], wordnet: &WordNet) -> f64 {
    meteor_tokens_with(hypothesis, reference, wordnet, MeteorParams::default())
}

type Enum = Vec<(usize, String)>;

/// nltk's `_match_enums` with a custom equality: scans hypotheses and references from the end.
fn match_enums(
    hyp: &mut Enum,
    refs: &mut Enum,
    matches: &mut Vec<(usize, usize)>,
    mut is_match: impl FnMut(&str, &str) -> bool,
) {
    for i in (0..hyp.len()).rev() {
        for j in (0..refs.len()).rev() {
            if is_match(&hyp[i].1, &refs[j].1) {
                matches.push((hyp[i].0, refs[j].0));
                hyp.remove(i);
                refs.remove(j);
                break;
            }
        }
    }
}

/// METEOR of pre-tokenized `hypothesis` against `reference` with explicit parameters.
pub fn meteor_tokens_with<S: AsRef<str>>(
    hypothesis: &[S],
    reference: &[S],
    wordnet: &WordNet,
    params: MeteorParams,
) -> f64 {
    let mut hyp: Enum = hypothesis
        .iter()
        .enumerate()
        .map(|(i, w)| (i, w.as_ref().to_lowercase()))
        .collect();
    let mut refs: Enum = reference
        .iter()
        .enumerate()
        .map(|(i, w)| (i, w.as_ref().to_lowercase()))
        .collect();
    let translation_length = hyp.len();
    let reference_length = refs.len();
    let mut matches: Vec<(usize, usize)> = Vec::new();
    // 1. exact
    match_enums(&mut hyp, &mut refs, &mut matches, |a, b| a == b);
    // 2. Porter stems (the lists keep the stemmed words afterwards, as in nltk)
    for (_, w) in hyp.iter_mut().chain(refs.iter_mut()) {
        *w = crate::stem_cache::stem(w);
    }
    match_enums(&mut hyp, &mut refs, &mut matches, |a, b| a == b);
    // 3. WordNet synonyms of the (stemmed) hypothesis word
    for i in (0..hyp.len()).rev() {
        let word = &hyp[i].1;
        let syns = wordnet.meteor_synonyms(word);
        let is_syn = |r: &String| r == word || syns.binary_search(r).is_ok();
        for j in (0..refs.len()).rev() {
            if is_syn(&refs[j].1) {
                matches.push((hyp[i].0, refs[j].0));
                hyp.remove(i);
                refs.remove(j);
                break;
            }
        }
    }
    matches.sort_by_key(|m| m.0);
    let m = matches.len();
    if translation_length == 0 || reference_length == 0 || m == 0 {
        return 0.0;
    }
    let precision = m as f64 / translation_length as f64;
    let recall = m as f64 / reference_length as f64;
    let fmean = (precision * recall) / (params.alpha * precision + (1.0 - params.alpha) * recall);
    let chunks = count_chunks(&matches) as f64;
    let frag = chunks / m as f64;
    let penalty = params.gamma * frag.powf(params.beta);
    (1.0 - penalty) * fmean
}

/// nltk's `_count_chunks` on matches sorted by hypothesis index.
fn count_chunks(matches: &[(usize, usize)]) -> usize {
    let mut chunks = 1;
    for w in matches.windows(2) {
        if !(w[1].0 == w[0].0 + 1 && w[1].1 == w[0].1 + 1) {
            chunks += 1;
        }
    }
    chunks
}
