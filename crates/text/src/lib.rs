//! # pgraphrag-text
//!
//! Text processing for pgraphrag: NLTK-identical `word_tokenize` (Punkt + Treebank),
//! the whitespace split LaMP uses, and NLTK's Porter stemmer (NLTK extensions mode).
#![deny(missing_docs)]

pub mod porter;
