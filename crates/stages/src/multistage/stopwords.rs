//! Stopwords for the synthesis stage (paper l.118, 122: "we also remove stopwords"; the paper
//! names no list).
use std::collections::HashSet;

#[cfg(doc)]
use super::tokens::words;

/// NLTK's English stopword list as distributed for years (`nltk.corpus.stopwords.words("english")`,
/// the 179-word list; the 2023 update of nltk_data added further contractions), verbatim.
/// Entries with an apostrophe (`don't`) never match a [`words`] token, which Treebank splits
/// (`do`, `n't`); [`TREEBANK_STOPWORDS`] covers the pieces.
pub const NLTK_ENGLISH_STOPWORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "you're",
    "you've",
    "you'll",
    "you'd",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "she's",
    "her",
    "hers",
    "herself",
    "it",
    "it's",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "that'll",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "don't",
    "should",
    "should've",
    "now",
    "d",
    "ll",
    "m",
    "o",
    "re",
    "ve",
    "y",
    "ain",
    "aren",
    "aren't",
    "couldn",
    "couldn't",
    "didn",
    "didn't",
    "doesn",
    "doesn't",
    "hadn",
    "hadn't",
    "hasn",
    "hasn't",
    "haven",
    "haven't",
    "isn",
    "isn't",
    "ma",
    "mightn",
    "mightn't",
    "mustn",
    "mustn't",
    "needn",
    "needn't",
    "shan",
    "shan't",
    "shouldn",
    "shouldn't",
    "wasn",
    "wasn't",
    "weren",
    "weren't",
    "won",
    "won't",
    "wouldn",
    "wouldn't",
];

/// **Ours**: the pieces NLTK's Treebank tokenizer cuts contractions into that start with a
/// letter (`can't` → `ca n't`, `won't` → `wo n't`, `shan't`, `ain't`, `gonna` → `gon na`,
/// `wanna`, `gotta` → `got ta`, `gimme` → `gim me`, `lemme`), added to
/// [`NLTK_ENGLISH_STOPWORDS`] by [`Stopwords::english`].
pub const TREEBANK_STOPWORDS: &[&str] = &[
    "n't", "ca", "wo", "sha", "ai", "gon", "na", "wan", "ta", "gim", "lem",
];

/// A stopword set.
///
/// ```
/// use pgraphrag_stages::multistage::Stopwords;
/// let s = Stopwords::english();
/// assert!(s.contains("the") && s.contains("n't") && !s.contains("novel"));
/// assert!(!Stopwords::none().contains("the"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopwords(HashSet<String>);

impl Stopwords {
    /// [`NLTK_ENGLISH_STOPWORDS`] and [`TREEBANK_STOPWORDS`].
    pub fn english() -> Stopwords {
        Stopwords::from_words(NLTK_ENGLISH_STOPWORDS.iter().chain(TREEBANK_STOPWORDS))
    }

    /// No stopwords.
    pub fn none() -> Stopwords {
        Stopwords(HashSet::new())
    }

    /// Any list (compared with [`words`] tokens, so give it lowercase).
    pub fn from_words<S: AsRef<str>>(words: impl IntoIterator<Item = S>) -> Stopwords {
        Stopwords(words.into_iter().map(|w| w.as_ref().to_string()).collect())
    }

    /// Whether `word` is a stopword.
    pub fn contains(&self, word: &str) -> bool {
        self.0.contains(word)
    }
}

impl Default for Stopwords {
    /// [`Stopwords::english`].
    fn default() -> Self {
        Stopwords::english()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nltk_list_has_179_distinct_words() {
        let set: HashSet<&str> = NLTK_ENGLISH_STOPWORDS.iter().copied().collect();
        assert_eq!((NLTK_ENGLISH_STOPWORDS.len(), set.len()), (179, 179));
        assert!(TREEBANK_STOPWORDS.iter().all(|w| !set.contains(w)));
    }
}
