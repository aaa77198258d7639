//! Synthesis (paper l.112–134): important words for the `important words` section; the
//! context-independent keywords (l.118) and the context-dependent synthesis zero-shot (l.120).
use std::collections::HashMap;

use super::doc::PastDoc;
use super::summary::{ContextMode, LlmContextStage};
use super::tokens::words;
use super::words::WordFilter;
use crate::{Error, Result, Summarizer};

/// How the words of a synthesis are joined into one string (the `important words` section and
/// the synthesis weak label `Join(T_t)`, l.130): a comma and a space. The paper does not say.
pub const WORD_JOINER: &str = ", ";

/// `words` joined with [`WORD_JOINER`].
///
/// ```
/// assert_eq!(pgraphrag_stages::multistage::join_words(&["tea".into(), "scones".into()]), "tea, scones");
/// ```
pub fn join_words(words: &[String]) -> String {
    words.join(WORD_JOINER)
}

/// Synthesis `Sy(x_t, E_t)`: the key elements common to the author's writing, as words
/// (l.114: "We experiment with extracting keywords as the synthesis step").
///
/// One required method. [`Keywords`] (context independent) reads `past`, the author's past
/// documents `D_t`; [`super::LlmSynthesizer`] (context dependent) reads the immediate `context`
/// and the joined ranked entries `ranked`.
pub trait Synthesizer {
    /// The important words, most important first.
    fn important_words(&self, context: &str, ranked: &str, past: &[PastDoc])
    -> Result<Vec<String>>;
}

impl<T: Synthesizer + ?Sized> Synthesizer for &T {
    fn important_words(
        &self,
        context: &str,
        ranked: &str,
        past: &[PastDoc],
    ) -> Result<Vec<String>> {
        (**self).important_words(context, ranked, past)
    }
}

/// Context-independent synthesis (`SynCtxInd`, l.118): "frequent terms from the past documents
/// `D_t`", exactly:
///
/// 1. the unigrams are the [`words`] of every past document (all of `D_t`, not only the ranked
///    entries), each occurrence counted: a word's **frequency** is its number of occurrences
///    over all of them;
/// 2. stopwords, words of frequency below `min_freq` (the paper: "frequency of one" is removed,
///    so 2) and words with IDF below the floor are dropped ([`WordFilter`]: English stopwords,
///    1.5, over the IDF scope chosen there);
/// 3. the rest are sorted by frequency, descending, then by IDF, **descending** (the rarer,
///    more specific word first; the paper says only "then by IDF"), then by first occurrence
///    (documents in the order given, words in text order), so the order is total;
/// 4. at most `max_words` are kept (the paper: 20).
///
/// ```
/// use pgraphrag_stages::multistage::{Idf, Keywords, PastDoc, Synthesizer, WordFilter};
/// let past = [
///     PastDoc::new("1", 1, "Scones with tea. Tea again!"),
///     PastDoc::new("2", 2, "More scones, and jam."),
/// ];
/// let corpus = ["tea", "scones", "jam", "bread", "milk", "the", "x y", "z"];
/// let idf = Idf::from_documents(corpus).unwrap();
/// let words = Keywords::new(WordFilter::paper(&idf)).important_words("", "", &past).unwrap();
/// assert_eq!(words, ["scones", "tea"]); // both twice, equal IDF: first occurrence; jam once
/// ```
#[derive(Debug, Clone)]
pub struct Keywords<'a> {
    /// Stopwords and the IDF floor.
    pub filter: WordFilter<'a>,
    /// Words occurring fewer times are dropped (the paper: 2, i.e. frequency one removed).
    pub min_freq: usize,
    /// The most words kept (the paper: 20).
    pub max_words: usize,
}

impl<'a> Keywords<'a> {
    /// The paper's settings over `filter`: frequency at least 2, at most 20 words.
    pub fn new(filter: WordFilter<'a>) -> Keywords<'a> {
        Keywords {
            filter,
            min_freq: 2,
            max_words: 20,
        }
    }

    /// The keywords with their frequency and IDF, best first.
    ///
    /// Errors: the IDF scope's ([`WordFilter::resolve`]).
    pub fn scored(&self, past: &[PastDoc]) -> Result<Vec<(String, usize, f64)>> {
        let filter = self.filter.resolve(past)?;
        // word -> (frequency, first occurrence)
        let mut freq: HashMap<String, (usize, usize)> = HashMap::new();
        let mut position = 0;
        for d in past {
            for w in words(&d.text) {
                freq.entry(w).or_insert((0, position)).0 += 1;
                position += 1;
            }
        }
        let mut kept: Vec<(String, usize, f64, usize)> = freq
            .into_iter()
            .filter(|(_, (f, _))| *f >= self.min_freq)
            .filter_map(|(w, (f, first))| filter.keep(&w).map(|idf| (w, f, idf, first)))
            .collect();
        kept.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.total_cmp(&a.2)).then(a.3.cmp(&b.3)));
        kept.truncate(self.max_words);
        Ok(kept.into_iter().map(|(w, f, idf, _)| (w, f, idf)).collect())
    }
}

impl Synthesizer for Keywords<'_> {
    /// Reads `past` only.
    fn important_words(
        &self,
        _context: &str,
        _ranked: &str,
        past: &[PastDoc],
    ) -> Result<Vec<String>> {
        Ok(self.scored(past)?.into_iter().map(|(w, _, _)| w).collect())
    }
}

/// Reads an LLM's answer as a word list: split at commas and newlines; each piece stripped of
/// Python whitespace and of a leading list marker (`-`, `*`, `•`, or digits followed by `.` or
/// `)`); empty pieces and repeats dropped (the first kept); at most `max_words` kept.
///
/// ```
/// use pgraphrag_stages::multistage::parse_words;
/// assert_eq!(parse_words("1. hiking, lake\n- swim,, lake", None), ["hiking", "lake", "swim"]);
/// assert_eq!(parse_words("a, b, c", Some(2)), ["a", "b"]);
/// ```
pub fn parse_words(answer: &str, max_words: Option<usize>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for piece in answer.split([',', '\n']) {
        if max_words.is_some_and(|m| out.len() >= m) {
            break;
        }
        let mut w = pgraphrag_text::py::strip(piece);
        let digits = w.len() - w.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && w[digits..].starts_with(['.', ')']) {
            w = &w[digits + 1..];
        } else if let Some(rest) = w.strip_prefix(['-', '*', '•']) {
            w = rest;
        }
        let w = pgraphrag_text::py::strip(w);
        if !w.is_empty() && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// The context-dependent synthesis `Sy(x_t, E_t)` zero-shot: an [`LlmContextStage`] (with
/// [`super::synthesis_prompt`], dependent mode) whose answer is read as a word list by
/// [`parse_words`], keeping at most `max_words` (no limit by default: the paper caps only the
/// context-independent keywords, l.118).
///
/// ```
/// use pgraphrag_core::{GenParams, Generator, Prompt, Result as CoreResult, TokenCounter};
/// use pgraphrag_stages::{Budget, LlmSummarizer};
/// use pgraphrag_stages::multistage::{LlmSynthesizer, Synthesizer, synthesis_prompt};
/// struct Chars;
/// impl TokenCounter for Chars { fn count(&self, t: &str) -> CoreResult<usize> { Ok(t.chars().count()) } }
/// struct Fixed;
/// impl Generator for Fixed {
///     fn generate(&self, _: &Prompt, _: &GenParams) -> CoreResult<String> { Ok(" trail, lake, trail ".into()) }
/// }
/// let s = LlmSynthesizer::new(LlmSummarizer::new(Fixed, synthesis_prompt(), &Chars, Budget::paper()));
/// assert_eq!(s.important_words("I went", "We hiked to the lake.", &[]).unwrap(), ["trail", "lake"]);
/// ```
#[derive(Debug, Clone)]
pub struct LlmSynthesizer<S> {
    stage: LlmContextStage<S>,
    max_words: Option<usize>,
}

impl<S: Summarizer> LlmSynthesizer<S> {
    /// Synthesis over `inner` (whose prompt should be [`super::synthesis_prompt`]).
    pub fn new(inner: S) -> LlmSynthesizer<S> {
        LlmSynthesizer {
            stage: LlmContextStage::new(inner, ContextMode::Dependent),
            max_words: None,
        }
    }

    /// Keeps at most `n` words.
    pub fn max_words(mut self, n: usize) -> LlmSynthesizer<S> {
        self.max_words = Some(n);
        self
    }

    /// The underlying stage.
    pub fn stage(&self) -> &LlmContextStage<S> {
        &self.stage
    }
}

impl<S: Summarizer> Synthesizer for LlmSynthesizer<S> {
    fn important_words(
        &self,
        context: &str,
        ranked: &str,
        _past: &[PastDoc],
    ) -> Result<Vec<String>> {
        let answer = self.stage.summary(context, ranked).map_err(|e| match e {
            Error::Stage { source, .. } => Error::Stage {
                stage: "synthesis",
                source,
            },
            other => other,
        })?;
        Ok(parse_words(&answer.text, self.max_words))
    }
}

#[cfg(test)]
mod tests {
    use pgraphrag_core::{GenParams, Generator, Prompt, Result as CoreResult, TokenCounter};

    use super::*;
    use crate::multistage::synthesis_prompt;
    use crate::{Budget, LlmSummarizer};

    struct Chars;
    impl TokenCounter for Chars {
        fn count(&self, t: &str) -> CoreResult<usize> {
            Ok(t.chars().count())
        }
    }

    /// Fails on "boom", else answers with the prompt's length.
    struct Len;
    impl Generator for Len {
        fn generate(&self, p: &Prompt, _: &GenParams) -> CoreResult<String> {
            let m = &p.messages()[0].content;
            if m.contains("boom") {
                return Err(pgraphrag_core::Error::InvalidInput("model broke".into()));
            }
            Ok(format!("{} chars, more", m.chars().count()))
        }
    }

    #[test]
    fn synthesis_errors_name_their_stage() {
        let s = LlmSynthesizer::new(LlmSummarizer::new(
            Len,
            synthesis_prompt(),
            &Chars,
            Budget::paper(),
        ));
        let Err(Error::Stage { stage, .. }) = s.important_words("x", "boom", &[]) else {
            panic!()
        };
        assert_eq!(stage, "synthesis");
        let w = s.max_words(1).important_words("x", "fine", &[]).unwrap();
        assert_eq!(w.len(), 1);
        assert!(w[0].ends_with("chars"));
    }
}
