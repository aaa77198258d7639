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
//! use pgraphrag_metrics::{meteor::Meteor, wordnet};
//! // WordNet 3.0: scripts/fetch-wordnet.sh, apt-get install wordnet-base, or NLTK's data folder.
//! let dir = wordnet::find(&wordnet::search_paths(|k| std::env::var_os(k), &[std::env::current_dir()?]))?;
//! let m = Meteor::load(&dir)?; // loads WordNet once per process
//! let s = m.score_str(
//!     "It is a guide to action which ensures that the military always obeys the commands of the party",
//!     "It is a guide to action that ensures that the military will forever heed Party commands",
//! );
//! assert!((s - 0.6944444444444445).abs() < 1e-12);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
use std::cell::RefCell;

use crate::error::Result;
use crate::fxhash::FxMap;
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
    /// METEOR with the default parameters and the WordNet of folder `dir`, loaded once per
    /// process ([`WordNet::global_in`]; find the folder with [`crate::wordnet::find`]).
    pub fn load(dir: &std::path::Path) -> Result<Self> {
        Ok(Meteor {
            wordnet: WordNet::global_in(dir)?,
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

/// Marks a word whose stem has not been computed yet.
const UNSTEMMED: u32 = u32::MAX;
/// Most word or stem types a thread keeps; beyond that its lexicon is emptied and rebuilt.
const LEXICON_LIMIT: usize = 1 << 20;

thread_local! {
    static LEXICON: RefCell<Lexicon> = RefCell::new(Lexicon::default());
}

/// Per-thread memo of everything METEOR derives from a word type: its id, its Porter stem and
/// the WordNet synonyms of that stem (as stem ids). All of it is a pure function of the word
/// (and of the WordNet), so the memo only saves time; ids never leave one scoring call.
#[derive(Default)]
struct Lexicon {
    /// [`WordNet::id`] of the WordNet the synonym lists were computed with.
    wordnet: u64,
    /// Lowercased token → word id.
    words: FxMap<Box<str>, u32>,
    /// Word id → the word.
    word_str: Vec<Box<str>>,
    /// Word id → stem id, or [`UNSTEMMED`].
    word_stem: Vec<u32>,
    /// Stem (or WordNet lemma name) → stem id.
    stems: FxMap<Box<str>, u32>,
    /// Stem id → the string.
    stem_str: Vec<Box<str>>,
    /// Stem id → sorted stem ids of its synonyms (lemma names without `_`), once computed.
    syns: Vec<Option<Box<[u32]>>>,
}

impl Lexicon {
    fn prepare(&mut self, wordnet: &WordNet) {
        if self.wordnet != wordnet.id()
            || self.words.len() > LEXICON_LIMIT
            || self.stems.len() > LEXICON_LIMIT
        {
            *self = Lexicon {
                wordnet: wordnet.id(),
                ..Lexicon::default()
            };
        }
    }

    /// The id of `token` after Python's `str.lower` (Rust's `to_lowercase`).
    fn word(&mut self, token: &str) -> u32 {
        let lowered;
        let w = if token
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
        {
            token
        } else {
            lowered = token.to_lowercase();
            lowered.as_str()
        };
        if let Some(&id) = self.words.get(w) {
            return id;
        }
        let id = self.word_str.len() as u32;
        self.words.insert(w.into(), id);
        self.word_str.push(w.into());
        self.word_stem.push(UNSTEMMED);
        id
    }

    fn stem_id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.stems.get(s) {
            return id;
        }
        let id = self.stem_str.len() as u32;
        self.stems.insert(s.into(), id);
        self.stem_str.push(s.into());
        self.syns.push(None);
        id
    }

    /// The stem id of word `w` (NLTK's Porter stemmer, through the process-wide cache).
    fn stem(&mut self, w: u32) -> u32 {
        let s = self.word_stem[w as usize];
        if s != UNSTEMMED {
            return s;
        }
        let stem = crate::stem_cache::stem(&self.word_str[w as usize]);
        let s = self.stem_id(&stem);
        self.word_stem[w as usize] = s;
        s
    }

    /// Makes sure the synonym list of stem `s` is computed.
    fn ensure_syns(&mut self, s: u32, wordnet: &WordNet) {
        if self.syns[s as usize].is_some() {
            return;
        }
        let names = wordnet.meteor_synonyms(&self.stem_str[s as usize]);
        let mut ids: Vec<u32> = names.iter().map(|n| self.stem_id(n)).collect();
        ids.sort_unstable();
        ids.dedup();
        self.syns[s as usize] = Some(ids.into_boxed_slice());
    }
}

/// One matching stage of nltk's aligner on integer keys: for every remaining hypothesis word
/// from the last to the first, the last remaining reference word with an accepted key is
/// matched (`_match_enums` and `_enum_wordnetsyn_match` scan in exactly that order).
///
/// `accept(hyp_key)` yields the accepted reference keys as a sorted slice plus the hypothesis
/// key itself (which is always accepted).
struct Stage {
    /// (key, position) of the remaining reference words, sorted.
    refs: Vec<(u32, u32)>,
    /// (key, start, end) runs of `refs`; `end` shrinks as the run's words are matched.
    groups: Vec<(u32, u32, u32)>,
}

impl Stage {
    fn new(mut refs: Vec<(u32, u32)>) -> Stage {
        refs.sort_unstable();
        let mut groups: Vec<(u32, u32, u32)> = Vec::new();
        for (i, &(k, _)) in refs.iter().enumerate() {
            match groups.last_mut() {
                Some(g) if g.0 == k => g.2 = i as u32 + 1,
                _ => groups.push((k, i as u32, i as u32 + 1)),
            }
        }
        Stage { refs, groups }
    }

    /// Index of the group of `key` that still has an unmatched word.
    fn open_group(&self, key: u32) -> Option<usize> {
        let g = self.groups.binary_search_by_key(&key, |g| g.0).ok()?;
        (self.groups[g].2 > self.groups[g].1).then_some(g)
    }

    /// Takes the last unmatched reference word of group `g`; returns its position.
    fn take(&mut self, g: usize) -> u32 {
        self.groups[g].2 -= 1;
        self.refs[self.groups[g].2 as usize].1
    }

    /// The group, among `key` and the sorted `also`, holding the last unmatched reference word.
    fn best_group(&self, key: u32, also: &[u32]) -> Option<usize> {
        let top = |g: usize| self.refs[self.groups[g].2 as usize - 1].1;
        let mut best: Option<usize> = self.open_group(key);
        let mut consider = |g: usize| {
            if best.is_none_or(|b| top(g) > top(b)) {
                best = Some(g);
            }
        };
        if also.len() <= self.groups.len() {
            for &k in also {
                if let Some(g) = self.open_group(k) {
                    consider(g);
                }
            }
        } else {
            for (g, &(k, s, e)) in self.groups.iter().enumerate() {
                if e > s && also.binary_search(&k).is_ok() {
                    consider(g);
                }
            }
        }
        best
    }
}

/// METEOR of pre-tokenized `hypothesis` against `reference` with explicit parameters.
pub fn meteor_tokens_with<S: AsRef<str>>(
    hypothesis: &[S],
    reference: &[S],
    wordnet: &WordNet,
    params: MeteorParams,
) -> f64 {
    LEXICON.with(|lex| {
        let mut lex = lex.borrow_mut();
        lex.prepare(wordnet);
        let hyp: Vec<u32> = hypothesis.iter().map(|w| lex.word(w.as_ref())).collect();
        let refs: Vec<u32> = reference.iter().map(|w| lex.word(w.as_ref())).collect();
        align_and_score(&mut lex, &hyp, &refs, wordnet, params)
    })
}

fn align_and_score(
    lex: &mut Lexicon,
    hyp: &[u32],
    refs: &[u32],
    wordnet: &WordNet,
    params: MeteorParams,
) -> f64 {
    let translation_length = hyp.len();
    let reference_length = refs.len();
    if translation_length == 0 || reference_length == 0 {
        return 0.0;
    }
    let mut matches: Vec<(u32, u32)> = Vec::new();
    let mut h_done = vec![false; hyp.len()];
    let mut r_done = vec![false; refs.len()];
    let mut h_left: Vec<u32> = (0..hyp.len() as u32).collect();
    let mut r_left: Vec<u32> = (0..refs.len() as u32).collect();
    // Stages 1 (exact) and 2 (Porter stems; the words stay stemmed afterwards, as in nltk).
    for stemmed in [false, true] {
        let key = |lex: &mut Lexicon, w: u32| if stemmed { lex.stem(w) } else { w };
        let mut stage = Stage::new(
            r_left
                .iter()
                .map(|&j| (key(lex, refs[j as usize]), j))
                .collect(),
        );
        for &i in h_left.iter().rev() {
            let k = key(lex, hyp[i as usize]);
            if let Some(g) = stage.open_group(k) {
                let j = stage.take(g);
                matches.push((i, j));
                h_done[i as usize] = true;
                r_done[j as usize] = true;
            }
        }
        h_left.retain(|&i| !h_done[i as usize]);
        r_left.retain(|&j| !r_done[j as usize]);
        if h_left.is_empty() || r_left.is_empty() {
            break;
        }
    }
    // Stage 3: WordNet synonyms of the stemmed hypothesis word.
    if !h_left.is_empty() && !r_left.is_empty() {
        let mut stage = Stage::new(
            r_left
                .iter()
                .map(|&j| (lex.stem(refs[j as usize]), j))
                .collect(),
        );
        for &i in h_left.iter().rev() {
            let s = lex.stem(hyp[i as usize]);
            lex.ensure_syns(s, wordnet);
            let syns = lex.syns[s as usize].as_deref().unwrap_or_default();
            if let Some(g) = stage.best_group(s, syns) {
                let j = stage.take(g);
                matches.push((i, j));
            }
        }
    }
    matches.sort_unstable_by_key(|m| m.0);
    let m = matches.len();
    if m == 0 {
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
fn count_chunks(matches: &[(u32, u32)]) -> usize {
    let mut chunks = 1;
    for w in matches.windows(2) {
        if !(w[1].0 == w[0].0 + 1 && w[1].1 == w[0].1 + 1) {
            chunks += 1;
        }
    }
    chunks
}
