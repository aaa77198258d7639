//! # pgraphrag-text
//!
//! Text processing for pgraphrag: NLTK-identical word_tokenize (Punkt + Treebank), whitespace split, Porter stemmer (NLTK mode).
#![deny(missing_docs)]
