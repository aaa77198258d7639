//! The weak label of the context-dependent synthesis (paper l.120–130): words of the ranked
//! entries that match words of the gold document.
use std::collections::{HashMap, HashSet};

use pgraphrag_metrics::wordnet::WordNet;

use super::doc::PastDoc;
use super::synthesis::join_words;
use super::tokens::words;
use super::words::WordFilter;
use crate::{Error, Result};

/// The paper's word-vector distance: two words are similar when their (uncased, Common Crawl)
/// GloVe vectors are less than 4 apart in Euclidean distance (l.128). This number belongs to
/// GloVe's scale: **recalibrate it for any other vector source** (normalised vectors, for one,
/// are never more than 2 apart).
pub const GLOVE_MAX_DISTANCE: f64 = 4.0;

/// Whether two words are synonyms (l.126: "synonyms as defined in WordNet").
pub trait Synonyms {
    /// Whether `a` and `b` (lowercase [`words`]) are synonyms.
    fn are_synonyms(&self, a: &str, b: &str) -> bool;

    /// A fast path for callers that test many pairs (the synthesis weak label): the lowercase
    /// words `b` with `word` as `a` such that, for every pair, `are_synonyms(a, b)` equals
    /// `synonyms_of(a) ∋ b || synonyms_of(b) ∋ a`. `None` (the default) sends the caller to
    /// [`Self::are_synonyms`] for every pair of this word.
    fn synonyms_of(&self, word: &str) -> Option<Vec<String>> {
        let _ = word;
        None
    }
}

impl<T: Synonyms + ?Sized> Synonyms for &T {
    fn are_synonyms(&self, a: &str, b: &str) -> bool {
        (**self).are_synonyms(a, b)
    }
    fn synonyms_of(&self, word: &str) -> Option<Vec<String>> {
        (**self).synonyms_of(word)
    }
}

/// No synonyms: only identical words (and close vectors) match.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSynonyms;

impl Synonyms for NoSynonyms {
    fn are_synonyms(&self, _a: &str, _b: &str) -> bool {
        false
    }
    fn synonyms_of(&self, _word: &str) -> Option<Vec<String>> {
        Some(Vec::new())
    }
}

/// WordNet 3.0 through the workspace's reader (the one METEOR uses): `a` and `b` are synonyms
/// when one is a lemma name of a synset of the other ([`WordNet::meteor_synonyms`]: nltk's
/// `synsets(word)` over every part of speech, with morphy, lemma names without `_`), compared
/// case-insensitively, in either direction. Inflections of one lemma therefore match too
/// (`novels` and `novel`).
impl Synonyms for WordNet {
    fn are_synonyms(&self, a: &str, b: &str) -> bool {
        let has = |names: &[String], w: &str| names.iter().any(|n| lowercase_is(n, w));
        has(&self.meteor_synonyms(a), b) || has(&self.meteor_synonyms(b), a)
    }
    /// The lemma names of `word`'s synsets, lowercased (one look-up per word instead of two
    /// per pair).
    fn synonyms_of(&self, word: &str) -> Option<Vec<String>> {
        Some(
            self.meteor_synonyms(word)
                .iter()
                .map(|n| n.to_lowercase())
                .collect(),
        )
    }
}

/// `name.to_lowercase() == word`, without allocating for ASCII names (WordNet's lemma names
/// nearly all are): an ASCII name lowercases byte by byte.
fn lowercase_is(name: &str, word: &str) -> bool {
    if name.is_ascii() {
        name.len() == word.len()
            && name
                .bytes()
                .zip(word.bytes())
                .all(|(a, b)| a.to_ascii_lowercase() == b)
    } else {
        name.to_lowercase() == word
    }
}

/// Word vectors, e.g. GloVe (l.128). None are shipped: GloVe cannot be installed here, so a
/// caller brings its own source. Without one ([`NoVectors`]) only identical words and WordNet
/// synonyms match.
pub trait WordVectors {
    /// The vector of `word` (a lowercase [`words`] token), if the source has one.
    fn vector(&self, word: &str) -> Option<&[f32]>;
}

impl<T: WordVectors + ?Sized> WordVectors for &T {
    fn vector(&self, word: &str) -> Option<&[f32]> {
        (**self).vector(word)
    }
}

/// Vectors in a map (a loaded GloVe text file, or hand-made ones).
impl WordVectors for HashMap<String, Vec<f32>> {
    fn vector(&self, word: &str) -> Option<&[f32]> {
        self.get(word).map(Vec::as_slice)
    }
}

/// No vectors.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoVectors;

impl WordVectors for NoVectors {
    fn vector(&self, _word: &str) -> Option<&[f32]> {
        None
    }
}

/// When a gold word and a context word are similar (l.122–128): identical, WordNet synonyms,
/// or vectors closer than `max_distance` (Euclidean, computed in f64; a word without a vector
/// matches by the first two rules only).
///
/// ```
/// use std::collections::HashMap;
/// use pgraphrag_stages::multistage::{NoSynonyms, Synonyms, WordMatcher};
/// struct Pairs;
/// impl Synonyms for Pairs {
///     fn are_synonyms(&self, a: &str, b: &str) -> bool { (a, b) == ("film", "movie") || (a, b) == ("movie", "film") }
/// }
/// let vectors: HashMap<String, Vec<f32>> =
///     [("tea".to_string(), vec![0.0, 0.0]), ("chai".to_string(), vec![3.0, 2.0])].into();
/// let m = WordMatcher::new().synonyms(&Pairs).vectors(&vectors, 4.0);
/// assert!(m.matches("film", "movie").unwrap());
/// assert!(m.matches("tea", "chai").unwrap()); // √13 ≈ 3.61 < 4
/// assert!(!WordMatcher::new().matches("tea", "chai").unwrap());
/// ```
#[derive(Clone, Copy)]
pub struct WordMatcher<'a> {
    synonyms: &'a dyn Synonyms,
    vectors: &'a dyn WordVectors,
    max_distance: f64,
}

impl std::fmt::Debug for WordMatcher<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordMatcher")
            .field("max_distance", &self.max_distance)
            .finish_non_exhaustive()
    }
}

impl Default for WordMatcher<'_> {
    /// [`WordMatcher::new`].
    fn default() -> Self {
        WordMatcher::new()
    }
}

impl<'a> WordMatcher<'a> {
    /// Identical words only.
    pub fn new() -> WordMatcher<'a> {
        WordMatcher {
            synonyms: &NoSynonyms,
            vectors: &NoVectors,
            max_distance: GLOVE_MAX_DISTANCE,
        }
    }

    /// Synonyms from `synonyms` (e.g. a [`WordNet`]) match too.
    pub fn synonyms(mut self, synonyms: &'a dyn Synonyms) -> WordMatcher<'a> {
        self.synonyms = synonyms;
        self
    }

    /// Words whose `vectors` are less than `max_distance` apart match too
    /// ([`GLOVE_MAX_DISTANCE`] for GloVe).
    pub fn vectors(mut self, vectors: &'a dyn WordVectors, max_distance: f64) -> WordMatcher<'a> {
        self.vectors = vectors;
        self.max_distance = max_distance;
        self
    }

    /// Whether `a` and `b` match. Vectors of different lengths are an
    /// [`Error::InvalidInput`] naming both words.
    pub fn matches(&self, a: &str, b: &str) -> Result<bool> {
        if a == b || self.synonyms.are_synonyms(a, b) {
            return Ok(true);
        }
        self.vectors_match(a, b)
    }

    /// [`Self::matches`] with the synonym sets of a [`SynonymTable`] where it has them.
    fn matches_in(&self, table: &SynonymTable<'_>, a: &str, b: &str) -> Result<bool> {
        let synonyms = match (table.sets.get(a), table.sets.get(b)) {
            (Some(Some(sa)), Some(Some(sb))) => sa.contains(b) || sb.contains(a),
            _ => self.synonyms.are_synonyms(a, b),
        };
        if a == b || synonyms {
            return Ok(true);
        }
        self.vectors_match(a, b)
    }

    fn vectors_match(&self, a: &str, b: &str) -> Result<bool> {
        let (Some(u), Some(v)) = (self.vectors.vector(a), self.vectors.vector(b)) else {
            return Ok(false);
        };
        if u.len() != v.len() {
            return Err(Error::InvalidInput(format!(
                "the word vectors of {a:?} ({} values) and {b:?} ({} values) differ in length",
                u.len(),
                v.len()
            )));
        }
        let d2: f64 = u
            .iter()
            .zip(v)
            .map(|(x, y)| (*x as f64 - *y as f64).powi(2))
            .sum();
        Ok(d2.sqrt() < self.max_distance)
    }
}

/// Each word's [`Synonyms::synonyms_of`] set, looked up once per call.
struct SynonymTable<'w> {
    sets: HashMap<&'w str, Option<HashSet<String>>>,
}

impl<'w> SynonymTable<'w> {
    fn new(synonyms: &dyn Synonyms, words: impl IntoIterator<Item = &'w str>) -> SynonymTable<'w> {
        let mut sets = HashMap::new();
        for w in words {
            sets.entry(w)
                .or_insert_with(|| synonyms.synonyms_of(w).map(|v| v.into_iter().collect()));
        }
        SynonymTable { sets }
    }
}

/// The synthesis weak label `Join(T_t)` with each word's selection count and IDF.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthesisWeakLabel {
    /// `(word, times selected, idf)`, in label order.
    pub words: Vec<(String, usize, f64)>,
    /// The words joined with [`super::WORD_JOINER`].
    pub text: String,
}

/// The context-dependent synthesis's weak label (l.122–130), exactly:
///
/// 1. **source words** `w_ti`: the [`words`] of the gold document, each occurrence; **target
///    words** `v_tj`: the distinct [`words`] of the ranked entries' string `ranked`. Stopwords
///    and words with IDF below the floor are skipped on both sides (`filter`, l.122);
/// 2. every (source occurrence, target word) pair that [`WordMatcher::matches`] selects the
///    target word once: a target word's **count** is the number of gold-word occurrences it
///    matched (repeats in `ranked` add nothing; a gold word used three times counts three);
/// 3. selected words are sorted by count, descending, then IDF, descending, then first
///    occurrence in `ranked`; `max_words` (none by default: the paper sets no limit) keeps
///    the first ones;
/// 4. `Join(T_t)`: [`super::join_words`].
///
/// `past` is read only by an [`super::IdfScope::PastDocuments`] filter.
///
/// ```
/// use pgraphrag_stages::multistage::{Idf, WordFilter, WordMatcher, synthesis_weak_label};
/// let idf = Idf::from_documents(["tea", "scones", "jam", "lake", "x", "y", "z", "w"]).unwrap();
/// let gold = "Tea and scones, then more tea.";
/// let ranked = "We had scones by the lake. Tea was cold.";
/// let l = synthesis_weak_label(gold, ranked, &[], &WordFilter::paper(&idf), &WordMatcher::new(), None).unwrap();
/// assert_eq!(l.text, "tea, scones");
/// assert_eq!((l.words[0].1, l.words[1].1), (2, 1));
/// ```
pub fn synthesis_weak_label(
    gold: &str,
    ranked: &str,
    past: &[PastDoc],
    filter: &WordFilter<'_>,
    matcher: &WordMatcher<'_>,
    max_words: Option<usize>,
) -> Result<SynthesisWeakLabel> {
    let filter = filter.resolve(past)?;
    // Source words: occurrences per distinct word.
    let mut sources: Vec<(String, usize)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for w in words(gold) {
        if filter.keep(&w).is_none() {
            continue;
        }
        match at.get(&w) {
            Some(&i) => sources[i].1 += 1,
            None => {
                at.insert(w.clone(), sources.len());
                sources.push((w, 1));
            }
        }
    }
    // Target words: distinct, in first-occurrence order, with their IDF.
    let mut targets: Vec<(String, f64)> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for w in words(ranked) {
        if seen.contains(&w) {
            continue;
        }
        seen.insert(w.clone());
        if let Some(idf) = filter.keep(&w) {
            targets.push((w, idf));
        }
    }
    let table = SynonymTable::new(
        matcher.synonyms,
        sources
            .iter()
            .map(|(w, _)| w.as_str())
            .chain(targets.iter().map(|(w, _)| w.as_str())),
    );
    let mut counts = vec![0usize; targets.len()];
    for (s, n) in &sources {
        for (j, (t, _)) in targets.iter().enumerate() {
            if matcher.matches_in(&table, s, t)? {
                counts[j] += n;
            }
        }
    }
    let mut picked: Vec<(usize, usize)> = counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(j, c)| (j, *c))
        .collect();
    picked.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(targets[b.0].1.total_cmp(&targets[a.0].1))
            .then(a.0.cmp(&b.0))
    });
    if let Some(m) = max_words {
        picked.truncate(m);
    }
    let words: Vec<(String, usize, f64)> = picked
        .into_iter()
        .map(|(j, c)| (targets[j].0.clone(), c, targets[j].1))
        .collect();
    let names: Vec<String> = words.iter().map(|(w, _, _)| w.clone()).collect();
    Ok(SynthesisWeakLabel {
        text: join_words(&names),
        words,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_is_equals_to_lowercase_equality() {
        for (n, w) in [
            ("Film", "film"),
            ("film", "films"),
            ("FILM", "film"),
            ("ΣΑΣ", "σας"),
            ("Öl", "öl"),
            ("a", "A"),
            ("", ""),
        ] {
            assert_eq!(lowercase_is(n, w), n.to_lowercase() == w, "{n} {w}");
        }
    }

    const PAIRS: [(&str, &str); 3] = [("tea", "chai"), ("lake", "pond"), ("cold", "chilly")];

    /// Pairs answered one pair at a time only.
    struct Slow;
    impl Synonyms for Slow {
        fn are_synonyms(&self, a: &str, b: &str) -> bool {
            PAIRS
                .iter()
                .any(|&(x, y)| (x, y) == (a, b) || (y, x) == (a, b))
        }
    }

    /// The same pairs with the per-word fast path, listed one way only (`tea` lists `chai`,
    /// `chai` lists nothing), and no set at all for `cold`.
    struct Fast;
    impl Synonyms for Fast {
        fn are_synonyms(&self, a: &str, b: &str) -> bool {
            Slow.are_synonyms(a, b)
        }
        fn synonyms_of(&self, word: &str) -> Option<Vec<String>> {
            (word != "cold" && word != "chilly").then(|| {
                PAIRS
                    .iter()
                    .filter(|(x, _)| *x == word)
                    .map(|(_, y)| y.to_string())
                    .collect()
            })
        }
    }

    #[test]
    fn the_synonym_fast_path_gives_the_pairwise_label() {
        let docs = [
            "tea", "chai", "lake", "pond", "cold", "chilly", "x", "y", "z", "w", "v",
        ];
        let idf = super::super::Idf::from_documents(docs).unwrap();
        let filter = WordFilter::paper(&idf);
        let gold = "Chai by the pond, chai again; it was chilly. Tea, tea.";
        let ranked = "We drank tea at the lake. The lake was cold, the chai was cold.";
        let label = |s: &dyn Synonyms| {
            let m = WordMatcher::new().synonyms(s);
            synthesis_weak_label(gold, ranked, &[], &filter, &m, None).unwrap()
        };
        let (slow, fast) = (label(&Slow), label(&Fast));
        assert_eq!(slow, fast);
        // tea: 2 (tea) + 2 (chai); chai: 2 + 2; lake: 1 (pond); cold: 1 (chilly).
        assert_eq!(slow.text, "tea, chai, lake, cold");
        assert_eq!(label(&NoSynonyms).text, "tea, chai");
    }
}
