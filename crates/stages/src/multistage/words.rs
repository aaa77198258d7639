//! Words, stopwords and inverse document frequency for the synthesis stage (paper l.118–130).
use std::collections::HashMap;

use super::stopwords::Stopwords;
use super::tokens::words;
use crate::{Error, Result};

/// The paper's IDF floor (l.118, 122: words with IDF < 1.5 are dropped).
pub const PAPER_MIN_IDF: f64 = 1.5;

/// How a document frequency becomes an IDF (natural logarithms; `N` documents, `df` of them
/// contain the word).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IdfFormula {
    /// `ln(N / df)`, the textbook IDF (Spärck Jones). A word no document contains counts as
    /// in one (`df = 1`), the rarest a seen word can be. With the paper's floor 1.5 a word is
    /// dropped when more than `N / e^1.5 ≈ 22 %` of the documents contain it.
    #[default]
    Ln,
    /// `ln((1 + N) / (1 + df)) + 1`, scikit-learn's `smooth_idf` (never below 1, defined for
    /// `df = 0`). With the floor 1.5 a word is dropped when `(1 + N) / (1 + df) < e^0.5`, i.e.
    /// when it is in more than about 61 % of the documents.
    Smooth,
}

/// Inverse document frequencies over a document set.
///
/// The paper filters by IDF (l.118, 122) without saying over which documents or with which
/// formula. **Our default reading**: IDF over a large set, the documents of the whole corpus
/// (every distinct document of the training split, past documents and targets), with
/// [`IdfFormula::Ln`]. The other reading, IDF over the author's own past documents `D_t`, is
/// [`Idf::from_documents`] over those; it cannot work with the paper's floor for small
/// profiles: with `N ≤ 4` documents `ln(N / df) ≤ ln 4 ≈ 1.39 < 1.5`, so no word survives,
/// and the paper's targets need only 2 past documents (l.166). Either set is the caller's
/// choice; the formula is [`Idf::formula`].
///
/// A document contains a word when the word is among its [`words`].
///
/// ```
/// use pgraphrag_stages::multistage::{Idf, IdfFormula};
/// let idf = Idf::from_documents(["the cat", "the dog", "a cat and a bird"]).unwrap();
/// assert_eq!(idf.documents(), 3);
/// assert_eq!(idf.df("cat"), 2);
/// assert!((idf.idf("cat") - (3.0f64 / 2.0).ln()).abs() < 1e-12);
/// assert!((idf.idf("unseen") - 3.0f64.ln()).abs() < 1e-12);
/// let smooth = idf.clone().formula(IdfFormula::Smooth);
/// assert!((smooth.idf("unseen") - (4.0f64.ln() + 1.0)).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Idf {
    n: usize,
    df: HashMap<String, usize>,
    formula: IdfFormula,
}

impl Idf {
    /// Counts document frequencies over `docs` ([`IdfFormula::Ln`]). An empty set is an
    /// [`Error::InvalidInput`] (no IDF is defined).
    pub fn from_documents<'a>(docs: impl IntoIterator<Item = &'a str>) -> Result<Idf> {
        let mut n = 0;
        let mut df: HashMap<String, usize> = HashMap::new();
        for d in docs {
            n += 1;
            let mut seen: Vec<String> = words(d);
            seen.sort_unstable();
            seen.dedup();
            for w in seen {
                *df.entry(w).or_insert(0) += 1;
            }
        }
        if n == 0 {
            return Err(Error::InvalidInput(
                "IDF needs at least one document".into(),
            ));
        }
        Ok(Idf {
            n,
            df,
            formula: IdfFormula::Ln,
        })
    }

    /// Replaces the formula.
    pub fn formula(mut self, formula: IdfFormula) -> Idf {
        self.formula = formula;
        self
    }

    /// The formula.
    pub fn idf_formula(&self) -> IdfFormula {
        self.formula
    }

    /// `N`, the number of documents.
    pub fn documents(&self) -> usize {
        self.n
    }

    /// How many documents contain `word`.
    pub fn df(&self, word: &str) -> usize {
        self.df.get(word).copied().unwrap_or(0)
    }

    /// The IDF of `word`.
    pub fn idf(&self, word: &str) -> f64 {
        let n = self.n as f64;
        let df = self.df(word) as f64;
        match self.formula {
            IdfFormula::Ln => (n / df.max(1.0)).ln(),
            IdfFormula::Smooth => ((1.0 + n) / (1.0 + df)).ln() + 1.0,
        }
    }
}

/// Which documents the IDF is computed over (see [`Idf`] for the two readings).
#[derive(Debug, Clone, Copy)]
pub enum IdfScope<'a> {
    /// A table the caller built, typically over the whole corpus (our default reading).
    Given(&'a Idf),
    /// The author's own past documents `D_t` of each example, with this formula.
    PastDocuments(IdfFormula),
}

/// The word filter of both synthesis strategies (l.118, 122): stopwords and words whose IDF is
/// below a floor are skipped.
///
/// ```
/// use pgraphrag_stages::multistage::{Idf, WordFilter};
/// let idf = Idf::from_documents(["a cat", "a dog", "a bird", "a fish", "a cat", "a cow"]).unwrap();
/// let f = WordFilter::paper(&idf);
/// assert_eq!(f.min_idf, 1.5);
/// let keep = f.resolve(&[]).unwrap();
/// assert_eq!(keep.keep("dog"), Some(6f64.ln()));
/// assert_eq!(keep.keep("cat"), None); // ln(6 / 2) = 1.10 < 1.5
/// ```
#[derive(Debug, Clone)]
pub struct WordFilter<'a> {
    /// Where the IDF comes from.
    pub idf: IdfScope<'a>,
    /// The stopwords.
    pub stopwords: Stopwords,
    /// Words with a lower IDF are skipped (the paper: 1.5).
    pub min_idf: f64,
}

impl<'a> WordFilter<'a> {
    /// English stopwords, IDF from `idf`, floor 1.5: our default reading of the paper.
    pub fn paper(idf: &'a Idf) -> WordFilter<'a> {
        WordFilter::new(IdfScope::Given(idf))
    }

    /// English stopwords, floor 1.5, IDF from `scope`.
    pub fn new(scope: IdfScope<'a>) -> WordFilter<'a> {
        WordFilter {
            idf: scope,
            stopwords: Stopwords::english(),
            min_idf: PAPER_MIN_IDF,
        }
    }

    /// The filter for one example: the IDF table of its scope (built over `past` for
    /// [`IdfScope::PastDocuments`]; an empty `past` is then an [`Error::InvalidInput`]).
    pub fn resolve(&self, past: &[super::PastDoc]) -> Result<ResolvedFilter<'_>> {
        let idf = match self.idf {
            IdfScope::Given(idf) => std::borrow::Cow::Borrowed(idf),
            IdfScope::PastDocuments(formula) => std::borrow::Cow::Owned(
                Idf::from_documents(past.iter().map(|d| d.text.as_str()))?.formula(formula),
            ),
        };
        Ok(ResolvedFilter {
            idf,
            stopwords: &self.stopwords,
            min_idf: self.min_idf,
        })
    }
}

/// A [`WordFilter`] with its IDF table at hand.
#[derive(Debug, Clone)]
pub struct ResolvedFilter<'a> {
    idf: std::borrow::Cow<'a, Idf>,
    stopwords: &'a Stopwords,
    min_idf: f64,
}

impl ResolvedFilter<'_> {
    /// `Some(idf)` when `word` is kept: not a stopword and IDF at least the floor.
    pub fn keep(&self, word: &str) -> Option<f64> {
        if self.stopwords.contains(word) {
            return None;
        }
        let idf = self.idf.idf(word);
        (idf >= self.min_idf).then_some(idf)
    }

    /// The IDF table.
    pub fn idf(&self) -> &Idf {
        &self.idf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_counts_once_per_document() {
        let idf = Idf::from_documents(["tea tea tea", "coffee"]).unwrap();
        assert_eq!(idf.df("tea"), 1);
        assert!(Idf::from_documents(std::iter::empty()).is_err());
    }
}
